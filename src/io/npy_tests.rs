//! Tests of the `.npy` reader on bytes built by hand, independently of [`write_npy_to`].

use super::{ReadError, parse_npy, write_npy_to};
use crate::RowMatrix;
use std::time::Instant;

/// An `.npy` file: magic, `version`, header length, `dict` padded to 64 bytes, `data`.
fn npy(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let len_bytes = if version == 1 { 2 } else { 4 };
    let mut header = dict.as_bytes().to_vec();
    while !(8 + len_bytes + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

fn dict(descr: &str, fortran: bool, shape: &str) -> String {
    let f = if fortran { "True" } else { "False" };
    format!("{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {shape}, }}")
}

fn parse(bytes: &[u8]) -> Result<RowMatrix, ReadError> {
    parse_npy(bytes, bytes.len() as u64, "x.npy")
}

fn message(bytes: &[u8]) -> String {
    match parse(bytes) {
        Ok(x) => panic!("parsed as {x:?}, expected an error"),
        Err(e) => e.to_string(),
    }
}

fn assert_msg(bytes: &[u8], parts: &[&str]) {
    let msg = message(bytes);
    assert!(!msg.contains('\n'), "message is not one line: {msg:?}");
    for p in parts {
        assert!(msg.contains(p), "message {msg:?} lacks {p:?}");
    }
}

/// The 2 × 3 matrix used throughout: row-major 1..6 scaled.
fn m23() -> RowMatrix {
    RowMatrix::from_rows(&[[1.5, -2.0, 3.25], [4.0, 5.5, -6.75]])
}

fn le_f64(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn f64_c_order_all_versions() {
    let data = le_f64(&[1.5, -2.0, 3.25, 4.0, 5.5, -6.75]);
    for version in [1, 2, 3] {
        let bytes = npy(version, &dict("<f8", false, "(2, 3)"), &data);
        assert_eq!(parse(&bytes).unwrap(), m23(), "version {version}");
    }
}

#[test]
fn fortran_order_is_transposed() {
    // Column-major: column 0, then column 1, then column 2.
    let data = le_f64(&[1.5, 4.0, -2.0, 5.5, 3.25, -6.75]);
    let bytes = npy(1, &dict("<f8", true, "(2, 3)"), &data);
    assert_eq!(parse(&bytes).unwrap(), m23());
    // A tall one, bigger than one read chunk (65536 bytes): x[i, j] = 1000 i + j.
    let (r, c) = (3000, 7);
    let mut data = Vec::new();
    for j in 0..c {
        for i in 0..r {
            data.extend_from_slice(&((1000 * i + j) as f64).to_le_bytes());
        }
    }
    let x = parse(&npy(1, &dict("<f8", true, &format!("({r}, {c})")), &data)).unwrap();
    assert_eq!((x.n_rows(), x.n_cols()), (r, c));
    for i in [0, 1, 1234, r - 1] {
        for j in 0..c {
            assert_eq!(x.row(i)[j], (1000 * i + j) as f64);
        }
    }
}

#[test]
fn f32_and_big_endian() {
    let v32 = [1.5f32, -2.0, 3.25, 4.0, 5.5, -6.75];
    let le: Vec<u8> = v32.iter().flat_map(|x| x.to_le_bytes()).collect();
    let be: Vec<u8> = v32.iter().flat_map(|x| x.to_be_bytes()).collect();
    assert_eq!(
        parse(&npy(1, &dict("<f4", false, "(2, 3)"), &le)).unwrap(),
        m23()
    );
    assert_eq!(
        parse(&npy(1, &dict(">f4", false, "(2, 3)"), &be)).unwrap(),
        m23()
    );
    // f32 in Fortran order.
    let col: Vec<u8> = [1.5f32, 4.0, -2.0, 5.5, 3.25, -6.75]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(
        parse(&npy(2, &dict("<f4", true, "(2, 3)"), &col)).unwrap(),
        m23()
    );
    let be64: Vec<u8> = m23()
        .as_slice()
        .iter()
        .flat_map(|x| x.to_be_bytes())
        .collect();
    assert_eq!(
        parse(&npy(1, &dict(">f8", false, "(2, 3)"), &be64)).unwrap(),
        m23()
    );
    // 0.1f32 widens exactly, not to 0.1f64.
    let x = parse(&npy(
        1,
        &dict("<f4", false, "(1, 1)"),
        &0.1f32.to_le_bytes(),
    ))
    .unwrap();
    assert_eq!(x.as_slice(), &[f64::from(0.1f32)]);
}

#[test]
fn integer_and_bool_dtypes() {
    let want = RowMatrix::from_rows(&[[1.0, -2.0], [300.0, -4.0]]);
    let i4: Vec<u8> = [1i32, -2, 300, -4]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(
        parse(&npy(1, &dict("<i4", false, "(2, 2)"), &i4)).unwrap(),
        want
    );
    let i8: Vec<u8> = [1i64, -2, 300, -4]
        .iter()
        .flat_map(|x| x.to_be_bytes())
        .collect();
    assert_eq!(
        parse(&npy(1, &dict(">i8", false, "(2, 2)"), &i8)).unwrap(),
        want
    );
    let i2: Vec<u8> = [1i16, 300, -2, -4]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(
        parse(&npy(1, &dict("<i2", true, "(2, 2)"), &i2)).unwrap(),
        want
    );
    let u1 = [0u8, 255, 7, 128];
    let x = parse(&npy(1, &dict("|u1", false, "(2, 2)"), &u1)).unwrap();
    assert_eq!(x.as_slice(), &[0.0, 255.0, 7.0, 128.0]);
    let i1 = [0x80u8, 0x7f];
    let x = parse(&npy(1, &dict("|i1", false, "(1, 2)"), &i1)).unwrap();
    assert_eq!(x.as_slice(), &[-128.0, 127.0]);
    let u8s: Vec<u8> = [u64::MAX, 5].iter().flat_map(|x| x.to_le_bytes()).collect();
    let x = parse(&npy(1, &dict("<u8", false, "(2, 1)"), &u8s)).unwrap();
    assert_eq!(x.as_slice(), &[u64::MAX as f64, 5.0]);
    let b1 = [0u8, 1, 1, 0];
    let x = parse(&npy(1, &dict("|b1", false, "(2, 2)"), &b1)).unwrap();
    assert_eq!(x.as_slice(), &[0.0, 1.0, 1.0, 0.0]);
}

#[test]
fn writer_round_trip_is_bit_exact() {
    let mut x = RowMatrix::zeros(500, 37);
    for (k, v) in x.as_mut_slice().iter_mut().enumerate() {
        *v = (k as f64 * 0.7311).sin() * 1e3 / (k as f64 + 1.0);
    }
    let mut bytes = Vec::new();
    write_npy_to(&mut bytes, &x).unwrap();
    // The data start on a 64-byte boundary, as NumPy writes it.
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert!((10 + header_len).is_multiple_of(64));
    assert_eq!(bytes[10 + header_len - 1], b'\n');
    assert_eq!(bytes.len(), 10 + header_len + 500 * 37 * 8);
    let y = parse(&bytes).unwrap();
    assert_eq!(y, x);
    // The writer agrees with the hand-built format.
    let hand = npy(1, &dict("<f8", false, "(2, 3)"), &le_f64(m23().as_slice()));
    let mut written = Vec::new();
    write_npy_to(&mut written, &m23()).unwrap();
    assert_eq!(written, hand);
}

#[test]
fn one_d_and_other_shapes_are_rejected() {
    let data = le_f64(&[1.0, 2.0, 3.0]);
    assert_msg(
        &npy(1, &dict("<f8", false, "(3,)"), &data),
        &["x.npy: the array has shape (3,)", "2-D", "reshape(-1, 1)"],
    );
    assert_msg(
        &npy(1, &dict("<f8", false, "()"), &data[..8]),
        &["shape ()", "single number"],
    );
    assert_msg(
        &npy(1, &dict("<f8", false, "(1, 3, 1)"), &data),
        &["shape (1, 3, 1)", "x.reshape(x.shape[0], -1)"],
    );
}

#[test]
fn empty_arrays() {
    assert_msg(
        &npy(1, &dict("<f8", false, "(0, 4)"), &[]),
        &["x.npy: no data", "shape (0, 4)"],
    );
    assert_msg(
        &npy(1, &dict("<f8", false, "(5, 0)"), &[]),
        &["shape (5, 0)"],
    );
}

#[test]
fn truncated_and_trailing_data() {
    let data = le_f64(&[1.5, -2.0, 3.25, 4.0, 5.5, -6.75]);
    let full = npy(1, &dict("<f8", false, "(2, 3)"), &data);
    assert_msg(
        &full[..full.len() - 3],
        &[
            "x.npy: truncated",
            "shape (2, 3) of <f8 needs 48 data bytes",
            "holds 45",
        ],
    );
    let mut long = full.clone();
    long.extend_from_slice(&[0, 0]);
    assert_msg(
        &long,
        &["x.npy: 50 data bytes", "needs 48", "trailing bytes"],
    );
    // A reader that ends early although the stated length was right.
    let err = parse_npy(&full[..full.len() - 8], full.len() as u64, "x.npy").unwrap_err();
    assert!(
        matches!(
            err,
            ReadError::NpyTruncated {
                expected: 48,
                found: 40,
                ..
            }
        ),
        "{err}"
    );
    // A reader with more bytes than the stated length.
    let err = parse_npy(&long[..], full.len() as u64, "x.npy").unwrap_err();
    assert!(
        matches!(
            err,
            ReadError::NpyTrailing {
                expected: 48,
                found: 50,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn huge_claimed_shape_fails_fast_without_allocating() {
    let t = Instant::now();
    // 10^12 × 10^6 f64 would be 8 × 10^18 bytes.
    let bytes = npy(
        1,
        &dict("<f8", false, "(1000000000000, 1000000)"),
        &le_f64(&[1.0]),
    );
    assert_msg(
        &bytes,
        &[
            "truncated",
            "(1000000000000, 1000000) of <f8 needs 8000000000000000000 data bytes",
            "holds 8",
        ],
    );
    // Overflowing 64 bits.
    let bytes = npy(
        1,
        &dict("<f8", false, "(10000000000000, 10000000000000)"),
        &[],
    );
    assert_msg(&bytes, &["too large to address"]);
    let bytes = npy(3, &dict("<f8", true, "(4294967296, 4294967296)"), &[]);
    assert_msg(&bytes, &["too large to address"]);
    assert!(t.elapsed().as_secs_f64() < 0.5, "took {:?}", t.elapsed());
}

#[test]
fn bad_magic_version_and_header_length() {
    assert_msg(
        b"x,y\n1,2\n",
        &["x.npy: not a NumPy .npy file", "numpy.save"],
    );
    assert_msg(b"", &["not a NumPy .npy file"]);
    assert_msg(b"\x93NUM", &["inside the preamble"]);
    let good = npy(1, &dict("<f8", false, "(1, 1)"), &le_f64(&[1.0]));
    let mut v = good.clone();
    v[6] = 4;
    assert_msg(&v, &["unsupported .npy format version 4.0"]);
    v[6] = 1;
    v[7] = 1;
    assert_msg(&v, &["version 1.1"]);
    // Header length pointing past the end of the file.
    let mut v = good.clone();
    v[8..10].copy_from_slice(&60000u16.to_le_bytes());
    assert_msg(
        &v,
        &["bad .npy header length 60000 bytes", "the file has only"],
    );
    // A version-2 length of 4 GiB, with no 4 GiB allocation.
    let mut v = npy(2, &dict("<f8", false, "(1, 1)"), &le_f64(&[1.0]));
    v[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_msg(&v, &["bad .npy header length 4294967295"]);
    // Header length shorter than the dict: the dict is cut.
    let mut v = good.clone();
    v[8..10].copy_from_slice(&20u16.to_le_bytes());
    assert_msg(&v, &["cannot parse the .npy header"]);
    // Only the length field.
    assert_msg(
        b"\x93NUMPY\x01\x00\x05",
        &["inside the header length field"],
    );
}

#[test]
fn bad_headers_and_dtypes() {
    assert_msg(
        &npy(1, "{'descr': '<f8', 'shape': (1, 1)}", &le_f64(&[1.0])),
        &[
            "cannot parse the .npy header",
            "missing key 'fortran_order'",
        ],
    );
    assert_msg(
        &npy(1, "not a dict at all", &le_f64(&[1.0])),
        &["cannot parse the .npy header"],
    );
    assert_msg(
        &npy(1, &dict("|O", false, "(1, 1)"), &[0; 8]),
        &[
            "unsupported .npy dtype |O",
            "Python objects",
            "astype(numpy.float64)",
        ],
    );
    assert_msg(
        &npy(1, &dict("<c16", false, "(1, 1)"), &[0; 16]),
        &["unsupported .npy dtype <c16"],
    );
    assert_msg(
        &npy(1, &dict("<f2", false, "(1, 1)"), &[0; 2]),
        &["unsupported .npy dtype <f2"],
    );
    assert_msg(
        &npy(
            1,
            "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }",
            &[0; 8],
        ),
        &["structured"],
    );
}

#[test]
fn non_finite_values_report_row_and_column() {
    let mut v = vec![1.0; 12];
    v[7] = f64::NAN; // row 1, column 3 of a 3 × 4 matrix
    v[10] = f64::INFINITY; // row 2, column 2
    let c = npy(1, &dict("<f8", false, "(3, 4)"), &le_f64(&v));
    assert_msg(
        &c,
        &[
            "x.npy row 1, column 3",
            "x[1, 3]",
            "NaN is not finite",
            "non-finite",
        ],
    );
    // The same matrix in Fortran order: the first bad value in row-major order is reported.
    let mut f = Vec::new();
    for j in 0..4 {
        for i in 0..3 {
            f.push(v[i * 4 + j]);
        }
    }
    let bytes = npy(1, &dict("<f8", true, "(3, 4)"), &le_f64(&f));
    assert_msg(&bytes, &["row 1, column 3"]);
    let bytes = npy(
        1,
        &dict("<f4", false, "(1, 2)"),
        &[0, 0, 0, 0, 0, 0, 0x80, 0xff],
    );
    assert_msg(&bytes, &["row 0, column 1", "-inf is not finite"]);
}

#[test]
fn autotraits() {
    // The CLI boxes these errors and may send them across threads.
    fn check<T: Send + Sync + Unpin + 'static + std::error::Error>() {}
    check::<ReadError>();
}
