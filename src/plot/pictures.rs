//! Learned means drawn as pictures when the data are images, and the choices behind the
//! overview sheet: which feature is the base, whether a feature adds or subtracts, which
//! rows serve as examples and their codes.
//!
//! **Pixel space.** The means given here are rows of `height · width · channels` values in
//! the row layout of [`crate::io::read_image_folder`]; after `--pca` they are the means
//! mapped back (cluster means m + μV, feature means AV). Two-channel (grey + alpha) and
//! four-channel (RGBA) images are drawn without their alpha channel.
//!
//! **Scales.** Cluster means and the base-feature picture are drawn on the fixed scale
//! [0, 1] (0 black, 1 white; the scale of the input pixels). A feature mean may be negative:
//! it is drawn on the symmetric scale [−s, s] with s its own largest magnitude, so 0 is mid
//! grey (128), the feature's most positive value white and −s black.
//!
//! **Base feature.** The feature held by the most rows (ties: the lowest index); its
//! picture is its mean plus, after `--pca`, the PCA mean m (x ≈ m + z·A, so m + A_base is the
//! image of a row holding the base feature alone).
//!
//! **Adds or subtracts.** A feature *adds* (+) when the sum of its strong entries — those of
//! magnitude at least half its largest magnitude — is positive, and *subtracts* (−) otherwise.
//!
//! **Examples.** The first rows (in row order) whose codes differ from every earlier
//! example's, at most [`EXAMPLES`] of them. A row's code is its row of Z as a 0/1 string
//! (`10111`: features 0, 2, 3 and 4 held); for clustering, its cluster.

use crate::RowMatrix;
use crate::io::{PixelScale, to_bytes};

/// How many example images the overview shows at most.
pub const EXAMPLES: usize = 6;

/// The size of the input images, enough to draw a row again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageLayout {
    /// Height in pixels.
    pub height: usize,
    /// Width in pixels.
    pub width: usize,
    /// Values per pixel in the data rows (1, 2, 3 or 4).
    pub channels: usize,
    /// Whether the images were converted to grey when read (`--grey`).
    pub grey: bool,
}

impl ImageLayout {
    /// Channels of the drawn pictures: 1 (grey) or 3 (RGB), alpha dropped.
    pub fn drawn_channels(&self) -> usize {
        if self.channels >= 3 { 3 } else { 1 }
    }
}

/// Clusters or latent features.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One mean per cluster; Z one-hot.
    Clusters,
    /// One additive feature mean per column of Z.
    Features,
}

/// A learned model as far as the pictures need it.
#[derive(Clone, Copy, Debug)]
pub struct Learned<'a> {
    /// Clusters or features.
    pub kind: Kind,
    /// The images' size.
    pub layout: ImageLayout,
    /// One row per cluster or feature, in pixel space (see the module doc).
    pub means: &'a RowMatrix,
    /// Added to the base feature's mean for its picture: the PCA mean after `--pca`.
    pub offset: Option<&'a [f64]>,
    /// N × K assignments.
    pub z: &'a RowMatrix,
}

/// A picture ready to paste: 8-bit samples, 1 or 3 channels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// 1 (grey) or 3 (RGB).
    pub channels: usize,
    /// Row-major samples.
    pub samples: Vec<u8>,
}

impl Picture {
    /// Draws a row of pixel values under `scale`, dropping any alpha channel.
    pub fn from_row(values: &[f64], layout: &ImageLayout, scale: PixelScale) -> Self {
        let bytes = to_bytes(values, scale);
        let keep = layout.drawn_channels();
        let samples = if keep == layout.channels {
            bytes
        } else {
            bytes
                .chunks_exact(layout.channels)
                .flat_map(|p| p[..keep].to_vec())
                .collect()
        };
        Self {
            width: layout.width,
            height: layout.height,
            channels: keep,
            samples,
        }
    }

    /// The picture as a PNG file.
    pub fn to_png(&self) -> Vec<u8> {
        super::canvas::encode_png(&self.samples, self.width, self.height, self.channels)
    }
}

/// The symmetric scale [−s, s] of a feature mean, s its largest finite magnitude (1 when the
/// mean is all zero).
pub fn symmetric_scale(mean: &[f64]) -> PixelScale {
    let s = mean
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let s = if s > 0.0 { s } else { 1.0 };
    PixelScale::Fixed { lo: -s, hi: s }
}

/// The column of Z with the most ones (ties: the lowest index); `None` when K = 0.
pub fn base_feature(z: &RowMatrix) -> Option<usize> {
    let counts = column_counts(z);
    let mut best: Option<usize> = None;
    for (k, &c) in counts.iter().enumerate() {
        if best.is_none_or(|b| c > counts[b]) {
            best = Some(k);
        }
    }
    best
}

/// How many rows hold each column of Z.
pub fn column_counts(z: &RowMatrix) -> Vec<usize> {
    let mut counts = vec![0; z.n_cols()];
    for r in z.rows() {
        for (k, v) in r.iter().enumerate() {
            if *v != 0.0 {
                counts[k] += 1;
            }
        }
    }
    counts
}

/// True when the feature mostly adds: the sum of its entries of magnitude ≥ half its largest
/// magnitude is positive.
pub fn adds(mean: &[f64]) -> bool {
    let big = mean.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let strong: f64 = mean.iter().filter(|v| v.abs() >= 0.5 * big).sum();
    strong > 0.0
}

/// Row `i` of Z as a 0/1 string.
pub fn code(z: &RowMatrix, i: usize) -> String {
    z.row(i)
        .iter()
        .map(|v| if *v != 0.0 { '1' } else { '0' })
        .collect()
}

/// The example rows: the first rows with a code no earlier example has, at most `max`.
pub fn example_rows(z: &RowMatrix, max: usize) -> Vec<usize> {
    let mut seen: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for i in 0..z.n_rows() {
        if rows.len() == max {
            break;
        }
        let c = code(z, i);
        if !seen.contains(&c) {
            seen.push(c);
            rows.push(i);
        }
    }
    rows
}

/// The base feature's picture values: its mean plus the offset (see the module doc).
pub fn base_values(l: &Learned) -> Option<Vec<f64>> {
    let b = base_feature(l.z)?;
    let mut v = l.means.row(b).to_vec();
    if let Some(m) = l.offset {
        for (x, o) in v.iter_mut().zip(m) {
            *x += o;
        }
    }
    Some(v)
}

/// The picture of mean `k`: clusters on [0, 1], features on their symmetric scale.
pub fn mean_picture(l: &Learned, k: usize) -> Picture {
    let row = l.means.row(k);
    let scale = match l.kind {
        Kind::Clusters => PixelScale::UNIT,
        Kind::Features => symmetric_scale(row),
    };
    Picture::from_row(row, &l.layout, scale)
}

/// The files of `features/`: `cluster_KK.png` or `feature_KK.png` per mean (KK the 0-based
/// index, two digits at least, as the columns of z.csv) and, for features, `base.png`.
pub fn mean_files(l: &Learned) -> Vec<(String, Vec<u8>)> {
    let stem = match l.kind {
        Kind::Clusters => "cluster",
        Kind::Features => "feature",
    };
    let mut files: Vec<(String, Vec<u8>)> = (0..l.means.n_rows())
        .map(|k| {
            (
                format!("features/{stem}_{k:02}.png"),
                mean_picture(l, k).to_png(),
            )
        })
        .collect();
    if l.kind == Kind::Features
        && let Some(v) = base_values(l)
    {
        let pic = Picture::from_row(&v, &l.layout, PixelScale::UNIT);
        files.push(("features/base.png".to_string(), pic.to_png()));
    }
    files
}

/// Every picture file of a result: `features/…` and `overview.png`. `examples` holds the
/// input rows of [`example_rows`]`(z, EXAMPLES)`, in that order, or `None` when the images
/// are not available.
pub fn all_files(l: &Learned, examples: Option<&RowMatrix>) -> Vec<(String, Vec<u8>)> {
    let mut files = mean_files(l);
    files.push((
        "overview.png".to_string(),
        super::sheet::overview_png(l, examples),
    ));
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_signs_codes_and_examples() {
        let z = RowMatrix::from_rows(&[
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0],
            [1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0],
        ]);
        assert_eq!(base_feature(&z), Some(2));
        assert_eq!(code(&z, 1), "011");
        assert_eq!(example_rows(&z, 6), vec![0, 1, 3]);
        assert_eq!(example_rows(&z, 2), vec![0, 1]);
        assert!(adds(&[0.1, 0.9, -0.2]));
        assert!(!adds(&[0.4, -0.9, 0.6]));
        assert!(!adds(&[0.0, 0.0]));
        assert_eq!(
            symmetric_scale(&[0.5, -2.0]),
            PixelScale::Fixed { lo: -2.0, hi: 2.0 }
        );
    }

    #[test]
    fn alpha_is_dropped() {
        let layout = ImageLayout {
            height: 1,
            width: 2,
            channels: 4,
            grey: false,
        };
        let p = Picture::from_row(
            &[1.0, 0.0, 0.0, 0.5, 0.0, 1.0, 0.0, 0.5],
            &layout,
            PixelScale::UNIT,
        );
        assert_eq!(p.channels, 3);
        assert_eq!(p.samples, vec![255, 0, 0, 0, 255, 0]);
    }
}
