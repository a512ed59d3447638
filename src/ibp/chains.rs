//! Several chains of one IBP sampler, run in parallel, with the diagnostics and posterior
//! summaries a Bayesian acts on (as Stan's and PyMC's users expect):
//!
//! * chain c draws only from stream c of the seed, so the chains are reproducible and
//!   independent whatever the number of threads (chain 0 is the single chain of
//!   [`Fit::fit`](crate::Fit::fit));
//! * the first half of every chain is burn-in; over the second half, [`diagnostics`] gives the
//!   rank-normalized split R̂ and the bulk and tail ESS of K, of the log joint and of α, σ_X,
//!   σ_A ([`ChainDiagnostics`]); [`IbpPosterior::agree`] says whether every R̂ is below
//!   [`RHAT_THRESHOLD`];
//! * retained sweeps are thinned to at most `max_draws` per chain and kept as [`Draw`]s
//!   (their Z and hyperparameters);
//! * features are aligned across draws to a reference draw (the retained draw of highest log
//!   joint): each draw's features are matched one-to-one to the reference's by the assignment
//!   that minimizes the total Hamming distance between their columns of Z (Kuhn–Munkres), a
//!   pair counting only when the columns agree on more than half the rows. Over the draws,
//!   each reference feature gets the share of draws holding a match, the probability that
//!   each row holds it and the mean of its posterior mean of A ([`AlignedFeatures`]);
//! * the distribution of K over the retained draws.
//!
//! [`IbpPosterior`] implements [`Model`] through the final state of its best chain (highest
//! final log joint).

use super::model::a_posterior;
use super::params::{IbpFit, IbpTraceRecord, IbpValidParams};
use crate::MatrixView;
use crate::RowMatrix;
use crate::error::FitError;
use crate::eval::{Diagnostics, RHAT_THRESHOLD, diagnostics};
use crate::features::BinaryMatrix;
use crate::model::{Model, Stop};
use rayon::prelude::*;

/// Chains run by default (`madbayes fit --chains`, the Python `IBPSampler(n_chains=...)`).
pub const DEFAULT_CHAINS: usize = 4;
/// Retained draws kept per chain by default (`madbayes fit --draws`).
pub const DEFAULT_DRAWS: usize = 100;

/// One retained, thinned sweep of one chain.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Draw {
    /// The chain, from 0.
    pub chain: usize,
    /// The sweep, from 1.
    pub sweep: usize,
    /// The record of that sweep (K, log joint, α, σ_X, σ_A).
    pub record: IbpTraceRecord,
    /// Z after that sweep.
    pub z: BinaryMatrix,
}

/// The diagnostics of each scalar the chains report, over their second halves.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChainDiagnostics {
    /// The number of features K.
    pub k: Diagnostics,
    /// log p(X, Z).
    pub log_joint: Diagnostics,
    /// α.
    pub alpha: Diagnostics,
    /// σ_X.
    pub sigma_x: Diagnostics,
    /// σ_A.
    pub sigma_a: Diagnostics,
}

impl ChainDiagnostics {
    /// The scalars by name, in a fixed order.
    pub fn named(&self) -> [(&'static str, Diagnostics); 5] {
        [
            ("k", self.k),
            ("log_joint", self.log_joint),
            ("alpha", self.alpha),
            ("sigma_x", self.sigma_x),
            ("sigma_a", self.sigma_a),
        ]
    }
}

/// The reference draw's features, as seen across all retained draws.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AlignedFeatures {
    /// The mean over matched draws of each feature's posterior mean of A (`K_ref × D`).
    pub means: RowMatrix,
    /// P(row n holds feature j): the share of retained draws whose match of j holds n
    /// (`N × K_ref`; a draw without a match counts as not holding it).
    pub row_probability: RowMatrix,
    /// The share of retained draws that hold a match of each feature.
    pub match_rate: Vec<f64>,
}

/// The result of several chains.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct IbpPosterior {
    chains: Vec<IbpFit>,
    best: usize,
    draws: Vec<Draw>,
    reference: usize,
    diagnostics: ChainDiagnostics,
    features: AlignedFeatures,
}

impl IbpValidParams {
    /// Runs `chains` chains in parallel on `x` (chain c on stream c of the seed), keeps at
    /// most `max_draws` evenly thinned sweeps of each chain's second half, and summarizes
    /// them (see the module documentation).
    pub fn fit_chains(
        &self,
        x: &RowMatrix,
        chains: usize,
        max_draws: usize,
    ) -> Result<IbpPosterior, FitError> {
        self.fit_chains_observed(x.view(), chains, max_draws, &|_, _, _| {})
    }

    /// [`fit_chains`](Self::fit_chains), calling `each(chain, record, z)` after every sweep
    /// of every chain (from the chains' threads: chain c's calls come in sweep order, the
    /// chains' calls interleave).
    pub fn fit_chains_observed(
        &self,
        x: MatrixView<'_>,
        chains: usize,
        max_draws: usize,
        each: &(dyn Fn(usize, &IbpTraceRecord, &RowMatrix) + Sync),
    ) -> Result<IbpPosterior, FitError> {
        if chains == 0 {
            return Err(crate::ParamError::NotPositive {
                name: "chains",
                value: 0.0,
            }
            .into());
        }
        let sweeps = self.iterations();
        let burn = sweeps / 2;
        let kept = sweeps - burn;
        let thin = kept.div_ceil(max_draws.max(1)).max(1);
        let runs: Vec<Result<(IbpFit, Vec<Draw>), FitError>> = (0..chains)
            .into_par_iter()
            .map(|c| {
                let mut draws = Vec::new();
                let fit = self.fit_stream(x, c as u64, &mut |rec, z| {
                    each(c, rec, z);
                    let t = rec.iteration;
                    if t > burn && (sweeps - t).is_multiple_of(thin) {
                        draws.push(Draw {
                            chain: c,
                            sweep: t,
                            record: *rec,
                            z: BinaryMatrix::from_row_matrix(z),
                        });
                    }
                })?;
                Ok((fit, draws))
            })
            .collect();
        let mut fits = Vec::with_capacity(chains);
        let mut draws = Vec::new();
        for r in runs {
            let (f, d) = r?;
            fits.push(f);
            draws.extend(d);
        }
        let best =
            crate::restarts::best_index(&fits.iter().map(|f| -f.log_joint()).collect::<Vec<_>>());
        let reference = crate::restarts::best_index(
            &draws
                .iter()
                .map(|d| -d.record.log_joint)
                .collect::<Vec<_>>(),
        );
        let diagnostics = chain_diagnostics(&fits, burn);
        let features = align(x, &draws, reference);
        Ok(IbpPosterior {
            chains: fits,
            best,
            draws,
            reference,
            diagnostics,
            features,
        })
    }
}

impl IbpPosterior {
    /// Every chain's final state and records, in chain order.
    pub fn chains(&self) -> &[IbpFit] {
        &self.chains
    }
    /// The chain of highest final log joint (the one [`Model`] answers for).
    pub fn best_chain(&self) -> usize {
        self.best
    }
    /// The retained, thinned draws of every chain (chain by chain, in sweep order).
    pub fn draws(&self) -> &[Draw] {
        &self.draws
    }
    /// The draw the features are aligned to (the retained draw of highest log joint).
    pub fn reference_draw(&self) -> &Draw {
        &self.draws[self.reference]
    }
    /// R̂ and ESS of K, the log joint, α, σ_X and σ_A over the chains' second halves.
    pub fn diagnostics(&self) -> &ChainDiagnostics {
        &self.diagnostics
    }
    /// Whether every R̂ is below [`RHAT_THRESHOLD`] (the chains agree). A warning, not a
    /// proof of convergence: chains can agree and all be stuck.
    pub fn agree(&self) -> bool {
        self.diagnostics
            .named()
            .iter()
            .all(|(_, d)| d.rhat < RHAT_THRESHOLD)
    }
    /// The reference draw's features across the draws.
    pub fn features(&self) -> &AlignedFeatures {
        &self.features
    }
    /// P(K = k) over the retained draws: (k, probability), k ascending.
    pub fn k_distribution(&self) -> Vec<(usize, f64)> {
        let mut counts = std::collections::BTreeMap::new();
        for d in &self.draws {
            *counts.entry(d.record.k).or_insert(0usize) += 1;
        }
        let total = self.draws.len().max(1) as f64;
        counts
            .into_iter()
            .map(|(k, c)| (k, c as f64 / total))
            .collect()
    }
}

impl Model for IbpPosterior {
    fn z(&self) -> BinaryMatrix {
        self.chains[self.best].z()
    }
    fn means(&self) -> &RowMatrix {
        self.chains[self.best].means()
    }
    fn objective(&self) -> f64 {
        self.chains[self.best].objective()
    }
    fn trace(&self) -> &[f64] {
        self.chains[self.best].trace()
    }
    fn n_iter(&self) -> usize {
        self.chains[self.best].n_iter()
    }
    fn stop(&self) -> Stop {
        Stop::Sweeps
    }
    fn predict_z(&self, x: MatrixView<'_>) -> Result<BinaryMatrix, FitError> {
        self.chains[self.best].predict_z(x)
    }
}

/// The diagnostics over the sweeps after `burn` of every chain.
fn chain_diagnostics(fits: &[IbpFit], burn: usize) -> ChainDiagnostics {
    let series = |f: fn(&IbpTraceRecord) -> f64| -> Diagnostics {
        let chains: Vec<Vec<f64>> = fits
            .iter()
            .map(|fit| {
                fit.records()[burn.min(fit.records().len())..]
                    .iter()
                    .map(f)
                    .collect()
            })
            .collect();
        diagnostics(&chains)
    };
    ChainDiagnostics {
        k: series(|r| r.k as f64),
        log_joint: series(|r| r.log_joint),
        alpha: series(|r| r.alpha),
        sigma_x: series(|r| r.sigma_x),
        sigma_a: series(|r| r.sigma_a),
    }
}

/// The reference draw's features across the draws (module documentation).
fn align(x: MatrixView<'_>, draws: &[Draw], reference: usize) -> AlignedFeatures {
    let (n, d) = (x.n_rows(), x.n_cols());
    let Some(r) = draws.get(reference) else {
        return AlignedFeatures {
            means: RowMatrix::zeros(0, d),
            row_probability: RowMatrix::zeros(n, 0),
            match_rate: Vec::new(),
        };
    };
    let kr = r.z.n_cols();
    let mut sum_a = RowMatrix::zeros(kr, d);
    let mut held = RowMatrix::zeros(n, kr);
    let mut matches = vec![0usize; kr];
    for draw in draws {
        let pairs = match_columns(&r.z, &draw.z);
        if pairs.iter().all(Option::is_none) {
            continue;
        }
        let post = a_posterior(
            x,
            &draw.z.to_row_matrix(),
            draw.record.sigma_x,
            draw.record.sigma_a,
        );
        for (j, m) in pairs.iter().enumerate() {
            let Some(k) = *m else { continue };
            matches[j] += 1;
            crate::linalg::axpy(1.0, post.mean.row(k), sum_a.row_mut(j));
            for i in 0..n {
                if draw.z.get(i, k) {
                    held.row_mut(i)[j] += 1.0;
                }
            }
        }
    }
    let total = draws.len() as f64;
    for j in 0..kr {
        let c = matches[j].max(1) as f64;
        sum_a.row_mut(j).iter_mut().for_each(|v| *v /= c);
    }
    held.as_mut_slice().iter_mut().for_each(|v| *v /= total);
    AlignedFeatures {
        means: sum_a,
        row_probability: held,
        match_rate: matches.iter().map(|&m| m as f64 / total).collect(),
    }
}

/// For each column j of `reference`, the column of `other` matched to it (module
/// documentation), or `None`.
fn match_columns(reference: &BinaryMatrix, other: &BinaryMatrix) -> Vec<Option<usize>> {
    let (n, kr, ko) = (reference.n_rows(), reference.n_cols(), other.n_cols());
    let size = kr.max(ko);
    if kr == 0 || ko == 0 {
        return vec![None; kr];
    }
    // Hamming distance between columns; padding rows/columns cost n (never a real match).
    let mut cost = vec![n as f64; size * size];
    for j in 0..kr {
        for k in 0..ko {
            cost[j * size + k] = (0..n)
                .filter(|&i| reference.get(i, j) != other.get(i, k))
                .count() as f64;
        }
    }
    let assignment = min_cost_assignment(&cost, size);
    (0..kr)
        .map(|j| {
            let k = assignment[j];
            (k < ko && 2.0 * cost[j * size + k] < n as f64).then_some(k)
        })
        .collect()
}

/// The permutation σ minimizing Σ_j `cost[j][σ(j)]` for a square `n × n` cost matrix
/// (row-major), by the Kuhn–Munkres (Hungarian) method with potentials, O(n³).
pub(crate) fn min_cost_assignment(cost: &[f64], n: usize) -> Vec<usize> {
    // Rows and columns are numbered from 1; column 0 is a virtual start.
    let mut u = vec![0.0; n + 1];
    let mut v = vec![0.0; n + 1];
    let mut row_of = vec![0usize; n + 1];
    let mut way = vec![0usize; n + 1];
    for i in 1..=n {
        row_of[0] = i;
        let mut j0 = 0;
        let mut minv = vec![f64::INFINITY; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let i0 = row_of[j0];
            let mut delta = f64::INFINITY;
            let mut j1 = 0;
            for j in 1..=n {
                if !used[j] {
                    let cur = cost[(i0 - 1) * n + (j - 1)] - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if row_of[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut col_of = vec![0usize; n];
    for j in 1..=n {
        if row_of[j] > 0 {
            col_of[row_of[j] - 1] = j - 1;
        }
    }
    col_of
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cheapest permutation by trying them all.
    fn brute_force(cost: &[f64], n: usize) -> f64 {
        fn rec(cost: &[f64], n: usize, row: usize, used: &mut Vec<bool>, acc: f64, best: &mut f64) {
            if row == n {
                *best = best.min(acc);
                return;
            }
            for c in 0..n {
                if !used[c] {
                    used[c] = true;
                    rec(cost, n, row + 1, used, acc + cost[row * n + c], best);
                    used[c] = false;
                }
            }
        }
        let mut best = f64::INFINITY;
        rec(cost, n, 0, &mut vec![false; n], 0.0, &mut best);
        best
    }

    #[test]
    fn the_assignment_is_a_cheapest_permutation() {
        let mut state = 7u64;
        for n in 1..=7 {
            for _ in 0..20 {
                let cost: Vec<f64> = (0..n * n)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        ((state >> 40) % 10) as f64
                    })
                    .collect();
                let a = min_cost_assignment(&cost, n);
                let mut seen = a.clone();
                seen.sort_unstable();
                assert_eq!(seen, (0..n).collect::<Vec<_>>());
                let total: f64 = (0..n).map(|j| cost[j * n + a[j]]).sum();
                assert_eq!(total, brute_force(&cost, n), "n = {n}");
            }
        }
    }

    #[test]
    fn columns_match_across_permutations_and_strangers_do_not() {
        let r = BinaryMatrix::from_rows(&[[1, 0, 1], [1, 1, 0], [0, 1, 0], [0, 0, 1]]);
        // The same columns in another order, plus a stranger.
        let o = BinaryMatrix::from_rows(&[[1, 0, 1, 0], [0, 1, 1, 1], [0, 1, 0, 1], [1, 0, 0, 1]]);
        assert_eq!(match_columns(&r, &o), vec![Some(2), Some(1), Some(0)]);
        // A draw with fewer features: the missing one has no match.
        let few = BinaryMatrix::from_rows(&[[1], [1], [0], [0]]);
        assert_eq!(match_columns(&r, &few), vec![Some(0), None, None]);
        // A column that disagrees on more than half the rows is not a match.
        let far = BinaryMatrix::from_rows(&[[0], [0], [1], [1]]);
        assert_eq!(match_columns(&r, &far)[0], None);
    }
}
