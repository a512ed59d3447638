//! Parameters of the feature algorithms (one builder for the family), their checks, and
//! fitting with parallel, reproducible restarts.

use super::bp_means::BpMeansRun;
use super::collapsed::collapsed_bp_means_run;
use super::k_features::k_features_run;
use super::lstsq::entry_sq_sum;
use super::memo::SharedMemo;
use super::model::{EXACT_ROW_MAX_K, FeatureModel, FeatureRun};
use super::refine::{RoundMemo, Setting, refine_bp_means, refine_k_features, run_bytes};
use super::seeding::{FeatureSeeding, SeedMemo, SeedTarget, seed_features_shared};
use super::stepwise::stepwise;
use crate::MatrixView;
use crate::error::{FitError, ParamError, check_data, check_penalty};
use crate::linalg::{columns_of, columns_pay, row_sq_norms};
use crate::model::Fit;
use crate::restarts::{Observer, best_of_runs};
use rand_chacha::ChaCha8Rng;

/// Memory the BP-means runs remembered by the state their seeding ends in may take (per fit).
const RUN_MEMO_BYTES: usize = 32 << 20;

/// Values of X (N·D) up to which a BP-means, K-features or stepwise K-features fit keeps a
/// column-major copy of X for its sweeps' X Aᵀ ([`crate::linalg::xat_columns`]; 8 MiB): on
/// small data each sweep's product is a fixed cost that faer's kernels pay half again over;
/// on large data the copy would double the fit's memory.
const COLUMNS_MAX_VALUES: usize = 1 << 20;

/// Restarts of every feature algorithm unless [`FeatureParams::restarts`] says otherwise
/// (for stepwise K-features: at every K). The measurements behind it are in
/// `docs/defaults.md`: with the refinement at least about half the runs end at the best value
/// known on each data set measured there, so 10 miss it with probability below 0.2 %.
pub const DEFAULT_RESTARTS: usize = 10;
/// Sweep (iteration) cap of each run unless [`FeatureParams::max_iter`] says otherwise; it
/// also caps the rounds of the refinement.
pub const DEFAULT_MAX_ITER: usize = 300;

/// Which feature algorithm to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureAlgo {
    /// BP-means (Alg. 1), optionally capped (Eq. 15).
    BpMeans,
    /// Collapsed BP-means (Alg. 3).
    CollapsedBpMeans,
    /// K-features (Alg. 4), K fixed.
    KFeatures,
    /// Stepwise K-features (§5).
    StepwiseKFeatures,
}

impl FeatureAlgo {
    /// The name the command line uses: `bp-means`, `collapsed-bp-means`, `k-features`,
    /// `stepwise-k-features`.
    pub fn name(self) -> &'static str {
        match self {
            FeatureAlgo::BpMeans => "bp-means",
            FeatureAlgo::CollapsedBpMeans => "collapsed-bp-means",
            FeatureAlgo::KFeatures => "k-features",
            FeatureAlgo::StepwiseKFeatures => "stepwise-k-features",
        }
    }
}

/// Entry point: `BpMeans::params(penalty)`.
pub struct BpMeans;
/// Entry point: `CollapsedBpMeans::params(penalty)`.
pub struct CollapsedBpMeans;
/// Entry point: `KFeatures::params(k)`.
pub struct KFeatures;
/// Entry point: `StepwiseKFeatures::params(penalty)`.
pub struct StepwiseKFeatures;

impl BpMeans {
    /// BP-means with penalty P = λ² (the cost of one more feature). Defaults: no cap on K,
    /// [`DEFAULT_RESTARTS`] restarts, at most [`DEFAULT_MAX_ITER`] sweeps, seed 0,
    /// [`FeatureSeeding::BaseFeature`] with grown seeds, refinement on;
    /// [`FeatureParams::plain`] gives the paper's Algorithm 1.
    pub fn params(penalty: f64) -> FeatureParams {
        FeatureParams::new(FeatureAlgo::BpMeans, Some(penalty), None)
    }
}

impl CollapsedBpMeans {
    /// Collapsed BP-means with penalty P; the same defaults as [`BpMeans::params`], rows
    /// chosen exactly (all 2^K values) while K ≤ 12. `refine(true)` is refused (it has no
    /// refinement); `grow_seeds` applies (the seeding is BP-means').
    pub fn params(penalty: f64) -> FeatureParams {
        FeatureParams::new(FeatureAlgo::CollapsedBpMeans, Some(penalty), None)
    }
}

impl KFeatures {
    /// K-features with `k` features; the same defaults as [`BpMeans::params`], rows assigned
    /// exactly (all 2^K rows) while K ≤ 12.
    pub fn params(k: usize) -> FeatureParams {
        FeatureParams::new(FeatureAlgo::KFeatures, None, Some(k))
    }
}

impl StepwiseKFeatures {
    /// Stepwise K-features with penalty P; `restarts` applies to every K tried. K is tried up
    /// to the cap given by [`FeatureParams::k`] (default N).
    pub fn params(penalty: f64) -> FeatureParams {
        FeatureParams::new(FeatureAlgo::StepwiseKFeatures, Some(penalty), None)
    }
}

/// Unchecked parameters of a feature algorithm (a builder).
#[derive(Clone, Debug)]
pub struct FeatureParams(FeatureValidParams);

/// Feature-algorithm parameters that passed [`FeatureParams::check`].
#[derive(Clone, Debug)]
pub struct FeatureValidParams {
    pub(crate) algo: FeatureAlgo,
    pub(crate) penalty: Option<f64>,
    pub(crate) k: Option<usize>,
    pub(crate) restarts: usize,
    pub(crate) max_iter: usize,
    pub(crate) seed: u64,
    pub(crate) seeding: FeatureSeeding,
    pub(crate) exact_max_k: usize,
    /// `None`: on where it applies (BP-means, collapsed BP-means).
    pub(crate) grow_seeds: Option<bool>,
    /// `None`: on where it applies (every algorithm but collapsed BP-means).
    pub(crate) refine: Option<bool>,
}

impl FeatureParams {
    fn new(algo: FeatureAlgo, penalty: Option<f64>, k: Option<usize>) -> Self {
        Self(FeatureValidParams {
            algo,
            penalty,
            k,
            restarts: DEFAULT_RESTARTS,
            max_iter: DEFAULT_MAX_ITER,
            seed: 0,
            seeding: FeatureSeeding::BaseFeature,
            exact_max_k: EXACT_ROW_MAX_K,
            grow_seeds: None,
            refine: None,
        })
    }
    /// K for K-features; the cap K_max for BP-means (capped BP-means, Eq. 15) and for the
    /// search of stepwise K-features. `None` removes the cap (not allowed for K-features).
    pub fn k(mut self, k: Option<usize>) -> Self {
        self.0.k = k;
        self
    }
    /// Number of independent runs; the lowest objective wins (ties: lowest run index).
    pub fn restarts(mut self, r: usize) -> Self {
        self.0.restarts = r;
        self
    }
    /// Iteration cap of each run.
    pub fn max_iter(mut self, m: usize) -> Self {
        self.0.max_iter = m;
        self
    }
    /// Seed of all randomness; run i uses stream i of this seed, and each round of the
    /// refinement a generator seeded by this seed and the state the round starts from (so
    /// restarts that reach the same state share the round's outcome).
    pub fn seed(mut self, s: u64) -> Self {
        self.0.seed = s;
        self
    }
    /// How each run is seeded.
    pub fn seeding(mut self, s: FeatureSeeding) -> Self {
        self.0.seeding = s;
        self
    }
    /// K-features and collapsed BP-means: largest K for which each row is chosen by exact enumeration of its 2^K
    /// values (default 12, at most 24); above it, coordinate descent.
    pub fn exact_max_k(mut self, k: usize) -> Self {
        self.0.exact_max_k = k.min(24);
        self
    }
    /// With a penalty (BP-means, collapsed BP-means): grow each drawn residual into a
    /// feature before testing whether it pays, and stop after [`SEED_TRIES`] draws that do
    /// not, instead of testing the raw residual and stopping at the first (the paper). Default
    /// on; see [`crate::features::seeding`].
    ///
    /// [`SEED_TRIES`]: crate::features::seeding::SEED_TRIES
    pub fn grow_seeds(mut self, on: bool) -> Self {
        self.0.grow_seeds = Some(on);
        self
    }
    /// BP-means, K-features and stepwise K-features, beyond the paper: after each run
    /// converges, try the moves of the refinement (BP-means: remove, merge, grow, deep moves,
    /// collapsed polish; K-features: replace a feature) and keep only what lowers the
    /// objective, until none helps. Default on. Collapsed BP-means has no refinement:
    /// `refine(true)` is refused for it.
    pub fn refine(mut self, on: bool) -> Self {
        self.0.refine = Some(on);
        self
    }
    /// The paper's algorithms as published: the base-feature seeding of MAD-Bayes §5 with
    /// the raw residual tested (no growth) and no refinement — Alg. 1, 3 and 4 and stepwise
    /// K-features exactly as the paper states them. Restarts, iterations and seed keep their
    /// values; [`seeding`](Self::seeding) may follow to pick the authors' residual form.
    pub fn plain(mut self) -> Self {
        self.0.seeding = FeatureSeeding::BaseFeature;
        self.0.grow_seeds = Some(false);
        self.0.refine = Some(false);
        self
    }
    /// Checks the rules that hold for any data.
    pub fn check(self) -> Result<FeatureValidParams, ParamError> {
        let p = self.0;
        if let Some(pen) = p.penalty {
            check_penalty(pen)?;
        }
        match p.k {
            Some(0) => return Err(ParamError::KZero(0)),
            None if p.algo == FeatureAlgo::KFeatures => return Err(ParamError::KZero(0)),
            _ => {}
        }
        if p.restarts == 0 {
            return Err(ParamError::NoRestarts);
        }
        if p.max_iter == 0 {
            return Err(ParamError::NoIterations);
        }
        let not_applicable = |option| ParamError::NotApplicable {
            option,
            algo: p.algo.name(),
        };
        if p.refine == Some(true) && p.algo == FeatureAlgo::CollapsedBpMeans {
            return Err(not_applicable("refine"));
        }
        let fixed_k = matches!(
            p.algo,
            FeatureAlgo::KFeatures | FeatureAlgo::StepwiseKFeatures
        );
        if p.grow_seeds == Some(true) && fixed_k {
            return Err(not_applicable("grow-seeds"));
        }
        Ok(p)
    }
}

impl Fit for FeatureValidParams {
    type Model = FeatureModel;

    fn fit_observed(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<FeatureModel, FitError> {
        self.fit_with(x, observer)
    }
}

impl FeatureValidParams {
    /// The algorithm.
    pub fn algo(&self) -> FeatureAlgo {
        self.algo
    }

    /// Whether runs are refined (the default where a refinement exists).
    pub fn refines(&self) -> bool {
        self.refine
            .unwrap_or(self.algo != FeatureAlgo::CollapsedBpMeans)
            && self.algo != FeatureAlgo::CollapsedBpMeans
    }

    /// Whether drawn seeds are grown (the default where the seeding has a penalty).
    pub fn grows_seeds(&self) -> bool {
        self.grow_seeds.unwrap_or(true)
            && matches!(
                self.algo,
                FeatureAlgo::BpMeans | FeatureAlgo::CollapsedBpMeans
            )
    }

    /// [`fit`](Self::fit), reporting progress to `observer`.
    pub fn fit_with(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<FeatureModel, FitError> {
        check_data(x)?;
        let n = x.n_rows();
        if let Some(k) = self.k
            && k > n
        {
            return Err(FitError::KTooLarge { k, n });
        }
        let model = match self.algo {
            FeatureAlgo::BpMeans => {
                let penalty = self.penalty.expect("BP-means has a penalty");
                let k_max = self.k.unwrap_or(usize::MAX);
                let norms = row_sq_norms(x);
                let x_sq = entry_sq_sum(x);
                let memo = RoundMemo::default();
                // Restarts whose seedings end in the same state hold the same (Z, A), so the
                // same run: it is made once (`SeedMemo`). Only with grown seeds: the paper's
                // seeds seldom repeat, and a grown feature costs up to GROW_STEPS passes; they
                // share their start only.
                let grow = self.grows_seeds();
                let seeds = seed_memo(grow);
                let runs = SharedMemo::new(RUN_MEMO_BYTES);
                let x_cols = small_columns(x);
                let best = best_of_runs(self.restarts, self.seed, observer, |_, rng| {
                    let target = SeedTarget::Penalty { penalty, k_max };
                    let seeded =
                        seed_features_shared(x, self.seeding, target, grow, rng, Some(&seeds));
                    let bp = BpMeansRun {
                        x,
                        x_norms: &norms,
                        penalty,
                        k_max,
                        max_iter: self.max_iter,
                        x_cols: x_cols.as_deref(),
                    };
                    let run = || {
                        let (z, a) = seeded.z_a();
                        if self.refines() {
                            let setting = Setting {
                                bp,
                                exact_max_k: self.exact_max_k,
                                x_sq,
                                seed: self.seed,
                                memo: Some(&memo),
                            };
                            // The refinement derives A and the objective from Z again.
                            refine_bp_means(&setting, bp.run_unscored(z, a))
                        } else {
                            bp.run(z, a)
                        }
                    };
                    match seeded.state {
                        Some(state) => {
                            runs.get_or_make(state.to_le_bytes().to_vec(), run, run_bytes)
                        }
                        None => run(),
                    }
                });
                FeatureModel::from_best(best)
            }
            FeatureAlgo::CollapsedBpMeans => {
                let penalty = self.penalty.expect("collapsed BP-means has a penalty");
                let k_max = self.k.unwrap_or(usize::MAX);
                // As for BP-means: a seeding's end state gives the run (`SeedMemo`).
                let grow = self.grows_seeds();
                let seeds = seed_memo(grow);
                let runs = SharedMemo::new(RUN_MEMO_BYTES);
                let best = best_of_runs(self.restarts, self.seed, observer, |_, rng| {
                    let target = SeedTarget::Penalty { penalty, k_max };
                    let seeded =
                        seed_features_shared(x, self.seeding, target, grow, rng, Some(&seeds));
                    let (max_iter, exact_max_k) = (self.max_iter, self.exact_max_k);
                    let run = || {
                        let (z, _) = seeded.z_a();
                        collapsed_bp_means_run(x, penalty, k_max, max_iter, exact_max_k, z)
                    };
                    match seeded.state {
                        Some(state) => {
                            runs.get_or_make(state.to_le_bytes().to_vec(), run, run_bytes)
                        }
                        None => run(),
                    }
                });
                FeatureModel::from_best(best)
            }
            FeatureAlgo::KFeatures => {
                let k = self.k.expect("checked");
                let (x_sq, seeds) = (entry_sq_sum(x), SeedMemo::start_only());
                let x_cols = small_columns(x);
                let best = best_of_runs(self.restarts, self.seed, observer, |_, rng| {
                    self.k_features_single(x, x_cols.as_deref(), x_sq, &seeds, k, rng)
                });
                FeatureModel::from_best(best)
            }
            FeatureAlgo::StepwiseKFeatures => {
                let penalty = self.penalty.expect("stepwise K-features has a penalty");
                stepwise(self, x, penalty, self.k.unwrap_or(n).min(n), observer)
            }
        };
        Ok(model)
    }

    /// One seeded K-features run (`x_cols`: X column by column, [`small_columns`]; `x_sq`:
    /// ‖X‖²_F, [`entry_sq_sum`]; `seeds`: the fit's seedings, sharing their start).
    pub(crate) fn k_features_single(
        &self,
        x: MatrixView<'_>,
        x_cols: Option<&[f64]>,
        x_sq: f64,
        seeds: &SeedMemo,
        k: usize,
        rng: &mut ChaCha8Rng,
    ) -> FeatureRun {
        let target = SeedTarget::Fixed(k);
        let (z, a) = seed_features_shared(x, self.seeding, target, false, rng, Some(seeds)).z_a();
        let run = k_features_run(x, x_cols, x_sq, self.max_iter, self.exact_max_k, z, a);
        if self.refines() {
            let setting = Setting {
                bp: BpMeansRun {
                    x,
                    x_norms: &[],
                    penalty: 0.0,
                    k_max: k,
                    max_iter: self.max_iter,
                    x_cols,
                },
                exact_max_k: self.exact_max_k,
                x_sq,
                seed: self.seed,
                memo: None,
            };
            refine_k_features(&setting, rng, run)
        } else {
            run
        }
    }
}

/// X column by column ([`columns_of`]) when it holds at most [`COLUMNS_MAX_VALUES`] values
/// and the CPU runs the column kernel ([`columns_pay`]): the copy the runs' sweeps form X Aᵀ
/// from.
pub(crate) fn small_columns(x: MatrixView<'_>) -> Option<Vec<f64>> {
    (x.n_rows() * x.n_cols() <= COLUMNS_MAX_VALUES && columns_pay()).then(|| columns_of(x))
}

/// The seedings' memo of a BP-means fit: the start and the steps with grown seeds, the start
/// only with the paper's.
fn seed_memo(grow: bool) -> SeedMemo {
    if grow {
        SeedMemo::default()
    } else {
        SeedMemo::start_only()
    }
}

/// Read-back of the parameters, e.g. to show a builder's defaults.
impl FeatureValidParams {
    /// The penalty P (`None` for K-features).
    pub fn penalty(&self) -> Option<f64> {
        self.penalty
    }
    /// K (K-features) or the cap on K (the others), if any.
    pub fn k(&self) -> Option<usize> {
        self.k
    }
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
    /// How each run is seeded.
    pub fn seeding(&self) -> FeatureSeeding {
        self.seeding
    }
}
