//! `madbayes fit --algo ibp-* --chains C` through the command line: each chain's summary and
//! the pooled one in summary.json, R̂ and ESS, draws.jsonl, the same bytes on one and two
//! threads, a warning (`converged: false`, `diagnostics_warning`, stderr) when chains
//! stuck in different places disagree, and `converged: true` without a warning when they agree.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
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

/// Block images from `madbayes gen blocks` (N = 60).
fn blocks(dir: &Path, noise: &str) -> PathBuf {
    let out = dir.join(format!("blocks-{noise}"));
    let o = madbayes(&[
        "gen",
        "blocks",
        "--n",
        "60",
        "--sigma-x",
        noise,
        "--seed",
        "3",
        "--out",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("x.csv")
}

fn fit(x: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["fit", p(x), "--out", p(out), "--quiet"];
    args.extend(extra);
    let o = madbayes(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

const SCALARS: [&str; 5] = ["k", "log_joint", "alpha", "sigma_x", "sigma_a"];

#[test]
fn chains_write_per_chain_and_pooled_summaries_diagnostics_and_draws() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path(), "0.3");
    let out = tmp.path().join("fit");
    let o = fit(
        &x,
        &out,
        &[
            "--algo",
            "ibp-accelerated",
            "--chains",
            "3",
            "--iterations",
            "40",
            "--draws",
            "5",
        ],
    );
    let s = summary(&out);
    // Each chain: its final state, its retained means and its distribution of K.
    let chains = s["chains"].as_array().unwrap();
    assert_eq!(chains.len(), 3);
    let mut finals = Vec::new();
    for (c, ch) in chains.iter().enumerate() {
        assert_eq!(ch["chain"], c);
        for key in SCALARS {
            assert!(ch["final"][key].is_number(), "chain {c} final {key}");
            assert!(ch["retained_mean"][key].is_number(), "chain {c} mean {key}");
        }
        let total: f64 = ch["k_distribution"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["p"].as_f64().unwrap())
            .sum();
        assert!((total - 1.0).abs() < 1e-12);
        finals.push((
            ch["final"]["log_joint"].as_f64().unwrap(),
            ch["final"]["k"].as_u64().unwrap(),
        ));
    }
    // z.csv, means.csv and the top-level log joint are the chain of highest final log joint.
    let best = finals
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.0.total_cmp(&b.1.0))
        .unwrap()
        .0;
    assert_eq!(s["log_joint"].as_f64().unwrap(), finals[best].0);
    assert_eq!(s["k"].as_u64().unwrap(), finals[best].1);
    let z_cols = fs::read_to_string(out.join("z.csv"))
        .unwrap()
        .lines()
        .next()
        .map_or(0, |l| l.split(',').count());
    assert_eq!(z_cols as u64, finals[best].1);
    // R̂ and both ESS of every scalar; converged says whether every R̂ is below 1.01.
    let mut all_below = true;
    for key in SCALARS {
        let d = &s["diagnostics"][key];
        for field in ["rhat", "ess_bulk", "ess_tail"] {
            assert!(d[field].is_number(), "{key} {field}");
        }
        all_below &= d["rhat"].as_f64().unwrap() < 1.01;
    }
    assert_eq!(s["converged"].as_bool().unwrap(), all_below);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(s.get("diagnostics_warning").is_some(), !all_below);
    assert_eq!(stderr.contains("warning: the chains disagree"), !all_below);
    // Pooled: K's distribution, the aligned features' means (K_ref × 36) and row
    // probabilities (60 × K_ref).
    let pooled = &s["pooled"];
    assert_eq!(pooled["draws"], 15);
    let total: f64 = pooled["k_distribution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["p"].as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-12);
    let means = pooled["features"]["means"].as_array().unwrap();
    let probs = pooled["features"]["row_probability"].as_array().unwrap();
    assert!(!means.is_empty());
    assert!(means.iter().all(|r| r.as_array().unwrap().len() == 36));
    assert_eq!(probs.len(), 60);
    for row in probs {
        let row = row.as_array().unwrap();
        assert_eq!(row.len(), means.len());
        assert!(
            row.iter()
                .all(|v| (0.0..=1.0).contains(&v.as_f64().unwrap()))
        );
    }
    // draws.jsonl: 20 retained sweeps of each chain thinned to 5 (every 4th, ending at 40).
    let draws: Vec<Value> = fs::read_to_string(out.join("draws.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(draws.len(), 15);
    let sweeps: Vec<u64> = draws
        .iter()
        .filter(|d| d["chain"] == 1)
        .map(|d| d["sweep"].as_u64().unwrap())
        .collect();
    assert_eq!(sweeps, vec![24, 28, 32, 36, 40]);
    for d in &draws {
        let k = d["k"].as_u64().unwrap() as usize;
        let z = d["z"].as_array().unwrap();
        assert_eq!(z.len(), 60);
        for row in z {
            let row = row.as_str().unwrap();
            assert_eq!(row.len(), k);
            assert!(row.chars().all(|c| c == '0' || c == '1'));
        }
        // Every column is held by some row.
        for c in 0..k {
            assert!(z.iter().any(|r| r.as_str().unwrap().as_bytes()[c] == b'1'));
        }
        for key in ["log_joint", "alpha", "sigma_x", "sigma_a"] {
            assert!(d[key].is_number());
        }
    }
    // The last draw of each chain is its final state.
    for (c, ch) in chains.iter().enumerate() {
        let last = draws.iter().rfind(|d| d["chain"] == c).unwrap();
        assert_eq!(last["log_joint"], ch["final"]["log_joint"]);
    }
}

#[test]
fn chains_give_the_same_bytes_on_one_and_two_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path(), "0.3");
    let run = |threads: &str| -> PathBuf {
        let out = tmp.path().join(format!("t{threads}"));
        fit(
            &x,
            &out,
            &[
                "--algo",
                "ibp-gibbs",
                "--chains",
                "3",
                "--iterations",
                "20",
                "--threads",
                threads,
            ],
        );
        out
    };
    let (one, two) = (run("1"), run("2"));
    for file in ["z.csv", "means.csv", "draws.jsonl"] {
        assert_eq!(
            fs::read(one.join(file)).unwrap(),
            fs::read(two.join(file)).unwrap(),
            "{file}"
        );
    }
    let (a, b) = (summary(&one), summary(&two));
    for key in ["chains", "pooled", "diagnostics", "converged", "log_joint"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    // Default: 4 chains.
    let out = tmp.path().join("default");
    fit(&x, &out, &["--algo", "ibp-gibbs", "--iterations", "6"]);
    assert_eq!(summary(&out)["chains"].as_array().unwrap().len(), 4);
}

/// Chains frozen in different states (a tiny fixed σ_X from empty starts, single-entry
/// moves only: each chain keeps the features it first built, its log joint at its own
/// level) must be flagged.
#[test]
fn disagreeing_chains_are_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path(), "0.1");
    let out = tmp.path().join("stuck");
    let o = fit(
        &x,
        &out,
        &[
            "--algo",
            "ibp-gibbs",
            "--plain",
            "--sigma-x",
            "0.01",
            "--chains",
            "4",
            "--iterations",
            "40",
        ],
    );
    let s = summary(&out);
    println!("diagnostics {}", s["diagnostics"]);
    // Chains constant at different values have R̂ = ∞ (written null); here each chain's log
    // joint settles at its own level.
    let worst = SCALARS
        .iter()
        .map(|key| {
            s["diagnostics"][key]["rhat"]
                .as_f64()
                .unwrap_or(f64::INFINITY)
        })
        .fold(0.0, f64::max);
    assert!(worst > 1.1, "largest R̂ {worst}");
    assert_eq!(s["converged"], false);
    assert!(
        s["diagnostics_warning"]
            .as_str()
            .unwrap()
            .contains("log_joint ")
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: the chains disagree"));
}

/// Chains that sample the same posterior agree: four chains started at the true Z of block
/// images, hyperparameters resampled (so K, the log joint, α, σ_X and σ_A all move), long
/// enough for R̂ to settle (largest R̂ 1.0005 at this seed; 150 sweeps give 1.015, flagged).
/// Then `converged: true`, no `diagnostics_warning`, nothing on stderr about disagreement.
#[test]
fn agreeing_chains_are_reported_converged() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path(), "0.3");
    let z = x.with_file_name("z.csv");
    let out = tmp.path().join("agree");
    let o = fit(
        &x,
        &out,
        &[
            "--algo",
            "ibp-accelerated",
            "--init-z",
            p(&z),
            "--chains",
            "4",
            "--iterations",
            "1000",
            "--draws",
            "50",
        ],
    );
    let s = summary(&out);
    for key in SCALARS {
        let rhat = s["diagnostics"][key]["rhat"].as_f64().unwrap();
        assert!(rhat < 1.01, "{key}: R̂ {rhat}");
    }
    assert_eq!(s["converged"], true);
    assert!(s.get("diagnostics_warning").is_none());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
    // Not a trivial agreement of constant chains: the draws' log joint and σ_X move.
    let draws: Vec<Value> = fs::read_to_string(out.join("draws.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for key in ["log_joint", "sigma_x"] {
        let v: Vec<f64> = draws.iter().map(|d| d[key].as_f64().unwrap()).collect();
        let (lo, hi) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        assert!(hi > lo, "{key} constant over the draws");
    }
}

#[test]
fn chains_options_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let x = blocks(tmp.path(), "0.3");
    for (args, want) in [
        (vec!["--algo", "ibp-gibbs", "--chains", "0"], "--chains"),
        (vec!["--algo", "ibp-gibbs", "--draws", "0"], "--draws"),
        (
            vec!["--algo", "meibp", "--k", "5", "--chains", "2"],
            "--chains",
        ),
        (vec!["--algo", "bp-means", "--chains", "2"], "--chains"),
    ] {
        let out = tmp.path().join("refused");
        let mut all = vec!["fit", p(&x), "--out", p(&out)];
        all.extend(args.iter());
        let o = madbayes(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}: nothing is written");
    }
}
