//! Stepwise K-features (MAD-Bayes §5): for K = 1, 2, … run K-features with R restarts and
//! take E(K) = ‖X − Z A‖²_F + K·P (the BP-means objective, Eq. 6) of the best run; stop at the
//! first K with E(K) > E(K − 1) (or at K_max / N) and return the best K found. The paper
//! assumes the K-features optimum has convex increments in K, which is what makes stopping
//! at the first increase reasonable.

use super::lstsq::entry_sq_sum;
use super::model::{FeatureModel, FeatureRun};
use super::params::{FeatureValidParams, small_columns};
use super::seeding::SeedMemo;
use crate::MatrixView;
use crate::restarts::{Observer, RunOutcome, best_of_runs};

/// The seed for the restarts at a given K (distinct streams per K, fixed by `seed`).
fn seed_for_k(seed: u64, k: usize) -> u64 {
    seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Runs stepwise K-features. The model's `objective_by_k()` holds E(K) for K = 1, 2, … as
/// tried; `run_objectives()` and `trace()` are BP-means objectives of the restarts, and of the
/// winning run's iterations, at the chosen K.
pub(crate) fn stepwise(
    p: &FeatureValidParams,
    x: MatrixView<'_>,
    penalty: f64,
    k_max: usize,
    observer: &dyn Observer,
) -> FeatureModel {
    let mut tried: Vec<f64> = Vec::new();
    let mut best: Option<(FeatureRun, usize, Vec<f64>)> = None;
    let (x_sq, seeds) = (entry_sq_sum(x), SeedMemo::start_only());
    let x_cols = small_columns(x);
    for k in 1..=k_max {
        let runs = best_of_runs(p.restarts, seed_for_k(p.seed, k), observer, |_, rng| {
            let mut run = p.k_features_single(x, x_cols.as_deref(), x_sq, &seeds, k, rng);
            run.objective += k as f64 * penalty;
            run.trace.iter_mut().for_each(|t| *t += k as f64 * penalty);
            run
        });
        let e = runs.best.objective();
        let previous = tried.last().copied();
        tried.push(e);
        if let Some(prev) = previous
            && e > prev
        {
            break;
        }
        best = Some((runs.best, runs.best_run, runs.run_objectives));
    }
    let (run, best_run, objectives) = best.expect("K = 1 is always tried");
    FeatureModel::from_parts(run, best_run, objectives).with_objective_by_k(tried)
}
