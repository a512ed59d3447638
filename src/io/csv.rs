//! Comma-separated text: one data point per line, one number per cell.
//!
//! The rules are documented on [`read_csv`].

use super::{ReadError, excerpt, open};
use crate::RowMatrix;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Size of the read buffer for CSV files.
const BUF_BYTES: usize = 1 << 20;

/// Reads a CSV file, streaming it line by line.
///
/// Rules, in the order they are applied to each line:
/// - the line ending `\n` or `\r\n` is removed, and on line 1 a UTF-8 byte-order mark;
/// - a line that is empty or only whitespace is blank. Blank lines at the end of the file are
///   ignored; a blank line followed by any more data is an error ([`ReadError::BlankLine`]),
///   since it usually means two files were glued together or a row was lost;
/// - line 1 is a header, and skipped, when one of its cells is non-empty text that does not
///   parse as a number (`x,y,z` or `id,1,2`). Only line 1 can be a header;
/// - cells are split on `,` (no quoting) and surrounding spaces and tabs are trimmed. Each
///   must parse as an `f64` (Rust's decimal syntax: `1`, `-2.5`, `.5`, `3e-4`) and be finite:
///   `nan`, `inf`, `-Infinity` and overflowing literals such as `1e400` are rejected;
/// - every data row must have as many cells as the first data row.
pub fn read_csv(path: &Path) -> Result<RowMatrix, ReadError> {
    let (file, _) = open(path)?;
    parse_csv(
        BufReader::with_capacity(BUF_BYTES, file),
        &path.display().to_string(),
    )
}

/// Parses CSV text from `reader` by the rules of [`read_csv`]; `name` is the file name shown
/// in error messages.
///
/// Lines are read one at a time into a reused buffer and their values appended to one
/// `Vec<f64>`, so memory holds the matrix and one line, never the whole text.
pub fn parse_csv(mut reader: impl BufRead, name: &str) -> Result<RowMatrix, ReadError> {
    let mut buf: Vec<u8> = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    // (columns, line) of the first data row.
    let mut first_row: Option<(usize, u64)> = None;
    let mut n_rows = 0usize;
    let mut line_no = 0u64;
    let mut blank_since: Option<u64> = None;
    let mut has_header = false;
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| ReadError::Io {
                name: name.to_string(),
                source: e,
            })?;
        if read == 0 {
            break;
        }
        line_no += 1;
        let mut line = buf.as_slice();
        line = line.strip_suffix(b"\n").unwrap_or(line);
        line = line.strip_suffix(b"\r").unwrap_or(line);
        if line_no == 1 {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.trim_ascii().is_empty() {
            blank_since.get_or_insert(line_no);
            continue;
        }
        if let Some(blank) = blank_since {
            return Err(ReadError::BlankLine {
                name: name.to_string(),
                line: blank,
            });
        }
        if line_no == 1 && is_header(line) {
            has_header = true;
            continue;
        }
        let mut n_cells = 0usize;
        for cell in line.split(|&b| b == b',') {
            n_cells += 1;
            values.push(parse_cell(cell, name, line_no, n_cells)?);
        }
        match first_row {
            None => first_row = Some((n_cells, line_no)),
            Some((expected, first_line)) if expected != n_cells => {
                return Err(ReadError::Ragged {
                    name: name.to_string(),
                    line: line_no,
                    found: n_cells,
                    expected,
                    first_line,
                });
            }
            Some(_) => {}
        }
        n_rows += 1;
    }
    let Some((n_cols, _)) = first_row else {
        let detail = if has_header {
            "only a header line, no data rows"
        } else if line_no == 0 {
            "the file is empty"
        } else {
            "only blank lines"
        };
        return Err(ReadError::Empty {
            name: name.to_string(),
            detail: detail.to_string(),
        });
    };
    values.shrink_to_fit();
    Ok(RowMatrix::new(n_rows, n_cols, values))
}

/// Whether line 1 is a header: some cell is non-empty text that is not a number.
fn is_header(line: &[u8]) -> bool {
    line.split(|&b| b == b',').any(|cell| {
        let cell = cell.trim_ascii();
        !cell.is_empty()
            && std::str::from_utf8(cell)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .is_none()
    })
}

/// Parses one cell (1-based `line` and `col` for the error message).
fn parse_cell(cell: &[u8], name: &str, line: u64, col: usize) -> Result<f64, ReadError> {
    let cell = cell.trim_ascii();
    if cell.is_empty() {
        return Err(ReadError::EmptyCell {
            name: name.to_string(),
            line,
            col,
        });
    }
    let parsed = std::str::from_utf8(cell)
        .ok()
        .and_then(|s| s.parse::<f64>().ok());
    match parsed {
        Some(v) if v.is_finite() => Ok(v),
        Some(_) => Err(ReadError::NonFiniteCell {
            name: name.to_string(),
            line,
            col,
            text: excerpt(&String::from_utf8_lossy(cell)),
        }),
        None => Err(ReadError::NotNumber {
            name: name.to_string(),
            line,
            col,
            text: excerpt(&String::from_utf8_lossy(cell)),
        }),
    }
}
