//! Parameters of Mahalanobis clustering, their checks, and the fit entry points.

use super::model::{MahalanobisClustering, MahalanobisRun};
use super::objective::mahalanobis_phi;
use super::run::{mahalanobis_run, seed_labels};
use crate::MatrixView;
use crate::RowMatrix;
use crate::error::{FitError, ParamError, check_data, check_penalty};
use crate::linalg::row_sq_norms;
use crate::model::Fit;
use crate::restarts::{Best, Observer, best_of_runs};

/// Restarts of Mahalanobis clustering unless [`MahalanobisParams::restarts`] says otherwise.
pub const DEFAULT_RESTARTS: usize = 10;
/// Iteration cap of each run unless [`MahalanobisParams::max_iter`] says otherwise.
pub const DEFAULT_MAX_ITER: usize = 100;

/// Entry point: `Mahalanobis::params(k, penalty)`.
pub struct Mahalanobis;

impl Mahalanobis {
    /// Parameters for `k` clusters and penalty P = λ² on log det Σ_k. Defaults: `reg` = 1e-3,
    /// [`DEFAULT_RESTARTS`] restarts, at most [`DEFAULT_MAX_ITER`] iterations per run, seed 0.
    pub fn params(k: usize, penalty: f64) -> MahalanobisParams {
        MahalanobisParams(MahalanobisValidParams {
            k,
            penalty,
            reg: 1e-3,
            restarts: DEFAULT_RESTARTS,
            max_iter: DEFAULT_MAX_ITER,
            seed: 0,
        })
    }
}

/// Unchecked Mahalanobis clustering parameters (a builder).
#[derive(Clone, Debug)]
pub struct MahalanobisParams(MahalanobisValidParams);

/// Mahalanobis clustering parameters that passed [`MahalanobisParams::check`].
#[derive(Clone, Debug)]
pub struct MahalanobisValidParams {
    k: usize,
    penalty: f64,
    reg: f64,
    restarts: usize,
    max_iter: usize,
    seed: u64,
}

impl MahalanobisParams {
    /// Scale of the inverse-Wishart term: Φ = φ·I with φ = `reg` × (mean column variance of
    /// X). Must be ≥ 0 and finite; 0 drops the term (the paper's limit objective, unbounded
    /// below on singular clusters; runs that hit one are discarded).
    pub fn reg(mut self, r: f64) -> Self {
        self.0.reg = r;
        self
    }
    /// Number of independent runs (own seeding each); the lowest objective wins.
    pub fn restarts(mut self, r: usize) -> Self {
        self.0.restarts = r;
        self
    }
    /// Iteration cap of each run.
    pub fn max_iter(mut self, m: usize) -> Self {
        self.0.max_iter = m;
        self
    }
    /// Seed of all randomness; run i uses stream i of this seed.
    pub fn seed(mut self, s: u64) -> Self {
        self.0.seed = s;
        self
    }
    /// Checks the rules that hold for any data: k ≥ 1, penalty > 0 finite, reg ≥ 0 finite,
    /// restarts ≥ 1, max_iter ≥ 1.
    pub fn check(self) -> Result<MahalanobisValidParams, ParamError> {
        let p = self.0;
        if p.k == 0 {
            return Err(ParamError::KZero(0));
        }
        check_penalty(p.penalty)?;
        if !(p.reg.is_finite() && p.reg >= 0.0) {
            return Err(ParamError::Regularisation {
                name: "reg",
                value: p.reg,
            });
        }
        if p.restarts == 0 {
            return Err(ParamError::NoRestarts);
        }
        if p.max_iter == 0 {
            return Err(ParamError::NoIterations);
        }
        Ok(p)
    }
}

impl Fit for MahalanobisValidParams {
    type Model = MahalanobisClustering;

    fn fit_observed(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<MahalanobisClustering, FitError> {
        self.fit_with(x, observer)
    }
}

impl MahalanobisValidParams {
    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.k
    }
    /// The penalty P.
    pub fn penalty(&self) -> f64 {
        self.penalty
    }
    /// The `reg` factor of Φ.
    pub fn reg(&self) -> f64 {
        self.reg
    }

    /// Checks the data: finite, non-empty, and N ≥ K·(D + 1).
    fn check_input(&self, x: MatrixView<'_>) -> Result<(), FitError> {
        check_data(x)?;
        let (n, d) = (x.n_rows(), x.n_cols());
        let need = self.k.saturating_mul(d + 1);
        if need > n {
            return Err(FitError::TooFewRows(format!(
                "Mahalanobis clustering keeps more than D = {d} rows in each of the k = {} \
                 clusters, so it needs N ≥ k·(D + 1) = {need} rows, but N = {n}; lower k or \
                 reduce the number of columns",
                self.k
            )));
        }
        Ok(())
    }

    /// [`fit`](Self::fit), reporting progress to `observer`.
    pub fn fit_with(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<MahalanobisClustering, FitError> {
        self.check_input(x)?;
        let phi = mahalanobis_phi(x, self.reg);
        let norms = row_sq_norms(x);
        let best = best_of_runs(self.restarts, self.seed, observer, |_, rng| {
            let init = seed_labels(x, &norms, self.k, rng);
            mahalanobis_run(x, init, self.k, self.penalty, phi, self.max_iter)
        });
        self.finish(best, phi)
    }

    /// One run from the given labels (no seeding, no restarts).
    ///
    /// # Panics
    /// When `labels` has the wrong length, a label is not below k, or a cluster has fewer
    /// than D + 1 rows.
    #[track_caller]
    pub fn fit_from_labels(
        &self,
        x: &RowMatrix,
        labels: &[usize],
    ) -> Result<MahalanobisClustering, FitError> {
        self.check_input(x.view())?;
        let phi = mahalanobis_phi(x.view(), self.reg);
        let run = mahalanobis_run(
            x.view(),
            labels.to_vec(),
            self.k,
            self.penalty,
            phi,
            self.max_iter,
        );
        self.finish(
            Best {
                run_objectives: vec![run.run.objective],
                best: run,
                best_run: 0,
            },
            phi,
        )
    }

    fn finish(
        &self,
        best: Best<MahalanobisRun>,
        phi: f64,
    ) -> Result<MahalanobisClustering, FitError> {
        MahalanobisClustering::from_best(best, self.penalty, phi).ok_or_else(|| {
            FitError::Degenerate(format!(
                "with reg = {} every run met a cluster whose scatter matrix is singular \
                 (duplicate rows, or rows on a hyperplane), where the objective is unbounded \
                 below; set reg > 0 (e.g. 1e-3)",
                self.reg
            ))
        })
    }
}

/// Read-back of the parameters, e.g. to show a builder's defaults.
impl MahalanobisValidParams {
    /// Number of restarts.
    pub fn restarts(&self) -> usize {
        self.restarts
    }
    /// Iteration cap of each run.
    pub fn max_iter(&self) -> usize {
        self.max_iter
    }
    /// Seed of all randomness.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}
