//! `madbayes path`: one row per penalty, K non-increasing in the penalty for DP-means on
//! well-separated blobs, stable ranges reported, and bad grids refused with one error line,
//! exit status 2 and nothing written.

use madbayes::generate::gaussian_blobs;
use std::fs;
use std::path::Path;
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

/// 4 well-separated blobs in 2-D as a CSV file.
fn blobs_csv(dir: &Path) -> std::path::PathBuf {
    let b = gaussian_blobs(120, 2, 4, 20.0, 0.3, 7);
    let mut text = String::new();
    for r in b.x.rows() {
        text.push_str(&format!("{:?},{:?}\n", r[0], r[1]));
    }
    let p = dir.join("blobs.csv");
    fs::write(&p, text).unwrap();
    p
}

#[test]
fn dp_means_k_does_not_grow_with_the_penalty() {
    let d = tempfile::tempdir().unwrap();
    let csv = blobs_csv(d.path());
    let out = d.path().join("path");
    let o = madbayes(&[
        "path",
        s(&csv),
        "--algo",
        "dp-means",
        "--penalty-range",
        "0.05:200000:12",
        "--restarts",
        "5",
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = fs::read_to_string(out.join("path.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("penalty,k,objective,iterations,seconds"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 12, "one row per penalty");
    assert_eq!(rows[0][0], 0.05);
    assert_eq!(rows[11][0], 200000.0);
    let ks: Vec<f64> = rows.iter().map(|r| r[1]).collect();
    assert!(ks.windows(2).all(|w| w[1] <= w[0]), "K per penalty: {ks:?}");
    assert!(ks[0] > 4.0 && ks[11] == 1.0, "{ks:?}");
    assert!(ks.contains(&4.0), "the true K appears: {ks:?}");
    // Objectives grow with the penalty (the optimum of a larger penalty costs more).
    assert!(rows.windows(2).all(|w| w[1][2] >= w[0][2] - 1e-9));
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("path.json")).unwrap()).unwrap();
    let stable = json["stable_ranges"].as_array().unwrap();
    let total: u64 = stable
        .iter()
        .map(|s| s["grid_values"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 12);
    assert!(stable.iter().any(|s| s["k"] == 4));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("stable ranges") && stdout.contains("K =    4"),
        "{stdout}"
    );
    let png = fs::read(out.join("path.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
}

#[test]
fn listed_penalties_are_sorted_and_feature_algorithms_run() {
    let d = tempfile::tempdir().unwrap();
    let csv = blobs_csv(d.path());
    let out = d.path().join("path");
    let o = madbayes(&[
        "path",
        s(&csv),
        "--algo",
        "stepwise-k-features",
        "--penalties",
        "100,1,10",
        "--restarts",
        "2",
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = fs::read_to_string(out.join("path.csv")).unwrap();
    let pens: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(pens, vec!["1.0", "10.0", "100.0"]);
}

fn assert_refused(extra: &[&str], needle: &str) {
    let d = tempfile::tempdir().unwrap();
    let csv = blobs_csv(d.path());
    let out = d.path().join("out");
    let mut args = vec!["path", s(&csv), "--out", s(&out)];
    args.extend_from_slice(extra);
    let o = madbayes(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{extra:?}: {err:?}");
    assert!(err.starts_with("madbayes: error:"), "{err}");
    assert!(err.contains(needle), "{extra:?}: {err:?} lacks {needle:?}");
    assert!(!out.exists(), "{extra:?}: output folder written");
}

#[test]
fn bad_grids_are_refused() {
    let dp = ["--algo", "dp-means"];
    let cases: [(&[&str], &str); 10] = [
        (&["--penalties", "1,x"], "not a number"),
        (
            &["--penalties", "1", "--penalty-range", "1:2:3"],
            "exactly one",
        ),
        (&["--penalties", ""], "penalt"),
        (&["--penalties", "1,0"], "> 0"),
        (&["--penalties", "1,-2"], "> 0"),
        (&["--penalty-range", "0:10:5"], "LO"),
        (&["--penalty-range", "10:1:5"], "HI"),
        (&["--penalty-range", "1:1:5"], "HI"),
        (&["--penalty-range", "1:10:1"], "COUNT"),
        (&["--penalty-range", "1:10"], "LO:HI:COUNT"),
    ];
    for (grid, needle) in cases {
        let mut a = dp.to_vec();
        a.extend_from_slice(grid);
        assert_refused(&a, needle);
    }
    for algo in ["kmeans", "k-features", "ibp-accelerated", "meibp"] {
        assert_refused(
            &["--algo", algo, "--penalties", "1"],
            "algorithm with a penalty",
        );
    }
    assert_refused(&["--algo", "dp-means"], "--penalt");
}

/// Every algorithm with a penalty runs on a path, Mahalanobis clustering (K and a penalty)
/// included, and the options `path` shares with `fit` are checked as `fit` checks them.
#[test]
fn mahalanobis_runs_on_a_path_and_shared_options_are_checked() {
    let d = tempfile::tempdir().unwrap();
    let csv = blobs_csv(d.path());
    let out = d.path().join("out");
    let o = madbayes(&[
        "path",
        s(&csv),
        "--algo",
        "mahalanobis",
        "--k",
        "3",
        "--penalties",
        "1,100",
        "--restarts",
        "2",
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = fs::read_to_string(out.join("path.csv")).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert_refused(
        &[
            "--algo",
            "collapsed-bp-means",
            "--penalties",
            "1",
            "--refine",
        ],
        "--refine does not apply to collapsed-bp-means",
    );
    assert_refused(
        &[
            "--algo",
            "dp-means",
            "--penalties",
            "1",
            "--seeding",
            "base",
        ],
        "--seeding does not apply to dp-means",
    );
}
