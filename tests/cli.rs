//! The command line end to end: results, reproducibility across thread counts, and every
//! kind of bad input (one-line message, exit status 2, nothing left in the output folder).

use madbayes::Fit;
use madbayes::clustering::dp_means;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn madbayes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madbayes"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// Writes well-separated 2-D data: three groups of `per` points.
fn write_groups(dir: &Path, per: usize) -> PathBuf {
    let mut s = String::from("x,y\n");
    for g in 0..3 {
        for i in 0..per {
            let t = i as f64 / per as f64;
            s.push_str(&format!(
                "{},{}\n",
                10.0 * g as f64 + t,
                -5.0 * g as f64 + 0.5 * t
            ));
        }
    }
    let p = dir.join("groups.csv");
    fs::write(&p, s).unwrap();
    p
}

/// Asserts a failure: status 2, one stderr line starting `madbayes: error:` that contains
/// every `needle`, and no output folder (or an untouched empty one).
fn assert_bad(out: &Output, needles: &[&str], out_dir: Option<&Path>) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line expected: {err:?}"
    );
    assert!(err.starts_with("madbayes: error:"), "{err}");
    for n in needles {
        assert!(
            err.to_lowercase().contains(&n.to_lowercase()),
            "{err:?} lacks {n:?}"
        );
    }
    if let Some(d) = out_dir
        && d.exists()
    {
        let left: Vec<_> = fs::read_dir(d).unwrap().collect();
        assert!(left.is_empty(), "files left in {}: {left:?}", d.display());
    }
}

fn fit(input: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["fit", path_str(input), "--out", path_str(out), "--quiet"];
    args.extend_from_slice(extra);
    madbayes(&args)
}

#[test]
fn dp_means_writes_a_complete_result() {
    let d = tmp();
    let input = write_groups(d.path(), 20);
    let out = d.path().join("res");
    let o = fit(&input, &out, &["--algo", "dp-means", "--penalty", "9"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in [
        "algo",
        "n",
        "d",
        "k",
        "objective",
        "penalty",
        "restarts",
        "seed",
        "iterations",
        "converged",
        "seconds",
    ] {
        assert!(summary.get(key).is_some(), "summary lacks {key}");
    }
    assert_eq!(summary["algo"], "dp-means");
    assert_eq!(summary["n"], 60);
    assert_eq!(summary["d"], 2);
    assert_eq!(summary["k"], 3);
    assert_eq!(summary["penalty"], 9.0);
    assert_eq!(summary["restarts"], dp_means::DEFAULT_RESTARTS);
    let labels: Vec<usize> = fs::read_to_string(out.join("labels.csv"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(labels.len(), 60);
    let means: Vec<Vec<f64>> = fs::read_to_string(out.join("means.csv"))
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(means.len(), 3);
    assert!(means.iter().all(|m| m.len() == 2));
    let z = fs::read_to_string(out.join("z.csv")).unwrap();
    assert_eq!(z.lines().count(), labels.len());
    for (line, &l) in z.lines().zip(&labels) {
        let row: Vec<&str> = line.split(',').collect();
        assert_eq!(row.len(), 3);
        for (j, v) in row.iter().enumerate() {
            assert_eq!(*v, if j == l { "1" } else { "0" });
        }
    }
    // The objective in summary.json is the DP-means objective of the written labels and means.
    let x: Vec<Vec<f64>> = fs::read_to_string(&input)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let ss: f64 = x
        .iter()
        .zip(&labels)
        .map(|(r, &l)| {
            r.iter()
                .zip(&means[l])
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
        })
        .sum();
    let expected = ss + 2.0 * 9.0;
    let got = summary["objective"].as_f64().unwrap();
    assert!(
        (got - expected).abs() <= 1e-9 * expected,
        "{got} vs {expected}"
    );
    // No staging folder is left behind (the four results, model.json, trace.png and the manifest).
    let names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 7, "{names:?}");
    assert!(names.iter().any(|n| n == "model.json"), "{names:?}");
    assert!(names.iter().any(|n| n == ".madbayes-result"), "{names:?}");
    assert!(names.iter().any(|n| n == "trace.png"), "{names:?}");
}

/// Without --restarts, on data of more than 200 000 values DP-means makes
/// `LARGE_DATA_RESTARTS` runs and collapsed DP-means `LARGE_DATA_REFINED`, and the summary
/// says how many runs it made; a number given is taken as it is.
#[test]
fn dp_means_restarts_follow_the_data_size_unless_given() {
    let d = tmp();
    let x = madbayes::generate::gaussian_blobs(20_001, 10, 20, 10.0, 1.0, 3).x;
    assert!(x.n_rows() * x.n_cols() > dp_means::REFINE_EVERY_RUN_MAX_VALUES);
    let input = d.path().join("big.csv");
    let mut text = String::new();
    for row in x.rows() {
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    fs::write(&input, text).unwrap();
    for (algo, flags, runs) in [
        ("dp-means", vec![], dp_means::LARGE_DATA_RESTARTS),
        ("collapsed-dp-means", vec![], dp_means::LARGE_DATA_REFINED),
        ("dp-means", vec!["--restarts", "3"], 3),
    ] {
        let out = d.path().join(format!("{algo}{}", flags.len()));
        let mut extra = vec!["--algo", algo, "--penalty", "400"];
        extra.extend_from_slice(&flags);
        let o = fit(&input, &out, &extra);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let summary: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["restarts"], runs, "{algo} {flags:?}");
        assert!(summary["best_run"].as_u64().unwrap() < runs as u64);
    }
}

#[test]
fn every_algorithm_runs_and_reports_its_k() {
    let d = tmp();
    let input = write_groups(d.path(), 15);
    for (algo, extra) in [
        ("kmeans", vec!["--k", "3"]),
        ("dp-means", vec!["--penalty", "9", "--refine"]),
        ("collapsed-dp-means", vec!["--penalty", "9"]),
        ("dp-means", vec!["--penalty", "0.0001", "--k", "5"]),
    ] {
        let out = d.path().join(format!("{algo}-{}", extra.len()));
        let mut args = vec!["--algo", algo];
        args.extend(extra.iter().copied());
        let o = fit(&input, &out, &args);
        assert!(
            o.status.success(),
            "{algo}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let s: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        let k = s["k"].as_u64().unwrap();
        if extra.contains(&"5") {
            assert_eq!(k, 5, "the cap binds with a tiny penalty");
        } else {
            assert_eq!(k, 3, "{algo}");
        }
    }
}

#[test]
fn the_same_seed_gives_byte_identical_files_on_one_and_two_threads() {
    let d = tmp();
    // Enough rows for several 4096-row blocks, so the parallel paths are exercised.
    let mut s = String::new();
    for i in 0..9000u64 {
        let g = (i * 7919 % 5) as f64;
        let jitter = ((i * 104729 % 1000) as f64) / 1000.0;
        s.push_str(&format!(
            "{},{},{}\n",
            6.0 * g + jitter,
            jitter * 0.3,
            -2.0 * g + jitter
        ));
    }
    let input = d.path().join("big.csv");
    fs::write(&input, s).unwrap();
    for (algo, extra) in [
        ("dp-means", vec!["--penalty", "4"]),
        ("kmeans", vec!["--k", "4"]),
        (
            "collapsed-dp-means",
            vec!["--penalty", "4", "--restarts", "2"],
        ),
    ] {
        let mut outs = Vec::new();
        for threads in ["1", "2"] {
            let out = d.path().join(format!("{algo}-t{threads}"));
            let mut args = vec!["--algo", algo, "--seed", "5", "--threads", threads];
            args.extend(extra.iter().copied());
            let o = fit(&input, &out, &args);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            outs.push(out);
        }
        for f in ["labels.csv", "means.csv", "z.csv"] {
            if algo == "bp-means" && f == "labels.csv" {
                continue; // features have no labels
            }
            assert_eq!(
                fs::read(outs[0].join(f)).unwrap(),
                fs::read(outs[1].join(f)).unwrap(),
                "{algo} {f} differs between 1 and 2 threads"
            );
        }
        let s: Vec<serde_json::Value> = outs
            .iter()
            .map(|o| {
                serde_json::from_str(&fs::read_to_string(o.join("summary.json")).unwrap()).unwrap()
            })
            .collect();
        for key in [
            "objective",
            "k",
            "iterations",
            "restart_objectives",
            "trace",
        ] {
            assert_eq!(s[0][key], s[1][key], "{algo} {key}");
        }
    }
}

#[test]
fn demo_finds_the_clusters_and_draws_the_four_block_shapes() {
    let o = madbayes(&["demo"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let row = |name: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("a {name} row in\n{text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // dp-means, K = 6, ARI 1 (the paper's algorithm finds 3 of the 6 here).
    let dp = row("dp-means ");
    assert_eq!((dp[1].as_str(), dp[3].as_str()), ("6", "1.0000"), "{dp:?}");
    let bp = row("bp-means ");
    assert_eq!(bp[1], "4", "{bp:?}");
    let truth: f64 = row("the true Z")[6].parse().unwrap();
    assert!(bp[2].parse::<f64>().unwrap() <= truth, "{bp:?} vs {truth}");
    // Four pictures, each learned feature beside its true shape: 6 lines of 4 pairs.
    let header = text
        .lines()
        .position(|l| l.starts_with("feature 1 ("))
        .expect("the pictures");
    assert!(text.lines().nth(header).unwrap().contains("feature 4 ("));
    for line in text.lines().skip(header + 1).take(6) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells.len(), 8, "{line}");
        // Every learned feature draws its shape exactly at this noise level.
        for pair in cells.chunks(2) {
            assert_eq!(pair[0], pair[1], "{line}");
        }
    }
}

#[test]
fn plain_and_seeding_flags_reach_the_library_and_the_summary() {
    let d = tmp();
    // Noisy block images (N = 100, σ_X = 0.5) as a CSV file, and the same rows in memory.
    let data = madbayes::generate::block_images(100, 0.5, 0.5, 2).unwrap();
    let csv = d.path().join("blocks.csv");
    let text: String = data
        .x
        .rows()
        .map(|r| {
            r.iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    fs::write(&csv, text).unwrap();
    let summary = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
    };
    let lib = |p: madbayes::features::FeatureParams| p.check().unwrap().fit(&data.x).unwrap();
    let cases: [(&[&str], madbayes::features::FeatureParams, bool, &str); 3] = [
        (
            &[],
            madbayes::features::BpMeans::params(100.0),
            true,
            "base",
        ),
        (
            &["--plain"],
            madbayes::features::BpMeans::params(100.0).plain(),
            false,
            "base",
        ),
        (
            &["--plain", "--seeding", "residual", "--refine"],
            madbayes::features::BpMeans::params(100.0)
                .plain()
                .seeding(madbayes::features::FeatureSeeding::Residual)
                .refine(true),
            true,
            "residual",
        ),
    ];
    for (i, (flags, params, refine, seeding)) in cases.into_iter().enumerate() {
        let out = d.path().join(format!("out{i}"));
        let mut extra = vec!["--algo", "bp-means", "--penalty", "100"];
        extra.extend_from_slice(flags);
        let o = fit(&csv, &out, &extra);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s = summary(&out);
        let want = lib(params);
        assert_eq!(
            s["objective"].as_f64().unwrap(),
            madbayes::Model::objective(&want),
            "{flags:?}"
        );
        assert_eq!(s["refine"], refine, "{flags:?}");
        assert_eq!(s["plain"], flags.contains(&"--plain"), "{flags:?}");
        assert_eq!(s["seeding"], seeding, "{flags:?}");
        assert_eq!(s["restarts"], madbayes::features::DEFAULT_RESTARTS);
        assert_eq!(s["max_iter"], madbayes::features::DEFAULT_MAX_ITER);
    }
    // The defaults find the four shapes here; the paper's Algorithm 1 does not.
    assert_eq!(summary(&d.path().join("out0"))["k"], 4);
    assert!(summary(&d.path().join("out1"))["k"].as_u64().unwrap() < 4);
    // Flags that do not apply are refused.
    let out = d.path().join("bad");
    assert_bad(
        &fit(&csv, &out, &["--algo", "kmeans", "--k", "2", "--plain"]),
        &["--plain", "kmeans"],
        Some(&out),
    );
    assert_bad(
        &fit(
            &csv,
            &out,
            &["--algo", "dp-means", "--penalty", "9", "--seeding", "base"],
        ),
        &["--seeding", "dp-means"],
        Some(&out),
    );
}

// ---- bad input --------------------------------------------------------------------------

#[test]
fn missing_and_unreadable_inputs() {
    let d = tmp();
    let out = d.path().join("out");
    let missing = d.path().join("nope.csv");
    assert_bad(
        &fit(&missing, &out, &["--algo", "kmeans", "--k", "2"]),
        &["nope.csv"],
        Some(&out),
    );
    // A folder named like a CSV file cannot be read as one.
    let dir_csv = d.path().join("dir.csv");
    fs::create_dir(&dir_csv).unwrap();
    assert_bad(
        &fit(&dir_csv, &out, &["--algo", "kmeans", "--k", "2"]),
        &["dir.csv"],
        Some(&out),
    );
    let unknown = d.path().join("data.txt");
    fs::write(&unknown, "1,2\n").unwrap();
    assert_bad(
        &fit(&unknown, &out, &["--algo", "kmeans", "--k", "1"]),
        &["data.txt"],
        Some(&out),
    );
}

#[test]
fn malformed_csv_files() {
    let d = tmp();
    let out = d.path().join("out");
    let cases: [(&str, &str, &[&str]); 7] = [
        ("empty.csv", "", &["empty.csv"]),
        ("header_only.csv", "a,b\n", &["no data"]),
        ("ragged.csv", "1,2\n3,4\n5\n", &["line 3"]),
        ("text.csv", "1,2\n3,abc\n", &["abc", "line 2"]),
        ("nan.csv", "1,2\nnan,4\n", &["line 2"]),
        ("inf.csv", "1,2\n3,inf\n", &["line 2"]),
        ("neginf.csv", "1,2\n3,-inf\n", &["line 2"]),
    ];
    for (name, body, needles) in cases {
        let p = d.path().join(name);
        fs::write(&p, body).unwrap();
        let o = fit(&p, &out, &["--algo", "dp-means", "--penalty", "1"]);
        let mut all = vec![name];
        all.extend_from_slice(needles);
        assert_bad(&o, &all, Some(&out));
    }
}

fn npy_header(descr: &str, shape: &str) -> Vec<u8> {
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    v.extend_from_slice(dict.as_bytes());
    v
}

#[test]
fn malformed_npy_files() {
    let d = tmp();
    let out = d.path().join("out");
    let mut truncated = npy_header("<f8", "(3, 2)");
    for v in [1.0f64, 2.0, 3.0, 4.0] {
        truncated.extend_from_slice(&v.to_le_bytes());
    }
    let mut huge = npy_header("<f8", "(1000000000000, 1000000)");
    huge.extend_from_slice(&1.0f64.to_le_bytes());
    let mut with_nan = npy_header("<f8", "(2, 1)");
    with_nan.extend_from_slice(&1.0f64.to_le_bytes());
    with_nan.extend_from_slice(&f64::NAN.to_le_bytes());
    let cases: [(&str, Vec<u8>); 4] = [
        ("truncated.npy", truncated),
        ("huge.npy", huge),
        ("nan.npy", with_nan),
        ("garbage.npy", b"this is not numpy".to_vec()),
    ];
    for (name, bytes) in cases {
        let p = d.path().join(name);
        fs::write(&p, bytes).unwrap();
        let o = fit(&p, &out, &["--algo", "dp-means", "--penalty", "1"]);
        assert_bad(&o, &[name], Some(&out));
    }
}

#[test]
fn impossible_parameters() {
    let d = tmp();
    let input = write_groups(d.path(), 4); // N = 12
    let out = d.path().join("out");
    let cases: [(&[&str], &[&str]); 11] = [
        (&["--algo", "dp-means", "--penalty", "0"], &["penalty"]),
        (&["--algo", "dp-means", "--penalty", "-2"], &["penalty"]),
        (&["--algo", "dp-means", "--penalty", "nan"], &["penalty"]),
        (&["--algo", "dp-means", "--penalty", "inf"], &["penalty"]),
        (&["--algo", "dp-means"], &["--penalty"]),
        (&["--algo", "kmeans", "--k", "0"], &["k"]),
        (&["--algo", "kmeans", "--k", "13"], &["13", "12"]),
        (
            &["--algo", "dp-means", "--penalty", "1", "--k", "13"],
            &["13", "12"],
        ),
        (
            &["--algo", "kmeans", "--k", "2", "--restarts", "0"],
            &["restarts"],
        ),
        (&["--algo", "kmeans"], &["--k"]),
        (
            &["--algo", "kmeans", "--k", "2", "--penalty", "3"],
            &["penalty"],
        ),
    ];
    for (args, needles) in cases {
        assert_bad(&fit(&input, &out, args), needles, Some(&out));
    }
    // Usage errors from the parser also exit with status 2.
    let o = fit(&input, &out, &["--algo", "bogus-means", "--k", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bogus-means"));
    assert!(!out.exists());
}

#[test]
fn unwritable_output_folder() {
    let d = tmp();
    let input = write_groups(d.path(), 4);
    let file = d.path().join("a_file");
    fs::write(&file, "x").unwrap();
    // A folder cannot be made below a regular file (this holds even for root).
    let below = file.join("out");
    assert_bad(
        &fit(&input, &below, &["--algo", "kmeans", "--k", "2"]),
        &["out", "--out"],
        None,
    );
    assert_bad(
        &fit(&input, &file, &["--algo", "kmeans", "--k", "2"]),
        &["a_file", "--out"],
        None,
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn an_existing_folder_keeps_other_files_and_gets_no_partial_result() {
    let d = tmp();
    let input = write_groups(d.path(), 4);
    let out = d.path().join("out");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = fit(&input, &out, &["--algo", "kmeans", "--k", "99"]);
    assert_eq!(o.status.code(), Some(2));
    let names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["notes.txt".to_string()]);
}

/// Rows Z·A for every 0/1 row z over three disjoint features, each three times.
fn write_features(dir: &Path) -> (PathBuf, Vec<Vec<f64>>) {
    let a = [
        [5.0, 0.0, 0.0, 5.0, 0.0, 0.0],
        [0.0, 5.0, 0.0, 0.0, 5.0, 0.0],
        [0.0, 0.0, 5.0, 0.0, 0.0, 5.0],
    ];
    let mut rows = Vec::new();
    for rep in 0..3 {
        for code in 0..8 {
            let mut r = vec![0.1 * rep as f64; 6];
            for (k, ak) in a.iter().enumerate() {
                if code >> k & 1 == 1 {
                    r.iter_mut().zip(ak).for_each(|(v, w)| *v += w);
                }
            }
            rows.push(r);
        }
    }
    let text: String = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    let p = dir.join("features.csv");
    fs::write(&p, text).unwrap();
    (p, rows)
}

fn read_csv_matrix(p: &Path) -> Vec<Vec<f64>> {
    fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect()
}

#[test]
fn feature_algorithms_write_z_and_a_whose_objective_matches_the_summary() {
    let d = tmp();
    let (input, x) = write_features(d.path());
    for (algo, extra, penalty) in [
        ("k-features", vec!["--k", "3"], 0.0),
        ("bp-means", vec!["--penalty", "2", "--refine"], 2.0),
        ("stepwise-k-features", vec!["--penalty", "2"], 2.0),
        (
            "collapsed-bp-means",
            vec!["--penalty", "2", "--restarts", "3"],
            2.0,
        ),
    ] {
        let out = d.path().join(algo);
        let mut args = vec!["--algo", algo, "--seed", "3"];
        args.extend(extra.iter().copied());
        let o = fit(&input, &out, &args);
        assert!(
            o.status.success(),
            "{algo}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!out.join("labels.csv").exists(), "features have no labels");
        let z = read_csv_matrix(&out.join("z.csv"));
        let a = read_csv_matrix(&out.join("means.csv"));
        let s: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        let k = s["k"].as_u64().unwrap() as usize;
        assert_eq!(a.len(), k, "{algo}");
        assert_eq!(z.len(), 24);
        assert!(
            z.iter()
                .all(|r| r.len() == k && r.iter().all(|&v| v == 0.0 || v == 1.0))
        );
        let mut ss = 0.0;
        for (zr, xr) in z.iter().zip(&x) {
            for j in 0..6 {
                let fit: f64 = (0..k).map(|f| zr[f] * a[f][j]).sum();
                ss += (xr[j] - fit).powi(2);
            }
        }
        let expected = ss + penalty * k as f64;
        let got = s["objective"].as_f64().unwrap();
        assert!(
            (got - expected).abs() <= 1e-9 * (1.0 + expected),
            "{algo}: {got} vs {expected}"
        );
    }
}

#[test]
fn mahalanobis_writes_covariances_and_refuses_too_few_rows() {
    let d = tmp();
    let input = write_groups(d.path(), 20);
    let out = d.path().join("maha");
    let o = fit(
        &input,
        &out,
        &["--algo", "mahalanobis", "--k", "2", "--penalty", "1"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cov = read_csv_matrix(&out.join("covariances.csv"));
    assert_eq!(cov.len(), 2 * 2, "K blocks of D rows");
    // K·(D + 1) > N: every cluster must keep more than D points.
    let small_dir = d.path().join("small");
    fs::create_dir(&small_dir).unwrap();
    let small = write_groups(&small_dir, 1);
    let out2 = d.path().join("maha2");
    assert_bad(
        &fit(
            &small,
            &out2,
            &["--algo", "mahalanobis", "--k", "2", "--penalty", "1"],
        ),
        &["mahalanobis"],
        Some(&out2),
    );
}
