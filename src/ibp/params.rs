//! The common entry point of the IBP samplers: `IbpSampler::params(kind)` → builder →
//! `.check()` → `.fit(&x)` → [`IbpFit`].

use super::accelerated::Accelerated;
use super::collapsed::Collapsed;
use super::common::{BlockFault, Hyper};
use super::dense::std_normal;
use super::hyper::{resample_alpha, resample_sigmas};
use super::missing::ColumnPosteriors;
use super::model::{a_posterior, collapsed_log_lik, log_ibp_prior};
use super::recode::RecodeFault;
use super::semi::SemiCollapsed;
use super::split_merge::{self, Fault, Marginal};
use super::state::Feats;
use crate::MatrixView;
use crate::RowMatrix;
use crate::error::{FitError, ParamError, check_data};
use crate::eval::HiddenEntries;
use crate::features::BinaryMatrix;
use crate::features::model::assign_rows_shifted;
use crate::generate::ibp_restaurant;
use crate::model::{Fit, Model, Stop, check_new_rows};
use crate::restarts::Observer;
use crate::restarts::run_rng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Which IBP sampler to run.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IbpKind {
    /// Collapsed Gibbs (G&G 2006; D-V&G §3), A integrated out, rank-one updates.
    Collapsed,
    /// Semi-collapsed Gibbs (D-V&G §3, footnote 1): A instantiated, new features collapsed.
    SemiCollapsed,
    /// Accelerated Gibbs (D-V&G §4, Algorithm 1), windows of W rows.
    Accelerated,
}

impl IbpKind {
    /// The name the command line uses: `ibp-gibbs`, `ibp-semicollapsed`, `ibp-accelerated`.
    pub fn name(self) -> &'static str {
        match self {
            IbpKind::Collapsed => "ibp-gibbs",
            IbpKind::SemiCollapsed => "ibp-semicollapsed",
            IbpKind::Accelerated => "ibp-accelerated",
        }
    }
}

/// The rules the samplers and MEIBP share, in this order: α, then σ_X and σ_A when given,
/// must be positive finite numbers, and at least one iteration is needed.
pub(crate) fn check_shared(
    alpha: f64,
    sigma_x: Option<f64>,
    sigma_a: Option<f64>,
    iterations: usize,
) -> Result<(), ParamError> {
    let positive = |name: &'static str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(ParamError::NotPositive { name, value: v })
        }
    };
    positive("alpha", alpha)?;
    if let Some(s) = sigma_x {
        positive("sigma-x", s)?;
    }
    if let Some(s) = sigma_a {
        positive("sigma-a", s)?;
    }
    if iterations == 0 {
        return Err(ParamError::NoIterations);
    }
    Ok(())
}

/// How a chain starts when no Z is given.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IbpStart {
    /// Z with no feature.
    Empty,
    /// Z drawn from the IBP(α) prior on the chain's stream.
    Prior,
    /// Empty, except where σ_X is fixed at or above the defaults' starting σ_X (so it is
    /// neither annealed nor tempered, [`IbpParams::anneal`]): there chains on odd streams
    /// start from a prior draw and chains on even streams (chain 0, the single chain of a
    /// fit, among them) empty. At such a σ_X no single row may pay for a feature, so an empty
    /// chain can stay at K = 0 for good, while a prior draw can keep features that do not pay;
    /// the fit answers with the better chain and R̂ reports that they disagree. Where σ_X is
    /// annealed, chains from prior draws recover block images less often than empty ones
    /// (docs/ibp.md, "Mixed starts"), so every chain starts empty.
    Mixed,
}

impl IbpStart {
    /// The name used on the command line (`--init`) and in Python (`init=`).
    pub fn name(self) -> &'static str {
        match self {
            IbpStart::Empty => "empty",
            IbpStart::Prior => "prior",
            IbpStart::Mixed => "mixed",
        }
    }
}

/// The defaults of the IBP samplers — one source for the library and the command line.
///
/// [`IbpDefaults::TUNED`] is what `IbpSampler::params` and `madbayes fit` use;
/// [`IbpDefaults::PLAIN`] is the paper's plain sampler (D-V&G §5: fixed α = 2,
/// σ_X = 0.25σ, σ_A = 0.75σ, an empty start, single-entry Gibbs moves only), one call
/// ([`IbpParams::plain`]) or one flag (`--plain`) away.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IbpDefaults {
    /// α, or its starting value when it is resampled.
    pub alpha: f64,
    /// σ_X (or its starting value) as a fraction of σ, the standard deviation of all
    /// entries of X.
    pub sigma_x_fraction: f64,
    /// σ_A (or its starting value) as a fraction of σ.
    pub sigma_a_fraction: f64,
    /// Sweeps.
    pub iterations: usize,
    /// Whether the hyperparameters the user does not give are resampled every sweep.
    pub resample: bool,
    /// Where the chain starts.
    pub start: IbpStart,
    /// Split–merge attempts after every sweep, and as many recoding attempts (module `recode`).
    pub split_merge: usize,
    /// Size of each row's joint block update (0: none).
    pub block: usize,
    /// The first fraction of the sweeps in which a resampled σ_X is held above a floor that
    /// falls geometrically from its starting value to `ANNEAL_END` of it, and a fixed σ_X
    /// is resampled above it and that floor (falling from `sigma_x_fraction` σ) before it is
    /// fixed (0: none); see [`IbpParams::anneal`].
    pub anneal: f64,
}

/// Where the annealing floor on σ_X ends, as a fraction of σ_X's starting value.
pub const ANNEAL_END: f64 = 0.05;

/// The floor on a resampled σ_X after sweep `it` (from 1) of a chain whose first `fraction`
/// of `iterations` sweeps are annealed from σ_X = `start`: `start` · `ANNEAL_END`^(it / T),
/// T = `fraction` · `iterations`, while it < T; 0 after.
pub(crate) fn anneal_floor(start: f64, it: usize, iterations: usize, fraction: f64) -> f64 {
    let end = fraction * iterations as f64;
    if (it as f64) < end {
        start * ANNEAL_END.powf(it as f64 / end)
    } else {
        0.0
    }
}

impl IbpDefaults {
    /// The defaults, chosen by measurement on generated block images (docs/ibp.md): α, σ_X
    /// and σ_A resampled unless given (Gamma(1, 1) on α; IG(1, v) on the variances, v the
    /// data's variance), starting from α = 1, σ_X = σ (a chain that starts with a large
    /// noise level builds the coarse features first and lets the resampling shrink σ_X;
    /// started at 0.25σ it freezes in many small features at low noise), σ_A = 0.75σ; a
    /// mixed start ([`IbpStart::Mixed`]: empty, but chains 1, 3, … from a prior draw when σ_X
    /// is fixed at or above σ); 10 split–merge and 10 recoding attempts after every sweep and
    /// a joint update of each row on 3 features; σ_X annealed over the first quarter of the
    /// sweeps (a given σ_X resampled above it over those sweeps, then fixed, and a given σ_A
    /// beside it resampled over them, then fixed); 1000 sweeps.
    pub const TUNED: Self = Self {
        alpha: 1.0,
        sigma_x_fraction: 1.0,
        sigma_a_fraction: 0.75,
        iterations: 1000,
        resample: true,
        start: IbpStart::Mixed,
        split_merge: 10,
        block: 3,
        anneal: 0.25,
    };
    /// The paper's plain sampler (D-V&G §5): α = 2, σ_X = 0.25σ, σ_A = 0.75σ, all fixed, an
    /// empty start, no split–merge, no block update, no annealing, 1000 sweeps.
    pub const PLAIN: Self = Self {
        alpha: 2.0,
        sigma_x_fraction: 0.25,
        sigma_a_fraction: 0.75,
        iterations: 1000,
        resample: false,
        start: IbpStart::Empty,
        split_merge: 0,
        block: 0,
        anneal: 0.0,
    };
}

/// Entry point: `IbpSampler::params(kind)`.
pub struct IbpSampler;

impl IbpSampler {
    /// Parameters of an IBP sampler with the defaults [`IbpDefaults::TUNED`]: σ is the
    /// standard deviation of all entries of X (computed at fit time unless both σ's are
    /// given), seed 0, window W = 1 (accelerated only; the optimal W by D-V&G §4.1), at most
    /// 4 new features per row and step (`k_new_max`, the truncation of Eq. 4 — under
    /// α/N ≤ 1 the Poisson mass beyond 4 is below 0.4%, and far smaller for the usual
    /// α/N ≪ 1). [`plain`](IbpParams::plain) switches to [`IbpDefaults::PLAIN`].
    pub fn params(kind: IbpKind) -> IbpParams {
        IbpParams(IbpValidParams {
            kind,
            base: IbpDefaults::TUNED,
            alpha: None,
            sigma_x: None,
            sigma_a: None,
            iterations: None,
            seed: 0,
            window: None,
            k_new_max: 4,
            refresh: 1,
            resample_alpha: None,
            resample_sigma_x: None,
            resample_sigma_a: None,
            start: None,
            split_merge: None,
            fault: Fault::None,
            recode: None,
            recode_fault: RecodeFault::None,
            block: None,
            block_fault: BlockFault::None,
            anneal: None,
        })
    }
}

/// Unchecked parameters of an IBP sampler (a builder).
#[derive(Clone, Debug)]
pub struct IbpParams(IbpValidParams);

/// IBP-sampler parameters that passed [`IbpParams::check`].
#[derive(Clone, Debug)]
pub struct IbpValidParams {
    kind: IbpKind,
    base: IbpDefaults,
    alpha: Option<f64>,
    sigma_x: Option<f64>,
    sigma_a: Option<f64>,
    iterations: Option<usize>,
    seed: u64,
    window: Option<usize>,
    k_new_max: usize,
    refresh: usize,
    resample_alpha: Option<bool>,
    resample_sigma_x: Option<bool>,
    resample_sigma_a: Option<bool>,
    start: Option<Start>,
    split_merge: Option<usize>,
    fault: Fault,
    recode: Option<usize>,
    recode_fault: RecodeFault,
    block: Option<usize>,
    block_fault: BlockFault,
    anneal: Option<f64>,
}

/// Where a chain starts.
#[derive(Clone, Debug)]
enum Start {
    /// Z with no feature.
    Empty,
    /// Z drawn from the IBP(α) prior on the chain's stream.
    Prior,
    /// Empty, or a prior draw on odd streams at a high fixed σ_X ([`IbpStart::Mixed`]).
    Mixed,
    /// A given Z (`N × K`, non-zero entries count as 1).
    Given(RowMatrix),
}

impl From<IbpStart> for Start {
    fn from(start: IbpStart) -> Self {
        match start {
            IbpStart::Empty => Start::Empty,
            IbpStart::Prior => Start::Prior,
            IbpStart::Mixed => Start::Mixed,
        }
    }
}

impl IbpParams {
    /// The paper's plain sampler ([`IbpDefaults::PLAIN`]): fixed α = 2, σ_X = 0.25σ,
    /// σ_A = 0.75σ, an empty start, single-entry Gibbs moves only. Options set on the builder
    /// still apply.
    pub fn plain(mut self) -> Self {
        self.0.base = IbpDefaults::PLAIN;
        self
    }
    /// The IBP concentration α; giving it fixes α unless resampling is asked for
    /// explicitly ([`resample_alpha`](Self::resample_alpha)).
    pub fn alpha(mut self, a: f64) -> Self {
        self.0.alpha = Some(a);
        self
    }
    /// The noise standard deviation σ_X (default: resampled from 1 × the data's standard
    /// deviation; 0.25 × fixed for [`plain`](Self::plain));
    /// giving it fixes σ_X unless resampling is asked for explicitly.
    pub fn sigma_x(mut self, s: f64) -> Self {
        self.0.sigma_x = Some(s);
        self
    }
    /// The feature standard deviation σ_A (default 0.75 × the data's standard deviation);
    /// giving it fixes σ_A unless resampling is asked for explicitly.
    pub fn sigma_a(mut self, s: f64) -> Self {
        self.0.sigma_a = Some(s);
        self
    }
    /// Number of sweeps (default 1000).
    pub fn iterations(mut self, n: usize) -> Self {
        self.0.iterations = Some(n);
        self
    }
    /// Seed of all randomness (the chain draws from `run_rng(seed, 0)`).
    pub fn seed(mut self, s: u64) -> Self {
        self.0.seed = s;
        self
    }
    /// Rows per window of the accelerated sampler (default 1); refused by the others.
    pub fn window(mut self, w: usize) -> Self {
        self.0.window = Some(w);
        self
    }
    /// Truncation of the new-feature step (Eq. 4): at most this many new features per row
    /// (0 keeps the chain from ever creating a feature).
    pub fn k_new_max(mut self, k: usize) -> Self {
        self.0.k_new_max = k;
        self
    }
    /// Recompute the incrementally updated matrices (M⁻¹ or P, h) from Z every this many
    /// sweeps; 0 never does (default 1).
    pub fn refresh_every(mut self, sweeps: usize) -> Self {
        self.0.refresh = sweeps;
        self
    }
    /// Resample (`true`) or fix (`false`) all of α (prior Gamma(1, 1)), σ_X and σ_A
    /// (inverse-gamma IG(1, v) priors on the variances, v the data's variance; module
    /// `hyper`), whether given or not; resampled, the given or default values are only the
    /// starting point. Without this call, the hyperparameters that are not given are
    /// resampled (default) and the given ones are fixed.
    pub fn resample_hyper(mut self, on: bool) -> Self {
        self.0.resample_alpha = Some(on);
        self.0.resample_sigma_x = Some(on);
        self.0.resample_sigma_a = Some(on);
        self
    }
    /// Resample (`true`) or fix (`false`) α (Gamma(1, 1) prior) after every sweep.
    pub fn resample_alpha(mut self, on: bool) -> Self {
        self.0.resample_alpha = Some(on);
        self
    }
    /// Resample (`true`) or fix (`false`) σ_X and σ_A (IG(1, v) priors on the variances)
    /// after every sweep.
    pub fn resample_sigmas(mut self, on: bool) -> Self {
        self.0.resample_sigma_x = Some(on);
        self.0.resample_sigma_a = Some(on);
        self
    }
    /// Start the chain from a Z drawn from the IBP(α) prior (the Indian-buffet restaurant,
    /// on the chain's own random stream) instead of an empty Z: chains with different seeds
    /// then start from different places, as D-V&G's 5 chains do (§6).
    pub fn start_from_prior(mut self, on: bool) -> Self {
        self.0.start = Some(if on { Start::Prior } else { Start::Empty });
        self
    }
    /// Where the chain starts when no Z is given ([`IbpStart`]; the default is the base's,
    /// [`IbpStart::Mixed`] for [`IbpDefaults::TUNED`]).
    pub fn start(mut self, start: IbpStart) -> Self {
        self.0.start = Some(Start::from(start));
        self
    }
    /// Start the chain from the given Z (`N × K`, non-zero entries count as 1; columns no
    /// row holds are dropped), e.g. the answer of BP-means, or the true Z of generated data
    /// to check that a chain stays in the posterior's bulk. Its row count must match the
    /// data's (checked at fit time).
    pub fn start_from(mut self, z: RowMatrix) -> Self {
        self.0.start = Some(Start::Given(z));
        self
    }
    /// Split–merge Metropolis–Hastings attempts after every sweep (0: none). Each draws two
    /// rows and a feature of each, and proposes to split the feature when both rows hold the
    /// same one, or to merge the two otherwise; the new allocation is drawn by sequential
    /// allocation and scored on the collapsed marginal (module `split_merge`). The moves leave
    /// the posterior unchanged and let a chain leave modes that single-entry Gibbs moves
    /// cannot: a feature that is the sum of two true ones, or two halves of one.
    pub fn split_merge(mut self, attempts: usize) -> Self {
        self.0.split_merge = Some(attempts);
        self
    }
    /// Recoding Metropolis–Hastings attempts after every sweep (default: as many as the
    /// split–merge attempts, so `split_merge(0)` turns both off; module `recode`):
    /// three disjoint features P, Q, B proposed as P ∪ B, Q ∪ B and back, and two disjoint or
    /// nested features rewritten as another pair with the same row means. They leave the
    /// posterior unchanged and undo what the split–merge moves cannot: a feature that stands
    /// for the sum of others held by the rows that hold both.
    pub fn recode(mut self, attempts: usize) -> Self {
        self.0.recode = Some(attempts);
        self
    }
    /// After its single-entry updates, each row also draws its entries on a block of this
    /// many shared features jointly, from their conditional over all 2^b values (0 or 1:
    /// no block step). The block is drawn uniformly for each row. Two features that take the
    /// place of their sum, or a feature and its negative correction, are then one step apart
    /// for a row instead of a valley apart.
    pub fn block(mut self, b: usize) -> Self {
        self.0.block = Some(b);
        self
    }
    /// Anneal σ_X over the first `fraction` of the sweeps (default 0.25; 0 for none; at most
    /// 0.5, the burn-in of [`fit_chains`](IbpValidParams::fit_chains)): while σ_X is resampled,
    /// each draw is raised to at least a floor that starts at σ_X's starting value and falls
    /// geometrically to 1/20 of it, after which σ_X moves freely. A chain then builds coarse
    /// features while the likelihood is flat and sharpens them as the floor falls, instead of
    /// freezing in a mode of fragments or sums when σ_X reaches the noise level early. The
    /// annealed sweeps are not draws from the posterior; the sweeps after them are, as the
    /// floor is gone. A fixed σ_X ([`sigma_x`](Self::sigma_x) without
    /// [`resample_hyper`](Self::resample_hyper)) is tempered: over the same sweeps it starts
    /// at the defaults' start (1σ, the data's standard deviation) and is resampled like a free
    /// one, held above both the floor (falling from 1σ) and the fixed value; after them it is
    /// the fixed value (no effect when that is above 1σ). A σ_A fixed beside a tempered σ_X
    /// is resampled freely over those sweeps and fixed after them. A chain given its starting Z
    /// ([`start_from`](Self::start_from)) is not annealed unless this is called.
    pub fn anneal(mut self, fraction: f64) -> Self {
        self.0.anneal = Some(fraction);
        self
    }
    /// A deliberately wrong acceptance ratio of the split–merge move, for the tests that show
    /// the exact-posterior checks catch it.
    #[doc(hidden)]
    pub fn split_merge_fault(mut self, fault: Fault) -> Self {
        self.0.fault = fault;
        self
    }
    /// A deliberately wrong acceptance ratio of the recoding move, for the tests that show
    /// the exact-posterior checks catch it.
    #[doc(hidden)]
    pub fn recode_fault(mut self, fault: RecodeFault) -> Self {
        self.0.recode_fault = fault;
        self
    }
    /// A deliberately wrong weight of the joint block update, for the tests that show the
    /// exact-posterior checks catch it.
    #[doc(hidden)]
    pub fn block_fault(mut self, fault: BlockFault) -> Self {
        self.0.block_fault = fault;
        self
    }
    /// Checks the rules that hold for any data.
    pub fn check(self) -> Result<IbpValidParams, ParamError> {
        let p = self.0;
        check_shared(
            p.alpha.unwrap_or(p.base.alpha),
            p.sigma_x,
            p.sigma_a,
            p.iterations(),
        )?;
        if let Some(f) = p.anneal
            && !(0.0..=0.5).contains(&f)
        {
            return Err(ParamError::AnnealFraction(f));
        }
        match p.window {
            Some(0) => return Err(ParamError::ZeroWindow),
            Some(_) if p.kind != IbpKind::Accelerated => {
                return Err(ParamError::NotApplicable {
                    option: "window",
                    algo: p.kind.name(),
                });
            }
            _ => {}
        }
        Ok(p)
    }
}

/// One record of the trace, taken after each sweep.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IbpTraceRecord {
    /// Sweep number, from 1.
    pub iteration: usize,
    /// Wall-clock seconds spent sampling up to and including this sweep (the sweeps and
    /// hyperparameter steps; the trace's own log-joint evaluations are not counted).
    pub seconds: f64,
    /// Number of features K.
    pub k: usize,
    /// log p(X | Z) + log P(\[Z\]) with A integrated out (Eq. 5 plus Eq. 1), under the
    /// hyperparameters of this record.
    pub log_joint: f64,
    /// α after the sweep (changes only with resampling).
    pub alpha: f64,
    /// σ_X after the sweep.
    pub sigma_x: f64,
    /// σ_A after the sweep.
    pub sigma_a: f64,
}

/// The state of an IBP chain after its last sweep.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Debug)]
pub struct IbpFit {
    kind: IbpKind,
    z: BinaryMatrix,
    a: RowMatrix,
    records: Vec<IbpTraceRecord>,
    neg_log_joint: Vec<f64>,
    alpha: f64,
    sigma_x: f64,
    sigma_a: f64,
    n_train: usize,
}

impl IbpFit {
    fn new(
        kind: IbpKind,
        z: &RowMatrix,
        a: RowMatrix,
        records: Vec<IbpTraceRecord>,
        h: &Hyper,
    ) -> Self {
        Self {
            kind,
            z: BinaryMatrix::from_row_matrix(z),
            a,
            neg_log_joint: records.iter().map(|r| -r.log_joint).collect(),
            records,
            alpha: h.alpha,
            sigma_x: h.sigma_x,
            sigma_a: h.sigma_a,
            n_train: z.n_rows(),
        }
    }
    /// The sampler that produced the fit.
    pub fn kind(&self) -> IbpKind {
        self.kind
    }
    /// One record per sweep: K, the log joint, the hyperparameters and the time spent.
    pub fn records(&self) -> &[IbpTraceRecord] {
        &self.records
    }
    /// log p(X, Z) of the final state (A integrated out, at the final hyperparameters).
    pub fn log_joint(&self) -> f64 {
        self.records.last().map_or(f64::NAN, |r| r.log_joint)
    }
    /// The final α (the given one unless resampled).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// The final σ_X (given, derived from the data, or resampled).
    pub fn sigma_x(&self) -> f64 {
        self.sigma_x
    }
    /// The final σ_A (given, derived from the data, or resampled).
    pub fn sigma_a(&self) -> f64 {
        self.sigma_a
    }
}

impl Model for IbpFit {
    /// The final Z (`N × K`).
    fn z(&self) -> BinaryMatrix {
        self.z.clone()
    }
    /// The posterior mean of A given the final Z, M⁻¹ZᵀX (`K × D`); after
    /// [`fit_imputing`](IbpValidParams::fit_imputing), each column's mean given its visible
    /// entries only ([`ColumnPosteriors::mean_a`]).
    fn means(&self) -> &RowMatrix {
        &self.a
    }
    /// −log p(X, Z) of the final state.
    fn objective(&self) -> f64 {
        -self.log_joint()
    }
    /// −log p(X, Z) after each sweep.
    fn trace(&self) -> &[f64] {
        &self.neg_log_joint
    }
    /// Sweeps run.
    fn n_iter(&self) -> usize {
        self.records.len()
    }
    /// Always [`Stop::Sweeps`]: a chain runs the sweeps it is given.
    fn stop(&self) -> Stop {
        Stop::Sweeps
    }
    /// The most probable z of each new row given the posterior mean of A, under noise σ_X
    /// and the training rows' feature frequencies P(z_k = 1) = m_k / (N + 1) (the IBP's
    /// predictive probability that one more customer takes dish k; new dishes are not opened).
    fn predict_z(&self, x: MatrixView<'_>) -> Result<BinaryMatrix, FitError> {
        check_new_rows(x, self.a.n_cols())?;
        let shift = frequency_shift(&self.z.col_sums(), self.n_train, self.sigma_x);
        Ok(assign_rows_shifted(x, &self.a, Some(&shift)))
    }
}

/// σ² logit(m_k / (N + 1)) for each feature: the shift of A x_n that turns the least-squares
/// choice of z into the most probable one under noise σ and priors m_k / (N + 1).
pub(crate) fn frequency_shift(m: &[usize], n: usize, sigma: f64) -> Vec<f64> {
    let total = n as f64 + 1.0;
    m.iter()
        .map(|&mk| {
            // A column no training row holds (none survives a fit) counts as held half a time.
            let p = (mk as f64).max(0.5) / total;
            sigma * sigma * (p / (1.0 - p)).ln()
        })
        .collect()
}

/// The standard deviation of all entries of X (about their mean).
pub fn data_std(x: MatrixView<'_>) -> f64 {
    let v = x.as_slice();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (v.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / n).sqrt()
}

enum Chain {
    Collapsed(Collapsed),
    Semi(SemiCollapsed),
    Accelerated(Accelerated),
}

impl Chain {
    fn sweep(&mut self, x: &RowMatrix, rng: &mut ChaCha8Rng) {
        match self {
            Chain::Collapsed(c) => c.sweep(x, rng),
            Chain::Semi(c) => c.sweep(x, rng),
            Chain::Accelerated(c) => c.sweep(x, rng),
        }
    }
    /// New hyperparameters or a new Z: the sampler's own state recomputed, from `gram` =
    /// (ZᵀZ, ZᵀX) of the current Z and `x` when given.
    fn set_hyper(&mut self, x: &RowMatrix, h: Hyper, gram: Option<(&[f64], &[f64])>) {
        match self {
            Chain::Collapsed(c) => c.set_hyper(x, h, gram),
            Chain::Semi(c) => c.set_hyper(h),
            Chain::Accelerated(c) => c.set_hyper(x, h, gram),
        }
    }
    fn feats(&self) -> &Feats {
        match self {
            Chain::Collapsed(c) => &c.feats,
            Chain::Semi(c) => &c.feats,
            Chain::Accelerated(c) => &c.feats,
        }
    }
    /// Split–merge and recoding attempts on the chain's Z. Returns whether one was accepted
    /// (the sampler's own state must then be recomputed: [`Chain::set_hyper`]; the
    /// semi-collapsed sampler redraws A at the start of every sweep anyway) and the Gram
    /// matrices of the Z they leave.
    fn split_merge(
        &mut self,
        x: &RowMatrix,
        h: Hyper,
        attempts: (usize, usize),
        faults: (Fault, RecodeFault),
        rng: &mut ChaCha8Rng,
    ) -> (bool, Option<Marginal>) {
        let feats = match self {
            Chain::Collapsed(c) => &mut c.feats,
            Chain::Semi(c) => &mut c.feats,
            Chain::Accelerated(c) => &mut c.feats,
        };
        let (accepted, gram) = split_merge::run(
            x, feats, &h, attempts.0, attempts.1, faults.0, faults.1, rng,
        );
        (accepted > 0, gram)
    }
}

impl Fit for IbpValidParams {
    type Model = IbpFit;

    /// Runs the chain; `observer` hears of every sweep.
    fn fit_observed(&self, x: MatrixView<'_>, observer: &dyn Observer) -> Result<IbpFit, FitError> {
        observer.start(self.iterations());
        self.fit_with(x, &mut |_, _| observer.run_finished())
    }
}

impl IbpValidParams {
    /// The sampler.
    pub fn kind(&self) -> IbpKind {
        self.kind
    }

    /// Number of sweeps.
    pub fn iterations(&self) -> usize {
        self.iterations.unwrap_or(self.base.iterations)
    }

    /// The same parameters with the chain starting from `z` (as
    /// [`IbpParams::start_from`]; its shape is checked at fit time).
    pub fn with_start(mut self, z: RowMatrix) -> Self {
        self.start = Some(Start::Given(z));
        self
    }

    /// Whether α, σ_X and σ_A are resampled (an explicit choice, else the defaults':
    /// resampled unless given).
    pub fn resampled(&self) -> (bool, bool, bool) {
        let auto = |given: bool| self.base.resample && !given;
        (
            self.resample_alpha.unwrap_or(auto(self.alpha.is_some())),
            self.resample_sigma_x
                .unwrap_or(auto(self.sigma_x.is_some())),
            self.resample_sigma_a
                .unwrap_or(auto(self.sigma_a.is_some())),
        )
    }

    /// [`fit`](Self::fit), calling `each(record, z)` after every sweep with the current Z.
    pub fn fit_with(
        &self,
        x: MatrixView<'_>,
        each: &mut dyn FnMut(&IbpTraceRecord, &RowMatrix),
    ) -> Result<IbpFit, FitError> {
        self.run(x, None, 0, each)
    }

    /// [`fit_with`](Self::fit_with) on the random stream `stream` of the seed (chain c of
    /// several draws from stream c; a single chain from stream 0).
    pub(crate) fn fit_stream(
        &self,
        x: MatrixView<'_>,
        stream: u64,
        each: &mut dyn FnMut(&IbpTraceRecord, &RowMatrix),
    ) -> Result<IbpFit, FitError> {
        self.run(x, None, stream, each)
    }

    /// Runs the chain on `x` with the entries of `hidden` unseen (the missing-entry protocol
    /// of D-V&G §6): their values in `x` are never read. They start at the mean of their
    /// column's visible entries and are imputed after every sweep by a Gibbs step on the
    /// completed data, A ~ p(A | Z, X) then x_nd ~ N(z_n a_d, σ_X²) for each hidden entry;
    /// the sampler's own state is then recomputed from the completed X. Each record's
    /// `log_joint` is log p(X_O | Z) + log P(\[Z\]) over the visible entries X_O only
    /// ([`ColumnPosteriors`]), and σ_X, σ_A default to 0.25 and 0.75 × the standard deviation
    /// of the visible entries. `each(record, z)` is called after every sweep; score the
    /// hidden entries there with [`ColumnPosteriors::score`].
    pub fn fit_imputing(
        &self,
        x: &RowMatrix,
        hidden: &HiddenEntries,
        each: &mut dyn FnMut(&IbpTraceRecord, &RowMatrix),
    ) -> Result<IbpFit, FitError> {
        if (hidden.n_rows(), hidden.n_cols()) != (x.n_rows(), x.n_cols()) {
            return Err(FitError::Shape(format!(
                "the hidden entries are for a {} × {} matrix but the data are {} × {}",
                hidden.n_rows(),
                hidden.n_cols(),
                x.n_rows(),
                x.n_cols()
            )));
        }
        self.run(x.view(), Some(hidden), 0, each)
    }

    fn run(
        &self,
        x: MatrixView<'_>,
        hidden: Option<&HiddenEntries>,
        stream: u64,
        each: &mut dyn FnMut(&IbpTraceRecord, &RowMatrix),
    ) -> Result<IbpFit, FitError> {
        let mut work = match hidden {
            Some(h) => h.fill_column_means(x),
            None => x.to_owned(),
        };
        check_data(&work)?;
        // The data's scale: the defaults' σ's, the tempering's start and the variances' prior.
        let data_sd = visible_std(x, hidden);
        let (sigma_x, sigma_a) = match (self.sigma_x, self.sigma_a) {
            (Some(sx), Some(sa)) => (sx, sa),
            (sx, sa) => {
                if data_sd <= 0.0 {
                    return Err(FitError::Degenerate(
                        "the data have zero standard deviation, so the default sigma-x and \
                         sigma-a are 0; give both explicitly"
                            .into(),
                    ));
                }
                (
                    sx.unwrap_or(self.base.sigma_x_fraction * data_sd),
                    sa.unwrap_or(self.base.sigma_a_fraction * data_sd),
                )
            }
        };
        let alpha = self.alpha.unwrap_or(self.base.alpha);
        let (re_alpha, re_sx, re_sa) = self.resampled();
        // A chain given its starting Z is not annealed unless asked: the floor would move it
        // away from that state.
        let given_start = matches!(self.start, Some(Start::Given(_)));
        let anneal = (self.anneal).unwrap_or(if given_start { 0.0 } else { self.base.anneal });
        // Where the annealing floor starts: a resampled σ_X's own start; for a fixed σ_X, the
        // defaults' start (`sigma_x_fraction` σ), and only if that is above it (`tempered`:
        // the chain starts there and σ_X is resampled above the fixed value while the floor
        // stands).
        let floor_start = if re_sx {
            sigma_x
        } else {
            self.base.sigma_x_fraction * data_sd
        };
        let tempered = !re_sx && anneal > 0.0 && floor_start > sigma_x;
        let mut hyper = Hyper {
            alpha,
            sigma_x: if tempered { floor_start } else { sigma_x },
            sigma_a,
            k_new_max: self.k_new_max,
            block: self.block.unwrap_or(self.base.block),
            block_fault: self.block_fault,
        };
        let split_merge = self.split_merge.unwrap_or(self.base.split_merge);
        let recode = self.recode.unwrap_or(split_merge);
        // The prior scale of the variances (module `hyper`).
        let scale = data_sd.powi(2);
        let n = x.n_rows();
        let mut rng = run_rng(self.seed, stream);
        let base_start = Start::from(self.base.start);
        // A mixed start puts a prior draw on odd streams only where σ_X is fixed at or above
        // the defaults' start, so that neither the annealing nor the tempering lowers it.
        let high_fixed_sx = !re_sx && sigma_x >= floor_start;
        let prior_draw = |rng: &mut _| Feats::from_matrix(&ibp_restaurant(n, alpha, rng));
        let feats = match self.start.as_ref().unwrap_or(&base_start) {
            Start::Empty => Feats::empty(n),
            Start::Mixed if stream.is_multiple_of(2) || !high_fixed_sx => Feats::empty(n),
            Start::Prior | Start::Mixed => prior_draw(&mut rng),
            Start::Given(z) if z.n_rows() == n && z.as_slice().iter().all(|v| v.is_finite()) => {
                Feats::from_matrix(z)
            }
            Start::Given(z) => {
                return Err(FitError::Shape(format!(
                    "the starting Z has {} rows (or a non-finite entry) but the data have {n} \
                     rows; give an N × K matrix of 0/1",
                    z.n_rows()
                )));
            }
        };
        let mut chain = match self.kind {
            IbpKind::Collapsed => {
                Chain::Collapsed(Collapsed::new(&work, feats, hyper, self.refresh))
            }
            IbpKind::SemiCollapsed => Chain::Semi(SemiCollapsed::new(feats, hyper)),
            IbpKind::Accelerated => Chain::Accelerated(Accelerated::new(
                &work,
                feats,
                hyper,
                self.window.unwrap_or(1),
                self.refresh,
            )),
        };
        let mut seconds = 0.0;
        let iterations = self.iterations();
        let mut trace = Vec::with_capacity(iterations);
        for it in 1..=iterations {
            let start = Instant::now();
            chain.sweep(&work, &mut rng);
            let (moved, gram) = if split_merge > 0 || recode > 0 {
                chain.split_merge(
                    &work,
                    hyper,
                    (split_merge, recode),
                    (self.fault, self.recode_fault),
                    &mut rng,
                )
            } else {
                (false, None)
            };
            let z = chain.feats().to_row_matrix();
            if re_alpha {
                hyper.alpha = resample_alpha(&z, &mut rng);
            }
            // While the floor stands, a fixed σ_X is resampled like a free one but held above
            // its fixed value too (`tempering`), and a fixed σ_A is resampled freely; once the
            // floor is gone both are their fixed values.
            let floor = anneal_floor(floor_start, it, iterations, anneal);
            let tempering = tempered && floor > 0.0;
            if re_sx || re_sa || tempering {
                let (sx, sa) =
                    resample_sigmas(&work, &z, hyper.sigma_x, hyper.sigma_a, scale, &mut rng);
                if re_sx {
                    hyper.sigma_x = sx.max(floor);
                }
                if tempering {
                    hyper.sigma_x = sx.max(floor).max(sigma_x);
                }
                if re_sa || tempering {
                    hyper.sigma_a = sa;
                }
            }
            let released = tempered
                && !tempering
                && (hyper.sigma_x != sigma_x || (!re_sa && hyper.sigma_a != sigma_a));
            if released {
                hyper.sigma_x = sigma_x;
                if !re_sa {
                    hyper.sigma_a = sigma_a;
                }
            }
            if let Some(h) = hidden {
                impute(&mut work, h, &z, &hyper, &mut rng);
            }
            if moved || re_alpha || re_sx || re_sa || tempering || released || hidden.is_some() {
                // The moves' Gram matrices are those of the final Z, unless imputation has
                // since changed X.
                let gram = gram
                    .as_ref()
                    .filter(|_| hidden.is_none())
                    .map(Marginal::gram);
                chain.set_hyper(&work, hyper, gram);
            }
            seconds += start.elapsed().as_secs_f64();
            let log_lik = match hidden {
                Some(h) => ColumnPosteriors::new(x, h, &z, hyper.sigma_x, hyper.sigma_a).log_lik(),
                None => collapsed_log_lik(x, &z, hyper.sigma_x, hyper.sigma_a),
            };
            let rec = IbpTraceRecord {
                iteration: it,
                seconds,
                k: z.n_cols(),
                log_joint: log_lik + log_ibp_prior(&z, hyper.alpha),
                alpha: hyper.alpha,
                sigma_x: hyper.sigma_x,
                sigma_a: hyper.sigma_a,
            };
            each(&rec, &z);
            trace.push(rec);
        }
        let z = chain.feats().to_row_matrix();
        let a = match hidden {
            Some(h) => ColumnPosteriors::new(x, h, &z, hyper.sigma_x, hyper.sigma_a).mean_a(),
            None => a_posterior(x, &z, hyper.sigma_x, hyper.sigma_a).mean,
        };
        Ok(IbpFit::new(self.kind, &z, a, trace, &hyper))
    }
}

/// The standard deviation of the entries of `x` that are not hidden.
fn visible_std(x: MatrixView<'_>, hidden: Option<&HiddenEntries>) -> f64 {
    match hidden {
        Some(h) => {
            let v = h.visible_values(x);
            data_std(RowMatrix::new(v.len(), 1, v).view())
        }
        None => data_std(x),
    }
}

/// The imputation step: A ~ p(A | Z, X) on the completed X, then each hidden x_nd ~
/// N(z_n a_d, σ_X²). A is drawn only to impute and is discarded: the samplers redraw it
/// (semi-collapsed) or integrate it out (collapsed, accelerated).
fn impute(
    work: &mut RowMatrix,
    hidden: &HiddenEntries,
    z: &RowMatrix,
    hyper: &Hyper,
    rng: &mut ChaCha8Rng,
) {
    let a = a_posterior(work.view(), z, hyper.sigma_x, hyper.sigma_a).draw(rng);
    for &(r, c) in hidden.entries() {
        let mean: f64 = (0..z.n_cols())
            .filter(|&f| z.row(r)[f] != 0.0)
            .map(|f| a.row(f)[c])
            .sum();
        work.row_mut(r)[c] = mean + hyper.sigma_x * std_normal(rng);
    }
}

/// Read-back of the parameters, e.g. to show a builder's defaults (the hyperparameters'
/// defaults are [`IbpDefaults`]).
impl IbpValidParams {
    /// Seed of all randomness.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Rows per window of the accelerated sampler, if given.
    pub fn window(&self) -> Option<usize> {
        self.window
    }
    /// Most new features per row and step.
    pub fn k_new_max(&self) -> usize {
        self.k_new_max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_rows_take_the_most_probable_z_under_the_training_frequencies() {
        // Two features, held by 3 and 1 of 4 training rows: P(z = 1) = 3/5 and 1/5.
        let z = RowMatrix::from_rows(&[[1.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]]);
        let a = RowMatrix::from_rows(&[[2.0, 0.0], [0.0, 2.0]]);
        let hyper = Hyper {
            alpha: 1.0,
            sigma_x: 1.0,
            sigma_a: 1.0,
            k_new_max: 4,
            block: 0,
            block_fault: BlockFault::None,
        };
        let record = IbpTraceRecord {
            iteration: 1,
            seconds: 0.0,
            k: 2,
            log_joint: -1.0,
            alpha: 1.0,
            sigma_x: 1.0,
            sigma_a: 1.0,
        };
        let fit = IbpFit::new(IbpKind::Collapsed, &z, a, vec![record], &hyper);
        // Rows halfway to each feature: least squares ties, so the prior decides: feature 0
        // (p = 3/5 > 1/2) is taken, feature 1 (p = 1/5) is not.
        let x = RowMatrix::from_rows(&[[1.0, 0.0], [0.0, 1.0]]);
        let got = fit.predict_z(x.view()).unwrap();
        assert_eq!(got.row(0), &[1, 0]);
        assert_eq!(got.row(1), &[0, 0]);
        // Near a feature the likelihood wins over a small prior: (0, 1.9) takes feature 1.
        let x = RowMatrix::from_rows(&[[0.0, 1.9]]);
        assert_eq!(fit.predict_z(x.view()).unwrap().row(0), &[0, 1]);
        // The shift is σ² logit(m/(N + 1)), and an unheld column counts half a row.
        let s = frequency_shift(&[3, 1, 0], 4, 2.0);
        assert!((s[0] - 4.0 * (1.5f64).ln()).abs() < 1e-12);
        assert!((s[1] - 4.0 * (0.25f64).ln()).abs() < 1e-12);
        assert!((s[2] - 4.0 * (0.1f64 / 0.9).ln()).abs() < 1e-12);
        assert_eq!(fit.stop(), Stop::Sweeps);
        assert_eq!(fit.objective(), 1.0);
    }

    #[test]
    fn parameter_rules() {
        let base = || IbpSampler::params(IbpKind::Collapsed);
        assert!(base().check().is_ok());
        assert!(matches!(
            base().alpha(0.0).check(),
            Err(ParamError::NotPositive { name: "alpha", .. })
        ));
        assert!(base().sigma_x(f64::NAN).check().is_err());
        assert!(base().sigma_a(-1.0).check().is_err());
        assert_eq!(
            base().iterations(0).check().unwrap_err(),
            ParamError::NoIterations
        );
        assert_eq!(
            base().window(0).check().unwrap_err(),
            ParamError::ZeroWindow
        );
        for bad in [-0.1, 0.51, f64::NAN] {
            assert!(matches!(
                base().anneal(bad).check(),
                Err(ParamError::AnnealFraction(_))
            ));
        }
        assert!(base().anneal(0.0).check().is_ok() && base().anneal(0.5).check().is_ok());
    }

    #[test]
    fn annealed_sweeps_hold_sigma_x_above_the_falling_floor_and_then_let_go() {
        assert_eq!(anneal_floor(2.0, 0, 100, 0.25), 2.0);
        assert!((anneal_floor(2.0, 25, 200, 0.25) - 2.0 * ANNEAL_END.sqrt()).abs() < 1e-12);
        assert_eq!(anneal_floor(2.0, 50, 200, 0.25), 0.0);
        assert_eq!(anneal_floor(2.0, 1, 200, 0.0), 0.0);
        // Block images at low noise: resampled freely, σ_X falls from the data's sd towards
        // 0.1 within the first sweeps; annealed over half of 40 sweeps, it stays above the
        // floor, and is free after.
        let x = crate::generate::block_images(60, 0.5, 0.1, 3).unwrap().x;
        let run = |anneal: f64| {
            IbpSampler::params(IbpKind::Collapsed)
                .iterations(40)
                .seed(5)
                .anneal(anneal)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap()
        };
        let start = data_std(x.view());
        let below = |fit: &IbpFit| {
            (fit.records().iter())
                .filter(|r| r.sigma_x < anneal_floor(start, r.iteration, 40, 0.5))
                .count()
        };
        let (free, annealed) = (run(0.0), run(0.5));
        assert!(
            below(&free) > 5,
            "the floor must bind for the test to mean anything"
        );
        assert_eq!(below(&annealed), 0);
        // Given a starting Z, the chain is not annealed unless asked.
        let given = |anneal: Option<f64>| {
            let p = IbpSampler::params(IbpKind::Collapsed)
                .iterations(40)
                .seed(5);
            let p = p.start_from(RowMatrix::zeros(x.n_rows(), 1));
            let p = match anneal {
                Some(f) => p.anneal(f),
                None => p,
            };
            p.check().unwrap().fit(&x).unwrap()
        };
        assert!(below(&given(None)) > 5);
        assert_eq!(below(&given(Some(0.5))), 0);
        let last = annealed.records().last().unwrap().sigma_x;
        assert!(
            last < 0.3 * start,
            "σ_X near the noise level (0.1) after the annealed sweeps: {last} (start {start})"
        );
    }

    #[test]
    fn a_fixed_sigma_x_is_tempered_down_to_its_value_and_then_held() {
        // Block images at noise 0.1, σ_X fixed at 0.1 (α, σ_A resampled), 100 sweeps.
        let run = |seed: u64, anneal: Option<f64>, sigma_x: f64| {
            let data = crate::generate::block_images(60, 0.5, 0.1, seed).unwrap();
            let p = IbpSampler::params(IbpKind::Collapsed)
                .sigma_x(sigma_x)
                .iterations(100)
                .seed(seed + 1000);
            let p = match anneal {
                Some(f) => p.anneal(f),
                None => p,
            };
            let fit = p.check().unwrap().fit(&data.x).unwrap();
            let truth = collapsed_log_lik(data.x.view(), &data.z, 0.1, fit.sigma_a())
                + log_ibp_prior(&data.z, fit.alpha());
            (fit, data_std(data.x.view()), truth)
        };
        // The schedule: for the first quarter of the sweeps σ_X is drawn and held above both
        // 0.1 and the floor falling from the default start σ; then it is 0.1; the fit's σ_X
        // is the fixed one.
        let (fit, sd, _) = run(1, None, 0.1);
        assert!(sd > 0.2, "the tempering must start above the fixed value");
        let mut drawn = 0;
        for r in fit.records() {
            let floor = anneal_floor(sd, r.iteration, 100, 0.25);
            if floor > 0.0 {
                assert!(r.sigma_x >= floor.max(0.1), "sweep {}", r.iteration);
                drawn += usize::from(r.sigma_x > floor.max(0.1));
            } else {
                assert_eq!(r.sigma_x, 0.1, "sweep {}", r.iteration);
            }
        }
        assert!(drawn > 0, "some draws stand above both bounds");
        assert!(fit.records()[0].sigma_x > 0.2);
        assert_eq!(fit.sigma_x(), 0.1);
        // No tempering with anneal 0, nor when the fixed value is above the default start.
        let (flat, _, _) = run(1, Some(0.0), 0.1);
        assert!(flat.records().iter().all(|r| r.sigma_x == 0.1));
        let (high, _, _) = run(1, None, 2.0 * sd);
        assert!(high.records().iter().all(|r| r.sigma_x == 2.0 * sd));
        // A σ_A fixed beside it is drawn freely over the tempered sweeps, then fixed; with σ_X
        // resampled (nothing tempered) or above the start it stays fixed throughout.
        let data = crate::generate::block_images(60, 0.5, 0.1, 1).unwrap();
        let both = |sigma_x: Option<f64>| {
            let p = IbpSampler::params(IbpKind::Collapsed)
                .sigma_a(1.0)
                .iterations(100)
                .seed(1001);
            let p = match sigma_x {
                Some(s) => p.sigma_x(s),
                None => p,
            };
            p.check().unwrap().fit(&data.x).unwrap()
        };
        let fit = both(Some(0.1));
        let tempered = |r: &&IbpTraceRecord| anneal_floor(sd, r.iteration, 100, 0.25) > 0.0;
        let (during, after): (Vec<&IbpTraceRecord>, Vec<_>) =
            fit.records().iter().partition(tempered);
        assert!(during.iter().filter(|r| r.sigma_a != 1.0).count() > during.len() / 2);
        assert!(after.iter().all(|r| r.sigma_a == 1.0 && r.sigma_x == 0.1));
        assert_eq!(fit.sigma_a(), 1.0);
        for untempered in [both(None), both(Some(2.0 * sd))] {
            assert!(untempered.records().iter().all(|r| r.sigma_a == 1.0));
        }
        // What it buys: every tempered chain reaches the true Z's log joint, where chains at
        // the fixed σ_X from the first sweep stop hundreds of nats below it (measured: 0 of
        // these 4; docs/ibp.md, "A fixed σ_X tempered").
        let at_truth = |anneal: Option<f64>| {
            (1..=4)
                .filter(|&s| {
                    let (fit, _, truth) = run(s, anneal, 0.1);
                    fit.log_joint() >= truth - 1.0
                })
                .count()
        };
        assert_eq!(at_truth(None), 4);
        assert!(at_truth(Some(0.0)) <= 2);
    }

    #[test]
    fn data_rules_and_defaults() {
        let p = IbpSampler::params(IbpKind::Accelerated)
            .iterations(3)
            .check()
            .unwrap();
        assert!(p.fit(&RowMatrix::zeros(0, 2)).is_err());
        assert!(
            p.fit(&RowMatrix::from_rows(&[[1.0, 1.0], [1.0, 1.0]]))
                .is_err()
        );
        let x = RowMatrix::from_rows(&[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
        let s = data_std(x.view());
        // The defaults resample σ_X and σ_A (and α) from their starting values.
        let fit = p.fit(&x).unwrap();
        assert_eq!(p.resampled(), (true, true, true));
        assert!((fit.sigma_x() - s).abs() > 1e-12);
        assert!((fit.sigma_a() - 0.75 * s).abs() > 1e-12);
        assert_eq!(fit.records().len(), 3);
        assert_eq!(fit.means().n_rows(), fit.k());
        // The plain sampler keeps them at 0.25σ and 0.75σ; a given value is fixed.
        let plain = IbpSampler::params(IbpKind::Accelerated)
            .plain()
            .iterations(3)
            .check()
            .unwrap();
        assert_eq!(plain.resampled(), (false, false, false));
        let fit = plain.fit(&x).unwrap();
        assert!((fit.sigma_x() - 0.25 * s).abs() < 1e-15);
        assert!((fit.sigma_a() - 0.75 * s).abs() < 1e-15);
        let given = IbpSampler::params(IbpKind::Accelerated)
            .sigma_x(0.3)
            .iterations(3)
            .check()
            .unwrap();
        assert_eq!(given.resampled(), (true, false, true));
        assert_eq!(given.fit(&x).unwrap().sigma_x(), 0.3);
    }

    #[test]
    fn imputing_never_reads_the_hidden_values() {
        let data = crate::generate::ibp_linear_gaussian(40, 5, 2.0, 1.0, 0.3, 3).unwrap();
        let hidden = HiddenEntries::scattered(40, 5, 30, 1).unwrap();
        let mut poisoned = data.x.clone();
        for &(r, c) in hidden.entries() {
            poisoned.row_mut(r)[c] = f64::NAN;
        }
        for kind in [
            IbpKind::Collapsed,
            IbpKind::SemiCollapsed,
            IbpKind::Accelerated,
        ] {
            let p = IbpSampler::params(kind)
                .iterations(20)
                .start_from_prior(true)
                .seed(4)
                .check()
                .unwrap();
            let a = p.fit_imputing(&data.x, &hidden, &mut |_, _| {}).unwrap();
            let b = p.fit_imputing(&poisoned, &hidden, &mut |_, _| {}).unwrap();
            assert_eq!(a.z(), b.z(), "{kind:?}");
            let same = |r: &IbpTraceRecord| (r.k, r.log_joint.to_bits(), r.sigma_x.to_bits());
            let (ta, tb): (Vec<_>, Vec<_>) = (
                a.records().iter().map(same).collect(),
                b.records().iter().map(same).collect(),
            );
            assert_eq!(ta, tb, "{kind:?}");
            assert!(a.records().iter().all(|r| r.log_joint.is_finite()));
            // A plain fit of the NaN data is refused.
            assert!(p.fit(&poisoned).is_err());
        }
        let wrong = HiddenEntries::scattered(41, 5, 30, 1).unwrap();
        let p = IbpSampler::params(IbpKind::Collapsed)
            .iterations(1)
            .check()
            .unwrap();
        assert!(p.fit_imputing(&data.x, &wrong, &mut |_, _| {}).is_err());
    }
}
