//! IDX files, the format of MNIST and Fashion-MNIST, plain or gzip-compressed.
//!
//! An IDX file is a big-endian header followed by unsigned bytes:
//! - images: magic 2051 (`0x00000803`), then the image count n, rows h and columns w as
//!   32-bit integers, then n·h·w bytes, image after image, each row-major. Read as an
//!   `n × (h·w)` matrix with every byte divided by 255, so values are in [0, 1] as for
//!   image folders;
//! - labels: magic 2049 (`0x00000801`), then n, then n bytes. Read as an `n × 1` matrix of
//!   the label values (0–9 for MNIST), not scaled.
//!
//! Compression is recognised by the gzip signature (`1f 8b`), not by the name. Before any
//! large allocation the header's byte count is checked against the file: the file size for a
//! plain file, and the uncompressed size recorded in the gzip trailer (ISIZE, the size modulo
//! 2³²) for a compressed one. The data are then streamed in chunks, and a stream that ends
//! early, holds more bytes than the header says, or fails its CRC is an error.

use super::{ReadError, check_matrix_memory, open, os_error, reserve};
use crate::RowMatrix;
use flate2::read::GzDecoder;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// Magic number of an IDX image file (unsigned bytes, 3 dimensions).
pub const IDX_IMAGES: u32 = 0x0000_0803;
/// Magic number of an IDX label file (unsigned bytes, 1 dimension).
pub const IDX_LABELS: u32 = 0x0000_0801;

/// What an IDX file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdxKind {
    /// Images of `height × width` pixels, one per row, values in [0, 1].
    Images {
        /// Pixel rows per image.
        height: usize,
        /// Pixel columns per image.
        width: usize,
    },
    /// One label per row (a single column of raw byte values).
    Labels,
}

/// An IDX file read as a matrix.
#[derive(Clone, Debug)]
pub struct Idx {
    /// `n × (h·w)` pixels in [0, 1], or `n × 1` labels.
    pub x: RowMatrix,
    /// Images or labels, with the image size.
    pub kind: IdxKind,
}

/// Bytes converted per read.
const CHUNK: usize = 1 << 16;

/// Reads an IDX image or label file, gzip-compressed or not (see the module doc).
pub fn read_idx(path: &Path) -> Result<Idx, ReadError> {
    let name = path.display().to_string();
    let (mut file, len) = open(path)?;
    let io = |e: std::io::Error| os_error(&name, e);
    let mut sig = [0u8; 2];
    let got = read_full(&mut file, &mut sig).map_err(io)?;
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    if got == 2 && sig == [0x1f, 0x8b] {
        // ISIZE: the last 4 bytes, little-endian, the uncompressed size modulo 2^32.
        let isize = if len >= 18 {
            let mut t = [0u8; 4];
            file.seek(SeekFrom::End(-4)).map_err(io)?;
            read_full(&mut file, &mut t).map_err(io)?;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            Some(u32::from_le_bytes(t))
        } else {
            None
        };
        let reader = GzDecoder::new(BufReader::new(file));
        parse(reader, Size::Gzip(isize), &name)
    } else {
        parse(BufReader::new(file), Size::Plain(len), &name)
    }
}

/// What is known of the uncompressed size before reading.
#[derive(Clone, Copy, Debug)]
enum Size {
    /// A plain file of this many bytes.
    Plain(u64),
    /// A gzip file whose trailer records this size modulo 2^32 (None: too short to have one).
    Gzip(Option<u32>),
}

fn parse(mut r: impl Read, size: Size, name: &str) -> Result<Idx, ReadError> {
    let gz = matches!(size, Size::Gzip(_));
    let read_err = |e: std::io::Error| stream_error(e, gz, name);
    let truncated = |detail: String| ReadError::IdxTruncated {
        name: name.to_string(),
        detail,
    };
    let mut magic = [0u8; 4];
    let got = read_full(&mut r, &mut magic).map_err(read_err)?;
    if got < 4 {
        return Err(truncated(format!(
            "{got} bytes, fewer than the 4-byte magic number"
        )));
    }
    let magic = u32::from_be_bytes(magic);
    let n_dims = match magic {
        IDX_IMAGES => 3,
        IDX_LABELS => 1,
        _ => {
            return Err(ReadError::IdxMagic {
                name: name.to_string(),
                magic,
            });
        }
    };
    let mut dims = [0u64; 3];
    for (i, d) in dims.iter_mut().take(n_dims).enumerate() {
        let mut b = [0u8; 4];
        if read_full(&mut r, &mut b).map_err(read_err)? < 4 {
            return Err(truncated(format!(
                "the header ends inside dimension {} of {n_dims}",
                i + 1
            )));
        }
        *d = u64::from(u32::from_be_bytes(b));
    }
    let header = 4 + 4 * n_dims as u64;
    let (n, per_row, kind, what) = if n_dims == 3 {
        let (h, w) = (dims[1], dims[2]);
        let kind = IdxKind::Images {
            height: h as usize,
            width: w as usize,
        };
        (
            dims[0],
            h * w,
            kind,
            format!("{} images of {h}×{w}", dims[0]),
        )
    } else {
        (dims[0], 1, IdxKind::Labels, format!("{} labels", dims[0]))
    };
    // Every factor is below 2^32, so n · h · w fits in u128 and the check is exact.
    let needed = u128::from(n) * u128::from(per_row);
    check_size(size, header, needed, &what, name)?;
    let (rows, cols) = (n as usize, per_row as usize);
    if rows == 0 || cols == 0 {
        return Err(ReadError::Empty {
            name: name.to_string(),
            detail: format!("the header says {what}"),
        });
    }
    // One byte per value in the file, eight in memory.
    check_matrix_memory(name, n, per_row)?;
    let total = needed as usize;
    let mut values: Vec<f64> = Vec::new();
    reserve(&mut values, total, name, n, per_row)?;
    let divisor = if n_dims == 3 { 255.0 } else { 1.0 };
    let mut buf = vec![0u8; CHUNK];
    while values.len() < total {
        let want = (total - values.len()).min(CHUNK);
        let got = read_full(&mut r, &mut buf[..want]).map_err(read_err)?;
        values.extend(buf[..got].iter().map(|&b| f64::from(b) / divisor));
        if got < want {
            return Err(truncated(format!(
                "{what} need {needed} data bytes after the {header}-byte header but the data end after {}",
                values.len()
            )));
        }
    }
    // One more byte must not exist; for gzip this read also reaches the CRC check.
    let mut extra = [0u8; 1];
    if read_full(&mut r, &mut extra).map_err(read_err)? > 0 {
        return Err(ReadError::IdxTrailing {
            name: name.to_string(),
            detail: format!("{what} need {needed} data bytes but there are more"),
        });
    }
    Ok(Idx {
        x: RowMatrix::new(rows, cols, values),
        kind,
    })
}

/// Compares the header's data size with what the file can hold, before allocating.
fn check_size(
    size: Size,
    header: u64,
    needed: u128,
    what: &str,
    name: &str,
) -> Result<(), ReadError> {
    let expected_total = u128::from(header) + needed;
    let found = match size {
        Size::Plain(len) => u128::from(len),
        // A trailer equal modulo 2^32 is all gzip can tell; the stream is checked as it is read.
        Size::Gzip(Some(isize)) if expected_total % (1u128 << 32) != u128::from(isize) => {
            if expected_total >= 1u128 << 32 {
                return Ok(());
            }
            // A cut gzip file ends in arbitrary bytes, so a mismatch says truncated or corrupt.
            return Err(ReadError::IdxTruncated {
                name: name.to_string(),
                detail: format!(
                    "{what} need {expected_total} bytes uncompressed but the gzip trailer records {isize} (the file is cut short or corrupt)"
                ),
            });
        }
        Size::Gzip(_) => return Ok(()),
    };
    let source = "the file holds";
    let data = found.saturating_sub(u128::from(header));
    if found < expected_total {
        Err(ReadError::IdxTruncated {
            name: name.to_string(),
            detail: format!(
                "{what} need {needed} data bytes after the {header}-byte header but {source} {data}"
            ),
        })
    } else if found > expected_total {
        Err(ReadError::IdxTrailing {
            name: name.to_string(),
            detail: format!(
                "{what} need {needed} data bytes after the {header}-byte header but {source} {data}"
            ),
        })
    } else {
        Ok(())
    }
}

/// Maps a read error: inside a gzip stream an early end is truncation and bad data is
/// corruption; anything else is the operating system's.
fn stream_error(e: std::io::Error, gz: bool, name: &str) -> ReadError {
    use std::io::ErrorKind;
    match (gz, e.kind()) {
        (true, ErrorKind::UnexpectedEof) => ReadError::IdxTruncated {
            name: name.to_string(),
            detail: "the gzip stream ends early".to_string(),
        },
        (true, ErrorKind::InvalidInput | ErrorKind::InvalidData | ErrorKind::Other) => {
            ReadError::Gzip {
                name: name.to_string(),
                detail: e.to_string(),
            }
        }
        _ => os_error(name, e),
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
