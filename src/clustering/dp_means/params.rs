//! Parameters of DP-means and collapsed DP-means (shared), their checks, and fitting.

use super::{dp_means_refinement_start, dp_means_run};
use crate::MatrixView;
use crate::clustering::center::{prepare, shift_means};
use crate::clustering::collapsed_dp_means::{collapsed_dp_means_run, refine};
use crate::clustering::model::{ClusterRun, Clustering};
use crate::error::{FitError, ParamError, check_data, check_penalty};
use crate::model::Fit;
use crate::restarts::{
    Best, Observer, all_runs, best_index, best_of_runs, random_permutation, run_rng,
};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Which DP-means algorithm to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DpVariant {
    /// DP-means (Kulis & Jordan): sweeps against fixed means, means updated after each sweep.
    Sweeps,
    /// Collapsed DP-means (MAD-Bayes Alg. 2): exact coordinate descent on Eq. 9.
    Collapsed,
}

/// Restarts of DP-means and collapsed DP-means on data of at most
/// [`REFINE_EVERY_RUN_MAX_VALUES`] values, unless [`DpMeansParams::restarts`] says otherwise
/// (measurements: `docs/defaults.md`).
pub const DEFAULT_RESTARTS: usize = 10;
/// Restarts on larger data unless [`DpMeansParams::restarts`] says otherwise. There a
/// refinement costs 6–37 times a paper run and which paper run is best says nothing about
/// which refined run is (docs/defaults.md, "DP-means: restarts on large data"); one paper
/// run is refined with [`LARGE_DATA_TRIES`] tries per group of clusters instead, which ends
/// lower than the better of two runs refined once (docs/defaults.md, "DP-means: the
/// refinement by groups").
pub const LARGE_DATA_RESTARTS: usize = 1;
/// With the refinement on and more than this many restarts on large data, every restart runs
/// the paper's algorithm to its end and the best this many of those are refined; with at most
/// this many, each run is refined as it ends.
pub const LARGE_DATA_REFINED: usize = 2;
/// When a run is refined on data of more than [`REFINE_EVERY_RUN_MAX_VALUES`] values, its
/// clusters are split into groups that do not trade rows and each group is descended from
/// this many row orders, the lowest end kept ([`refine`]); on smaller data, where every
/// restart is refined, the descent runs over all rows at once, as before groups.
pub const LARGE_DATA_TRIES: usize = 2;
/// Sweep cap of each run unless [`DpMeansParams::max_iter`] says otherwise.
pub const DEFAULT_MAX_ITER: usize = 300;
/// With the refinement on, data of at most this many values (N·D) have every restart refined
/// and the best refined run kept; on larger data with more than [`LARGE_DATA_REFINED`]
/// restarts every restart runs the paper's algorithm and only the best
/// [`LARGE_DATA_REFINED`] of those are refined. Measured (docs/defaults.md,
/// "DP-means: which runs are refined"): above the bound a refinement cost 1.4–78 times a
/// plain run (seconds on 10⁶ values and more) and refining every run ended at most 0.053 %
/// lower; below it a refinement takes milliseconds and refining every run ended up to 0.22 %
/// lower.
pub const REFINE_EVERY_RUN_MAX_VALUES: usize = 200_000;

/// Entry point: `DpMeans::params(penalty)`.
pub struct DpMeans;

/// Entry point: `CollapsedDpMeans::params(penalty)`.
pub struct CollapsedDpMeans;

impl DpMeans {
    /// DP-means with penalty P = λ² (the cost of one more cluster). Defaults: no cap on K,
    /// [`DEFAULT_RESTARTS`] restarts (each visits the rows in its own random order), or
    /// [`default_restarts`] on data of more than [`REFINE_EVERY_RUN_MAX_VALUES`] values,
    /// at most [`DEFAULT_MAX_ITER`] sweeps, seed 0, refinement on; [`DpMeansParams::plain`]
    /// gives the paper's algorithm.
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
    /// None: [`default_restarts`], by the variant and the data's size.
    restarts: Option<usize>,
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
            restarts: None,
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
    /// Number of independent runs; the lowest objective wins. Without it, the number is
    /// chosen by the variant and the data's size ([`default_restarts`]).
    pub fn restarts(mut self, r: usize) -> Self {
        self.0.restarts = Some(r);
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
    /// most [`REFINE_EVERY_RUN_MAX_VALUES`] values, and on larger data with at most
    /// [`LARGE_DATA_REFINED`] restarts; with more, only the best [`LARGE_DATA_REFINED`].
    /// On larger data a refinement goes by groups of clusters, [`LARGE_DATA_TRIES`] tries
    /// each ([`refine_tries`]).
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
        if p.restarts == Some(0) {
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
        let large = large_data(n, x.n_cols());
        let restarts = self.restarts_for(n, x.n_cols());
        let tries = refine_tries(n, x.n_cols());
        // Small data, or no more runs than are refined on large data: every run refined as it
        // ends. Otherwise every run is the paper's algorithm, and the best
        // [`LARGE_DATA_REFINED`] of them are refined afterwards, each on the row order its run
        // used, grouped by cluster ([`refine`]).
        let every = self.refine && (!large || restarts <= LARGE_DATA_REFINED);
        let refined_after = if self.refine && !every {
            LARGE_DATA_REFINED
        } else {
            0
        };
        let counted = WithRefinement {
            inner: observer,
            extra: refined_after,
        };
        let run = |order: &[usize]| match self.variant {
            // A run refined as it ends hands over to the refinement once its sweeps move
            // few rows; a run compared with others before (the best ones refined after)
            // runs to the end.
            DpVariant::Sweeps if every => {
                let (mean, p) = (&prepared.mean, self.penalty);
                let start = dp_means_refinement_start(x, mean, p, k_max, self.max_iter, order);
                refine(x, start, p, k_max, order, self.max_iter, tries)
            }
            DpVariant::Sweeps => {
                dp_means_run(x, &prepared.mean, self.penalty, k_max, self.max_iter, order)
            }
            DpVariant::Collapsed => {
                collapsed_dp_means_run(x, self.penalty, k_max, self.max_iter, order, every)
            }
        };
        let mut best = if refined_after == 0 {
            best_of_runs(restarts, self.seed, &counted, |_, rng| {
                run(&random_order(n, rng))
            })
        } else {
            let runs = all_runs(restarts, self.seed, &counted, |_, rng| {
                Some(run(&random_order(n, rng)))
            });
            self.refine_the_best(x, runs, refined_after, k_max, tries, observer)
        };
        if let Some((_, mu)) = &centred {
            shift_means(&mut best.best, mu);
        }
        Ok(Clustering::from_best(best))
    }
}

impl DpMeansValidParams {
    /// The number of runs a fit of N × D data makes: [`DpMeansParams::restarts`], else
    /// [`default_restarts`].
    pub fn restarts_for(&self, n: usize, d: usize) -> usize {
        self.restarts
            .unwrap_or(default_restarts(self.variant, n, d))
    }

    /// Refines the `count` runs of lowest objective (ties: the lower run index), side by side,
    /// each on the row order its run used (grouped by cluster, [`refine`]), and keeps the best
    /// of all runs (ties: the lowest index). A refined run's objective replaces its paper
    /// run's in `run_objectives`.
    fn refine_the_best(
        &self,
        x: MatrixView<'_>,
        mut runs: Vec<Option<ClusterRun>>,
        count: usize,
        k_max: usize,
        tries: usize,
        observer: &dyn Observer,
    ) -> Best<ClusterRun> {
        let mut run_objectives: Vec<f64> = runs
            .iter()
            .map(|r| r.as_ref().expect("every run is there").objective)
            .collect();
        let mut ranked: Vec<usize> = (0..runs.len()).collect();
        ranked.sort_by(|&a, &b| {
            run_objectives[a]
                .total_cmp(&run_objectives[b])
                .then(a.cmp(&b))
        });
        let chosen: Vec<(usize, ClusterRun)> = ranked
            .iter()
            .take(count)
            .map(|&i| (i, runs[i].take().expect("chosen once")))
            .collect();
        let n = x.n_rows();
        let refined: Vec<(usize, ClusterRun)> = chosen
            .into_par_iter()
            .map(|(i, run)| {
                let order = random_order(n, &mut run_rng(self.seed, i as u64));
                let out = refine(x, run, self.penalty, k_max, &order, self.max_iter, tries);
                observer.run_finished();
                (i, out)
            })
            .collect();
        for (i, run) in refined {
            run_objectives[i] = run.objective;
            runs[i] = Some(run);
        }
        let best_run = best_index(&run_objectives);
        Best {
            best: runs[best_run].take().expect("the best run is kept"),
            best_run,
            run_objectives,
        }
    }
}

/// Whether N × D data count as large for DP-means' defaults: more than
/// [`REFINE_EVERY_RUN_MAX_VALUES`] values.
pub(super) fn large_data(n: usize, d: usize) -> bool {
    n.saturating_mul(d) > REFINE_EVERY_RUN_MAX_VALUES
}

/// The restarts of a fit of N × D data when none are given: [`DEFAULT_RESTARTS`] on data of
/// at most [`REFINE_EVERY_RUN_MAX_VALUES`] values; on larger data [`LARGE_DATA_RESTARTS`]
/// for DP-means (its one refined run has [`LARGE_DATA_TRIES`] tries per group) and
/// [`LARGE_DATA_REFINED`] for collapsed DP-means (whose runs descend from one cluster, with
/// no groups to try).
pub fn default_restarts(variant: DpVariant, n: usize, d: usize) -> usize {
    match (large_data(n, d), variant) {
        (false, _) => DEFAULT_RESTARTS,
        (true, DpVariant::Sweeps) => LARGE_DATA_RESTARTS,
        (true, DpVariant::Collapsed) => LARGE_DATA_REFINED,
    }
}

/// The `group_tries` of [`refine`] for a run on N × D data: [`LARGE_DATA_TRIES`] on data of
/// more than [`REFINE_EVERY_RUN_MAX_VALUES`] values, else 0 (one descent over all rows).
pub fn refine_tries(n: usize, d: usize) -> usize {
    if large_data(n, d) {
        LARGE_DATA_TRIES
    } else {
        0
    }
}

/// Passes a fit's progress on, counting each refinement after the runs as one more step.
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
    /// Number of restarts, if given; None: chosen by the data's size
    /// ([`Self::restarts_for`]).
    pub fn restarts(&self) -> Option<usize> {
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
