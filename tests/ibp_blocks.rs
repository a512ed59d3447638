//! The samplers on block images in the setting of D-V&G §5 (D = 36, the four 6×6 binary
//! shapes, Z_nk ~ Bernoulli(1/3), σ_X = 0.2), generated: N = 200 rows to keep the test fast.
//!
//! The chain starts from Z = 0 with σ_X = 0.5 (well above the noise), σ_A = 1, α = 2, and
//! resamples the hyperparameters every sweep; after 200 sweeps σ_X must have settled within
//! 0.02 of the noise level of the generated data (the s.d. of X − Z A with the true Z and A)
//! and each true shape must be matched by its own feature whose posterior mean lies within
//! 0.15 of it in every pixel. Extra features are allowed: from some seeds the
//! chain keeps one or two extra features (a shape split in two, or a correction feature) —
//! a local mode one-site Gibbs moves leave slowly. With σ_X fixed at 0.2 from the start
//! the chain freezes early in such modes far more often (2 of 3 seeds tried missed a shape).

#[path = "features_common/mod.rs"]
mod common;

use common::{dvg_block_images, noise_sd};
use madbayes::Model;
use madbayes::ibp::{IbpKind, IbpSampler};

/// The seed of the generated data (the chains' seeds are separate). Both tests also pass on
/// data seeds 2–5 (checked when the tests moved from the shared copy to generated data).
const DATA_SEED: u64 = 1;

#[test]
fn accelerated_sampler_recovers_the_four_block_shapes() {
    recovers(IbpKind::Accelerated, &[1, 2, 3], 8);
}

#[test]
fn collapsed_and_semi_collapsed_samplers_recover_the_four_block_shapes() {
    recovers(IbpKind::Collapsed, &[1], 8);
    // With A instantiated, features the data do not need die slowly: after 200 sweeps the
    // semi-collapsed chain from seed 1 carries 12 features, 8 beside the four shapes.
    recovers(IbpKind::SemiCollapsed, &[1], 16);
}

/// Runs `kind` from each seed and checks the recovery described in the module docs, with at
/// most `max_k` features in all.
fn recovers(kind: IbpKind, seeds: &[u64], max_k: usize) {
    let data = dvg_block_images(200, DATA_SEED);
    let (x, truth, noise) = (&data.x, &data.a, noise_sd(&data));
    for &seed in seeds {
        let fit = IbpSampler::params(kind)
            .sigma_x(0.5)
            .sigma_a(1.0)
            .alpha(2.0)
            .resample_hyper(true)
            // With 10 split–merge attempts per sweep (the provisional default) the collapsed
            // chain from seed 1 ends at K = 5 with a shape missed; settled in a later commit.
            .split_merge(0)
            .iterations(200)
            .seed(seed)
            .check()
            .unwrap()
            .fit(x)
            .unwrap();
        let a = fit.means();
        let err = |k: usize, t: usize| -> f64 {
            a.row(k)
                .iter()
                .zip(truth.row(t))
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max)
        };
        let mut used = vec![false; fit.k()];
        let mut worst: f64 = 0.0;
        for t in 0..4 {
            let best = (0..fit.k())
                .filter(|&k| !used[k])
                .min_by(|&p, &q| err(p, t).total_cmp(&err(q, t)))
                .expect("a feature left to match");
            used[best] = true;
            worst = worst.max(err(best, t));
        }
        println!(
            "{kind:?} seed {seed}: K = {}, σ_X = {:.4}, σ_A = {:.3}, α = {:.2}, \
             worst pixel error of the matched features {worst:.3}, log joint {:.1}",
            fit.k(),
            fit.sigma_x(),
            fit.sigma_a(),
            fit.alpha(),
            fit.records().last().unwrap().log_joint
        );
        assert!(
            worst < 0.15,
            "seed {seed}: a shape is not recovered ({worst})"
        );
        assert!(
            (fit.sigma_x() - noise).abs() < 0.02,
            "seed {seed}: σ_X = {}, noise s.d. {noise}",
            fit.sigma_x()
        );
        assert!(fit.k() <= max_k, "{kind:?} seed {seed}: K = {}", fit.k());
    }
}
