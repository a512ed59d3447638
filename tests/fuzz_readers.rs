//! Mutation fuzzing of every reader: CSV text, `.npy` files, PNG and JPEG images, and IDX
//! files (plain and gzip). Each test starts from valid seeds, applies a few random
//! mutations (bit flips, random or "interesting" bytes, insertions, deletions, duplicated
//! ranges, truncation, splices of two seeds, format tokens such as `,`, `nan`, `1e400` or
//! a large integer), and asserts that the reader returns — `Ok` or `Err` — instead of
//! panicking. One case in ten is plain random bytes.
//!
//! `cargo test --test fuzz_readers` runs 2 000 cases per reader (a few seconds). Set
//! `MADBAYES_FUZZ_CASES` to run more (e.g. 1000000 for a long session) and
//! `MADBAYES_FUZZ_SEED` to explore another sequence; a failing case prints its seed, its
//! number and its bytes in hex.
//!
//! The JPEG seeds in `tests/fuzz_seeds/` are tiny images written by Pillow 12 (16 × 12 RGB
//! baseline and progressive, 9 × 7 grey, 5 × 3 RGB with 4:2:0 chroma); the other seeds are
//! made here.

use madbayes::RowMatrix;
use madbayes::io::{
    PixelScale, parse_csv, parse_npy, read_idx, read_image, write_npy_to, write_png,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

fn cases() -> usize {
    std::env::var("MADBAYES_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn base_seed() -> u64 {
    std::env::var("MADBAYES_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

/// Bytes that often sit on a boundary of some length or type.
const INTERESTING: [u8; 8] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, b'0', b'9'];

/// Applies 1–8 random mutations to a random seed, with `tokens` as the format's
/// vocabulary.
fn mutate(rng: &mut ChaCha8Rng, seeds: &[Vec<u8>], tokens: &[&[u8]]) -> Vec<u8> {
    if rng.random_range(0..10) == 0 {
        let n = rng.random_range(0..96);
        return (0..n).map(|_| rng.random::<u8>()).collect();
    }
    let mut v = seeds[rng.random_range(0..seeds.len())].clone();
    for _ in 0..rng.random_range(1..=8) {
        let len = v.len();
        let at = if len == 0 {
            0
        } else {
            rng.random_range(0..len)
        };
        match rng.random_range(0..10) {
            0 if len > 0 => v[at] ^= 1 << rng.random_range(0..8),
            1 if len > 0 => v[at] = rng.random(),
            2 if len > 0 => v[at] = INTERESTING[rng.random_range(0..INTERESTING.len())],
            3 => {
                let n = rng.random_range(1..16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
                v.splice(at..at, bytes);
            }
            4 if len > 0 => {
                let end = (at + rng.random_range(1..32)).min(len);
                v.drain(at..end);
            }
            5 if len > 0 => {
                let end = (at + rng.random_range(1..64)).min(len);
                let copy = v[at..end].to_vec();
                let to = rng.random_range(0..=len);
                v.splice(to..to, copy);
            }
            6 => v.truncate(rng.random_range(0..=len)),
            7 => {
                let t = tokens[rng.random_range(0..tokens.len())];
                v.splice(at..at, t.iter().copied());
            }
            8 if len >= 4 => {
                // A 32-bit integer, either byte order, over four bytes (sizes, lengths).
                let at = rng.random_range(0..=len - 4);
                let x: u32 = match rng.random_range(0..4) {
                    0 => 0,
                    1 => u32::MAX,
                    2 => rng.random_range(0..4096),
                    _ => rng.random(),
                };
                let b = if rng.random() {
                    x.to_be_bytes()
                } else {
                    x.to_le_bytes()
                };
                v[at..at + 4].copy_from_slice(&b);
            }
            _ => {
                // Splice: this input's head with another seed's tail.
                let other = &seeds[rng.random_range(0..seeds.len())];
                let cut = rng.random_range(0..=other.len());
                v.truncate(at);
                v.extend_from_slice(&other[cut..]);
            }
        }
    }
    v
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds `cases()` mutated inputs to `read`, which must return without panicking; `read`
/// says whether the input was read (`Ok`). Some mutated inputs must still be read, so the
/// cases reach past the format's first checks.
fn fuzz(name: &str, seeds: &[Vec<u8>], tokens: &[&[u8]], read: &mut dyn FnMut(&[u8]) -> bool) {
    // The seeds themselves must be read (they are valid files), so a reader that refused
    // everything would not pass unnoticed.
    let seed = base_seed();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failure = None;
    let mut read_ok = 0usize;
    for case in 0..cases() {
        let input = mutate(&mut rng, seeds, tokens);
        match catch_unwind(AssertUnwindSafe(|| read(&input))) {
            Ok(ok) => read_ok += usize::from(ok),
            Err(_) => {
                failure = Some((case, input));
                break;
            }
        }
    }
    std::panic::set_hook(hook);
    if let Some((case, input)) = failure {
        // Run it again with the hook back, so the panic's message is shown.
        let _ = catch_unwind(AssertUnwindSafe(|| read(&input)));
        panic!(
            "{name}: case {case} of MADBAYES_FUZZ_SEED={seed} panicked; input ({} bytes): {}",
            input.len(),
            hex(&input)
        );
    }
    println!("{name}: {read_ok} of {} mutated inputs were read", cases());
    assert!(read_ok > 0, "{name}: no mutated input was read");
}

#[test]
fn csv_reader_never_panics() {
    let seeds: Vec<Vec<u8>> = [
        "x,y,z\n1,2,3\n4.5,-6e-1,.25\n",
        "1,2\r\n3,4\r\n\r\n",
        "\u{feff}a,b\n1,2\n",
        ",a,b\n0,1.5,2\n1,3,4\n",
        "  1 ,\t2\n3,   4  \n5,6",
        "0\n1e155\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    for s in &seeds {
        assert!(parse_csv(s.as_slice(), "seed.csv").is_ok());
    }
    let tokens: [&[u8]; 12] = [
        b",",
        b"\n",
        b"\r\n",
        b" ",
        b"nan",
        b"-inf",
        b"1e400",
        b"-",
        b".",
        b"e",
        "é".as_bytes(),
        b"\xEF\xBB\xBF",
    ];
    fuzz("csv", &seeds, &tokens, &mut |bytes| {
        parse_csv(bytes, "fuzz.csv").is_ok()
    });
}

/// `.npy` bytes of `x` with the given dtype and order (version 1.0, or 2.0 when `v2`).
fn npy_bytes(
    descr: &str,
    fortran: bool,
    rows: usize,
    cols: usize,
    data: &[u8],
    v2: bool,
) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': ({rows}, {cols}), }}",
        if fortran { "True" } else { "False" }
    );
    let mut header = dict.into_bytes();
    header.push(b'\n');
    let mut v = b"\x93NUMPY".to_vec();
    if v2 {
        v.extend_from_slice(&[2, 0]);
        v.extend_from_slice(&(header.len() as u32).to_le_bytes());
    } else {
        v.extend_from_slice(&[1, 0]);
        v.extend_from_slice(&(header.len() as u16).to_le_bytes());
    }
    v.extend_from_slice(&header);
    v.extend_from_slice(data);
    v
}

#[test]
fn npy_reader_never_panics() {
    let x = RowMatrix::from_rows(&[[1.0, -2.5, 3.0], [0.0, 1e-3, 7.0]]);
    let mut f8 = Vec::new();
    write_npy_to(&mut f8, &x).unwrap();
    let vals = [1.0f32, -2.0, 3.5, 0.25, 8.0, 9.0];
    let f4: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let i2: Vec<u8> = [1i16, -2, 300, 4]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let u8s: Vec<u8> = [1u64, 2, u64::MAX]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let seeds = vec![
        f8,
        npy_bytes("<f4", true, 3, 2, &f4, false),
        npy_bytes(">i2", false, 2, 2, &i2, true),
        npy_bytes("|u1", false, 2, 3, &[0, 1, 2, 3, 4, 255], false),
        npy_bytes("<u8", false, 3, 1, &u8s, false),
        npy_bytes("|b1", true, 2, 2, &[0, 1, 1, 0], false),
    ];
    for s in &seeds {
        assert!(parse_npy(s.as_slice(), s.len() as u64, "seed.npy").is_ok());
    }
    let tokens: [&[u8]; 10] = [
        b"'descr'",
        b"'<f8'",
        b"'shape'",
        b"(",
        b")",
        b",",
        b"True",
        b"99999999999",
        "é".as_bytes(),
        b"[('a', '<f8')]",
    ];
    fuzz("npy", &seeds, &tokens, &mut |bytes| {
        // The real length, and sometimes a wrong one (a reader that is not a file).
        let wrong = parse_npy(bytes, (bytes.len() as u64).wrapping_mul(3) / 2, "fuzz.npy");
        parse_npy(bytes, bytes.len() as u64, "fuzz.npy").is_ok() | wrong.is_ok()
    });
}

fn write_file(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn image_reader_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut seeds = Vec::new();
    for (w, h, c) in [(5, 3, 1), (4, 4, 3)] {
        let p = dir.path().join("seed.png");
        let v: Vec<f64> = (0..w * h * c).map(|i| (i % 7) as f64 / 6.0).collect();
        write_png(&p, &v, w, h, c, PixelScale::UNIT).unwrap();
        seeds.push(std::fs::read(&p).unwrap());
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_seeds");
    for name in ["rgb.jpg", "rgb_progressive.jpg", "grey.jpg", "rgb_420.jpg"] {
        seeds.push(std::fs::read(here.join(name)).unwrap());
    }
    let file = dir.path().join("fuzz.img");
    for s in &seeds {
        write_file(&file, s);
        read_image(&file).expect("the seeds are valid images");
    }
    let tokens: [&[u8]; 8] = [
        b"IHDR",
        b"IDAT",
        b"IEND",
        b"PLTE",
        b"\xFF\xD8",
        b"\xFF\xC0",
        b"\xFF\xDA",
        b"\xFF\xD9",
    ];
    fuzz("image", &seeds, &tokens, &mut |bytes| {
        write_file(&file, bytes);
        read_image(&file).is_ok()
    });
}

#[test]
fn idx_reader_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut images = vec![0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 2];
    images.extend((0..12u8).map(|i| i * 20));
    let mut labels = vec![0, 0, 8, 1, 0, 0, 0, 4];
    labels.extend([7, 0, 9, 1]);
    let gz = |raw: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(raw).unwrap();
        e.finish().unwrap()
    };
    let seeds = vec![gz(&images), gz(&labels), images, labels];
    let file = dir.path().join("fuzz-ubyte");
    for s in &seeds {
        write_file(&file, s);
        read_idx(&file).expect("the seeds are valid IDX files");
    }
    let tokens: [&[u8]; 4] = [
        b"\x00\x00\x08\x03",
        b"\x00\x00\x08\x01",
        b"\x1f\x8b",
        b"\xff\xff\xff\xff",
    ];
    fuzz("idx", &seeds, &tokens, &mut |bytes| {
        write_file(&file, bytes);
        read_idx(&file).is_ok()
    });
}
