//! The overview contact sheet (`overview.png`), after Figure 2 of the MAD-Bayes paper.
//!
//! **Features.** A heading, then the base feature (drawn on [0, 1], labelled `BASE` and its
//! index) followed by every other feature (on its symmetric scale, mid grey = 0) labelled
//! `F<k>` with a large `+` when it adds and `-` when it subtracts (rules in
//! [`super::pictures`]). Then the example images, each labelled with its feature code, the
//! row of Z as a 0/1 string in column order (`10111`).
//!
//! **Clusters.** The cluster means on [0, 1] labelled `C<k>` and `N=<size>`, then the
//! example images labelled with their cluster.
//!
//! Pictures are shown as thumbnails: images larger than 160 pixels on a side are shrunk by
//! the smallest whole factor that brings them within 160 (each thumbnail pixel the average
//! of a block), images smaller than 64 pixels are enlarged by a whole factor (each pixel a
//! block). At most [`MAX_MEANS`] means are shown, six per line; when the images are not
//! available the examples part says so instead.

use super::canvas::{BLACK, Canvas, GREY, WHITE, line_height};
use super::font::text_width;
use super::pictures::{
    EXAMPLES, Kind, Learned, Picture, adds, base_feature, base_values, code, column_counts,
    example_rows, mean_picture,
};
use crate::RowMatrix;
use crate::io::PixelScale;

/// Means shown at most on the sheet (all of them are in `features/`).
pub const MAX_MEANS: usize = 48;
const PER_LINE: usize = 6;
const MARGIN: usize = 16;
const GAP: usize = 16;
const SCALE: usize = 2;
const RED: [u8; 3] = [190, 30, 30];
const BLUE: [u8; 3] = [30, 70, 190];

/// One cell: a picture and up to two lines of text under it (the second may be a sign).
struct Cell {
    picture: Picture,
    label: String,
    second: String,
    second_scale: usize,
    second_color: [u8; 3],
}

/// Shrinks or enlarges a picture to thumbnail size (see the module doc).
pub fn thumbnail(p: &Picture) -> Picture {
    let side = p.width.max(p.height);
    if side > 160 {
        let f = side.div_ceil(160);
        let (w, h) = (p.width / f, p.height / f);
        let c = p.channels;
        let mut samples = Vec::with_capacity(w * h * c);
        for y in 0..h {
            for x in 0..w {
                for ch in 0..c {
                    let mut sum = 0usize;
                    for dy in 0..f {
                        for dx in 0..f {
                            sum += usize::from(
                                p.samples[((y * f + dy) * p.width + x * f + dx) * c + ch],
                            );
                        }
                    }
                    samples.push(((sum + f * f / 2) / (f * f)) as u8);
                }
            }
        }
        Picture {
            width: w,
            height: h,
            channels: c,
            samples,
        }
    } else if side < 64 && side > 0 {
        let u = 64 / side;
        let (w, h, c) = (p.width * u, p.height * u, p.channels);
        let mut samples = Vec::with_capacity(w * h * c);
        for y in 0..h {
            for x in 0..w {
                let i = ((y / u) * p.width + x / u) * c;
                samples.extend_from_slice(&p.samples[i..i + c]);
            }
        }
        Picture {
            width: w,
            height: h,
            channels: c,
            samples,
        }
    } else {
        p.clone()
    }
}

fn cell_width(cell: &Cell) -> usize {
    cell.picture
        .width
        .max(text_width(&cell.label, SCALE))
        .max(text_width(&cell.second, cell.second_scale))
}

fn cell_height(cell: &Cell) -> usize {
    let second = if cell.second.is_empty() {
        0
    } else {
        line_height(cell.second_scale)
    };
    cell.picture.height + 4 + line_height(SCALE) + second
}

/// A block of text lines and cell grids, laid out top to bottom.
enum Block {
    Text(String, [u8; 3]),
    Grid(Vec<Cell>),
}

fn block_size(b: &Block) -> (usize, usize) {
    match b {
        Block::Text(t, _) => (text_width(t, SCALE), line_height(SCALE) + 4),
        Block::Grid(cells) => {
            let cw = cells.iter().map(cell_width).max().unwrap_or(0);
            let ch = cells.iter().map(cell_height).max().unwrap_or(0);
            let cols = cells.len().clamp(1, PER_LINE);
            let rows = cells.len().div_ceil(PER_LINE);
            (cols * (cw + GAP), rows * (ch + GAP))
        }
    }
}

/// The overview sheet of a result as a PNG file; `examples` as in
/// [`super::pictures::all_files`].
pub fn overview_png(l: &Learned, examples: Option<&RowMatrix>) -> Vec<u8> {
    let mut blocks = Vec::new();
    let k = l.means.n_rows();
    let shown = k.min(MAX_MEANS);
    match l.kind {
        Kind::Features => {
            blocks.push(Block::Text(
                format!("{k} FEATURES: BASE, THEN + ADDS / - SUBTRACTS (MID GREY = 0)"),
                BLACK,
            ));
            let mut cells = Vec::new();
            let base = base_feature(l.z);
            if let (Some(b), Some(v)) = (base, base_values(l)) {
                cells.push(Cell {
                    picture: thumbnail(&Picture::from_row(&v, &l.layout, PixelScale::UNIT)),
                    label: format!("BASE F{b}"),
                    second: String::new(),
                    second_scale: SCALE,
                    second_color: BLACK,
                });
            }
            for j in (0..k)
                .filter(|&j| Some(j) != base)
                .take(shown.saturating_sub(1))
            {
                let plus = adds(l.means.row(j));
                cells.push(Cell {
                    picture: thumbnail(&mean_picture(l, j)),
                    label: format!("F{j}"),
                    second: if plus { "+" } else { "-" }.to_string(),
                    second_scale: 4,
                    second_color: if plus { BLUE } else { RED },
                });
            }
            blocks.push(Block::Grid(cells));
        }
        Kind::Clusters => {
            blocks.push(Block::Text(
                format!("{k} CLUSTER MEANS (N = ROWS IN THE CLUSTER)"),
                BLACK,
            ));
            let counts = column_counts(l.z);
            let cells = (0..shown)
                .map(|j| Cell {
                    picture: thumbnail(&mean_picture(l, j)),
                    label: format!("C{j}"),
                    second: format!("N={}", counts.get(j).copied().unwrap_or(0)),
                    second_scale: SCALE,
                    second_color: BLACK,
                })
                .collect();
            blocks.push(Block::Grid(cells));
        }
    }
    if shown < k {
        blocks.push(Block::Text(
            format!("AND {} MORE, SEE FEATURES/", k - shown),
            BLACK,
        ));
    }
    let rows = example_rows(l.z, EXAMPLES);
    match examples {
        Some(x) if x.n_rows() == rows.len() && x.n_cols() == l.means.n_cols() => {
            let heading = match l.kind {
                Kind::Features => "EXAMPLES WITH THEIR FEATURE CODES (F0 F1 ...)",
                Kind::Clusters => "EXAMPLES WITH THEIR CLUSTERS",
            };
            blocks.push(Block::Text(heading.to_string(), BLACK));
            let cells = rows
                .iter()
                .enumerate()
                .map(|(e, &i)| {
                    let label = match l.kind {
                        Kind::Features => code(l.z, i),
                        Kind::Clusters => {
                            let c = l.z.row(i).iter().position(|v| *v != 0.0);
                            c.map_or("-".to_string(), |c| format!("C{c}"))
                        }
                    };
                    Cell {
                        picture: thumbnail(&Picture::from_row(
                            x.row(e),
                            &l.layout,
                            PixelScale::UNIT,
                        )),
                        label,
                        second: format!("ROW {i}"),
                        second_scale: 1,
                        second_color: [90; 3],
                    }
                })
                .collect();
            blocks.push(Block::Grid(cells));
        }
        _ => blocks.push(Block::Text(
            "NO EXAMPLES: THE INPUT IMAGES WERE NOT AVAILABLE".to_string(),
            RED,
        )),
    }
    let sizes: Vec<(usize, usize)> = blocks.iter().map(block_size).collect();
    let width = 2 * MARGIN + sizes.iter().map(|s| s.0).max().unwrap_or(0);
    let height = 2 * MARGIN + sizes.iter().map(|s| s.1 + 4).sum::<usize>();
    let mut c = Canvas::new(width, height, WHITE);
    let mut y = MARGIN;
    for (b, (_, h)) in blocks.iter().zip(&sizes) {
        match b {
            Block::Text(t, color) => c.text(MARGIN as i64, y as i64, t, SCALE, *color),
            Block::Grid(cells) => draw_grid(&mut c, MARGIN, y, cells),
        }
        y += h + 4;
    }
    c.to_png()
}

fn draw_grid(c: &mut Canvas, x0: usize, y0: usize, cells: &[Cell]) {
    let cw = cells.iter().map(cell_width).max().unwrap_or(0);
    let ch = cells.iter().map(cell_height).max().unwrap_or(0);
    for (n, cell) in cells.iter().enumerate() {
        let x = (x0 + (n % PER_LINE) * (cw + GAP)) as i64;
        let y = (y0 + (n / PER_LINE) * (ch + GAP)) as i64;
        let p = &cell.picture;
        c.paste(x, y, &p.samples, p.width, p.height, p.channels);
        c.frame(x - 1, y - 1, p.width + 2, p.height + 2, GREY);
        let ty = y + p.height as i64 + 4;
        c.text(x, ty, &cell.label, SCALE, BLACK);
        if !cell.second.is_empty() {
            let sy = ty + line_height(SCALE) as i64;
            c.text(x, sy, &cell.second, cell.second_scale, cell.second_color);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thumbnails_shrink_by_block_averages_and_enlarge_by_blocks() {
        let big = Picture {
            width: 320,
            height: 240,
            channels: 1,
            samples: (0..320 * 240)
                .map(|i| if (i % 320) % 2 == 0 { 0 } else { 100 })
                .collect(),
        };
        let t = thumbnail(&big);
        assert_eq!((t.width, t.height), (160, 120));
        assert!(t.samples.iter().all(|&v| v == 50));
        let small = Picture {
            width: 2,
            height: 1,
            channels: 1,
            samples: vec![1, 2],
        };
        let t = thumbnail(&small);
        assert_eq!((t.width, t.height), (64, 32));
        assert_eq!((t.samples[31], t.samples[32]), (1, 2));
    }
}
