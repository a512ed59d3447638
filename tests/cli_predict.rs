//! `madbayes predict MODEL INPUT`: a fitted model applied to new rows later, from the
//! `model.json` that `fit` leaves in its result folder — the same assignments as the library,
//! through `--pca` too, and a clear refusal of every input that does not fit the model.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn madbayes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madbayes"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// Asserts status 2, one line naming every needle, and no output folder.
fn assert_refused(out: &Output, needles: &[&str], out_dir: &Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
    assert!(err.starts_with("madbayes: error:"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
    assert!(!out_dir.exists(), "{} was written", out_dir.display());
}

/// Block images with known shapes: the data file of `gen blocks`.
fn blocks(dir: &Path, n: usize, seed: u64) -> PathBuf {
    let out = dir.join(format!("blocks{seed}"));
    ok(madbayes(&[
        "gen",
        "blocks",
        "--n",
        &n.to_string(),
        "--seed",
        &seed.to_string(),
        "--out",
        s(&out),
    ]));
    out.join("x.csv")
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_fitted_model_assigns_its_own_training_rows_as_the_fit_did() {
    let dir = tempfile::tempdir().unwrap();
    let x = blocks(dir.path(), 80, 1);
    // K-means and K-features converge to rows that are exact best responses to the means,
    // so predicting the training rows must give back the fit's labels and Z.
    for (algo, extra) in [("kmeans", "--k"), ("k-features", "--k")] {
        let fit = dir.path().join(format!("fit-{algo}"));
        ok(madbayes(&[
            "fit",
            s(&x),
            "--algo",
            algo,
            extra,
            "4",
            "--out",
            s(&fit),
            "--quiet",
        ]));
        let pred = dir.path().join(format!("pred-{algo}"));
        ok(madbayes(&["predict", s(&fit), s(&x), "--out", s(&pred)]));
        assert_eq!(
            read(&pred.join("z.csv")),
            read(&fit.join("z.csv")),
            "{algo}"
        );
        if algo == "kmeans" {
            assert_eq!(
                read(&pred.join("labels.csv")),
                read(&fit.join("labels.csv"))
            );
        } else {
            assert!(!pred.join("labels.csv").exists());
        }
        let summary: serde_json::Value =
            serde_json::from_str(&read(&pred.join("summary.json"))).unwrap();
        assert_eq!(summary["algo"], algo);
        assert_eq!(summary["n"], 80);
        // The model file itself may be named instead of its folder.
        let pred2 = dir.path().join(format!("pred2-{algo}"));
        ok(madbayes(&[
            "predict",
            s(&fit.join("model.json")),
            s(&x),
            "--out",
            s(&pred2),
        ]));
        assert_eq!(read(&pred2.join("z.csv")), read(&pred.join("z.csv")));
    }
}

#[test]
fn new_rows_are_projected_by_the_models_pca_and_every_family_predicts() {
    let dir = tempfile::tempdir().unwrap();
    let x = blocks(dir.path(), 60, 2);
    let new = blocks(dir.path(), 25, 3);
    let runs: &[&[&str]] = &[
        &["--algo", "dp-means", "--penalty", "20", "--pca", "6"],
        &["--algo", "bp-means", "--penalty", "4"],
        &[
            "--algo",
            "mahalanobis",
            "--k",
            "1",
            "--penalty",
            "1",
            "--pca",
            "5",
        ],
        &[
            "--algo",
            "ibp-accelerated",
            "--iterations",
            "5",
            "--sigma-x",
            "0.5",
        ],
        &["--algo", "meibp", "--k", "6", "--iterations", "5"],
    ];
    for extra in runs {
        let name = extra[1];
        let fit = dir.path().join(format!("fit-{name}"));
        let mut args = vec!["fit", s(&x), "--out", s(&fit), "--quiet"];
        args.extend_from_slice(extra);
        ok(madbayes(&args));
        let pred = dir.path().join(format!("pred-{name}"));
        ok(madbayes(&["predict", s(&fit), s(&new), "--out", s(&pred)]));
        let z = read(&pred.join("z.csv"));
        assert_eq!(z.lines().count(), 25, "{name}");
        let summary: serde_json::Value =
            serde_json::from_str(&read(&fit.join("summary.json"))).unwrap();
        let k = summary["k"].as_u64().unwrap() as usize;
        assert!(
            z.lines()
                .all(|l| l.split(',').count() == k.max(1) || k == 0),
            "{name}"
        );
        assert_eq!(
            read(&pred.join("reconstruction.csv")).lines().count(),
            25,
            "{name}"
        );
    }
}

#[test]
fn inputs_that_do_not_fit_the_model_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let x = blocks(dir.path(), 40, 4);
    let fit = dir.path().join("fit");
    ok(madbayes(&[
        "fit",
        s(&x),
        "--algo",
        "kmeans",
        "--k",
        "3",
        "--out",
        s(&fit),
        "--quiet",
    ]));
    let out = dir.path().join("pred");
    // Rows of another width.
    let narrow = dir.path().join("narrow.csv");
    fs::write(&narrow, "1,2,3\n4,5,6\n").unwrap();
    let o = madbayes(&["predict", s(&fit), s(&narrow), "--out", s(&out)]);
    assert_refused(&o, &["3 columns", "36"], &out);
    // A folder that is not a result, a file that is not a model, a damaged model.
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let o = madbayes(&["predict", s(&empty), s(&x), "--out", s(&out)]);
    assert_refused(&o, &["model.json"], &out);
    let o = madbayes(&["predict", s(&x), s(&x), "--out", s(&out)]);
    assert_refused(&o, &["not a madbayes model"], &out);
    let text = read(&fit.join("model.json"));
    let damaged = dir.path().join("damaged.json");
    fs::write(
        &damaged,
        text.replacen("\"labels\":[", "\"labels\":[99,", 1),
    )
    .unwrap();
    let o = madbayes(&["predict", s(&damaged), s(&x), "--out", s(&out)]);
    assert_refused(&o, &["damaged"], &out);
    let other = dir.path().join("other.json");
    fs::write(
        &other,
        text.replacen("\"format_version\":1", "\"format_version\":7", 1),
    )
    .unwrap();
    let o = madbayes(&["predict", s(&other), s(&x), "--out", s(&out)]);
    assert_refused(&o, &["version 7"], &out);
    // Non-finite values in the new rows.
    let nan = dir.path().join("nan.csv");
    let mut row: Vec<String> = (0..36).map(|v| (v % 2).to_string()).collect();
    let good = row.join(",");
    row[7] = "nan".to_string();
    fs::write(&nan, format!("{good}\n{}\n", row.join(","))).unwrap();
    let o = madbayes(&["predict", s(&fit), s(&nan), "--out", s(&out)]);
    assert_refused(&o, &["nan.csv"], &out);
}
