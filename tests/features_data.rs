//! Reference data: the noise-free BP-means dice pictures (exact Z, reference optima from the
//! authors' README) and the block images (N = 1000, true Z and A).

#[path = "features_common/mod.rs"]
mod common;

use common::*;
use madbayes::RowMatrix;
use madbayes::features::objective::{bp_means_objective, k_features_objective};
use madbayes::features::{
    BpMeans, CollapsedBpMeans, FeatureModel, FeatureSeeding, KFeatures, StepwiseKFeatures,
};

fn dice() -> Option<(RowMatrix, RowMatrix)> {
    let dir = shared("data/bp-means-dice")?;
    let mut x = read_csv(&dir.join("X_rowmajor.csv"));
    x.as_mut_slice().iter_mut().for_each(|v| *v /= 255.0);
    Some((x, read_csv(&dir.join("Z_true.csv"))))
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
fn dice_plain_k_features_reaches_the_reference_optima() {
    let Some((x, z_true)) = dice() else { return };
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
    assert!(same_columns(&four.z(), &z_true));
    let recomputed = k_features_objective(&x, &four.z(), four.a());
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

fn blocks() -> Option<(RowMatrix, RowMatrix, RowMatrix)> {
    let dir = shared("data/block-images")?;
    let x = read_csv(&dir.join("data.csv"));
    let z_all = read_csv(&dir.join("features.csv"));
    let z = RowMatrix::from_rows(&(0..x.n_rows()).map(|i| z_all.row(i)).collect::<Vec<_>>());
    Some((x, z, read_csv(&dir.join("true_weights.csv"))))
}

/// Matches every true shape to a learned feature (greedily by squared distance of means) and
/// returns (largest |a_learned − a_true| entry, fraction of Z entries that agree).
fn match_to_truth(fit: &FeatureModel, z_true: &RowMatrix, a_true: &RowMatrix) -> (f64, f64) {
    let (a, z) = (fit.a(), fit.z());
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

#[test]
fn block_images_bp_means_and_stepwise_recover_the_four_shapes() {
    let Some((x, z_true, a_true)) = blocks() else {
        return;
    };
    // The copy is globally mean-centred (X = Z A + noise − c with c the grand mean of Z A);
    // add c back so that the four shapes are the whole model. (On the centred copy the
    // optimum holds a fifth, base feature carrying −c.)
    let mut truth_sum = 0.0;
    for i in 0..z_true.n_rows() {
        for k in 0..4 {
            if z_true.row(i)[k] != 0.0 {
                truth_sum += a_true.row(k).iter().sum::<f64>();
            }
        }
    }
    let offset = truth_sum / x.as_slice().len() as f64;
    let mut xs = x.clone();
    xs.as_mut_slice().iter_mut().for_each(|v| *v += offset);
    let p = 100.0;
    for (name, fit) in [
        (
            "bp-means plain",
            BpMeans::params(p)
                .plain()
                .restarts(20)
                .check()
                .unwrap()
                .fit(&xs)
                .unwrap(),
        ),
        (
            "bp-means",
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
                .restarts(10)
                .check()
                .unwrap()
                .fit(&xs)
                .unwrap(),
        ),
    ] {
        let obj = bp_means_objective(&xs, &fit.z(), fit.a(), p);
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
        if name == "bp-means plain" {
            // Plain Alg. 1 keeps a superfluous fifth feature here (as in the paper's tabletop
            // run); the four shapes are still among its features.
            assert!(fit.k() >= 4);
            assert!(worst < 0.1 && agree > 0.995, "{name}");
            continue;
        }
        assert_eq!(fit.k(), 4, "{name}: K = {}", fit.k());
        assert!(worst < 0.1, "{name}: mean off by {worst}");
        assert!(agree > 0.995, "{name}: Z agreement {agree}");
    }
}
