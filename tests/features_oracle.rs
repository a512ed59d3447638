//! Exhaustive oracles on tiny data: every Z is enumerated (N = 5, all sets of distinct
//! columns, A at its least-squares value), so the global optimum of each objective is known.

#[path = "features_common/mod.rs"]
mod common;

use common::*;
use madbayes::Fit;
use madbayes::Model;
use madbayes::features::objective::{
    bp_means_objective, collapsed_bp_means_objective, k_features_objective, sum_of_squares,
};
use madbayes::features::{
    BpMeans, CollapsedBpMeans, FeatureModel, FeatureSeeding, KFeatures, StepwiseKFeatures,
};
use madbayes::{BinaryMatrix, RowMatrix};

/// A 5-point problem with a penalty at which the optimum has a few features.
fn problem(i: u64) -> (RowMatrix, f64) {
    (random_data(5, 3, 1000 + i), 1.5)
}

fn bp_optimum(x: &RowMatrix, p: f64) -> f64 {
    best_rss_by_k(x, 5)
        .iter()
        .enumerate()
        .map(|(k, r)| r + k as f64 * p)
        .fold(f64::INFINITY, f64::min)
}

/// Checks what every returned BP-means solution must satisfy.
fn assert_bp_local_minimum(x: &RowMatrix, fit: &FeatureModel, p: f64) {
    let (z, a) = (fit.z(), fit.means());
    let obj = bp_means_objective(x, &z, a, p);
    assert!(
        (obj - fit.objective()).abs() < 1e-9,
        "reported ≠ recomputed"
    );
    assert_least_squares(x, &z, a);
    assert_monotone(fit.trace(), fit.objective());
    // No single flip of z_nk (A fixed) lowers the objective.
    for i in 0..x.n_rows() {
        for k in 0..z.n_cols() {
            let mut zf = z.clone();
            zf.row_mut(i)[k] = 1 - zf.row(i)[k];
            assert!(
                bp_means_objective(x, &zf, a, p) >= obj - 1e-9,
                "flip ({i}, {k}) helps"
            );
        }
    }
    // No new feature r_n held by n alone lowers it: ‖r_n‖² ≤ P for every row.
    for i in 0..x.n_rows() {
        let xi = RowMatrix::from_rows(&[x.row(i)]);
        let zi = BinaryMatrix::from_rows(&[z.row(i)]);
        assert!(
            sum_of_squares(&xi, &zi, a) <= p + 1e-9,
            "row {i} would open a feature"
        );
    }
}

#[test]
fn bp_means_never_beats_the_enumerated_optimum_and_ends_at_local_minima() {
    let mut hits = [0usize; 6];
    let problems = 16;
    // (seeding, the paper's algorithm, refinement on)
    let configs = [
        (FeatureSeeding::BaseFeature, true, false),
        (FeatureSeeding::Residual, true, false),
        (FeatureSeeding::BaseFeature, true, true),
        (FeatureSeeding::Residual, true, true),
        (FeatureSeeding::BaseFeature, false, true),
        (FeatureSeeding::Residual, false, true),
    ];
    for i in 0..problems {
        let (x, p) = problem(i);
        let opt = bp_optimum(&x, p);
        for (s, (seeding, plain, refine)) in configs.into_iter().enumerate() {
            let base = BpMeans::params(p);
            let base = if plain { base.plain() } else { base };
            let fit = base
                .restarts(50)
                .seeding(seeding)
                .refine(refine)
                .seed(i)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            assert!(fit.objective() >= opt - 1e-9, "below the optimum");
            assert_bp_local_minimum(&x, &fit, p);
            assert_monotone(fit.trace(), fit.objective());
            for &o in fit.run_objectives() {
                assert!(o >= opt - 1e-9);
            }
            if fit.objective() <= opt + 1e-9 {
                hits[s] += 1;
            }
        }
    }
    println!(
        "BP-means, best of 50 restarts, reached the exact optimum in these many of {problems} \
         5-point problems: the paper's algorithm {} (residual seeding {}); the paper's seeding \
         refined {} ({}); the defaults (grown seeds, refined) {} ({})",
        hits[0], hits[1], hits[2], hits[3], hits[4], hits[5]
    );
    // Refinement starts from each plain run and only accepts improvements.
    assert!(hits[2] >= hits[0] && hits[3] >= hits[1]);
}

#[test]
fn k_features_never_beats_the_enumerated_optimum_and_rows_are_best_responses() {
    let mut hits = 0;
    let mut total = 0;
    for i in 0..8 {
        let (x, _) = problem(i);
        let best = best_rss_by_k(&x, 3);
        for (k, &best_k) in best.iter().enumerate().skip(1) {
            let fit = KFeatures::params(k)
                .restarts(30)
                .seed(i)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            let (z, a) = (fit.z(), fit.means());
            assert_eq!((z.n_cols(), a.n_rows()), (k, k));
            let obj = k_features_objective(&x, &z, a);
            assert!((obj - fit.objective()).abs() < 1e-9);
            assert!(obj >= best_k - 1e-9);
            assert_least_squares(&x, &z, a);
            assert_monotone(fit.trace(), fit.objective());
            // Every row is the exact best response to A (all 2^K rows tried).
            for n in 0..5 {
                let xi = RowMatrix::from_rows(&[x.row(n)]);
                let own = sum_of_squares(&xi, &BinaryMatrix::from_rows(&[z.row(n)]), a);
                for mask in 0..(1u32 << k) {
                    let zi: Vec<u8> = (0..k).map(|j| ((mask >> j) & 1) as u8).collect();
                    let other = sum_of_squares(&xi, &BinaryMatrix::from_rows(&[zi]), a);
                    assert!(own <= other + 1e-9);
                }
            }
            total += 1;
            if obj <= best_k + 1e-9 {
                hits += 1;
            }
        }
    }
    println!("K-features (30 restarts) reached the optimum in {hits}/{total} (problem, K) pairs");
}

#[test]
fn stepwise_reports_the_bp_means_objective_of_its_answer() {
    for i in 0..6 {
        let (x, p) = problem(i);
        let opt = bp_optimum(&x, p);
        let fit = StepwiseKFeatures::params(p)
            .restarts(20)
            .seed(i)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let obj = bp_means_objective(&x, &fit.z(), fit.means(), p);
        assert!((obj - fit.objective()).abs() < 1e-9);
        assert!(obj >= opt - 1e-9);
        let by_k = fit.objective_by_k();
        assert!(by_k.len() >= fit.k());
        assert!((by_k[fit.k() - 1] - obj).abs() < 1e-9);
        // It stopped at the first increase (or ran out of K).
        for w in by_k[..by_k.len() - 1].windows(2) {
            assert!(w[1] <= w[0]);
        }
        assert_monotone(fit.trace(), fit.objective());
    }
}

#[test]
fn column_masks_helper_round_trips() {
    let x = random_data(4, 2, 5);
    let cols = [0b0011u32, 0b0110];
    let mut z = BinaryMatrix::zeros(4, 2);
    for (k, &m) in cols.iter().enumerate() {
        for i in 0..4 {
            z.set(i, k, (m >> i) & 1 == 1);
        }
    }
    assert_eq!(column_masks(&z), cols.to_vec());
    let a = madbayes::features::least_squares_means(&x, &z).a;
    assert!((rss_of_columns(&x, &cols) - sum_of_squares(&x, &z, &a)).abs() < 1e-12);
}

/// Eq. 10 charging only non-empty columns (what the collapsed row move minimises).
fn collapsed_nonempty(x: &RowMatrix, z: &BinaryMatrix, p: f64) -> f64 {
    let cols: Vec<usize> = (0..z.n_cols())
        .filter(|&k| (0..z.n_rows()).any(|i| z.get(i, k)))
        .collect();
    let mut zc = BinaryMatrix::zeros(z.n_rows(), cols.len());
    for i in 0..z.n_rows() {
        for (c, &k) in cols.iter().enumerate() {
            zc.row_mut(i)[c] = z.row(i)[k];
        }
    }
    collapsed_bp_means_objective(x, &zc, p)
}

#[test]
fn collapsed_bp_means_never_beats_the_optimum_and_rows_are_exact_optima() {
    let mut hits = 0;
    let problems = 16;
    for i in 0..problems {
        let (x, p) = problem(i);
        let opt = bp_optimum(&x, p);
        let fit = CollapsedBpMeans::params(p)
            .restarts(20)
            .seed(i)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let z = fit.z();
        let obj = collapsed_bp_means_objective(&x, &z, p);
        assert!(
            (obj - fit.objective()).abs() < 1e-9,
            "reported ≠ recomputed"
        );
        assert!((bp_means_objective(&x, &z, fit.means(), p) - obj).abs() < 1e-9);
        assert!(obj >= opt - 1e-9);
        assert_least_squares(&x, &z, fit.means());
        assert_monotone(fit.trace(), fit.objective());
        let k = z.n_cols();
        for n in 0..5 {
            // No other value of row n (others fixed) lowers Eq. 10 …
            for mask in 0..(1u32 << k) {
                let mut zc = z.clone();
                for j in 0..k {
                    zc.row_mut(n)[j] = ((mask >> j) & 1) as u8;
                }
                assert!(
                    collapsed_nonempty(&x, &zc, p) >= obj - 1e-9,
                    "row {n} mask {mask}"
                );
            }
            // … and no singleton feature {n} does.
            let mut zs = BinaryMatrix::zeros(5, k + 1);
            for r in 0..5 {
                zs.row_mut(r)[..k].copy_from_slice(z.row(r));
            }
            zs.row_mut(n)[k] = 1;
            assert!(collapsed_bp_means_objective(&x, &zs, p) >= obj - 1e-9);
        }
        if obj <= opt + 1e-9 {
            hits += 1;
        }
    }
    println!("collapsed BP-means, best of 20 restarts, reached the optimum in {hits}/{problems}");
}
