//! A folder of PNG or JPEG images read as a data matrix, one row per image.
//!
//! **Files.** The regular files of the folder whose names end in `.png`, `.jpg` or `.jpeg`
//! (any case) are read; other files, sub-folders and hidden files (names starting with `.`)
//! are ignored. Files are taken in *natural order* ([`natural_cmp`]): `Picture_2` comes
//! before `Picture_10`.
//!
//! **Row layout.** Pixel values are divided by 255 (8-bit) or 65535 (16-bit PNG), so every
//! value is in [0, 1]. A row is the image flattened row-major over (y, x, channel): the value
//! of channel `c` of the pixel in row `y` and column `x` of a `h × w × C` image is at index
//! `(y · w + x) · C + c`. The channels are those of the file: 1 (grey), 2 (grey + alpha),
//! 3 (RGB) or 4 (RGBA); a palette PNG is expanded to RGB or RGBA, and a grey or colour JPEG
//! gives 1 or 3 channels (CMYK JPEGs are converted to RGB by the decoder).
//!
//! **Grey.** With `grey = true` every image becomes one channel,
//! Y = 0.299 R + 0.587 G + 0.114 B (ITU-R BT.601 luma, the weights of Pillow's `convert("L")`,
//! without its rounding to an integer); alpha is dropped and grey images are kept as they are.
//! Colour and grey files may then be mixed in one folder.
//!
//! **Checks.** Every image must have the same width, height and number of channels as the
//! first one; otherwise the error names both files and both shapes. An empty folder, a folder
//! without images and an image that cannot be decoded are errors naming the folder or the file.
//!
//! **Decoders.** `png` (image-rs, pure Rust, the decoder the `image` crate itself uses) and
//! `zune-jpeg` (pure Rust, the JPEG decoder of the `image` crate since 0.25) in strict mode,
//! so a truncated JPEG is an error instead of grey padding. The full `image` crate would
//! bring many formats and dependencies for no gain here. zune-jpeg's output can differ from
//! libjpeg's by ±1 in a few pixels (IDCT and chroma upsampling rounding); the tabletop test
//! bounds the difference.
//!
//! [`write_png`] draws one row of values (for example a learned feature) as an 8-bit grey or
//! RGB PNG, scaled by its min and max or by a fixed range; a row read by
//! [`read_image_folder`] and written back with [`PixelScale::UNIT`] gives the same bytes.

use super::{ReadError, check_matrix_memory, os_error, reserve};
use crate::RowMatrix;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufWriter, Cursor};
use std::path::{Path, PathBuf};
use zune_jpeg::JpegDecoder;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;

/// The images of a folder as a matrix, with what is needed to draw a row again.
#[derive(Clone, Debug)]
pub struct ImageSet {
    /// One row per image, `height · width · channels` values in [0, 1].
    pub x: RowMatrix,
    /// The files, in row order.
    pub files: Vec<PathBuf>,
    /// Image height in pixels.
    pub height: usize,
    /// Image width in pixels.
    pub width: usize,
    /// Values per pixel (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA).
    pub channels: usize,
}

/// One decoded image: samples row-major over (y, x, channel), already scaled to [0, 1].
#[derive(Clone, Debug)]
pub struct Image {
    /// Height in pixels.
    pub height: usize,
    /// Width in pixels.
    pub width: usize,
    /// Values per pixel.
    pub channels: usize,
    /// `height · width · channels` values in [0, 1].
    pub values: Vec<f64>,
}

impl Image {
    fn shape(&self) -> String {
        format!(
            "{}×{} ({})",
            self.width,
            self.height,
            channel_name(self.channels)
        )
    }

    /// The same image as one grey channel: Y = 0.299 R + 0.587 G + 0.114 B, alpha dropped.
    pub fn to_grey(&self) -> Image {
        let c = self.channels;
        let values = match c {
            1 => self.values.clone(),
            2 => self.values.chunks_exact(2).map(|p| p[0]).collect(),
            _ => self
                .values
                .chunks_exact(c)
                .map(|p| 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2])
                .collect(),
        };
        Image {
            height: self.height,
            width: self.width,
            channels: 1,
            values,
        }
    }
}

fn channel_name(c: usize) -> &'static str {
    match c {
        1 => "grey",
        2 => "grey+alpha",
        3 => "RGB",
        4 => "RGBA",
        _ => "unknown channels",
    }
}

/// True when the file name has an image extension this module reads.
pub fn is_image_name(path: &Path) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    matches!(ext.as_str(), "png" | "jpg" | "jpeg")
}

/// Compares two names in natural order: runs of ASCII digits compare as numbers of any length
/// (`a2` < `a10`), other characters one by one by their code point. Names equal by that rule
/// (`a01` and `a1`) fall back to plain string order, so the order is total.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < ab.len() && j < bb.len() {
        if ab[i].is_ascii_digit() && bb[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < ab.len() && ab[i].is_ascii_digit() {
                i += 1;
            }
            while j < bb.len() && bb[j].is_ascii_digit() {
                j += 1;
            }
            let na = trim_zeros(&ab[si..i]);
            let nb = trim_zeros(&bb[sj..j]);
            // Without leading zeros, a longer run is a larger number; equal lengths compare
            // digit by digit.
            let ord = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
            if ord != Ordering::Equal {
                return ord;
            }
        } else {
            // Compare one character (UTF-8 sequences compare in code point order byte-wise).
            if ab[i] != bb[j] {
                return ab[i].cmp(&bb[j]);
            }
            i += 1;
            j += 1;
        }
    }
    let rest = (ab.len() - i).cmp(&(bb.len() - j));
    rest.then_with(|| a.cmp(b))
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let first = digits
        .iter()
        .position(|&d| d != b'0')
        .unwrap_or(digits.len());
    &digits[first..]
}

/// The image files of `dir` in natural order (see the module doc for which files count).
pub fn list_images(dir: &Path) -> Result<Vec<PathBuf>, ReadError> {
    let name = || dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| os_error(&name(), e))?;
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let mut seen = 0usize;
    for entry in entries {
        let entry = entry.map_err(|e| os_error(&name(), e))?;
        let path = entry.path();
        let file_name = entry.file_name().to_string_lossy().into_owned();
        seen += 1;
        if file_name.starts_with('.') || !is_image_name(&path) || !path.is_file() {
            continue;
        }
        files.push((file_name, path));
    }
    if files.is_empty() {
        let detail = if seen == 0 {
            "the folder is empty".to_string()
        } else {
            format!("{seen} entries, none a .png, .jpg or .jpeg file")
        };
        return Err(ReadError::NoImages {
            name: name(),
            detail,
        });
    }
    files.sort_by(|a, b| natural_cmp(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// Files decoded in parallel at a time: memory holds the matrix plus one batch of images.
const BATCH: usize = 64;

/// Reads every image of `dir` into one matrix, one row per image in natural file order.
///
/// Images are decoded in parallel on the current rayon pool, a batch at a time; checks and
/// errors follow file order, so the first bad file in that order is the one reported.
pub fn read_image_folder(dir: &Path, grey: bool) -> Result<ImageSet, ReadError> {
    let files = list_images(dir)?;
    let mut data: Vec<f64> = Vec::new();
    let mut first: Option<String> = None;
    let (mut height, mut width, mut channels) = (0, 0, 0);
    for (b, batch) in files.chunks(BATCH).enumerate() {
        let images: Vec<Result<Image, ReadError>> = batch
            .par_iter()
            .map(|f| read_image(f).map(|im| if grey { im.to_grey() } else { im }))
            .collect();
        for (j, im) in images.into_iter().enumerate() {
            let i = b * BATCH + j;
            let im = im?;
            match &first {
                None => {
                    (height, width, channels) = (im.height, im.width, im.channels);
                    first = Some(im.shape());
                    let total = im.values.len().saturating_mul(files.len());
                    let (name, rows, cols) = (
                        dir.display().to_string(),
                        files.len() as u64,
                        im.values.len() as u64,
                    );
                    check_matrix_memory(&name, rows, cols)?;
                    reserve(&mut data, total, &name, rows, cols)?;
                }
                Some(shape0) => {
                    if (im.height, im.width, im.channels) != (height, width, channels) {
                        return Err(ReadError::ImageMismatch {
                            name: files[i].display().to_string(),
                            shape: im.shape(),
                            first: files[0].display().to_string(),
                            first_shape: shape0.clone(),
                        });
                    }
                }
            }
            data.extend_from_slice(&im.values);
        }
    }
    let d = height * width * channels;
    Ok(ImageSet {
        x: RowMatrix::new(files.len(), d, data),
        files,
        height,
        width,
        channels,
    })
}

/// Decodes one PNG or JPEG file (chosen by its first bytes, not its name) into values in
/// [0, 1], row-major over (y, x, channel).
pub fn read_image(path: &Path) -> Result<Image, ReadError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| os_error(&name, e))?;
    let bad = |detail: String| ReadError::ImageDecode {
        name: name.clone(),
        detail,
    };
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        decode_png(&bytes).map_err(bad)
    } else if bytes.starts_with(&[0xFF, 0xD8]) {
        decode_jpeg(&bytes).map_err(bad)
    } else if bytes.is_empty() {
        Err(bad("the file is empty".into()))
    } else {
        Err(bad("neither a PNG nor a JPEG signature".into()))
    }
}

fn decode_png(bytes: &[u8]) -> Result<Image, String> {
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    // Palette → RGB(A), grey below 8 bits → 8 bits, tRNS → alpha; 16 bits are kept.
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or("image too large to address")?;
    let mut buf = vec![0u8; size];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let (width, height) = (info.width as usize, info.height as usize);
    let channels = info.color_type.samples();
    let n = width * height * channels;
    let values: Vec<f64> = match info.bit_depth {
        png::BitDepth::Sixteen => buf[..2 * n]
            .chunks_exact(2)
            .map(|b| f64::from(u16::from_be_bytes([b[0], b[1]])) / 65535.0)
            .collect(),
        png::BitDepth::Eight => buf[..n].iter().map(|&v| f64::from(v) / 255.0).collect(),
        other => return Err(format!("unexpected bit depth {other:?} after expansion")),
    };
    Ok(Image {
        height,
        width,
        channels,
        values,
    })
}

fn decode_jpeg(bytes: &[u8]) -> Result<Image, String> {
    let options = DecoderOptions::default().set_strict_mode(true);
    let mut decoder = JpegDecoder::new_with_options(
        zune_jpeg::zune_core::bytestream::ZCursor::new(bytes),
        options,
    );
    decoder.decode_headers().map_err(|e| e.to_string())?;
    let input = decoder.input_colorspace().ok_or("no JPEG header")?;
    let out = if input == ColorSpace::Luma {
        ColorSpace::Luma
    } else {
        ColorSpace::RGB
    };
    decoder.set_options(options.jpeg_set_out_colorspace(out));
    let pixels = decoder.decode().map_err(|e| e.to_string())?;
    let info = decoder.info().ok_or("no JPEG header")?;
    let (width, height) = (usize::from(info.width), usize::from(info.height));
    let channels = out.num_components();
    if pixels.len() != width * height * channels {
        return Err(format!(
            "decoder returned {} samples for {width}×{height}×{channels}",
            pixels.len()
        ));
    }
    Ok(Image {
        height,
        width,
        channels,
        values: pixels.iter().map(|&v| f64::from(v) / 255.0).collect(),
    })
}

/// How [`write_png`] maps values to the 8-bit range 0..=255.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PixelScale {
    /// The smallest value of the row becomes 0 and the largest 255 (a constant row is all 0).
    MinMax,
    /// `lo` becomes 0 and `hi` becomes 255; values outside are clamped.
    Fixed {
        /// Value drawn as 0.
        lo: f64,
        /// Value drawn as 255.
        hi: f64,
    },
}

impl PixelScale {
    /// The range [0, 1] of [`read_image_folder`]'s values.
    pub const UNIT: PixelScale = PixelScale::Fixed { lo: 0.0, hi: 1.0 };
}

/// Writes `values` (row-major over (y, x, channel), `height · width · channels` of them,
/// `channels` 1 for grey or 3 for RGB) as an 8-bit PNG: each value v becomes
/// round(255 · (v − lo) / (hi − lo)) clamped to 0..=255, with (lo, hi) from `scale`.
/// Non-finite values are drawn as 0.
pub fn write_png(
    path: &Path,
    values: &[f64],
    width: usize,
    height: usize,
    channels: usize,
    scale: PixelScale,
) -> std::io::Result<()> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let color = match channels {
        1 => png::ColorType::Grayscale,
        3 => png::ColorType::Rgb,
        c => return Err(invalid(format!("{c} channels; write_png draws 1 or 3"))),
    };
    if values.len() != width * height * channels {
        return Err(invalid(format!(
            "{} values do not fill {width}×{height}×{channels}",
            values.len()
        )));
    }
    let (w, h) = (
        u32::try_from(width).map_err(|_| invalid("width too large".into()))?,
        u32::try_from(height).map_err(|_| invalid("height too large".into()))?,
    );
    let bytes = to_bytes(values, scale);
    let file = File::create(path)?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), w, h);
    encoder.set_color(color);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&bytes)
        .map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)
}

/// The 8-bit samples [`write_png`] writes for `values` under `scale`.
pub fn to_bytes(values: &[f64], scale: PixelScale) -> Vec<u8> {
    let (lo, hi) = match scale {
        PixelScale::Fixed { lo, hi } => (lo, hi),
        PixelScale::MinMax => {
            let finite = values.iter().copied().filter(|v| v.is_finite());
            let lo = finite.clone().fold(f64::INFINITY, f64::min);
            let hi = finite.fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        }
    };
    let span = hi - lo;
    values
        .iter()
        .map(|&v| {
            if !v.is_finite() || !span.is_finite() || span <= 0.0 {
                0
            } else {
                (255.0 * (v - lo) / span).round().clamp(0.0, 255.0) as u8
            }
        })
        .collect()
}
