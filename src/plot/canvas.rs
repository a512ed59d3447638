//! An RGB raster canvas (8 bits per channel) with the few drawing operations the pictures
//! need: filled rectangles, one-pixel lines (Bresenham), text in the built-in font
//! ([`super::font`]), pasting of grey or RGB pictures, and PNG encoding ([`encode_png`]).
//!
//! Coordinates are pixels, x to the right and y down from the top-left corner; anything drawn
//! outside the canvas is clipped.

use super::font::{ADVANCE, GLYPH_H, glyph};

/// An RGB colour.
pub type Rgb = [u8; 3];

/// White.
pub const WHITE: Rgb = [255, 255, 255];
/// Black.
pub const BLACK: Rgb = [0, 0, 0];
/// Light grey, for frames and grid lines.
pub const GREY: Rgb = [190, 190, 190];

/// A picture being drawn.
#[derive(Clone, Debug)]
pub struct Canvas {
    width: usize,
    height: usize,
    /// Row-major RGB samples.
    pixels: Vec<u8>,
}

impl Canvas {
    /// A `width × height` canvas filled with `background`.
    pub fn new(width: usize, height: usize, background: Rgb) -> Self {
        let mut pixels = Vec::with_capacity(width * height * 3);
        for _ in 0..width * height {
            pixels.extend_from_slice(&background);
        }
        Self {
            width,
            height,
            pixels,
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The RGB samples, row-major.
    pub fn pixels(&self) -> &[u8] {
        &self.pixels
    }

    /// Sets one pixel; points outside the canvas are ignored.
    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            let i = (y as usize * self.width + x as usize) * 3;
            self.pixels[i..i + 3].copy_from_slice(&c);
        }
    }

    /// Fills the rectangle of top-left (x, y) and size w × h.
    pub fn fill_rect(&mut self, x: i64, y: i64, w: usize, h: usize, c: Rgb) {
        for dy in 0..h as i64 {
            for dx in 0..w as i64 {
                self.set(x + dx, y + dy, c);
            }
        }
    }

    /// The one-pixel outline of the rectangle of top-left (x, y) and size w × h.
    pub fn frame(&mut self, x: i64, y: i64, w: usize, h: usize, c: Rgb) {
        if w == 0 || h == 0 {
            return;
        }
        let (r, b) = (x + w as i64 - 1, y + h as i64 - 1);
        self.line(x, y, r, y, c);
        self.line(x, b, r, b, c);
        self.line(x, y, x, b, c);
        self.line(r, y, r, b, c);
    }

    /// A one-pixel line from (x0, y0) to (x1, y1), both ends included (Bresenham).
    pub fn line(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            self.set(x, y, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Draws `text` with its top-left corner at (x, y), each font pixel a `scale × scale`
    /// square.
    pub fn text(&mut self, x: i64, y: i64, text: &str, scale: usize, c: Rgb) {
        let s = scale as i64;
        for (k, ch) in text.chars().enumerate() {
            let gx = x + (k * ADVANCE * scale) as i64;
            for (row, bits) in glyph(ch).iter().enumerate() {
                for (col, bit) in bits.bytes().enumerate() {
                    if bit == b'#' {
                        self.fill_rect(gx + col as i64 * s, y + row as i64 * s, scale, scale, c);
                    }
                }
            }
        }
    }

    /// Draws `text` rotated a quarter turn anticlockwise (reading upwards), its glyphs'
    /// top edge at column x and the text ending at row y.
    pub fn text_up(&mut self, x: i64, y: i64, text: &str, scale: usize, c: Rgb) {
        let s = scale as i64;
        for (k, ch) in text.chars().enumerate() {
            let gy = y - (k * ADVANCE * scale) as i64;
            for (row, bits) in glyph(ch).iter().enumerate() {
                for (col, bit) in bits.bytes().enumerate() {
                    if bit == b'#' {
                        self.fill_rect(
                            x + row as i64 * s,
                            gy - (col as i64 + 1) * s,
                            scale,
                            scale,
                            c,
                        );
                    }
                }
            }
        }
    }

    /// Pastes a picture of `w × h` pixels, `channels` 1 (grey) or 3 (RGB) samples each,
    /// with its top-left corner at (x, y).
    pub fn paste(&mut self, x: i64, y: i64, samples: &[u8], w: usize, h: usize, channels: usize) {
        for py in 0..h {
            for px in 0..w {
                let i = (py * w + px) * channels;
                let c = if channels == 1 {
                    [samples[i]; 3]
                } else {
                    [samples[i], samples[i + 1], samples[i + 2]]
                };
                self.set(x + px as i64, y + py as i64, c);
            }
        }
    }

    /// The canvas as an RGB PNG file.
    pub fn to_png(&self) -> Vec<u8> {
        encode_png(&self.pixels, self.width, self.height, 3)
    }
}

/// Line height in pixels of text at `scale` (glyph plus two pixels of space).
pub fn line_height(scale: usize) -> usize {
    (GLYPH_H + 2) * scale
}

/// Encodes 8-bit samples (`channels` 1 grey or 3 RGB, row-major) as a PNG file in memory,
/// with the encoder settings of [`crate::io::write_png`] so that both give the same bytes.
///
/// # Panics
/// When the sizes do not match or `channels` is neither 1 nor 3 (a programming error).
pub fn encode_png(samples: &[u8], width: usize, height: usize, channels: usize) -> Vec<u8> {
    assert_eq!(samples.len(), width * height * channels, "encode_png: size");
    let color = match channels {
        1 => png::ColorType::Grayscale,
        3 => png::ColorType::Rgb,
        c => panic!("encode_png: {c} channels"),
    };
    let mut out = Vec::new();
    {
        let w = u32::try_from(width).expect("width fits u32");
        let h = u32::try_from(height).expect("height fits u32");
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("PNG header to memory");
        writer
            .write_image_data(samples)
            .expect("PNG data to memory");
        writer.finish().expect("PNG end to memory");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_include_both_ends_and_clip() {
        let mut c = Canvas::new(5, 4, WHITE);
        c.line(0, 0, 4, 3, BLACK);
        c.line(-3, 1, 10, 1, BLACK);
        let at = |c: &Canvas, x: usize, y: usize| c.pixels()[(y * 5 + x) * 3];
        assert_eq!(at(&c, 0, 0), 0);
        assert_eq!(at(&c, 4, 3), 0);
        assert!((0..5).all(|x| at(&c, x, 1) == 0));
        assert_eq!(at(&c, 4, 0), 255);
    }

    #[test]
    fn png_round_trips_through_the_decoder() {
        let samples: Vec<u8> = (0..6 * 2 * 3).map(|i| (i * 7) as u8).collect();
        let bytes = encode_png(&samples, 6, 2, 3);
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (6, 2));
        assert_eq!(&buf[..samples.len()], &samples[..]);
    }
}
