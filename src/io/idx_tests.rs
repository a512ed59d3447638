//! Unit tests of the IDX reader on files written here, plain and gzip-compressed.

use super::*;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

fn idx_images(n: u32, h: u32, w: u32) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [2051u32, n, h, w] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    b.extend((0..n * h * w).map(|i| (i * 37 % 256) as u8));
    b
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, bytes).unwrap();
    p
}

fn err(p: &Path) -> String {
    read_idx(p).unwrap_err().to_string()
}

#[test]
fn images_and_labels_plain_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let raw = idx_images(5, 3, 4);
    for p in [
        put(dir.path(), "t-images-idx3-ubyte", &raw),
        put(dir.path(), "t-images-idx3-ubyte.gz", &gzip(&raw)),
    ] {
        let idx = read_idx(&p).unwrap();
        assert_eq!(
            idx.kind,
            IdxKind::Images {
                height: 3,
                width: 4
            }
        );
        assert_eq!((idx.x.n_rows(), idx.x.n_cols()), (5, 12));
        for (k, v) in idx.x.as_slice().iter().enumerate() {
            assert_eq!(*v, f64::from(raw[16 + k]) / 255.0);
        }
        // The dispatch of read_matrix picks IDX by the name.
        assert_eq!(read_matrix(&p).unwrap(), idx.x);
    }
    let mut labels = Vec::new();
    labels.extend_from_slice(&2049u32.to_be_bytes());
    labels.extend_from_slice(&4u32.to_be_bytes());
    labels.extend_from_slice(&[7, 0, 9, 3]);
    let p = put(dir.path(), "l.idx.gz", &gzip(&labels));
    let idx = read_idx(&p).unwrap();
    assert_eq!(idx.kind, IdxKind::Labels);
    assert_eq!(idx.x.as_slice(), &[7.0, 0.0, 9.0, 3.0]);
    assert_eq!(idx.x.n_cols(), 1);
}

#[test]
fn truncated_and_padded_files_are_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let raw = idx_images(6, 5, 5);
    let p = put(dir.path(), "cut-ubyte", &raw[..raw.len() - 7]);
    let m = err(&p);
    assert!(
        m.contains("truncated") && m.contains("6 images of 5×5"),
        "{m}"
    );
    assert!(
        m.contains("150 data bytes") && m.contains("holds 143"),
        "{m}"
    );
    let p = put(dir.path(), "hdr-ubyte", &raw[..10]);
    assert!(
        err(&p).contains("header ends inside dimension"),
        "{}",
        err(&p)
    );
    let p = put(dir.path(), "tiny-ubyte", &raw[..3]);
    assert!(err(&p).contains("fewer than the 4-byte magic"));
    let mut long = raw.clone();
    long.push(1);
    let p = put(dir.path(), "long-ubyte", &long);
    assert!(err(&p).contains("trailing bytes"), "{}", err(&p));
    // A header claiming 4 billion × 4 billion × 4 billion bytes is refused by the size check.
    let mut huge = Vec::new();
    for v in [2051u32, u32::MAX, u32::MAX, u32::MAX] {
        huge.extend_from_slice(&v.to_be_bytes());
    }
    let p = put(dir.path(), "huge-ubyte", &huge);
    assert!(err(&p).contains("truncated"), "{}", err(&p));
}

#[test]
fn truncated_or_corrupt_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let raw = idx_images(50, 8, 8);
    let gz = gzip(&raw);
    let p = put(dir.path(), "cut-ubyte.gz", &gz[..gz.len() / 2]);
    let m = err(&p);
    assert!(m.contains("cut-ubyte.gz") && m.contains("truncated"), "{m}");
    // The trailer says the right size but the stream inside is cut: found while streaming.
    let mut spliced = gz[..gz.len() / 2].to_vec();
    spliced.extend_from_slice(&gz[gz.len() - 8..]);
    let p = put(dir.path(), "spliced-ubyte.gz", &spliced);
    let m = err(&p);
    assert!(
        m.contains("spliced-ubyte.gz") && (m.contains("truncated") || m.contains("corrupt")),
        "{m}"
    );
    // A flipped byte in the payload: CRC or deflate error.
    let mut bad = gz.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x55;
    let p = put(dir.path(), "bad-ubyte.gz", &bad);
    let m = err(&p);
    assert!(m.contains("bad-ubyte.gz"), "{m}");
    assert!(!m.contains('\n'));
}

#[test]
fn wrong_magic_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut raw = idx_images(1, 2, 2);
    raw[3] = 0x02; // 0x00000802: a 2-D u8 array, not an MNIST kind
    let p = put(dir.path(), "m-ubyte", &raw);
    let m = err(&p);
    assert!(m.contains("0x00000802") && m.contains("0x00000803"), "{m}");
}

/// A gzip file cannot show its uncompressed size beyond 4 GiB, so a header claiming more
/// passes the size check; the matrix is then compared with the memory available and
/// refused before anything is allocated.
#[test]
fn a_gzip_header_beyond_memory_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let mut header = Vec::new();
    for v in [2051u32, u32::MAX, 255, 255] {
        header.extend_from_slice(&v.to_be_bytes());
    }
    let p = put(dir.path(), "huge-ubyte.gz", &gzip(&header));
    match read_idx(&p) {
        Err(e @ ReadError::OutOfMemory { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("4294967295 × 65025") && m.contains("of memory is available"),
                "{m}"
            );
        }
        other => panic!("{other:?}"),
    }
}
