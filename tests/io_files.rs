//! The readers on real files: dispatch by extension, OS errors, round trips through disk,
//! and the block-images data set.

use madbayes::RowMatrix;
use madbayes::io::{ReadError, read_csv, read_matrix, read_npy, write_npy};
use std::fs;
use std::path::{Path, PathBuf};

fn message(r: Result<RowMatrix, ReadError>) -> String {
    match r {
        Ok(x) => panic!("read {} × {}, expected an error", x.n_rows(), x.n_cols()),
        Err(e) => e.to_string(),
    }
}

/// Last value and sum of `block-images/data.csv`, computed with Python (`float`, sequential sum).
const LAST: f64 = -0.340_903_823_281_692_6;
const TOTAL: f64 = 36.528_031_928_059_58;

fn sample() -> RowMatrix {
    RowMatrix::from_rows(&[[1.0, -2.5], [3.0e-7, 4.0], [5.0, 6.0]])
}

#[test]
fn dispatch_by_extension_case_insensitive() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("A.CsV");
    fs::write(&csv, "a,b\n1,-2.5\n3e-7,4\n5,6\n").unwrap();
    assert_eq!(read_matrix(&csv).unwrap(), sample());
    let npy = dir.path().join("b.NPY");
    write_npy(&npy, &sample()).unwrap();
    assert_eq!(read_matrix(&npy).unwrap(), sample());
    for other in ["c.txt", "d", "e.csv.gz"] {
        let p = dir.path().join(other);
        fs::write(&p, "1,2\n").unwrap();
        let msg = message(read_matrix(&p));
        assert!(msg.contains("unknown file type"), "{msg}");
        assert!(msg.contains(".csv") && msg.contains(".npy"), "{msg}");
        assert!(msg.contains(other), "{msg}");
    }
}

#[test]
fn missing_file_and_directory() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.csv");
    let msg = message(read_matrix(&missing));
    assert!(msg.contains("nope.csv: no such file"), "{msg}");
    let msg = message(read_npy(&dir.path().join("nope.npy")));
    assert!(msg.contains("nope.npy: no such file"), "{msg}");
    let sub: PathBuf = dir.path().join("folder.csv");
    fs::create_dir(&sub).unwrap();
    let msg = message(read_matrix(&sub));
    assert!(msg.contains("folder.csv: is a directory"), "{msg}");
    let sub = dir.path().join("folder.npy");
    fs::create_dir(&sub).unwrap();
    let msg = message(read_matrix(&sub));
    assert!(msg.contains("folder.npy: is a directory"), "{msg}");
}

#[cfg(unix)]
#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("secret.csv");
    fs::write(&p, "1,2\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::File::open(&p).is_ok() {
        println!("skipped: running with privileges that ignore file permissions (root?)");
        return;
    }
    let msg = message(read_matrix(&p));
    assert!(msg.contains("secret.csv: permission denied"), "{msg}");
}

#[test]
fn npy_round_trip_through_disk() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.npy");
    let mut x = RowMatrix::zeros(1237, 19);
    for (k, v) in x.as_mut_slice().iter_mut().enumerate() {
        *v = ((k * 7919) % 1009) as f64 / 7.0 - 50.0;
    }
    write_npy(&p, &x).unwrap();
    assert_eq!(read_npy(&p).unwrap(), x);
    // Cut the file: the size check catches it before reading the data.
    let bytes = fs::read(&p).unwrap();
    fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
    let msg = message(read_npy(&p));
    assert!(msg.contains("x.npy: truncated"), "{msg}");
}

#[test]
fn csv_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("data.csv");
    fs::write(
        &p,
        "1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3\n",
    )
    .unwrap();
    let msg = message(read_csv(&p));
    assert!(
        msg.contains(
            "data.csv line 7: 3 values, expected 4 (every row needs the same number of columns"
        ),
        "{msg}"
    );
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/block-images (not in this checkout)"
)]
fn block_images_csv() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/block-images/data.csv");
    let x = read_matrix(&path).unwrap();
    assert_eq!((x.n_rows(), x.n_cols()), (1000, 36));
    // First value of the file, parsed exactly.
    assert_eq!(x.row(0)[0], -0.316_675_563_931_660_4);
    assert_eq!(x.row(999)[35], LAST);
    // Sum of all values in file order, computed with Python's float().
    let total: f64 = x.as_slice().iter().sum();
    assert!(
        (total - TOTAL).abs() < 1e-9,
        "sum {total}, expected {TOTAL}"
    );
    // Same matrix after a trip through .npy.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("blocks.npy");
    write_npy(&p, &x).unwrap();
    assert_eq!(read_matrix(&p).unwrap(), x);
}
