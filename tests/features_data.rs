//! Reference data: the noise-free BP-means dice pictures (the authors' copy in
//! `../shared/data/bp-means-dice`, with the published optima, and generated pictures of the
//! same kind with optima computed from their truth) and block images in the setting of
//! D-V&G §5 (generated, N = 1000, true Z and A).

#[path = "features_common/mod.rs"]
mod common;

use common::*;
use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::features::objective::{bp_means_objective, k_features_objective};
use madbayes::features::{
    BpMeans, CollapsedBpMeans, FeatureModel, FeatureSeeding, KFeatures, StepwiseKFeatures,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The authors' 100 dice pictures (pixels / 255) and their exact Z.
fn dice() -> (RowMatrix, RowMatrix) {
    let dir = shared("data/bp-means-dice");
    let mut x = read_csv(&dir.join("X_rowmajor.csv"));
    x.as_mut_slice().iter_mut().for_each(|v| *v /= 255.0);
    (x, read_csv(&dir.join("Z_true.csv")))
}

/// `n` noise-free pictures like the authors' dice: 14 × 14, feature k a 3 × 3 block of ones at
/// rows and columns 7r + 2 ..= 7r + 4, 7c + 2 ..= 7c + 4 for (r, c) = (0, 0), (0, 1), (1, 0),
/// (1, 1), Z_nk ~ Bernoulli(1/2), X = Z A exactly. Returns (X, Z, A).
fn dice_like(n: usize, seed: u64) -> (RowMatrix, RowMatrix, RowMatrix) {
    let mut a = RowMatrix::zeros(4, 196);
    for (k, (r, c)) in [(0, 0), (0, 1), (1, 0), (1, 1)].into_iter().enumerate() {
        for y in 7 * r + 2..=7 * r + 4 {
            for x in 7 * c + 2..=7 * c + 4 {
                a.row_mut(k)[14 * y + x] = 1.0;
            }
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut z = RowMatrix::zeros(n, 4);
    for v in z.as_mut_slice() {
        *v = f64::from(u8::from(rng.random::<bool>()));
    }
    let mut x = RowMatrix::zeros(n, 196);
    for i in 0..n {
        for k in 0..4 {
            if z.row(i)[k] != 0.0 {
                for (p, q) in x.row_mut(i).iter_mut().zip(a.row(k)) {
                    *p += q;
                }
            }
        }
    }
    (x, z, a)
}

/// The least K = 1 residual of noise-free pictures X = Z A whose features are disjoint blocks
/// of `block` equal pixels: every pixel of a block gets the same least-squares mean, so the
/// residual is `block` × ‖Z − z b‖² over a 0/1 column z and a row b; rows with the same code
/// in Z are best given the same z, and the least residual is found by trying every subset of
/// the distinct codes (b is the mean code of the chosen rows).
fn one_feature_optimum(z: &RowMatrix, block: f64) -> f64 {
    let mut codes: Vec<(Vec<u8>, f64)> = Vec::new();
    for row in z.rows() {
        let code: Vec<u8> = row.iter().map(|&v| v as u8).collect();
        match codes.iter_mut().find(|(c, _)| *c == code) {
            Some((_, count)) => *count += 1.0,
            None => codes.push((code, 1.0)),
        }
    }
    let k = z.n_cols();
    let mut best = f64::INFINITY;
    for mask in 0u32..(1 << codes.len()) {
        let (mut held, mut sum, mut residual) = (0.0, vec![0.0; k], 0.0);
        for (j, (code, count)) in codes.iter().enumerate() {
            // ‖code‖² = its number of ones; rows in the subset then give back held · ‖b‖².
            residual += count * code.iter().map(|&v| f64::from(v)).sum::<f64>();
            if (mask >> j) & 1 == 1 {
                held += count;
                for (s, &v) in sum.iter_mut().zip(code) {
                    *s += count * f64::from(v);
                }
            }
        }
        if held > 0.0 {
            residual -= sum.iter().map(|s| s * s).sum::<f64>() / held;
        }
        best = best.min(residual);
    }
    block * best
}

/// Columns of `z` equal to those of `truth` up to order?
fn same_columns(z: &RowMatrix, truth: &RowMatrix) -> bool {
    let mut a = column_masks_long(z);
    let mut b = column_masks_long(truth);
    a.sort();
    b.sort();
    a == b
}

fn column_masks_long(z: &RowMatrix) -> Vec<Vec<u8>> {
    (0..z.n_cols())
        .map(|k| {
            (0..z.n_rows())
                .map(|i| u8::from(z.row(i)[k] != 0.0))
                .collect()
        })
        .collect()
}

/// The paper's K-features (`plain`) with either seeding; the defaults are checked in
/// `defaults_reach_the_references.rs`.
#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/bp-means-dice (not in this checkout)"
)]
fn dice_plain_k_features_reaches_the_reference_optima() {
    let (x, z_true) = dice();
    let fit = |k: usize, seeding: FeatureSeeding, restarts: usize| -> FeatureModel {
        KFeatures::params(k)
            .plain()
            .restarts(restarts)
            .seeding(seeding)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap()
    };
    // K = 4: the exact answer.
    let four = fit(4, FeatureSeeding::BaseFeature, 50);
    assert!(
        four.objective() < 1e-9,
        "K = 4 objective {}",
        four.objective()
    );
    assert!(same_columns(&four.z().to_row_matrix(), &z_true));
    let recomputed = k_features_objective(&x, &four.z(), four.means());
    assert!((recomputed - four.objective()).abs() < 1e-9);
    // K = 2, 3: at most the reference values (518.1, 252.0, printed to 0.1; the authors used
    // 1000 restarts). K = 3 needs the residual seeding and a few hundred restarts here.
    for (k, reference) in [(2, 518.1), (3, 252.0)] {
        let f = fit(k, FeatureSeeding::Residual, 300);
        println!("dice K = {k}: {:.4} (reference {reference})", f.objective());
        assert!(f.objective() <= reference + 0.05);
    }
    // K = 1: the authors' residual seeding reaches 768.5, the base feature stays at 778.5.
    let residual = fit(1, FeatureSeeding::Residual, 50);
    let base = fit(1, FeatureSeeding::BaseFeature, 5);
    println!(
        "dice K = 1: residual seeding {:.4}, base feature {:.4}",
        residual.objective(),
        base.objective()
    );
    assert!((residual.objective() - 768.5).abs() < 0.05);
    assert!((base.objective() - 778.5).abs() < 0.05);
}

#[test]
fn dice_like_pictures_k_features_reaches_zero_and_the_one_feature_optimum() {
    let (x, z_true, _) = dice_like(100, 5);
    // Four distinct, non-empty columns: X = Z A then has exactly one exact factorization.
    let masks = column_masks_long(&z_true);
    assert!(masks.iter().all(|m| m.contains(&1)));
    assert!((0..4).all(|p| (p + 1..4).all(|q| masks[p] != masks[q])));
    let fit = |k: usize, seeding: FeatureSeeding, restarts: usize| -> FeatureModel {
        KFeatures::params(k)
            .restarts(restarts)
            .seeding(seeding)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap()
    };
    // K = 4: the exact answer. Few runs find it (on data seeds 1–8 the residual seeding finds
    // it in 3 to 25 of 300 runs; 50 runs from the base feature miss it on four of the eight).
    let four = fit(4, FeatureSeeding::Residual, 300);
    assert!(
        four.objective() < 1e-9,
        "K = 4 objective {}",
        four.objective()
    );
    assert!(same_columns(&four.z().to_row_matrix(), &z_true));
    // K = 1: the exact optimum, computed from the true Z (blocks of 9 equal pixels). On the
    // authors' pictures the same computation gives 768.52, their published 768.5.
    let best_one = one_feature_optimum(&z_true, 9.0);
    let one = fit(1, FeatureSeeding::Residual, 50);
    println!(
        "dice-like K = 1: {:.4} (exact optimum {best_one:.4})",
        one.objective()
    );
    assert!(
        (one.objective() - best_one).abs() < 1e-9 * best_one,
        "K = 1: {} against the optimum {best_one}",
        one.objective()
    );
}

/// Block images in D-V&G's setting, generated: (X, true Z, true A).
fn blocks() -> (RowMatrix, RowMatrix, RowMatrix) {
    let data = dvg_block_images(1000, 3);
    (data.x, data.z, data.a)
}

/// Matches every true shape to a learned feature (greedily by squared distance of means) and
/// returns (largest |a_learned − a_true| entry, fraction of Z entries that agree).
fn match_to_truth(fit: &FeatureModel, z_true: &RowMatrix, a_true: &RowMatrix) -> (f64, f64) {
    let (a, z) = (fit.means(), fit.z().to_row_matrix());
    let mut worst = 0.0f64;
    let mut agree = 0usize;
    let mut used = vec![false; a.n_rows()];
    for t in 0..a_true.n_rows() {
        let (j, _) = (0..a.n_rows())
            .filter(|&j| !used[j])
            .map(|j| {
                let d: f64 = a
                    .row(j)
                    .iter()
                    .zip(a_true.row(t))
                    .map(|(p, q)| (p - q).powi(2))
                    .sum();
                (j, d)
            })
            .min_by(|p, q| p.1.total_cmp(&q.1))
            .expect("enough features");
        used[j] = true;
        for (p, q) in a.row(j).iter().zip(a_true.row(t)) {
            worst = worst.max((p - q).abs());
        }
        agree += (0..z.n_rows())
            .filter(|&i| z.row(i)[j] == z_true.row(i)[t])
            .count();
    }
    (worst, agree as f64 / (z.n_rows() * a_true.n_rows()) as f64)
}

/// The paper's BP-means (`plain`, 100 restarts), BP-means with the defaults (20 restarts) and
/// the paper's stepwise K-features (30) each find exactly the four shapes. Measured on six draws (data seeds 1–6): all three reach K = 4 on
/// every draw; plain BP-means with 20 restarts kept a fifth or sixth feature on four of them
/// and missed a shape on one.
#[test]
fn block_images_bp_means_and_stepwise_recover_the_four_shapes() {
    // Not centred (unlike the copy in ../shared/data/block-images, on which the optimum holds
    // a fifth, base feature carrying the removed grand mean): the four shapes are the model.
    let (xs, z_true, a_true) = blocks();
    let p = 100.0;
    for (name, fit) in [
        (
            "bp-means plain",
            BpMeans::params(p)
                .plain()
                .restarts(100)
                .check()
                .unwrap()
                .fit(&xs)
                .unwrap(),
        ),
        (
            "bp-means (defaults)",
            BpMeans::params(p)
                .restarts(20)
                .check()
                .unwrap()
                .fit(&xs)
                .unwrap(),
        ),
        (
            "collapsed bp-means",
            CollapsedBpMeans::params(p)
                .plain()
                .restarts(5)
                .check()
                .unwrap()
                .fit(&xs)
                .unwrap(),
        ),
        (
            "stepwise",
            StepwiseKFeatures::params(p)
                .plain()
                .restarts(30)
                .check()
                .unwrap()
                .fit(&xs)
                .unwrap(),
        ),
    ] {
        let obj = bp_means_objective(&xs, &fit.z(), fit.means(), p);
        assert!((obj - fit.objective()).abs() < 1e-6 * obj);
        let (worst, agree) = match_to_truth(&fit, &z_true, &a_true);
        println!(
            "{name}: K = {}, objective {obj:.3}, worst mean error {worst:.4}, Z agreement {agree:.5}",
            fit.k()
        );
        if name == "collapsed bp-means" {
            // Not part of the check: a valid local optimum is all that is asserted
            // (measured here: K = 7, objective 2119.5 against 1842.6 with 5 restarts).
            continue;
        }
        assert_eq!(fit.k(), 4, "{name}: K = {}", fit.k());
        assert!(worst < 0.1, "{name}: mean off by {worst}");
        assert!(agree > 0.995, "{name}: Z agreement {agree}");
    }
}
