//! Parameters of DP-means and collapsed DP-means (shared), their checks, and fitting.

use super::dp_means_run;
use crate::MatrixView;
use crate::clustering::center::{prepare, shift_means};
use crate::clustering::collapsed_dp_means::{collapsed_dp_means_run, refine};
use crate::clustering::model::Clustering;
use crate::error::{FitError, ParamError, check_data, check_penalty};
use crate::model::Fit;
use crate::restarts::{Observer, best_of_runs, random_permutation, run_rng};
use rand_chacha::ChaCha8Rng;

/// Which DP-means algorithm to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DpVariant {
    /// DP-means (Kulis & Jordan): sweeps against fixed means, means updated after each sweep.
    Sweeps,
    /// Collapsed DP-means (MAD-Bayes Alg. 2): exact coordinate descent on Eq. 9.
    Collapsed,
}

/// Restarts of DP-means and collapsed DP-means unless [`DpMeansParams::restarts`] says
/// otherwise (measurements: `docs/defaults.md`).
pub const DEFAULT_RESTARTS: usize = 10;
/// Sweep cap of each run unless [`DpMeansParams::max_iter`] says otherwise.
pub const DEFAULT_MAX_ITER: usize = 300;
/// With the refinement on, data of at most this many values (N·D) have every restart refined
/// and the best refined run kept; larger data have every restart run the paper's algorithm and
/// only the best of those refined. Measured (docs/defaults.md, "DP-means: which runs are
/// refined"): above the bound a refinement cost 1.4–78 times a plain run (seconds on 10⁶
/// values and more) and refining every run ended at most 0.053 % lower; below it a
/// refinement takes milliseconds and refining every run ended up to 0.22 % lower.
pub const REFINE_EVERY_RUN_MAX_VALUES: usize = 200_000;

/// Entry point: `DpMeans::params(penalty)`.
pub struct DpMeans;

/// Entry point: `CollapsedDpMeans::params(penalty)`.
pub struct CollapsedDpMeans;

impl DpMeans {
    /// DP-means with penalty P = λ² (the cost of one more cluster). Defaults: no cap on K,
    /// [`DEFAULT_RESTARTS`] restarts (each visits the rows in its own random order), at most
    /// [`DEFAULT_MAX_ITER`] sweeps, seed 0, refinement on; [`DpMeansParams::plain`] gives
    /// the paper's algorithm.
    pub fn params(penalty: f64) -> DpMeansParams {
        DpMeansParams::new(penalty, DpVariant::Sweeps)
    }
}

impl CollapsedDpMeans {
    /// Collapsed DP-means with penalty P; the same defaults as [`DpMeans::params`].
    pub fn params(penalty: f64) -> DpMeansParams {
        DpMeansParams::new(penalty, DpVariant::Collapsed)
    }
}

/// Unchecked DP-means parameters (a builder).
#[derive(Clone, Debug)]
pub struct DpMeansParams(DpMeansValidParams);

/// DP-means parameters that passed [`DpMeansParams::check`].
#[derive(Clone, Debug)]
pub struct DpMeansValidParams {
    variant: DpVariant,
    penalty: f64,
    k_max: Option<usize>,
    restarts: usize,
    max_iter: usize,
    seed: u64,
    refine: bool,
}

impl DpMeansParams {
    fn new(penalty: f64, variant: DpVariant) -> Self {
        Self(DpMeansValidParams {
            variant,
            penalty,
            k_max: None,
            restarts: DEFAULT_RESTARTS,
            max_iter: DEFAULT_MAX_ITER,
            seed: 0,
            refine: true,
        })
    }
    /// Caps the number of clusters (capped DP-means, MAD-Bayes Eq. 12).
    pub fn k_max(mut self, k: Option<usize>) -> Self {
        self.0.k_max = k;
        self
    }
    /// Number of independent runs; the lowest objective wins.
    pub fn restarts(mut self, r: usize) -> Self {
        self.0.restarts = r;
        self
    }
    /// Sweep cap of each run.
    pub fn max_iter(mut self, m: usize) -> Self {
        self.0.max_iter = m;
        self
    }
    /// Seed of all randomness; run i uses stream i of this seed.
    pub fn seed(mut self, s: u64) -> Self {
        self.0.seed = s;
        self
    }
    /// Beyond the paper: descend further with exact single-row moves, merges of two clusters
    /// and splits of one, accepting only what lowers the objective. Default on: plain DP-means
    /// opens a cluster only for a point farther than √P from every mean, so clusters closer
    /// than that stay merged (on `madbayes demo`'s data at P = 50 it finds 3 of the 6
    /// clusters, refined all 6, in every restart). Every restart is refined on data of at
    /// most [`REFINE_EVERY_RUN_MAX_VALUES`] values; on larger data only the best restart.
    pub fn refine(mut self, on: bool) -> Self {
        self.0.refine = on;
        self
    }
    /// The paper's algorithm as published (Alg. 1 of DP-means, or Alg. 2 for the collapsed
    /// variant): no refinement. Restarts, iterations and seed keep their values.
    pub fn plain(mut self) -> Self {
        self.0.refine = false;
        self
    }
    /// Checks the rules that hold for any data.
    pub fn check(self) -> Result<DpMeansValidParams, ParamError> {
        let p = self.0;
        check_penalty(p.penalty)?;
        if p.k_max == Some(0) {
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

impl Fit for DpMeansValidParams {
    type Model = Clustering;

    fn fit_observed(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<Clustering, FitError> {
        self.fit_with(x, observer)
    }
}

impl DpMeansValidParams {
    /// The penalty P.
    pub fn penalty(&self) -> f64 {
        self.penalty
    }

    /// [`fit`](Self::fit), reporting progress to `observer`.
    pub fn fit_with(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<Clustering, FitError> {
        check_data(x)?;
        let n = x.n_rows();
        if let Some(k) = self.k_max
            && k > n
        {
            return Err(FitError::KTooLarge { k, n });
        }
        let k_max = self.k_max.unwrap_or(usize::MAX);
        // Distances are translation-invariant; the GEMM kernels are accurate near the origin.
        let prepared = prepare(x);
        let x = prepared.data(x);
        let centred = &prepared.centred;
        // Small data: every restart refined. Larger data: every restart runs the paper's
        // algorithm and only the winner is refined, on the row order its run used
        // ([`REFINE_EVERY_RUN_MAX_VALUES`]).
        let every = self.refine && n * x.n_cols() <= REFINE_EVERY_RUN_MAX_VALUES;
        let best_only = self.refine && !every;
        let counted = WithRefinement {
            inner: observer,
            extra: usize::from(best_only),
        };
        let mut best = best_of_runs(self.restarts, self.seed, &counted, |_, rng| {
            let order = random_order(n, rng);
            match self.variant {
                DpVariant::Sweeps => {
                    let run = dp_means_run(
                        x,
                        &prepared.mean,
                        self.penalty,
                        k_max,
                        self.max_iter,
                        &order,
                    );
                    if every {
                        refine(x, run, self.penalty, k_max, &order, self.max_iter)
                    } else {
                        run
                    }
                }
                DpVariant::Collapsed => {
                    collapsed_dp_means_run(x, self.penalty, k_max, self.max_iter, &order, every)
                }
            }
        });
        if best_only {
            let order = random_order(n, &mut run_rng(self.seed, best.best_run as u64));
            best.best = refine(x, best.best, self.penalty, k_max, &order, self.max_iter);
            best.run_objectives[best.best_run] = best.best.objective;
            observer.run_finished();
        }
        if let Some((_, mu)) = &centred {
            shift_means(&mut best.best, mu);
        }
        Ok(Clustering::from_best(best))
    }
}

/// Passes a fit's progress on, counting the refinement of the best run as one more step.
struct WithRefinement<'a> {
    inner: &'a dyn Observer,
    extra: usize,
}

impl Observer for WithRefinement<'_> {
    fn start(&self, runs: usize) {
        self.inner.start(runs + self.extra);
    }
    fn run_finished(&self) {
        self.inner.run_finished();
    }
}

/// A uniformly random permutation of `0..n` on the run's own stream: the order in which a
/// DP-means run visits the rows ([`random_permutation`]).
pub fn random_order(n: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    random_permutation(n, rng)
}

/// Read-back of the parameters, e.g. to show a builder's defaults.
impl DpMeansValidParams {
    /// The cap on K, if any.
    pub fn k_max(&self) -> Option<usize> {
        self.k_max
    }
    /// Number of restarts.
    pub fn restarts(&self) -> usize {
        self.restarts
    }
    /// Sweep cap of each run.
    pub fn max_iter(&self) -> usize {
        self.max_iter
    }
    /// Seed of all randomness.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Whether runs are refined after they converge.
    pub fn refine(&self) -> bool {
        self.refine
    }
}
