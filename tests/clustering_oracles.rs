//! Exhaustive oracles for the clustering family on tiny data (N ≤ 8, D = 1..3).
//!
//! Every set partition of the rows is enumerated (restricted growth strings) and scored by
//! independent code, which gives the global optimum of K-means (exactly K blocks), DP-means
//! (Eq. 3: sum of squares + (K − 1)·P, whose minimiser over means is Eq. 9's collapsed
//! objective) and capped DP-means (Eq. 12, K ≤ K_max). No run may report less than that
//! optimum, and every returned solution must be a local minimum for its algorithm's own moves.

mod common;

use common::*;
use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::clustering::{Clustering, CollapsedDpMeans, DpMeans, DpMeansParams, KMeans};

/// One tiny problem: data, the best sum of squares for each K, and a penalty under which the
/// DP-means optimum has 2–4 clusters.
struct Problem {
    name: String,
    x: RowMatrix,
    best: Vec<f64>,
    penalty: f64,
}

fn tiny_problems() -> Vec<Problem> {
    let mut out = Vec::new();
    for d in 1..=3 {
        for n in [5, 6, 7, 8] {
            for seed in 0..3u64 {
                for kind in ["uniform", "clumps"] {
                    let mut rng = rng(1000 * d as u64 + 100 * n as u64 + 10 * seed);
                    let x = if kind == "uniform" {
                        uniform(n, d, &mut rng)
                    } else {
                        clumps(n, d, &mut rng)
                    };
                    let best = best_ss_by_k(&x);
                    let Some(penalty) = pick_penalty(&best, &mut rng) else {
                        continue;
                    };
                    out.push(Problem {
                        name: format!("{kind} N={n} D={d} seed={seed}"),
                        x,
                        best,
                        penalty,
                    });
                }
            }
        }
    }
    assert!(out.len() >= 60, "too few usable problems: {}", out.len());
    out
}

fn tol(x: &RowMatrix) -> f64 {
    1e-9 * (1.0 + data_scale(x))
}

#[test]
fn kmeans_never_beats_the_exhaustive_optimum_and_stops_at_a_lloyd_fixed_point() {
    for p in tiny_problems() {
        let n = p.x.n_rows();
        for k in 1..=4.min(n) {
            for seed in 0..2 {
                let fit = KMeans::params(k)
                    .restarts(3)
                    .seed(seed)
                    .check()
                    .unwrap()
                    .fit(&p.x)
                    .unwrap();
                let what = format!("{} K-means K={k} seed={seed}", p.name);
                for &v in fit.run_objectives() {
                    assert_not_below(v, p.best[k], &what);
                }
                assert!(fit.converged(), "{what}: not converged");
                assert_eq!(fit.k(), k, "{what}");
                let used = check_lloyd_fixed_point(&p.x, fit.labels(), fit.means(), tol(&p.x));
                // The rows are distinct, so a fixed point with an empty cluster is not a
                // K-block solution at all.
                assert_eq!(used, k, "{what}: {} of {k} clusters are empty", k - used);
            }
        }
    }
}

/// The four DP-means configurations, by name.
fn dp_configs(penalty: f64) -> [(&'static str, DpMeansParams); 4] {
    [
        ("DP-means", DpMeans::params(penalty).plain()),
        ("DP-means+refine", DpMeans::params(penalty).refine(true)),
        ("collapsed", CollapsedDpMeans::params(penalty).plain()),
        (
            "collapsed+refine",
            CollapsedDpMeans::params(penalty).refine(true),
        ),
    ]
}

fn check_dp_local_min(name: &str, x: &RowMatrix, fit: &Clustering, penalty: f64, k_max: usize) {
    let t = tol(x);
    let (labels, means) = (fit.labels(), fit.means());
    match name {
        "DP-means" => check_dp_fixed_point(x, labels, means, penalty, k_max, t),
        "DP-means+refine" => {
            check_dp_fixed_point(x, labels, means, penalty, k_max, t);
            check_collapsed_local_min(x, labels, penalty, k_max, true, t);
        }
        "collapsed" => check_collapsed_local_min(x, labels, penalty, k_max, false, t),
        "collapsed+refine" => check_collapsed_local_min(x, labels, penalty, k_max, true, t),
        _ => unreachable!(),
    }
}

#[test]
fn dp_means_family_never_beats_the_exhaustive_optimum_and_stops_at_local_minima() {
    for p in tiny_problems() {
        let n = p.x.n_rows();
        let (_, k_opt) = dp_optimum(&p.best, p.penalty, n);
        assert!((2..=4).contains(&k_opt), "{}: K* = {k_opt}", p.name);
        // Uncapped, capped below the optimum's K (the cap binds), and capped at it.
        for cap in [None, Some(k_opt - 1), Some(k_opt)] {
            let k_max = cap.unwrap_or(usize::MAX);
            let (opt, _) = dp_optimum(&p.best, p.penalty, k_max.min(n));
            for (name, params) in dp_configs(p.penalty) {
                for seed in 0..2 {
                    let fit = params
                        .clone()
                        .k_max(cap)
                        .restarts(3)
                        .seed(seed)
                        .check()
                        .unwrap()
                        .fit(&p.x)
                        .unwrap();
                    let what = format!("{} {name} cap={cap:?} seed={seed}", p.name);
                    for &v in fit.run_objectives() {
                        assert_not_below(v, opt, &what);
                    }
                    assert!(fit.converged(), "{what}: not converged");
                    assert!(fit.k() <= k_max, "{what}: K = {} > cap", fit.k());
                    check_dp_local_min(name, &p.x, &fit, p.penalty, k_max);
                }
            }
        }
    }
}

/// The problems of the restart-rate measurement: 20 random 7-point problems in the plane.
fn seven_point_problems() -> Vec<Problem> {
    let mut out = Vec::new();
    let mut seed = 0u64;
    while out.len() < 20 {
        let mut rng = rng(70_000 + seed);
        seed += 1;
        let x = uniform(7, 2, &mut rng);
        let best = best_ss_by_k(&x);
        if let Some(penalty) = pick_penalty(&best, &mut rng) {
            out.push(Problem {
                name: format!("7-point problem {}", out.len()),
                x,
                best,
                penalty,
            });
        }
    }
    out
}

#[test]
fn best_of_30_restarts_against_the_global_optimum() {
    const R: usize = 30;
    let problems = seven_point_problems();
    let mut hits = [0usize; 4];
    let mut names = [""; 4];
    for p in &problems {
        let (opt, _) = dp_optimum(&p.best, p.penalty, 7);
        let mut runs: Vec<Vec<f64>> = Vec::new();
        for (i, (name, params)) in dp_configs(p.penalty).into_iter().enumerate() {
            names[i] = name;
            let fit = params
                .restarts(R)
                .seed(3)
                .check()
                .unwrap()
                .fit(&p.x)
                .unwrap();
            let what = format!("{} {name}", p.name);
            assert_eq!(fit.run_objectives().len(), R);
            for &v in fit.run_objectives() {
                assert_not_below(v, opt, &what);
            }
            check_dp_local_min(name, &p.x, &fit, p.penalty, usize::MAX);
            if fit.objective() <= opt + 1e-9 * opt {
                hits[i] += 1;
            }
            runs.push(fit.run_objectives().to_vec());
        }
        // Refinement starts where the same run without it stopped (same seed, same row
        // order), and only accepts improvements: never worse, run by run.
        for (plain, refined) in [(0, 1), (2, 3)] {
            for r in 0..R {
                let (a, b) = (runs[plain][r], runs[refined][r]);
                assert!(
                    b <= a + 1e-9 * a.abs(),
                    "{}: run {r} of {} reached {b}, worse than {a} without refinement",
                    p.name,
                    names[refined]
                );
            }
        }
    }
    println!(
        "best of {R} restarts reaching the global optimum, 20 random 7-point problems (D = 2):"
    );
    for i in 0..4 {
        println!("  {:<17} {:>2} of {}", names[i], hits[i], problems.len());
    }
}

#[test]
fn kmeans_from_poor_initial_means_still_ends_with_k_nonempty_clusters() {
    // Initial means far outside the data leave clusters empty at the first assignment; the
    // run must still end at a Lloyd fixed point that uses all K clusters (the rows are
    // distinct, so K non-empty blocks exist).
    let mut r = rng(424_242);
    for trial in 0..300 {
        let n = 4 + trial % 5;
        let d = 1 + trial % 3;
        let x = uniform(n, d, &mut r);
        let k = 2 + trial % 3;
        let init = RowMatrix::new(
            k,
            d,
            (0..k * d)
                .map(|_| -3.0 + 7.0 * rand::RngExt::random::<f64>(&mut r))
                .collect(),
        );
        let fit = KMeans::params(k)
            .check()
            .unwrap()
            .fit_from_means(x.view(), &init)
            .unwrap();
        let what = format!(
            "trial {trial}: N={n} D={d} K={k} init {:?}",
            init.as_slice()
        );
        assert!(fit.converged(), "{what}: not converged");
        let used = check_lloyd_fixed_point(&x, fit.labels(), fit.means(), tol(&x));
        assert_eq!(used, k, "{what}: {} empty cluster(s) at the end", k - used);
        assert_not_below(fit.objective(), best_ss_by_k(&x)[k], &what);
    }
}
