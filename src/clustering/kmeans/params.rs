//! Parameters of K-means, their checks, and the fit entry points.

use super::{kmeans_plus_plus, lloyd};
use crate::MatrixView;
use crate::clustering::center::{prepare, shift_means};
use crate::clustering::model::Clustering;
use crate::error::{FitError, ParamError, check_data};
use crate::linalg::axpy;
use crate::model::Fit;
use crate::restarts::{Observer, best_of_runs};
use crate::{RowMatrix, restarts};

/// Restarts of K-means unless [`KMeansParams::restarts`] says otherwise.
pub const DEFAULT_RESTARTS: usize = 10;
/// Iteration cap of each run unless [`KMeansParams::max_iter`] says otherwise.
pub const DEFAULT_MAX_ITER: usize = 300;

/// Entry point: `KMeans::params(k)`.
pub struct KMeans;

impl KMeans {
    /// Parameters for `k` clusters, with defaults: [`DEFAULT_RESTARTS`] restarts, at most
    /// [`DEFAULT_MAX_ITER`] iterations per run, seed 0.
    pub fn params(k: usize) -> KMeansParams {
        KMeansParams(KMeansValidParams {
            k,
            restarts: DEFAULT_RESTARTS,
            max_iter: DEFAULT_MAX_ITER,
            seed: 0,
        })
    }
}

/// Unchecked K-means parameters (a builder).
#[derive(Clone, Debug)]
pub struct KMeansParams(KMeansValidParams);

/// K-means parameters that passed [`KMeansParams::check`].
#[derive(Clone, Debug)]
pub struct KMeansValidParams {
    k: usize,
    restarts: usize,
    max_iter: usize,
    seed: u64,
}

impl KMeansParams {
    /// Number of independent runs (k-means++ seeding each); the lowest objective wins.
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
    /// Checks the rules that hold for any data.
    pub fn check(self) -> Result<KMeansValidParams, ParamError> {
        let p = self.0;
        if p.k == 0 {
            return Err(ParamError::KZero(0));
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

impl Fit for KMeansValidParams {
    type Model = Clustering;

    fn fit_observed(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<Clustering, FitError> {
        self.fit_with(x, observer)
    }
}

impl KMeansValidParams {
    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.k
    }

    /// [`fit`](Self::fit), reporting progress to `observer`.
    pub fn fit_with(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<Clustering, FitError> {
        check_data(x)?;
        if self.k > x.n_rows() {
            return Err(FitError::KTooLarge {
                k: self.k,
                n: x.n_rows(),
            });
        }
        // Distances are translation-invariant; the GEMM kernels are accurate near the origin.
        let prepared = prepare(x);
        let (x, norms) = (prepared.data(x), &prepared.norms);
        let centred = &prepared.centred;
        let mut best = best_of_runs(self.restarts, self.seed, observer, |_, rng| {
            let init = kmeans_plus_plus(x, norms, self.k, rng);
            lloyd(x, init, self.max_iter)
        });
        if let Some((_, mu)) = &centred {
            shift_means(&mut best.best, mu);
        }
        Ok(Clustering::from_best(best))
    }

    /// One Lloyd run from the given initial means (no seeding, no restarts).
    ///
    /// # Panics
    /// When `init` does not have K rows and D columns.
    #[track_caller]
    pub fn fit_from_means(
        &self,
        x: MatrixView<'_>,
        init: &RowMatrix,
    ) -> Result<Clustering, FitError> {
        check_data(x)?;
        assert_eq!(
            init.n_cols(),
            x.n_cols(),
            "initial means and data differ in D"
        );
        assert_eq!(init.n_rows(), self.k, "initial means are not K rows");
        let mut init = init.clone();
        let prepared = prepare(x);
        let centred = &prepared.centred;
        if let Some((_, mu)) = centred {
            for j in 0..init.n_rows() {
                axpy(-1.0, mu, init.row_mut(j));
            }
        }
        let mut run = lloyd(prepared.data(x), init, self.max_iter);
        if let Some((_, mu)) = &centred {
            shift_means(&mut run, mu);
        }
        Ok(Clustering::from_best(restarts::Best {
            run_objectives: vec![run.objective],
            best: run,
            best_run: 0,
        }))
    }
}

/// Read-back of the parameters, e.g. to show a builder's defaults.
impl KMeansValidParams {
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
