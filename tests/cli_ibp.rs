//! The IBP methods and `--holdout` through the command line: files and fields, byte-identical
//! results on one and two threads, and refused options.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn madbayes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madbayes"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

/// Block images (N = 60) with their truth, from `madbayes gen`.
fn blocks(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("blocks");
    let o = madbayes(&[
        "gen",
        "blocks",
        "--n",
        "60",
        "--seed",
        "5",
        "--out",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("x.csv")
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn samplers_write_z_a_and_a_trace_with_held_out_scores() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path());
    for algo in ["ibp-gibbs", "ibp-semicollapsed", "ibp-accelerated", "meibp"] {
        let out = tmp.path().join(algo);
        let mut args = vec![
            "fit",
            p(&x),
            "--algo",
            algo,
            "--out",
            p(&out),
            "--holdout",
            "0.2",
        ];
        args.extend([
            "--iterations",
            "12",
            "--sigma-x",
            "0.5",
            "--sigma-a",
            "1",
            "--quiet",
        ]);
        if algo == "meibp" {
            args.extend(["--k", "6"]);
        }
        let o = madbayes(&args);
        assert!(
            o.status.success(),
            "{algo}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let s = summary(&out);
        let k = s["k"].as_u64().unwrap() as usize;
        assert_eq!(s["n"], 48, "{algo}: the fit sees the 48 training rows");
        assert!(s.get("restart_objectives").is_none() && s.get("objective").is_none());
        if algo != "meibp" {
            let kept = &s["retained"];
            assert_eq!(kept["samples"], 6, "{algo}: the second half of 12 sweeps");
            let ess = kept["ess_log_joint"].as_f64().unwrap();
            assert!(ess > 0.0 && ess <= 12.0, "{algo}: {kept}");
        }
        let held = &s["heldout"];
        assert_eq!(held["test_rows"], 12);
        assert_eq!(
            held["hidden_entries"],
            12 * 8,
            "⌈36/5⌉ = 8 hidden entries per row"
        );
        assert!(held["l2"].as_f64().unwrap().is_finite(), "{algo}: {held}");
        assert!(
            held["loglik"].as_f64().unwrap().is_finite(),
            "{algo}: {held}"
        );
        let z = fs::read_to_string(out.join("z.csv")).unwrap();
        assert_eq!(z.lines().count(), 48);
        assert!(
            z.lines()
                .all(|l| l.split(',').count() == k.max(1) || (k == 0 && l.is_empty()))
        );
        let means = fs::read_to_string(out.join("means.csv")).unwrap();
        assert_eq!(means.lines().count(), k);
        let trace = fs::read_to_string(out.join("trace.csv")).unwrap();
        let mut lines = trace.lines();
        assert_eq!(
            lines.next(),
            Some("iteration,seconds,k,log_joint,heldout_loglik,heldout_l2")
        );
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert_eq!(
            rows.len(),
            s["iterations"].as_u64().unwrap() as usize,
            "{algo}"
        );
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.len(), 6);
            assert_eq!(r[0], (i + 1).to_string());
            for v in &r[1..] {
                assert!(v.parse::<f64>().unwrap().is_finite(), "{algo}: {r:?}");
            }
        }
        assert_eq!(rows.last().unwrap()[2], k.to_string());
    }
}

#[test]
fn sampler_results_are_byte_identical_on_one_and_two_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path());
    for algo in ["ibp-gibbs", "ibp-accelerated"] {
        let run = |t: &str| {
            let out = tmp.path().join(format!("{algo}-{t}"));
            let o = madbayes(&[
                "fit",
                p(&x),
                "--algo",
                algo,
                "--out",
                p(&out),
                "--iterations",
                "8",
                "--seed",
                "3",
                "--threads",
                t,
                "--quiet",
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let read = |f: &str| fs::read(out.join(f)).unwrap();
            (read("z.csv"), read("means.csv"))
        };
        assert_eq!(run("1"), run("2"), "{algo}");
    }
}

#[test]
fn hard_assignment_methods_score_held_out_entries_too() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path());
    for (algo, extra) in [
        ("bp-means", ["--penalty", "3"]),
        ("dp-means", ["--penalty", "3"]),
    ] {
        let out = tmp.path().join(algo);
        let mut args = vec![
            "fit",
            p(&x),
            "--algo",
            algo,
            "--out",
            p(&out),
            "--holdout",
            "0.25",
        ];
        args.extend(extra);
        args.push("--quiet");
        let o = madbayes(&args);
        assert!(
            o.status.success(),
            "{algo}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let s = summary(&out);
        assert_eq!(s["n"], 45);
        let held = &s["heldout"];
        assert_eq!(held["test_rows"], 15);
        let (l2, sigma) = (
            held["l2"].as_f64().unwrap(),
            held["sigma_x"].as_f64().unwrap(),
        );
        assert!(l2.is_finite() && sigma > 0.0, "{held}");
        // Gaussian log-density at the training σ_X of errors with mean square l2.
        let want = -0.5 * (std::f64::consts::TAU * sigma * sigma).ln() - l2 / (2.0 * sigma * sigma);
        assert!((held["loglik"].as_f64().unwrap() - want).abs() < 1e-9 * want.abs());
    }
}

#[test]
fn sampler_options_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path());
    let out = tmp.path().join("bad");
    let cases: &[(&[&str], &str)] = &[
        (&["--algo", "meibp"], "--k"),
        (&["--algo", "ibp-gibbs", "--window", "2"], "window"),
        (&["--algo", "ibp-gibbs", "--penalty", "1"], "penalty"),
        (&["--algo", "ibp-gibbs", "--restarts", "3"], "restarts"),
        (&["--algo", "ibp-gibbs", "--alpha", "-1"], "alpha"),
        (&["--algo", "ibp-accelerated", "--sigma-x", "0"], "sigma"),
        (&["--algo", "ibp-accelerated", "--anneal", "0.7"], "anneal"),
        (
            &["--algo", "meibp", "--k", "4", "--anneal", "0.2"],
            "anneal",
        ),
        (
            &["--algo", "dp-means", "--penalty", "1", "--anneal", "0.2"],
            "anneal",
        ),
        (&["--algo", "ibp-gibbs", "--init", "bp-means"], "--penalty"),
        (&["--algo", "meibp", "--k", "4", "--init", "prior"], "init"),
        (
            &["--algo", "bp-means", "--penalty", "1", "--init", "prior"],
            "init",
        ),
        (
            &[
                "--algo",
                "ibp-gibbs",
                "--init",
                "bp-means",
                "--penalty",
                "-1",
            ],
            "penalty",
        ),
        (
            &["--algo", "dp-means", "--penalty", "1", "--alpha", "2"],
            "alpha",
        ),
        (
            &["--algo", "dp-means", "--penalty", "1", "--holdout", "0"],
            "holdout",
        ),
        (
            &["--algo", "dp-means", "--penalty", "1", "--holdout", "1.5"],
            "holdout",
        ),
        (
            &["--algo", "dp-means", "--penalty", "1", "--holdout", "0.001"],
            "holdout",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["fit", p(&x), "--out", p(&out), "--quiet"];
        args.extend(extra.iter());
        let o = madbayes(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.starts_with("madbayes: error:") && err.contains(needle),
            "{extra:?}: {err}"
        );
        assert!(!out.join("summary.json").exists());
    }
}

/// `--init bp-means`: BP-means runs first and its answer is recorded in the summary (that
/// the chain then starts from its Z is tested in the library, `tests/ibp_start.rs`).
#[test]
fn samplers_can_start_from_bp_means() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path());
    let out = tmp.path().join("init");
    let o = madbayes(&[
        "fit",
        p(&x),
        "--algo",
        "ibp-accelerated",
        "--init",
        "bp-means",
        "--penalty",
        "20",
        "--restarts",
        "5",
        "--iterations",
        "3",
        "--sigma-x",
        "0.5",
        "--sigma-a",
        "1",
        "--out",
        p(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    assert_eq!(s["init"]["algo"], "bp-means");
    let k0 = s["init"]["k"].as_u64().unwrap();
    assert!((1..=8).contains(&k0), "BP-means K {k0}");
    assert!(s["init"]["objective"].as_f64().unwrap() > 0.0);
}

/// `madbayes fit --algo meibp` caps its iterations where the library does
/// (`Meibp::DEFAULT_MAX_ITER`, 100), not at the feature family's 300; `--max-iter` and
/// `--iterations` still set the cap.
#[test]
fn meibp_caps_its_iterations_where_the_library_does() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path());
    assert_eq!(madbayes::ibp::Meibp::DEFAULT_MAX_ITER, 100);
    for (extra, want) in [
        (vec![], madbayes::ibp::Meibp::DEFAULT_MAX_ITER),
        (vec!["--max-iter", "7"], 7),
        (vec!["--iterations", "9"], 9),
    ] {
        let out = tmp.path().join(format!("meibp{}", extra.len()));
        let mut args = vec![
            "fit",
            p(&x),
            "--algo",
            "meibp",
            "--k",
            "4",
            "--quiet",
            "--out",
            p(&out),
        ];
        args.extend(extra.iter());
        let o = madbayes(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s = summary(&out);
        if extra.first() != Some(&"--iterations") {
            assert_eq!(s["max_iter"].as_u64().unwrap() as usize, want, "{extra:?}");
        }
        assert!(
            s["iterations"].as_u64().unwrap() as usize <= want,
            "{extra:?}"
        );
    }
}
