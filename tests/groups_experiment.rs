//! `madbayes experiment groups`: on the scikit-learn digits (../shared/data) the command
//! runs, every method's groups add up to N, the K-means group sizes are those of a K-means
//! fit with the same seed on the same preparation, and the default penalty is the stated
//! rule; on Fashion-MNIST (the Debian package) the labels are the class names; on a folder of
//! FEI-like file names the letters are the labels; bad input gives one error line, exit
//! status 2 and leaves nothing in DIR. The first two are ignored, with the reason, when their
//! data are absent (see `build.rs`).

use madbayes::Fit;
use madbayes::RowMatrix;
use madbayes::clustering::KMeans;
use madbayes::experiments::paper_matrix;
use madbayes::io::{PixelScale, parse_csv, write_png};
use serde_json::Value;
use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn madbayes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madbayes"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn digits_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/sklearn-digits/digits.csv.gz")
}

fn results(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

/// Sum of `rows` over a list of groups.
fn total(groups: &Value) -> u64 {
    groups
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["rows"].as_u64().unwrap())
        .sum()
}

/// Every group's label counts add up to its rows.
fn labels_add_up(groups: &Value) {
    for g in groups.as_array().unwrap() {
        let sum: u64 = g["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l[1].as_u64().unwrap())
            .sum();
        assert_eq!(sum, g["rows"].as_u64().unwrap(), "{g}");
    }
}

/// (width, height, channels) of a PNG file.
fn png_shape(path: &Path) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(BufReader::new(fs::File::open(path).unwrap()));
    let reader = decoder.read_info().unwrap();
    let info = reader.info();
    (info.width, info.height, info.color_type.samples())
}

/// Checks the sums of every method against N and returns the results.
fn check_sums(dir: &Path, n: u64) -> Value {
    let r = results(dir);
    assert_eq!(r["n"].as_u64().unwrap(), n);
    let codes = &r["stepwise"]["codes"];
    assert_eq!(total(codes), n);
    labels_add_up(codes);
    let z = fs::read_to_string(dir.join("stepwise_z.csv")).unwrap();
    assert_eq!(z.lines().count() as u64, n);
    for km in r["kmeans"].as_array().unwrap() {
        assert_eq!(total(&km["groups"]), n);
        labels_add_up(&km["groups"]);
        let sizes: u64 = km["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(sizes, n);
    }
    // The rows holding each feature, counted from Z, are those reported.
    let k = r["stepwise"]["k"].as_u64().unwrap() as usize;
    let mut held = vec![0u64; k];
    for line in z.lines() {
        for (j, v) in line.split(',').enumerate() {
            held[j] += u64::from(v == "1");
        }
    }
    let reported: Vec<u64> = r["stepwise"]["feature_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(held, reported);
    assert!(
        held.windows(2).all(|w| w[0] >= w[1]),
        "base first: {held:?}"
    );
    r
}

/// The digits as the command reads them: label column dropped, pixels / 16.
fn read_digits(path: &Path) -> RowMatrix {
    let file = fs::File::open(path).unwrap();
    let t = parse_csv(BufReader::new(flate2::read::GzDecoder::new(file)), "digits").unwrap();
    let rows: Vec<Vec<f64>> = t
        .rows()
        .map(|r| r[..64].iter().map(|v| v / 16.0).collect())
        .collect();
    RowMatrix::from_rows(&rows)
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/sklearn-digits (not in this checkout)"
)]
fn digits_groups_add_up_and_kmeans_matches_a_fit() {
    let input = digits_path();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("digits");
    let o = madbayes(&[
        "experiment",
        "groups",
        "--input",
        s(&input),
        "--out",
        s(&out),
        "--restarts",
        "4",
        "--seed",
        "7",
        "--threads",
        "2",
    ]);
    ok(&o);
    let r = check_sums(&out, 1797);
    assert_eq!(r["dims"].as_u64().unwrap(), 64, "default: min(100, N, D)");
    // The default penalty is the stated rule on the reported drops.
    let drops: Vec<f64> = r["drops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let p = r["penalty"].as_f64().unwrap();
    assert!(
        ((drops[2] * drops[3]).sqrt() - p).abs() <= 1e-9 * p,
        "{p} {drops:?}"
    );
    // Drops d₁, d₂ exceed it, so stepwise K-features stops at a base plus two features.
    assert!(drops[0] > p && drops[1] > p);
    assert_eq!(r["stepwise"]["k"].as_u64().unwrap(), 3);
    // Labels are the digits 0..9.
    let first = &r["stepwise"]["codes"][0]["labels"][0][0];
    assert!(
        first
            .as_str()
            .is_some_and(|l| l.len() == 1 && l.as_bytes()[0].is_ascii_digit())
    );

    // K-means group sizes are those of a K-means fit with the same seed and restarts.
    let prepared = paper_matrix(read_digits(&input), 64).unwrap();
    for km in r["kmeans"].as_array().unwrap() {
        let k = km["k"].as_u64().unwrap() as usize;
        let fit = KMeans::params(k)
            .restarts(4)
            .seed(7)
            .check()
            .unwrap()
            .fit(&prepared.y)
            .unwrap();
        let mut sizes = vec![0u64; k];
        for &l in fit.labels() {
            sizes[l] += 1;
        }
        let got: Vec<u64> = km["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(got, sizes, "K = {k}");
        let labels: Vec<usize> = fs::read_to_string(out.join(format!("kmeans{k}_labels.csv")))
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(labels, fit.labels());
    }

    // 8×8 grey pictures of the features and the cluster means, and the sheets.
    for name in [
        "features/feature_00.png",
        "features/feature_02.png",
        "features/base.png",
        "features/cluster_k3_02.png",
        "features/cluster_k4_03.png",
    ] {
        assert_eq!(png_shape(&out.join(name)), (8, 8, 1), "{name}");
    }
    for name in [
        "overview.png",
        "overview_kmeans3.png",
        "overview_kmeans4.png",
    ] {
        assert!(out.join(name).is_file(), "{name}");
    }
    let table = fs::read_to_string(out.join("table.md")).unwrap();
    assert!(table.contains("| `100` |"), "{table}");
    assert!(table.contains("**K-means, K = 4**"), "{table}");
    // One thread gives the same table as two.
    let one = tmp.path().join("digits-1");
    ok(&madbayes(&[
        "experiment",
        "groups",
        "--input",
        s(&input),
        "--out",
        s(&one),
        "--restarts",
        "4",
        "--seed",
        "7",
        "--threads",
        "1",
    ]));
    assert_eq!(
        fs::read(one.join("table.md")).unwrap(),
        fs::read(out.join("table.md")).unwrap()
    );
    // Only the result is left: no staging folder.
    let hidden = fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".madbayes-partial")
        })
        .count();
    assert_eq!(hidden, 0);
}

#[test]
#[cfg_attr(
    not(fashion_mnist),
    ignore = "needs /usr/share/datasets/fashion-mnist (apt-get install dataset-fashion-mnist)"
)]
fn fashion_mnist_subset_has_class_names() {
    let input = Path::new("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("fashion");
    let o = madbayes(&[
        "experiment",
        "groups",
        "--input",
        s(input),
        "--out",
        s(&out),
        "--limit",
        "300",
        "--dims",
        "50",
        "--penalty",
        "2",
        "--restarts",
        "2",
        "--threads",
        "2",
    ]);
    ok(&o);
    let r = check_sums(&out, 300);
    assert_eq!(r["penalty"].as_f64().unwrap(), 2.0);
    let classes = [
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ];
    for g in r["kmeans"][0]["groups"].as_array().unwrap() {
        for l in g["labels"].as_array().unwrap() {
            assert!(classes.contains(&l[0].as_str().unwrap()), "{l}");
        }
    }
    assert_eq!(png_shape(&out.join("features/base.png")), (28, 28, 1));
    assert_eq!(
        png_shape(&out.join("features/cluster_k3_00.png")),
        (28, 28, 1)
    );
}

/// 12 grey 6×5 pictures named like the FEI faces (`1a.png`, `1b.png`, …): two kinds of
/// face, each with or without a bright band.
fn fei_like(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    for person in 1..=6 {
        for (expr, band) in [("a", false), ("b", true)] {
            let v: Vec<f64> = (0..30)
                .map(|j| {
                    let base = if person % 2 == 0 { 0.3 } else { 0.5 };
                    let wave = 0.05 * ((j * person) % 7) as f64;
                    base + wave + if band && j / 6 == 2 { 0.4 } else { 0.0 }
                })
                .collect();
            let path = dir.join(format!("{person}{expr}.png"));
            write_png(&path, &v, 6, 5, 1, PixelScale::UNIT).unwrap();
        }
    }
}

#[test]
fn image_folder_labels_come_from_the_file_names() {
    let tmp = tempfile::tempdir().unwrap();
    let faces = tmp.path().join("faces");
    fei_like(&faces);
    let out = tmp.path().join("out");
    let o = madbayes(&[
        "experiment",
        "groups",
        "--input",
        s(&faces),
        "--out",
        s(&out),
        "--penalty",
        "0.01",
        "--restarts",
        "3",
        "--threads",
        "1",
    ]);
    ok(&o);
    let r = check_sums(&out, 12);
    assert_eq!(r["kind"], "images");
    assert_eq!(r["dims"].as_u64().unwrap(), 12);
    let mut seen: Vec<String> = Vec::new();
    for g in r["stepwise"]["codes"].as_array().unwrap() {
        for l in g["labels"].as_array().unwrap() {
            seen.push(l[0].as_str().unwrap().to_string());
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ["a", "b"]);
    assert_eq!(png_shape(&out.join("features/base.png")), (6, 5, 1));
    assert!(out.join("overview_kmeans4.png").is_file());
}

/// `rows` rows of a digits-like CSV (64 pixel counts, then a label).
fn small_digits(path: &Path, rows: usize) {
    let mut text = String::new();
    for i in 0..rows {
        let cells: Vec<String> = (0..64)
            .map(|j| ((i * 7 + j * 3 + (i * j) % 5) % 17).to_string())
            .chain(std::iter::once((i % 10).to_string()))
            .collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    fs::write(path, text).unwrap();
}

/// The command fails with one `madbayes: error:` line, status 2, and DIR is not created.
fn fails(args: &[&str], out: &Path, mentions: &str) {
    let mut all = vec!["experiment", "groups", "--out", s(out)];
    all.extend_from_slice(args);
    let o = madbayes(&all);
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("madbayes: error: "), "{err}");
    assert!(err.contains(mentions), "{mentions:?} in {err}");
    assert!(o.stdout.is_empty());
    assert!(!out.exists(), "{args:?} left {}", out.display());
}

#[test]
fn bad_input_gives_one_error_line_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("digits.csv");
    small_digits(&csv, 10);
    let out = tmp.path().join("out");
    let missing = tmp.path().join("nowhere.csv.gz");
    fails(&["--input", s(&missing)], &out, "no such file");
    fails(&["--input", s(&csv), "--dims", "11"], &out, "--dims 11");
    fails(&["--input", s(&csv), "--penalty", "0"], &out, "--penalty");
    fails(&["--input", s(&csv), "--penalty", "-3"], &out, "--penalty");
    fails(&["--input", s(&csv), "--penalty", "nan"], &out, "--penalty");
    fails(&["--input", s(&csv), "--grey"], &out, "--grey");
    let wide = tmp.path().join("wide.csv");
    fs::write(&wide, "1,2,3\n4,5,6\n").unwrap();
    fails(&["--input", s(&wide)], &out, "expected 65");

    // An existing DIR keeps what it had and gets nothing.
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("mine.txt"), "x").unwrap();
    let o = madbayes(&[
        "experiment",
        "groups",
        "--input",
        s(&csv),
        "--out",
        s(&out),
        "--dims",
        "65",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["mine.txt"]);

    // The same small file runs: 10 rows, D = 64, so 10 components by default.
    let good = tmp.path().join("good");
    let o = madbayes(&[
        "experiment",
        "groups",
        "--input",
        s(&csv),
        "--out",
        s(&good),
        "--penalty",
        "0.5",
        "--restarts",
        "2",
        "--threads",
        "1",
    ]);
    ok(&o);
    let r = check_sums(&good, 10);
    assert_eq!(r["dims"].as_u64().unwrap(), 10);
}
