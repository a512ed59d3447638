//! Comma-separated text: one data point per line, one number per cell.
//!
//! The rules are documented on [`read_csv`].

use super::{ReadError, available_memory, excerpt, open};
use crate::RowMatrix;
use std::io::{BufRead, BufReader, Read};
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
/// - line 1 is a header, and skipped, when none of its cells parses as a number and at least
///   one is non-empty (`x,y,z`, or `,a,b` with a blank index column). A line 1 that mixes
///   numbers and text (`1,2x`) is an error naming the first text cell
///   ([`ReadError::MixedHeader`]): it is a data row with a typo or a header with a number in
///   it, and taking it for either would lose a row or a name silently. Only line 1 can be a
///   header;
/// - cells are split on `,` (no quoting) and surrounding spaces and tabs are trimmed. Each
///   must parse as an `f64` (Rust's decimal syntax: `1`, `-2.5`, `.5`, `3e-4`) and be finite:
///   `nan`, `inf`, `-Infinity` and overflowing literals such as `1e400` are rejected;
/// - every data row must have as many cells as the first data row;
/// - the matrix must fit in the memory available ([`available_memory`]), checked each time
///   the value buffer grows ([`ReadError::OutOfMemory`]), and a line may not be longer than
///   a quarter of it ([`ReadError::LineTooLong`]).
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
pub fn parse_csv(reader: impl BufRead, name: &str) -> Result<RowMatrix, ReadError> {
    let memory = available_memory();
    parse_csv_within(reader, name, memory, memory / 4)
}

/// [`parse_csv`] with the memory the values may take and the longest line allowed, in bytes.
pub(super) fn parse_csv_within(
    mut reader: impl BufRead,
    name: &str,
    memory: u64,
    max_line: u64,
) -> Result<RowMatrix, ReadError> {
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
        let read = (&mut reader)
            .take(max_line)
            .read_until(b'\n', &mut buf)
            .map_err(|e| ReadError::Io {
                name: name.to_string(),
                source: e,
            })?;
        if read == 0 {
            break;
        }
        line_no += 1;
        if read as u64 == max_line && buf.last() != Some(&b'\n') {
            return Err(ReadError::LineTooLong {
                name: name.to_string(),
                line: line_no,
                limit: max_line,
            });
        }
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
        if line_no == 1 && is_header(line, name)? {
            has_header = true;
            continue;
        }
        let mut n_cells = 0usize;
        for cell in line.split(|&b| b == b',') {
            n_cells += 1;
            if values.len() == values.capacity() {
                let cols = first_row.map_or(n_cells, |(c, _)| c);
                grow(&mut values, memory, name, n_rows + 1, cols)?;
            }
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

/// Doubles the room of `values` (at least 4096 values), within `memory` bytes; the
/// matrix's shape so far (`rows`, `cols`) is for the message.
fn grow(
    values: &mut Vec<f64>,
    memory: u64,
    name: &str,
    rows: usize,
    cols: usize,
) -> Result<(), ReadError> {
    let most = usize::try_from(memory / 8).unwrap_or(usize::MAX);
    let want = values.capacity().saturating_mul(2).max(4096).min(most);
    let out_of_memory = || ReadError::OutOfMemory {
        name: name.to_string(),
        rows: rows as u64,
        cols: cols as u64,
        bytes: (rows as u128) * (cols as u128) * 8,
        available: memory,
    };
    if want <= values.len() {
        return Err(out_of_memory());
    }
    values
        .try_reserve_exact(want - values.len())
        .map_err(|_| out_of_memory())
}

/// Whether line 1 is a header: no cell is a number and some cell is non-empty. A line with
/// both numbers and text is an error naming its first text cell.
fn is_header(line: &[u8], name: &str) -> Result<bool, ReadError> {
    let mut numbers = 0;
    let mut text: Option<(usize, &[u8])> = None;
    for (j, cell) in line.split(|&b| b == b',').enumerate() {
        let cell = cell.trim_ascii();
        if cell.is_empty() {
            continue;
        }
        let is_number = std::str::from_utf8(cell)
            .ok()
            .is_some_and(|s| s.parse::<f64>().is_ok());
        if is_number {
            numbers += 1;
        } else if text.is_none() {
            text = Some((j + 1, cell));
        }
    }
    match (numbers, text) {
        (0, Some(_)) => Ok(true),
        (_, None) => Ok(false),
        (_, Some((col, cell))) => Err(ReadError::MixedHeader {
            name: name.to_string(),
            col,
            text: excerpt(&String::from_utf8_lossy(cell)),
        }),
    }
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
