//! Tests of the CSV reader on in-memory text.

use super::csv::parse_csv_within;
use super::{ReadError, parse_csv};
use crate::RowMatrix;

fn parse(text: &str) -> Result<RowMatrix, ReadError> {
    parse_csv(text.as_bytes(), "data.csv")
}

/// The error message for `text`, which must fail.
fn message(text: &str) -> String {
    match parse(text) {
        Ok(x) => panic!("{text:?} parsed as {x:?}, expected an error"),
        Err(e) => e.to_string(),
    }
}

fn assert_msg(text: &str, parts: &[&str]) {
    let msg = message(text);
    assert!(!msg.contains('\n'), "message is not one line: {msg:?}");
    for p in parts {
        assert!(msg.contains(p), "message {msg:?} lacks {p:?}");
    }
}

#[test]
fn plain_numbers() {
    let x = parse("1,2,3\n4.5,-6e-1,.25\n").unwrap();
    assert_eq!(
        x,
        RowMatrix::from_rows(&[[1.0, 2.0, 3.0], [4.5, -0.6, 0.25]])
    );
}

#[test]
fn whitespace_crlf_and_no_final_newline() {
    let x = parse("  1 ,\t2\r\n3,   4  \r\n5,6").unwrap();
    assert_eq!(
        x,
        RowMatrix::from_rows(&[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    );
}

#[test]
fn trailing_blank_lines_are_ignored() {
    let x = parse("1,2\n3,4\n\n  \r\n\n").unwrap();
    assert_eq!(x.n_rows(), 2);
    assert_eq!(x.as_slice(), &[1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn blank_line_in_the_middle_is_an_error() {
    assert_msg(
        "1,2\n\n \n3,4\n",
        &["data.csv line 2:", "blank line", "delete it"],
    );
    assert_msg("\n1,2\n", &["data.csv line 1:", "blank line"]);
}

#[test]
fn header_is_detected_and_skipped() {
    let x = parse("x,y,z\n1,2,3\n").unwrap();
    assert_eq!(x, RowMatrix::from_rows(&[[1.0, 2.0, 3.0]]));
    // One non-numeric cell is enough (a pandas index column, say).
    let x = parse(",a,b\r\n0,1.5,2\r\n1,3,4\r\n").unwrap();
    assert_eq!(x, RowMatrix::from_rows(&[[0.0, 1.5, 2.0], [1.0, 3.0, 4.0]]));
    // Header with a byte-order mark and quoted names.
    let x = parse("\u{feff}\"a\",\"b\"\n1,2\n").unwrap();
    assert_eq!(x.as_slice(), &[1.0, 2.0]);
    // A BOM before numbers is not a header.
    let x = parse("\u{feff}1,2\n3,4\n").unwrap();
    assert_eq!(x.n_rows(), 2);
}

/// Issue 10: `0,1\n1,2x` lost its first row, taken for a header; a first line that mixes
/// numbers and text is now an error naming the text cell.
#[test]
fn a_first_line_mixing_numbers_and_text_is_an_error() {
    assert_msg(
        "1,2x\n3,4\n",
        &[
            "data.csv line 1, column 2:",
            "\"2x\" is not a number",
            "header line holds no numbers",
        ],
    );
    assert_msg("id,1,2\n7,8,9\n", &["line 1, column 1:", "\"id\""]);
    // The first text cell is named, whatever comes before it.
    assert_msg(" , 5 ,b,c\n1,2,3,4\n", &["line 1, column 3:", "\"b\""]);
    // On later lines a text cell is the usual error.
    assert_msg(
        "1,2\n3,4x\n",
        &["line 2, column 2:", "\"4x\" is not a number"],
    );
}

/// The reader stops with a message, not an abort, when the values outgrow the memory it may
/// use or a line never ends.
#[test]
fn memory_and_line_limits() {
    let text = "1,2,3\n".repeat(2000);
    let x = parse_csv_within(text.as_bytes(), "data.csv", 1 << 20, 1 << 10).unwrap();
    assert_eq!(x.n_rows(), 2000);
    // 6000 values need 48 000 bytes; allow 40 000.
    let e = parse_csv_within(text.as_bytes(), "data.csv", 40_000, 1 << 10).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ReadError::OutOfMemory { cols: 3, .. }), "{e:?}");
    assert!(msg.contains("40.0 kB of memory is available"), "{msg}");
    let long = format!("1,2\n{}\n", "7,".repeat(100));
    let e = parse_csv_within(long.as_bytes(), "data.csv", 1 << 20, 64).unwrap_err();
    assert!(
        matches!(
            e,
            ReadError::LineTooLong {
                line: 2,
                limit: 64,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("data.csv line 2: longer than 64 bytes")
    );
    // A line of exactly the limit, with its line break, is fine.
    let x = parse_csv_within("1,22\n3,44\n".as_bytes(), "data.csv", 1 << 20, 5).unwrap();
    assert_eq!(x.as_slice(), &[1.0, 22.0, 3.0, 44.0]);
}

#[test]
fn all_numeric_first_line_is_data() {
    let x = parse("1,2\n3,4\n").unwrap();
    assert_eq!(x.n_rows(), 2);
    // Empty cells do not make a header: the first row is data, and broken.
    assert_msg("1,,3\n4,5,6\n", &["line 1, column 2: empty cell"]);
    // `nan` parses as a number, so this is data and rejected as non-finite.
    assert_msg(
        "nan,1\n2,3\n",
        &["line 1, column 1", "\"nan\"", "non-finite"],
    );
}

#[test]
fn only_the_first_line_can_be_a_header() {
    assert_msg(
        "a,b\nc,d\n1,2\n",
        &["data.csv line 2, column 1:", "\"c\" is not a number"],
    );
}

#[test]
fn empty_inputs() {
    assert_msg("", &["data.csv: no data", "the file is empty"]);
    assert_msg("\n\n  \n", &["data.csv: no data", "only blank lines"]);
    assert_msg("a,b,c\n", &["data.csv: no data", "only a header line"]);
    assert_msg("a,b,c\r\n\r\n", &["only a header line"]);
}

#[test]
fn ragged_rows() {
    assert_msg(
        "1,2,3,4\n5,6,7,8\n1,2,3\n",
        &[
            "data.csv line 3: 3 values, expected 4",
            "same number of columns as line 1",
        ],
    );
    assert_msg(
        "h1,h2\n1,2\n3,4,5\n",
        &["line 3: 3 values, expected 2", "as line 2"],
    );
}

#[test]
fn non_numeric_cells() {
    assert_msg(
        "1,2\n3,abc\n",
        &["data.csv line 2, column 2:", "\"abc\" is not a number"],
    );
    assert_msg(
        "1,2\n3;4,5\n",
        &["column 1", "\"3;4\"", "separated by commas"],
    );
    // Long text is cut.
    let long = "x".repeat(200);
    let msg = message(&format!("1,2\n3,{long}\n"));
    assert!(msg.contains(&format!("\"{}\"…", "x".repeat(40))), "{msg}");
    assert!(!msg.contains(&"x".repeat(41)), "{msg}");
    // Control characters are escaped, keeping the message on one line.
    assert_msg("1,2\n3,a\u{b}b\n", &["\"a\\u{b}b\""]);
    // Bytes that are not UTF-8.
    let err = parse_csv(&b"1,2\n3,\xff\xfe\n"[..], "data.csv").unwrap_err();
    assert!(err.to_string().contains("line 2, column 2"), "{err}");
    assert!(matches!(
        err,
        ReadError::NotNumber {
            line: 2,
            col: 2,
            ..
        }
    ));
}

#[test]
fn non_finite_cells_are_rejected() {
    for (cell, col) in [
        ("nan", 2),
        ("NaN", 2),
        ("-nan", 2),
        ("inf", 2),
        ("-inf", 2),
        ("+Inf", 2),
        ("Infinity", 2),
        ("-Infinity", 2),
        ("1e400", 2),
        ("-1e309", 2),
    ] {
        let msg = message(&format!("1,2\n3, {cell} \n"));
        assert!(
            msg.contains(&format!(
                "data.csv line 2, column {col}: \"{cell}\" is not finite"
            )),
            "{msg}"
        );
        assert!(msg.contains("non-finite values"), "{msg}");
    }
}

#[test]
fn empty_cells() {
    assert_msg("1,2\n3,\n", &["data.csv line 2, column 2: empty cell"]);
    assert_msg("1,2\n , 4\n", &["line 2, column 1: empty cell"]);
    assert_msg("1,2\n1,2,\n", &["line 2, column 3: empty cell"]);
}

#[test]
fn single_column_and_extremes() {
    let x = parse("1\n-2\n3e-300\n1.7976931348623157e308\n").unwrap();
    assert_eq!((x.n_rows(), x.n_cols()), (4, 1));
    assert_eq!(x.as_slice()[3], f64::MAX);
    // Round trip of shortest representations is exact.
    let v = [0.1, -1.0 / 3.0, 123456.789e-12, f64::MIN_POSITIVE];
    let text: Vec<String> = v.iter().map(|a| format!("{a:?}")).collect();
    let x = parse(&text.join(",")).unwrap();
    assert_eq!(x.as_slice(), &v);
}

#[test]
fn many_rows_stream() {
    // Enough rows to cross many read-buffer boundaries with a small buffer.
    let mut text = String::from("a,b,c\n");
    for i in 0..5000 {
        text.push_str(&format!("{i},{},{}\r\n", i * 2, -(i as i64)));
    }
    let reader = std::io::BufReader::with_capacity(7, text.as_bytes());
    let x = parse_csv(reader, "big.csv").unwrap();
    assert_eq!((x.n_rows(), x.n_cols()), (5000, 3));
    assert_eq!(x.row(4321), &[4321.0, 8642.0, -4321.0]);
}
