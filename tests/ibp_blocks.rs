//! The samplers on block images in the setting of D-V&G §5 (D = 36, the four 6×6 binary
//! shapes, Z_nk ~ Bernoulli(1/3), σ_X = 0.2), generated: N = 200 rows to keep the test fast.
//!
//! Defaults only, as `madbayes fit` runs them: four chains (`fit_chains`, streams 0–3 of
//! seed 1) from Z = 0, α, σ_X, σ_A resampled from their default starts (σ_X at the data's sd),
//! 10 split–merge attempts per sweep and the 3-feature block update, 200 sweeps. The chain of
//! highest final log joint (the one `fit` writes out) must have σ_X within 0.02 of the noise
//! level of the generated data (the s.d. of X − Z A with the true Z and A) and each true
//! shape matched by its own feature whose posterior mean lies within 0.15 of it in every
//! pixel. Extra features are allowed. Single chains do not all get there: over data seeds
//! 1–5 and chain seeds 1–3, 14, 11 and 14 of 15 single chains of the collapsed,
//! semi-collapsed and accelerated samplers did (the others keep a shape merged with another
//! or split), and in every case the chain of highest log joint was one that did.

#[path = "features_common/mod.rs"]
mod common;

use common::{dvg_block_images, noise_sd};
use madbayes::Model;
use madbayes::ibp::{IbpKind, IbpSampler};

/// The seed of the generated data (the chains' seeds are separate). The tests also pass on
/// data seeds 2–5 (checked when they moved to the defaults).
const DATA_SEED: u64 = 1;

#[test]
fn accelerated_sampler_recovers_the_four_block_shapes() {
    recovers(IbpKind::Accelerated, 8);
}

#[test]
fn collapsed_sampler_recovers_the_four_block_shapes() {
    recovers(IbpKind::Collapsed, 8);
}

/// With A instantiated, features the data do not need die slowly: the semi-collapsed chains
/// carry up to 13 features after 200 sweeps.
#[test]
fn semi_collapsed_sampler_recovers_the_four_block_shapes() {
    recovers(IbpKind::SemiCollapsed, 16);
}

/// Runs four chains of `kind` with the defaults and checks the recovery described in the
/// module docs on the chain of highest log joint, with at most `max_k` features.
fn recovers(kind: IbpKind, max_k: usize) {
    let data = dvg_block_images(200, DATA_SEED);
    let (x, truth, noise) = (&data.x, &data.a, noise_sd(&data));
    let post = IbpSampler::params(kind)
        .iterations(200)
        .seed(1)
        .check()
        .unwrap()
        .fit_chains(x, 4, 10)
        .unwrap();
    for (c, fit) in post.chains().iter().enumerate() {
        println!(
            "{kind:?} chain {c}: K = {}, σ_X = {:.4}, log joint {:.1}, worst pixel error {:.3}",
            fit.k(),
            fit.sigma_x(),
            fit.log_joint(),
            worst_match(fit.means(), truth)
        );
    }
    let fit = &post.chains()[post.best_chain()];
    let worst = worst_match(fit.means(), truth);
    assert!(worst < 0.15, "{kind:?}: a shape is not recovered ({worst})");
    assert!(
        (fit.sigma_x() - noise).abs() < 0.02,
        "{kind:?}: σ_X = {}, noise s.d. {noise}",
        fit.sigma_x()
    );
    assert!(fit.k() <= max_k, "{kind:?}: K = {}", fit.k());
}

/// The largest pixel error of the true shapes, each matched greedily to its own learned
/// feature (∞ if there are fewer than four).
fn worst_match(a: &madbayes::RowMatrix, truth: &madbayes::RowMatrix) -> f64 {
    let err = |k: usize, t: usize| -> f64 {
        a.row(k)
            .iter()
            .zip(truth.row(t))
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max)
    };
    let mut used = vec![false; a.n_rows()];
    let mut worst: f64 = 0.0;
    for t in 0..4 {
        match (0..a.n_rows())
            .filter(|&k| !used[k])
            .min_by(|&p, &q| err(p, t).total_cmp(&err(q, t)))
        {
            Some(best) => {
                used[best] = true;
                worst = worst.max(err(best, t));
            }
            None => return f64::INFINITY,
        }
    }
    worst
}
