//! Readers for the data matrix of `madbayes fit INPUT`: comma-separated text (`.csv`),
//! NumPy arrays (`.npy`), folders of PNG/JPEG images ([`read_image_folder`], one row per
//! image) and IDX files of (Fashion-)MNIST ([`read_idx`]), each turned into a row-major
//! [`RowMatrix`] with one data point per row. [`read_matrix`] picks the reader from the path.
//!
//! Both readers stream: a CSV file is parsed line by line into one growing `Vec<f64>`, and an
//! `.npy` file is read in fixed-size chunks straight into a vector sized from its header,
//! after the header's byte count has been checked against the real file size. Every value
//! must be finite. Every failure is a [`ReadError`] whose message is one line naming the
//! file, the place (CSV line and column, both 1-based; `.npy` row and column, 0-based as in
//! NumPy) and what to do about it.
//!
//! [`write_npy`] writes the `.npy` form (f64, C order, format 1.0) that [`read_npy`] reads back
//! bit for bit.

mod csv;
#[cfg(feature = "images")]
mod idx;
#[cfg(feature = "images")]
mod images;
mod memory;
mod npy;
mod npy_header;

#[cfg(test)]
mod csv_tests;
#[cfg(all(test, feature = "images"))]
mod idx_tests;
#[cfg(all(test, feature = "images"))]
mod images_tests;
#[cfg(test)]
mod npy_tests;

pub use csv::{parse_csv, read_csv};
#[cfg(feature = "images")]
pub use idx::{Idx, IdxKind, read_idx};
#[cfg(feature = "images")]
pub use images::{
    Image, ImageSet, PixelScale, is_image_name, list_images, natural_cmp, read_image,
    read_image_folder, to_bytes, write_png,
};
pub use memory::{FALLBACK_BYTES, available_memory, fits_in_memory, human_bytes};
pub use npy::{parse_npy, read_npy, write_npy, write_npy_to};

use crate::RowMatrix;
use std::fs::File;
use std::path::Path;
use thiserror::Error;

/// Why a data file could not be read. Every message is one line: the file, where, the
/// problem and a fix.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The extension is not one [`read_matrix`] knows.
    #[error(
        "{name}: unknown file type {ext:?}; give a .csv (comma-separated numbers) or .npy (numpy.save) file, a folder of .png/.jpg images, or an IDX file (*-ubyte, *-ubyte.gz, .idx)"
    )]
    UnknownFormat {
        /// The file.
        name: String,
        /// Its extension, lower-cased (empty when it has none).
        ext: String,
    },
    /// The file does not exist.
    #[error("{name}: no such file; check the path")]
    NotFound {
        /// The file.
        name: String,
    },
    /// The file exists but may not be read.
    #[error("{name}: permission denied; make the file readable (e.g. chmod +r) or copy it")]
    PermissionDenied {
        /// The file.
        name: String,
    },
    /// The path names a directory.
    #[error("{name}: is a directory, not a file; give the path of a .csv or .npy file")]
    IsDirectory {
        /// The path.
        name: String,
    },
    /// Any other failure of the operating system while opening or reading.
    #[error("{name}: cannot read the file ({source}); check that it is a readable regular file")]
    Io {
        /// The file.
        name: String,
        /// The error from the OS.
        #[source]
        source: std::io::Error,
    },
    /// No rows or no columns.
    #[error("{name}: no data ({detail}); give at least one row with at least one number")]
    Empty {
        /// The file.
        name: String,
        /// What was found instead.
        detail: String,
    },
    /// A CSV row has a different number of values than the first data row.
    #[error(
        "{name} line {line}: {found} values, expected {expected} (every row needs the same number of columns as line {first_line}, the first data row)"
    )]
    Ragged {
        /// The file.
        name: String,
        /// 1-based line of the bad row.
        line: u64,
        /// Values on that line.
        found: usize,
        /// Values on the first data row.
        expected: usize,
        /// 1-based line of the first data row.
        first_line: u64,
    },
    /// A CSV cell is empty or only whitespace.
    #[error(
        "{name} line {line}, column {col}: empty cell; fill it in (missing values are not allowed) or delete the row"
    )]
    EmptyCell {
        /// The file.
        name: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        col: usize,
    },
    /// A CSV cell is not a number.
    #[error(
        "{name} line {line}, column {col}: {text} is not a number; cells must be plain numbers such as 1.5 or -2e-3, separated by commas"
    )]
    NotNumber {
        /// The file.
        name: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        col: usize,
        /// The cell, quoted, escaped and truncated.
        text: String,
    },
    /// Line 1 of a CSV file holds both numbers and text.
    #[error(
        "{name} line 1, column {col}: {text} is not a number but other cells of line 1 are; a header line holds no numbers (e.g. x,y,z) and a data line only numbers: fix the cell, or the header"
    )]
    MixedHeader {
        /// The file.
        name: String,
        /// 1-based column of the first cell that is not a number.
        col: usize,
        /// The cell, quoted, escaped and truncated.
        text: String,
    },
    /// A CSV cell holds NaN, ±Inf, or a number too large for `f64`.
    #[error(
        "{name} line {line}, column {col}: {text} is not finite; non-finite values (NaN, ±Inf, beyond ±1.8e308) are not allowed, remove or impute them"
    )]
    NonFiniteCell {
        /// The file.
        name: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        col: usize,
        /// The cell, quoted, escaped and truncated.
        text: String,
    },
    /// A blank line is followed by more data (blank lines are only allowed at the end).
    #[error(
        "{name} line {line}: blank line inside the data; delete it (blank lines are allowed only at the end of the file)"
    )]
    BlankLine {
        /// The file.
        name: String,
        /// 1-based line of the first blank line of the run.
        line: u64,
    },
    /// The file does not start with the `.npy` magic string.
    #[error(
        "{name}: not a NumPy .npy file (it does not start with \\x93NUMPY); save the array with numpy.save"
    )]
    NpyMagic {
        /// The file.
        name: String,
    },
    /// An `.npy` format version other than 1.0, 2.0 or 3.0.
    #[error(
        "{name}: unsupported .npy format version {major}.{minor} (1.0, 2.0 and 3.0 are read); re-save the array with numpy.save"
    )]
    NpyVersion {
        /// The file.
        name: String,
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },
    /// The header length field is impossible.
    #[error(
        "{name}: bad .npy header length {len} bytes ({detail}); the file is truncated or corrupt, re-save it with numpy.save"
    )]
    NpyHeaderLength {
        /// The file.
        name: String,
        /// The length the file claims.
        len: u64,
        /// Why it is impossible.
        detail: String,
    },
    /// The header dictionary could not be parsed.
    #[error("{name}: cannot parse the .npy header ({detail}); re-save the array with numpy.save")]
    NpyHeader {
        /// The file.
        name: String,
        /// What went wrong.
        detail: String,
    },
    /// The element type is not a supported number type.
    #[error("{name}: unsupported .npy dtype {descr}; {hint}")]
    NpyDtype {
        /// The file.
        name: String,
        /// The dtype as written in the header.
        descr: String,
        /// How to fix it.
        hint: String,
    },
    /// The array is not two-dimensional.
    #[error(
        "{name}: the array has shape {shape} but a 2-D (rows, columns) array is needed; {hint}"
    )]
    NpyShape {
        /// The file.
        name: String,
        /// The shape, Python style.
        shape: String,
        /// How to fix it.
        hint: String,
    },
    /// The header's shape needs more bytes than 64 bits can count.
    #[error(
        "{name}: the header claims shape {shape} of {descr}, too large to address; the header is corrupt, re-save the array"
    )]
    NpyTooLarge {
        /// The file.
        name: String,
        /// The shape, Python style.
        shape: String,
        /// The dtype.
        descr: String,
    },
    /// The file holds fewer data bytes than the header's shape needs.
    #[error(
        "{name}: truncated: shape {shape} of {descr} needs {expected} data bytes but the file holds {found}; copy or save the file again"
    )]
    NpyTruncated {
        /// The file.
        name: String,
        /// The shape, Python style.
        shape: String,
        /// The dtype.
        descr: String,
        /// Data bytes the header asks for.
        expected: u64,
        /// Data bytes present.
        found: u64,
    },
    /// The file holds more data bytes than the header's shape needs.
    #[error(
        "{name}: {found} data bytes but shape {shape} of {descr} needs {expected}: unexpected trailing bytes; the header or the file is corrupt, save the array again"
    )]
    NpyTrailing {
        /// The file.
        name: String,
        /// The shape, Python style.
        shape: String,
        /// The dtype.
        descr: String,
        /// Data bytes the header asks for.
        expected: u64,
        /// Data bytes present.
        found: u64,
    },
    /// An `.npy` value is NaN or ±Inf (0-based, as NumPy indexes).
    #[error(
        "{name} row {row}, column {col} (0-based, x[{row}, {col}]): {value} is not finite; non-finite values (NaN, ±Inf) are not allowed, remove or impute them"
    )]
    NpyNonFinite {
        /// The file.
        name: String,
        /// 0-based row.
        row: usize,
        /// 0-based column.
        col: usize,
        /// The value.
        value: f64,
    },
    /// A folder holds no image files.
    #[error("{name}: no images ({detail}); give a folder of .png, .jpg or .jpeg files of one size")]
    NoImages {
        /// The folder.
        name: String,
        /// What was found instead.
        detail: String,
    },
    /// An image file could not be decoded.
    #[error(
        "{name}: cannot decode the image ({detail}); the file is corrupt or not a PNG/JPEG, replace or remove it"
    )]
    ImageDecode {
        /// The file.
        name: String,
        /// The decoder's complaint.
        detail: String,
    },
    /// An image differs in size or colour type from the first image of the folder.
    #[error(
        "{name} is {shape} but {first} is {first_shape}; every image must have the same width, height and colour type (resize or convert them; --grey makes colour and grey images alike)"
    )]
    ImageMismatch {
        /// The odd file.
        name: String,
        /// Its width × height (colour type).
        shape: String,
        /// The first file of the folder.
        first: String,
        /// Its width × height (colour type).
        first_shape: String,
    },
    /// An image folder or IDX file was given to a build without the `images` feature.
    #[error(
        "{name}: this build of madbayes reads only .csv and .npy files; build it with the `images` feature to read image folders and IDX files"
    )]
    NoImageSupport {
        /// The path.
        name: String,
    },
    /// Grey conversion was asked for an input that is not a folder of images.
    #[error("{name}: --grey applies only to a folder of images; drop --grey for this input")]
    GreyNotImages {
        /// The input.
        name: String,
    },
    /// The IDX magic number is not one of the two MNIST kinds.
    #[error(
        "{name}: not an MNIST IDX file (magic number {magic:#010x}; expected 0x00000803 for images or 0x00000801 for labels); give a *-images-idx3-ubyte or *-labels-idx1-ubyte file, gzip-compressed or not"
    )]
    IdxMagic {
        /// The file.
        name: String,
        /// The first four bytes, big-endian.
        magic: u32,
    },
    /// The IDX file (after decompression) is shorter than its header or its dimensions say.
    #[error("{name}: truncated IDX file: {detail}; download or copy the file again")]
    IdxTruncated {
        /// The file.
        name: String,
        /// What is missing.
        detail: String,
    },
    /// The IDX file holds more bytes than its dimensions say.
    #[error(
        "{name}: {detail}: unexpected trailing bytes; the header or the file is corrupt, download it again"
    )]
    IdxTrailing {
        /// The file.
        name: String,
        /// The sizes.
        detail: String,
    },
    /// The gzip stream of an IDX file is corrupt.
    #[error("{name}: corrupt gzip data ({detail}); download the file again or gunzip it to check")]
    Gzip {
        /// The file.
        name: String,
        /// The decompressor's complaint.
        detail: String,
    },
    /// The matrix does not fit in memory.
    #[error(
        "{name}: the {rows} × {cols} matrix needs {} as f64 but only {} of memory is available; use fewer rows or columns, or a machine with more memory",
        human_bytes(*.bytes),
        human_bytes(u128::from(*.available))
    )]
    OutOfMemory {
        /// The file.
        name: String,
        /// Rows.
        rows: u64,
        /// Columns.
        cols: u64,
        /// Bytes needed.
        bytes: u128,
        /// Bytes of memory available ([`available_memory`]).
        available: u64,
    },
    /// A CSV line is longer than the memory available can hold.
    #[error(
        "{name} line {line}: longer than {} with no line break; the file is not a CSV of numbers, or too large for this machine",
        human_bytes(u128::from(*.limit))
    )]
    LineTooLong {
        /// The file.
        name: String,
        /// 1-based line.
        line: u64,
        /// Bytes read of it.
        limit: u64,
    },
}

/// Refuses a `rows × cols` matrix of `f64` that the memory available cannot hold, before it
/// is allocated.
fn check_matrix_memory(name: &str, rows: u64, cols: u64) -> Result<(), ReadError> {
    let bytes = u128::from(rows) * u128::from(cols) * 8;
    fits_in_memory(bytes).map_err(|available| ReadError::OutOfMemory {
        name: name.to_string(),
        rows,
        cols,
        bytes,
        available,
    })
}

/// Reserves room for `extra` more values in `v`, or fails as [`ReadError::OutOfMemory`] for
/// a `rows × cols` matrix.
fn reserve(
    v: &mut Vec<f64>,
    extra: usize,
    name: &str,
    rows: u64,
    cols: u64,
) -> Result<(), ReadError> {
    v.try_reserve_exact(extra)
        .map_err(|_| ReadError::OutOfMemory {
            name: name.to_string(),
            rows,
            cols,
            bytes: u128::from(rows) * u128::from(cols) * 8,
            available: available_memory(),
        })
}

/// Options of [`read_matrix_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Turn images into one grey channel (see [`read_image_folder`]); an error for inputs
    /// that are not image folders.
    pub grey: bool,
}

/// Reads a data matrix with default options; see [`read_matrix_with`].
pub fn read_matrix(path: &Path) -> Result<RowMatrix, ReadError> {
    read_matrix_with(path, ReadOptions::default())
}

/// Reads a data matrix, choosing the reader from the path: a folder → images
/// ([`read_image_folder`]); a name ending in `-ubyte`, `-ubyte.gz`, `.idx` or `.idx.gz` → IDX
/// ([`read_idx`]); otherwise by the extension (case-insensitive): `.csv` → [`read_csv`],
/// `.npy` → [`read_npy`], anything else → [`ReadError::UnknownFormat`].
pub fn read_matrix_with(path: &Path, options: ReadOptions) -> Result<RowMatrix, ReadError> {
    let name = path.display().to_string();
    let lower = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let tabular = matches!(ext.as_str(), "csv" | "npy");
    let idx = ["-ubyte", "-ubyte.gz", ".idx", ".idx.gz"];
    let is_idx = idx.iter().any(|s| lower.ends_with(s));
    #[cfg(feature = "images")]
    {
        if !tabular && path.is_dir() {
            return read_image_folder(path, options.grey).map(|set| set.x);
        }
        if options.grey {
            return Err(ReadError::GreyNotImages { name });
        }
        if is_idx {
            return read_idx(path).map(|idx| idx.x);
        }
    }
    #[cfg(not(feature = "images"))]
    {
        if (!tabular && path.is_dir()) || is_idx || options.grey {
            return Err(ReadError::NoImageSupport { name });
        }
    }
    match ext.as_str() {
        "csv" => read_csv(path),
        "npy" => read_npy(path),
        _ => Err(ReadError::UnknownFormat { name, ext }),
    }
}

/// Opens `path` for reading; returns the file and its length in bytes.
///
/// Missing files, permission problems and directories get their own errors.
fn open(path: &Path) -> Result<(File, u64), ReadError> {
    let name = || path.display().to_string();
    let file = File::open(path).map_err(|e| os_error(&name(), e))?;
    let meta = file.metadata().map_err(|e| os_error(&name(), e))?;
    if meta.is_dir() {
        return Err(ReadError::IsDirectory { name: name() });
    }
    Ok((file, meta.len()))
}

/// Maps an OS error to the most specific [`ReadError`].
fn os_error(name: &str, e: std::io::Error) -> ReadError {
    let name = name.to_string();
    match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::NotFound { name },
        std::io::ErrorKind::PermissionDenied => ReadError::PermissionDenied { name },
        std::io::ErrorKind::IsADirectory => ReadError::IsDirectory { name },
        _ => ReadError::Io { name, source: e },
    }
}

/// Quotes and escapes `text` for a one-line message, cut to at most 40 characters.
fn excerpt(text: &str) -> String {
    const MAX: usize = 40;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// A shape written as Python does: `(3,)`, `(3, 4)`, `()`.
fn shape_text(shape: &[u64]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(u64::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}
