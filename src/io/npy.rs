//! NumPy `.npy` files (format versions 1.0, 2.0 and 3.0).
//!
//! Layout: the magic `\x93NUMPY`, two version bytes, the header length (`u16` little-endian
//! for 1.0, `u32` for 2.0 and 3.0), the header (a Python dict literal, see
//! [`npy_header`](super::npy_header)), then the elements back to back.
//!
//! The accepted arrays are documented on [`read_npy`].

use super::npy_header::{Dtype, Header, Kind, parse_header};
use super::{ReadError, check_matrix_memory, open, reserve, shape_text};
use crate::RowMatrix;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

/// The first six bytes of every `.npy` file.
const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Longest header accepted (NumPy's own headers are under 1 KiB for 2-D arrays).
const MAX_HEADER: u64 = 1 << 20;
/// Bytes decoded per chunk of data.
const CHUNK_BYTES: usize = 1 << 16;

/// Reads a 2-D `.npy` file in chunks through a `BufReader`.
///
/// Only 2-D arrays are read. Element types: `f8` and `f4` in either byte order, integers
/// `i1 i2 i4 i8 u1 u2 u4 u8` and booleans `b1`, all converted to `f64` (integers beyond
/// 2⁵³ round to the nearest `f64`). Fortran-order arrays are transposed into row-major order
/// while they are read, into the one output vector.
///
/// The header is untrusted: its claimed data size, `rows × cols × itemsize` in checked
/// arithmetic, must equal the bytes that follow it in the file before anything is allocated,
/// so a truncated file or a header claiming a huge shape fails at once.
pub fn read_npy(path: &Path) -> Result<RowMatrix, ReadError> {
    let (file, len) = open(path)?;
    parse_npy(
        BufReader::with_capacity(1 << 20, file),
        len,
        &path.display().to_string(),
    )
}

/// Parses `.npy` bytes from `reader`, whose total length is `total_len` bytes (the file
/// size; `bytes.len()` for an in-memory slice). `name` is shown in error messages.
///
/// `total_len` is what the header is checked against before any allocation; the reader is
/// still checked to end exactly where the data end.
pub fn parse_npy(
    mut reader: impl Read,
    total_len: u64,
    name: &str,
) -> Result<RowMatrix, ReadError> {
    let name_s = || name.to_string();
    let io_err = |e| ReadError::Io {
        name: name_s(),
        source: e,
    };

    // Magic and version.
    let mut pre = [0u8; 8];
    let got = read_full(&mut reader, &mut pre).map_err(io_err)?;
    if got < 8 || &pre[..6] != MAGIC {
        return Err(if got < 8 && pre[..got] == MAGIC[..got.min(6)] && got > 0 {
            ReadError::NpyHeader {
                name: name_s(),
                detail: format!("the file ends after {got} bytes, inside the preamble"),
            }
        } else {
            ReadError::NpyMagic { name: name_s() }
        });
    }
    let (major, minor) = (pre[6], pre[7]);
    let len_bytes = match (major, minor) {
        (1, 0) => 2,
        (2 | 3, 0) => 4,
        _ => {
            return Err(ReadError::NpyVersion {
                name: name_s(),
                major,
                minor,
            });
        }
    };

    // Header length, checked against the file before the header is read.
    let mut len_buf = [0u8; 4];
    let got = read_full(&mut reader, &mut len_buf[..len_bytes]).map_err(io_err)?;
    if got < len_bytes {
        return Err(ReadError::NpyHeader {
            name: name_s(),
            detail: "the file ends inside the header length field".into(),
        });
    }
    let header_len = u64::from(u32::from_le_bytes(len_buf));
    let data_start = 8 + len_bytes as u64 + header_len;
    if data_start > total_len {
        return Err(ReadError::NpyHeaderLength {
            name: name_s(),
            len: header_len,
            detail: format!("the file has only {} bytes after the length field", {
                total_len.saturating_sub(8 + len_bytes as u64)
            }),
        });
    }
    if header_len > MAX_HEADER {
        return Err(ReadError::NpyHeaderLength {
            name: name_s(),
            len: header_len,
            detail: format!("more than the {MAX_HEADER}-byte limit"),
        });
    }
    let mut text = vec![0u8; header_len as usize];
    let got = read_full(&mut reader, &mut text).map_err(io_err)?;
    if got < text.len() {
        return Err(ReadError::NpyHeader {
            name: name_s(),
            detail: format!("the file ends after {got} of the {header_len} header bytes"),
        });
    }
    let header = parse_header(&text).map_err(|detail| ReadError::NpyHeader {
        name: name_s(),
        detail,
    })?;

    let layout = check_header(&header, total_len - data_start, name)?;
    let data = match layout.dtype {
        Dtype {
            kind: Kind::F64,
            big_endian,
            ..
        } => read_data(&mut reader, &layout, name, move |b| {
            let b: [u8; 8] = b.try_into().expect("8-byte chunk");
            if big_endian {
                f64::from_be_bytes(b)
            } else {
                f64::from_le_bytes(b)
            }
        }),
        Dtype {
            kind: Kind::F32,
            big_endian,
            ..
        } => read_data(&mut reader, &layout, name, move |b| {
            let b: [u8; 4] = b.try_into().expect("4-byte chunk");
            f64::from(if big_endian {
                f32::from_be_bytes(b)
            } else {
                f32::from_le_bytes(b)
            })
        }),
        Dtype {
            kind: Kind::Int,
            big_endian,
            ..
        } => read_data(&mut reader, &layout, name, move |b| {
            int_to_f64(b, big_endian, true)
        }),
        Dtype {
            kind: Kind::Uint,
            big_endian,
            ..
        } => read_data(&mut reader, &layout, name, move |b| {
            int_to_f64(b, big_endian, false)
        }),
        Dtype {
            kind: Kind::Bool, ..
        } => read_data(&mut reader, &layout, name, |b| {
            f64::from(u8::from(b[0] != 0))
        }),
    }?;
    Ok(RowMatrix::new(layout.rows, layout.cols, data))
}

/// The checked facts needed to read the data.
struct Layout {
    rows: usize,
    cols: usize,
    fortran: bool,
    dtype: Dtype,
    shape: String,
    descr: String,
}

/// Validates dtype and shape, and the claimed data size against the `available` bytes.
fn check_header(h: &Header, available: u64, name: &str) -> Result<Layout, ReadError> {
    let dtype = h.dtype.clone().map_err(|hint| ReadError::NpyDtype {
        name: name.to_string(),
        descr: h.descr.clone(),
        hint,
    })?;
    let shape = shape_text(&h.shape);
    let &[rows, cols] = h.shape.as_slice() else {
        let hint = match h.shape.len() {
            0 => "a single number is not a data matrix; save a 2-D array".to_string(),
            1 => "for N points of one dimension save x.reshape(-1, 1); for one point save x.reshape(1, -1)"
                .to_string(),
            _ => "flatten the trailing axes to one row per point, e.g. x.reshape(x.shape[0], -1)"
                .to_string(),
        };
        return Err(ReadError::NpyShape {
            name: name.to_string(),
            shape,
            hint,
        });
    };
    let expected = rows
        .checked_mul(cols)
        .and_then(|n| n.checked_mul(dtype.size as u64));
    let too_large = || ReadError::NpyTooLarge {
        name: name.to_string(),
        shape: shape.clone(),
        descr: h.descr.clone(),
    };
    let expected = expected.ok_or_else(too_large)?;
    if expected > available {
        return Err(ReadError::NpyTruncated {
            name: name.to_string(),
            shape,
            descr: h.descr.clone(),
            expected,
            found: available,
        });
    }
    if expected < available {
        return Err(ReadError::NpyTrailing {
            name: name.to_string(),
            shape,
            descr: h.descr.clone(),
            expected,
            found: available,
        });
    }
    // The bytes are in the file, so the counts fit in memory addresses unless usize is
    // narrower than the file; check anyway.
    let rows = usize::try_from(rows).map_err(|_| too_large())?;
    let cols = usize::try_from(cols).map_err(|_| too_large())?;
    rows.checked_mul(cols)
        .and_then(|n| n.checked_mul(8))
        .ok_or_else(too_large)?;
    if rows == 0 || cols == 0 {
        return Err(ReadError::Empty {
            name: name.to_string(),
            detail: format!("the array has shape {shape}"),
        });
    }
    // A file of small integers (or booleans) is 8, 4 or 2 times smaller than its matrix.
    check_matrix_memory(name, rows as u64, cols as u64)?;
    Ok(Layout {
        rows,
        cols,
        fortran: h.fortran_order,
        dtype,
        shape,
        descr: h.descr.clone(),
    })
}

/// Reads `rows × cols` elements, decoding each with `decode`, into a row-major vector.
///
/// C order appends chunk after chunk; Fortran order writes each element at its row-major
/// place `i * cols + j` in the one output vector. Fails on a short read, on bytes left over
/// after the data, and on the first non-finite value in row-major order.
fn read_data(
    reader: &mut impl Read,
    layout: &Layout,
    name: &str,
    decode: impl Fn(&[u8]) -> f64,
) -> Result<Vec<f64>, ReadError> {
    let (rows, cols, size) = (layout.rows, layout.cols, layout.dtype.size);
    let n = rows * cols;
    let mut data: Vec<f64> = Vec::new();
    reserve(&mut data, n, name, rows as u64, cols as u64)?;
    if layout.fortran {
        data.resize(n, 0.0);
    }
    let chunk_items = CHUNK_BYTES / size;
    let mut buf = vec![0u8; chunk_items * size];
    let mut done = 0usize;
    // Row-major index of the first non-finite value.
    let mut first_bad: Option<usize> = None;
    // Fortran order: (row, column) of the next element.
    let (mut i, mut j) = (0usize, 0usize);
    while done < n {
        let take = (n - done).min(chunk_items);
        let bytes = &mut buf[..take * size];
        let got = read_full(reader, bytes).map_err(|e| ReadError::Io {
            name: name.to_string(),
            source: e,
        })?;
        if got < bytes.len() {
            return Err(ReadError::NpyTruncated {
                name: name.to_string(),
                shape: layout.shape.clone(),
                descr: layout.descr.clone(),
                expected: (n * size) as u64,
                found: (done * size + got) as u64,
            });
        }
        if layout.fortran {
            for b in bytes.chunks_exact(size) {
                let v = decode(b);
                let at = i * cols + j;
                if !v.is_finite() && first_bad.is_none_or(|f| at < f) {
                    first_bad = Some(at);
                }
                data[at] = v;
                i += 1;
                if i == rows {
                    i = 0;
                    j += 1;
                }
            }
        } else {
            data.extend(bytes.chunks_exact(size).map(&decode));
            if first_bad.is_none()
                && let Some(k) = data[done..].iter().position(|v| !v.is_finite())
            {
                first_bad = Some(done + k);
            }
        }
        done += take;
    }
    let extra = std::io::copy(reader, &mut std::io::sink()).map_err(|e| ReadError::Io {
        name: name.to_string(),
        source: e,
    })?;
    if extra > 0 {
        let expected = (n * size) as u64;
        return Err(ReadError::NpyTrailing {
            name: name.to_string(),
            shape: layout.shape.clone(),
            descr: layout.descr.clone(),
            expected,
            found: expected + extra,
        });
    }
    if let Some(at) = first_bad {
        return Err(ReadError::NpyNonFinite {
            name: name.to_string(),
            row: at / cols,
            col: at % cols,
            value: data[at],
        });
    }
    Ok(data)
}

/// Decodes a 1-, 2-, 4- or 8-byte integer to the nearest `f64`.
#[inline]
fn int_to_f64(b: &[u8], big_endian: bool, signed: bool) -> f64 {
    let mut w = [0u8; 8];
    let k = b.len();
    // Place the bytes little-endian in the low `k` bytes of a u64.
    if big_endian {
        for (dst, src) in w[..k].iter_mut().zip(b.iter().rev()) {
            *dst = *src;
        }
    } else {
        w[..k].copy_from_slice(b);
    }
    let u = u64::from_le_bytes(w);
    if signed {
        // Sign-extend from k bytes.
        let shift = 64 - 8 * k as u32;
        (((u << shift) as i64) >> shift) as f64
    } else {
        u as f64
    }
}

/// Reads until `buf` is full or the reader ends; returns the bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Writes `x` to `path` as a version 1.0 `.npy` file of `<f8` in C order.
pub fn write_npy(path: &Path, x: &RowMatrix) -> std::io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    write_npy_to(&mut w, x)?;
    w.flush()
}

/// Writes `x` as `.npy` bytes (version 1.0, `<f8`, C order) to any writer.
///
/// The header is padded with spaces so that the data start at a multiple of 64 bytes, as
/// NumPy does.
pub fn write_npy_to(mut w: impl Write, x: &RowMatrix) -> std::io::Result<()> {
    let dict = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}",
        x.n_rows(),
        x.n_cols()
    );
    // magic (6) + version (2) + length (2) + dict + padding + '\n' ≡ 0 (mod 64).
    let unpadded = 10 + dict.len() + 1;
    let header_len = dict.len() + unpadded.next_multiple_of(64) - unpadded + 1;
    let header_len = u16::try_from(header_len)
        .map_err(|_| std::io::Error::other("npy header longer than 65535 bytes"))?;
    w.write_all(MAGIC)?;
    w.write_all(&[1, 0])?;
    w.write_all(&header_len.to_le_bytes())?;
    w.write_all(dict.as_bytes())?;
    w.write_all(&vec![b' '; usize::from(header_len) - dict.len() - 1])?;
    w.write_all(b"\n")?;
    let mut buf = Vec::with_capacity(CHUNK_BYTES);
    for chunk in x.as_slice().chunks(CHUNK_BYTES / 8) {
        buf.clear();
        for v in chunk {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        w.write_all(&buf)?;
    }
    Ok(())
}
