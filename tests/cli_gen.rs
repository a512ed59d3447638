//! `madbayes gen`: each kind writes x, z and a of consistent shapes, the seed fixes the
//! output, and bad parameters give one line and exit status 2.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn madbayes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madbayes"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn rows(p: &Path) -> Vec<Vec<f64>> {
    fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect()
}

#[test]
fn every_kind_writes_consistent_files() {
    let d = tempfile::tempdir().unwrap();
    for (kind, extra, n, dim) in [
        ("blocks", vec!["--n", "30"], 30, 36),
        ("meibp", vec!["--n", "20", "--d", "12", "--k", "3"], 20, 12),
        ("ibp", vec!["--n", "25", "--d", "7", "--alpha", "2"], 25, 7),
        ("blobs", vec!["--n", "40", "--d", "3", "--k", "4"], 40, 3),
    ] {
        let out = d.path().join(kind);
        let mut args = vec!["gen", kind, "--out", out.to_str().unwrap(), "--seed", "3"];
        args.extend(extra.iter().copied());
        let o = madbayes(&args);
        assert!(
            o.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let (x, z, a) = (
            rows(&out.join("x.csv")),
            rows(&out.join("z.csv")),
            rows(&out.join("a.csv")),
        );
        assert_eq!(x.len(), n, "{kind}");
        assert!(x.iter().all(|r| r.len() == dim), "{kind}");
        assert_eq!(z.len(), n, "{kind}");
        let k = z.first().map_or(0, Vec::len);
        assert!(z.iter().flatten().all(|&v| v == 0.0 || v == 1.0));
        if k > 0 {
            assert_eq!(a.len(), k, "{kind}");
            assert!(a.iter().all(|r| r.len() == dim), "{kind}");
        }
        let params: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out.join("params.json")).unwrap()).unwrap();
        assert_eq!(params["kind"], kind);
        assert_eq!(params["rows"], n);
    }
    // Same seed, same bytes; --npy writes x.npy that reads back to the same numbers.
    let again = d.path().join("blocks2");
    let o = madbayes(&[
        "gen",
        "blocks",
        "--n",
        "30",
        "--seed",
        "3",
        "--npy",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let x = madbayes::io::read_npy(&again.join("x.npy")).unwrap();
    let csv = madbayes::io::read_csv(&d.path().join("blocks/x.csv")).unwrap();
    assert_eq!(x, csv);
    assert_eq!(
        fs::read(again.join("z.csv")).unwrap(),
        fs::read(d.path().join("blocks/z.csv")).unwrap()
    );
}

#[test]
fn bad_parameters_give_one_line() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let o_s = out.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["gen", "blocks", "--p", "1.5", "--out", o_s],
            "p must be a probability",
        ),
        (
            vec!["gen", "blocks", "--alpha", "2", "--out", o_s],
            "--alpha does not apply to blocks",
        ),
        (
            vec!["gen", "ibp", "--alpha", "-1", "--out", o_s],
            "alpha must be",
        ),
        (
            vec!["gen", "meibp", "--sigma-x", "-1", "--out", o_s],
            "sigma-x must be",
        ),
        (
            vec!["gen", "blobs", "--k", "0", "--out", o_s],
            "blobs needs",
        ),
    ] {
        let o = madbayes(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.starts_with("madbayes: error:") && err.contains(needle),
            "{err}"
        );
        assert!(!out.exists());
    }
}
