//! Feature k-means++ seeding (MAD-Bayes §5) in two forms, and a growth step beyond the paper.
//!
//! * [`FeatureSeeding::BaseFeature`] (the paper's text): feature 1 holds every point with
//!   a_1 = mean of X. Then repeatedly: e_n = ‖x_n − z_n A‖²; draw n with probability ∝ e_n;
//!   the new feature's mean is that point's residual r_n; every row m takes the feature
//!   (z_mk = 1) exactly when that lowers ‖x_m − z_m A‖².
//! * [`FeatureSeeding::Residual`] (the authors' MATLAB code): the same, but starting from no
//!   features, so even the first point is drawn with probability ∝ ‖x_n‖².
//!
//! With a fixed K (K-features) features are added until there are K (zero-mean, empty
//! features pad when every residual is already zero). With a penalty (BP-means) a drawn
//! feature is kept only while it lowers the BP-means objective ‖X − ZA‖² + K·P, i.e. while its
//! total error reduction exceeds P; in the paper the first draw that does not stops the
//! seeding.
//!
//! On noisy data that stopping rule ends the seeding early: one row's residual is that row's
//! part of a feature plus its noise, so as a mean it fits the other rows that hold the same
//! feature badly, and its gain stays below P although the feature, averaged over those rows,
//! would pay many times over (on `madbayes gen blocks --n 100 --p 0.5 --sigma-x 0.5` at
//! P = 30 the paper's seeding stops after the base feature in most runs). With `grow`
//! (the default, [`FeatureParams::grow_seeds`]) each drawn residual is first **grown** into
//! a feature (the rows it helps take it, its mean becomes their mean residual, repeated — a
//! one-feature k-means on the residuals) and the grown feature is tested; [`SEED_TRIES`]
//! draws that do not pay, not one, stop the seeding.
//!
//! [`FeatureParams::grow_seeds`]: crate::features::FeatureParams::grow_seeds

use super::kernels::ones_of;
use super::memo::{KeyMap, SharedMemo};
use super::refine::GROW_STEPS;
use super::zmat::BinaryMatrix;
use crate::MatrixView;
use crate::RowMatrix;
use crate::linalg::{
    dots_to_estimate, mean_row, sq_dist, sq_dists_at, sq_dists_to, sq_norm, sum_rows,
};
use crate::restarts::draw_weighted;
use rand_chacha::ChaCha8Rng;
use std::sync::{Arc, Mutex, OnceLock};

/// With a penalty and growth: draws whose grown feature does not pay before the seeding
/// stops.
pub const SEED_TRIES: usize = 3;

/// How runs are seeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FeatureSeeding {
    /// The paper's feature k-means++: a base feature holding every point at the mean of X,
    /// then residual draws.
    #[default]
    BaseFeature,
    /// The authors' MATLAB form: no base feature; the first draw is ∝ ‖x_n‖².
    Residual,
}

impl FeatureSeeding {
    /// The name used on the command line: `base` or `residual`.
    pub fn name(self) -> &'static str {
        match self {
            FeatureSeeding::BaseFeature => "base",
            FeatureSeeding::Residual => "residual",
        }
    }
}

/// When the seeding stops adding features.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SeedTarget {
    /// Exactly K features.
    Fixed(usize),
    /// While a feature lowers the BP-means objective with this penalty, at most `k_max`.
    Penalty { penalty: f64, k_max: usize },
}

/// A feature grown from residuals by [`grow_feature`].
#[derive(Clone, Debug)]
pub(crate) struct Grown {
    /// The feature's mean.
    pub mean: Vec<f64>,
    /// The rows that take it (their error drops).
    pub rows: Vec<bool>,
    /// Σ over those rows of the drop in ‖r_n‖².
    pub gain: f64,
    /// ‖r_n − mean‖² for the rows that take it, the bits of `sq_norm` of r_n − mean formed
    /// entry by entry (`sq_dist` has the same operations): their new errors. For the other
    /// rows, NaN or their distance: not to be read.
    pub dist: Vec<f64>,
}

/// Relative slack of the screen in [`take_rows`], in units of ε = `f64::EPSILON` per column
/// (see there).
const SCREEN_SLACK: f64 = 4.0;

/// Which rows take a feature with mean `c`: row n takes it when `sq_dist(r_n, c) < err_n`,
/// `err_n` being ‖r_n‖² as the seeding and the refinement form it (within (D + 1)·ε/2 of
/// the exact value, D = `c.len()`). Sets `rows` and returns whether any row changed.
///
/// Mostly decided without the distance: ‖r_n‖² − ‖r_n − c‖² = 2 r_n·c − ‖c‖², and an
/// estimate of r_n·c by fused multiply-adds ([`dots_to_estimate`], one operation per entry
/// where the distance takes three) decides every row whose estimated margin is larger than
/// `slack`·(D + 4)·ε·(err_n + ‖c‖²). That bounds, with room to spare, the rounding of the
/// estimate, of ‖c‖², of the distance and of err_n together (each within (D + 2)·ε/2 of a
/// sum of magnitudes at most (√err_n + ‖c‖)² ≤ 2·(err_n + ‖c‖²)), so there the distance
/// would decide alike. The rows inside it (near-ties, and NaN or infinite estimates) are
/// decided by the distance itself. So the rows are those of the distances' test, bit for
/// bit, on every CPU. (The nearest-centre screen of `linalg/screen.rs` rests on the
/// same expansion and a bound of the same form, (4D + 16)·ε/2·(‖x‖² + ‖c‖²); this one
/// compares with a given error, not between centres, so it cannot call that one.) The tests call this with other slacks to show that the screen is what
/// keeps them so.
fn take_rows(
    resid: MatrixView<'_>,
    err: &[f64],
    c: &[f64],
    rows: &mut [bool],
    dots: &mut Vec<f64>,
    slack: f64,
) -> bool {
    let (n, d) = (resid.n_rows(), resid.n_cols());
    dots.resize(n, 0.0);
    dots_to_estimate(resid.as_slice(), c, dots);
    // The screen's bound for row i: scale·(err_i + ‖c‖²) + floor, where below the normal
    // range each operation may lose up to the smallest subnormal.
    let bound = ScreenBound {
        cc: sq_norm(c),
        scale: slack * (d as f64 + 4.0) * f64::EPSILON,
        floor: 4.0 * (d as f64 + 4.0) * f64::MIN_POSITIVE,
    };
    // The rows the estimate decides, without a branch; the others (inside the bound, few)
    // keep their former choice until their distance decides them below.
    let mut sure = vec![false; n];
    let mut changed = decide_by_estimate(dots, err, bound, rows, &mut sure);
    for i in (0..n).filter(|&i| !sure[i]) {
        let take = sq_dist(resid.row(i), c) < err[i];
        changed |= take != rows[i];
        rows[i] = take;
    }
    changed
}

/// The screen's ‖c‖² and the two terms of its bound (see [`take_rows`]).
#[derive(Clone, Copy, Debug)]
struct ScreenBound {
    cc: f64,
    scale: f64,
    floor: f64,
}

/// [`take_rows`]' pass over every row: where the estimated margin 2·`dots[i]` − ‖c‖² is
/// outside ±(scale·(`err[i]` + ‖c‖²) + floor), marks the row in `sure` and sets it to
/// whether the margin is positive; the other rows are left as they are. Returns whether a
/// row it set changed. Compiled a second time with AVX-512F and chosen at run time (the
/// same operations lane for lane: no FMA, so the same decisions).
fn decide_by_estimate(
    dots: &[f64],
    err: &[f64],
    bound: ScreenBound,
    rows: &mut [bool],
    sure: &mut [bool],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        return unsafe { decide_by_estimate_avx512(dots, err, bound, rows, sure) };
    }
    decide_by_estimate_body(dots, err, bound, rows, sure)
}

/// [`decide_by_estimate`] compiled with AVX-512F: eight rows a step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn decide_by_estimate_avx512(
    dots: &[f64],
    err: &[f64],
    bound: ScreenBound,
    rows: &mut [bool],
    sure: &mut [bool],
) -> bool {
    decide_by_estimate_body(dots, err, bound, rows, sure)
}

#[inline(always)]
fn decide_by_estimate_body(
    dots: &[f64],
    err: &[f64],
    bound: ScreenBound,
    rows: &mut [bool],
    sure: &mut [bool],
) -> bool {
    let ScreenBound { cc, scale, floor } = bound;
    let n = rows.len();
    let (dots, err, sure) = (&dots[..n], &err[..n], &mut sure[..n]);
    let mut changed = false;
    for i in 0..n {
        let margin = 2.0 * dots[i] - cc;
        let bound = scale * (err[i] + cc) + floor;
        // False for a NaN margin.
        let certain = margin.abs() > bound;
        let take = margin > bound;
        changed |= certain & (take != rows[i]);
        rows[i] = if certain { take } else { rows[i] };
        sure[i] = certain;
    }
    changed
}

/// Grows one feature from the residual rows `resid` (errors `err` = ‖r_n‖²), starting from
/// the mean `start`: the rows whose error a feature with mean c would lower (‖r_n − c‖² <
/// ‖r_n‖²) take it, c becomes the mean residual of those rows, and so on for at most `steps`
/// mean updates or until the rows stop changing — a one-feature k-means on the residuals,
/// each step of which can only raise the total gain Σ_n max(0, ‖r_n‖² − ‖r_n − c‖²). With
/// `steps` = 0 the feature is `start` itself (the paper's seeding step). O(N·D) per step.
pub(crate) fn grow_feature(
    resid: MatrixView<'_>,
    err: &[f64],
    start: &[f64],
    steps: usize,
) -> Grown {
    let grown = grow_feature_shared(resid, err, start, steps, None);
    Arc::try_unwrap(grown).unwrap_or_else(|g| (*g).clone())
}

/// The growths of one fit's seedings, by where they stand ([`grow_feature_shared`]).
type Paths = SharedMemo<Arc<Grown>>;

/// [`grow_feature`], sharing the growths of other restarts in the same seeding state
/// (`paths`: their memo and the state's number). From its first mean update on, a growth is
/// a function of the state, the rows its last mean was taken over and the step it is at:
/// growths from different drawn rows that reach the same rows at the same step end alike,
/// so the rest is taken from the first that got there.
fn grow_feature_shared(
    resid: MatrixView<'_>,
    err: &[f64],
    start: &[f64],
    steps: usize,
    paths: Option<(&Paths, u64)>,
) -> Arc<Grown> {
    let (n, d) = (resid.n_rows(), resid.n_cols());
    let mut mean = start.to_vec();
    let mut rows = vec![false; n];
    let mut dots = Vec::new();
    let mut taken = Vec::new();
    let mut step = 0;
    // The keys of the points this growth passed, to remember its end under.
    let mut passed: Vec<Vec<u8>> = Vec::new();
    let end = |g: Grown, passed: Vec<Vec<u8>>| {
        let g = Arc::new(g);
        if let Some((memo, _)) = paths {
            let bytes = g.rows.len() + 8 * (g.mean.len() + g.dist.len()) + 64;
            passed
                .into_iter()
                .for_each(|key| memo.insert(key, g.clone(), bytes));
        }
        g
    };
    loop {
        if let (Some((memo, state)), true) = (paths, step > 0) {
            let mut key = Vec::with_capacity(16 + n.div_ceil(8));
            key.extend_from_slice(&state.to_le_bytes());
            key.extend_from_slice(&(step as u64).to_le_bytes());
            push_bits(&mut key, &rows);
            if let Some(g) = memo.get(&key) {
                passed
                    .into_iter()
                    .for_each(|k| memo.insert(k, g.clone(), 64));
                return g;
            }
            passed.push(key);
        }
        // The last pass allowed measures every row (its distances are needed for the rows
        // that take the feature anyway); the others screen ([`take_rows`]).
        let last = step == steps;
        let mut dist = Vec::new();
        let changed = if last {
            dist = vec![0.0; n];
            sq_dists_to(resid.as_slice(), &mean, &mut dist);
            let mut changed = false;
            for (i, row) in rows.iter_mut().enumerate() {
                let take = dist[i] < err[i];
                changed |= take != *row;
                *row = take;
            }
            changed
        } else {
            take_rows(resid, err, &mean, &mut rows, &mut dots, SCREEN_SLACK)
        };
        ones_of(&rows, &mut taken);
        let count = taken.len();
        if last || (step > 0 && !changed) || count == 0 {
            // The gain and the new errors of the rows that take it, exactly.
            if !last {
                let mut near = vec![0.0; taken.len()];
                sq_dists_at(resid.as_slice(), &taken, &mean, &mut near);
                dist = vec![f64::NAN; n];
                for (&i, e) in taken.iter().zip(near) {
                    dist[i] = e;
                }
            }
            let mut gain = 0.0;
            for &i in &taken {
                gain += err[i] - dist[i];
            }
            let grown = Grown {
                mean,
                rows,
                gain,
                dist,
            };
            return end(grown, passed);
        }
        let sum = sum_rows(resid.as_slice(), d, &taken);
        let inv = 1.0 / count as f64;
        mean = sum.into_iter().map(|s| s * inv).collect();
        step += 1;
    }
}

/// Appends `rows` to a memo's key, eight to a byte (all keys of one memo hold as many rows,
/// so distinct rows give distinct bytes): keys an eighth as long to hash and compare.
fn push_bits(key: &mut Vec<u8>, rows: &[bool]) {
    key.extend(
        rows.chunks(8)
            .map(|c| c.iter().rev().fold(0u8, |b, &t| (b << 1) | u8::from(t))),
    );
}

/// Where every seeding on `x` starts: with the paper's form the base feature's mean, and the
/// errors ‖r_n‖² of the residuals once it is taken (without it: ‖x_n‖²). The residuals
/// themselves are formed again by each seeding that needs them ([`residuals_of`]), so
/// that a fit holds no copy of X beyond its restarts' own.
#[derive(Debug)]
struct Start {
    form: FeatureSeeding,
    /// X's columns.
    d: usize,
    base: Option<Vec<f64>>,
    err: Vec<f64>,
}

impl Start {
    fn new(x: MatrixView<'_>, form: FeatureSeeding) -> Self {
        let base = (form == FeatureSeeding::BaseFeature).then(|| mean_row(x));
        // ‖r_n‖² = ‖x_n − m‖² (m = 0 without the base feature), measured on X itself: the
        // kernel forms each x_nj − m_j as the residual does, so these are the bits of the
        // residuals' squared norms without a copy of X (N·D values, faulted in afresh by
        // every fit once the allocator has returned the last one's).
        let zeros;
        let m = match &base {
            Some(m) => m.as_slice(),
            None => {
                zeros = vec![0.0; x.n_cols()];
                &zeros
            }
        };
        let mut err = vec![0.0; x.n_rows()];
        sq_dists_to(x.as_slice(), m, &mut err);
        Self {
            form,
            d: x.n_cols(),
            base,
            err,
        }
    }
}

/// X less the base feature's mean (when there is one), then less each taken feature's mean on
/// the rows that take it, in the order taken: formed row by row in one pass, with the bits
/// of subtracting them one after another from a copy of X (each entry goes through the same
/// subtractions in the same order), without writing the whole matrix again per feature.
fn residuals_of(x: MatrixView<'_>, base: Option<&[f64]>, features: &[Arc<Grown>]) -> RowMatrix {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { less_means_avx512(x, base, features) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { less_means_avx2(x, base, features) };
        }
    }
    less_means(x, base, features)
}

/// The body of [`residuals_of`].
#[inline(always)]
fn less_means(x: MatrixView<'_>, base: Option<&[f64]>, features: &[Arc<Grown>]) -> RowMatrix {
    let mut data = Vec::with_capacity(x.n_rows() * x.n_cols());
    for (i, row) in x.rows().enumerate() {
        let at = data.len();
        match base {
            Some(m) => data.extend(row.iter().zip(m).map(|(v, b)| v - b)),
            None => data.extend_from_slice(row),
        }
        let r = &mut data[at..];
        for f in features.iter().filter(|f| f.rows[i]) {
            r.iter_mut().zip(&f.mean).for_each(|(v, m)| *v -= m);
        }
    }
    RowMatrix::new(x.n_rows(), x.n_cols(), data)
}

/// [`less_means`] compiled with AVX2: four subtractions at a time instead of two.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn less_means_avx2(x: MatrixView<'_>, base: Option<&[f64]>, features: &[Arc<Grown>]) -> RowMatrix {
    less_means(x, base, features)
}

/// [`less_means`] compiled with AVX-512F: eight subtractions at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn less_means_avx512(
    x: MatrixView<'_>,
    base: Option<&[f64]>,
    features: &[Arc<Grown>],
) -> RowMatrix {
    less_means(x, base, features)
}

/// A seeding's result: the features it took, in order (after the base feature, when it took
/// that), and the number of the state it ends in (see [`SeedMemo`]).
#[derive(Debug)]
pub(crate) struct Seeded {
    start: Arc<Start>,
    with_base: bool,
    features: Vec<Arc<Grown>>,
    /// Restarts that end in the same state hold the same (Z, A), bit for bit (`None`
    /// without a memo, or once its budget is spent).
    pub state: Option<u64>,
}

impl Seeded {
    /// The seed (Z, A).
    pub fn z_a(&self) -> (BinaryMatrix, RowMatrix) {
        let (n, d) = (self.start.err.len(), self.start.d);
        let mut z = BinaryMatrix::zeros(n, 0);
        let mut a = RowMatrix::zeros(0, d);
        if let (true, Some(m)) = (self.with_base, &self.start.base) {
            let c = z.push_col();
            (0..n).for_each(|i| z.row_mut(i)[c] = 1);
            a.push_row(m);
        }
        for f in &self.features {
            let c = z.push_col();
            (0..n)
                .filter(|&i| f.rows[i])
                .for_each(|i| z.row_mut(i)[c] = 1);
            a.push_row(&f.mean);
        }
        (z, a)
    }

    /// The residuals once the features taken so far are: formed entry by entry in the order
    /// the seeding takes them, so the bits of residuals kept up to date as it goes.
    fn residuals(&self, x: MatrixView<'_>) -> RowMatrix {
        let base = self.start.base.as_deref().filter(|_| self.with_base);
        residuals_of(x, base, &self.features)
    }
}

/// Subtracts the feature's mean from the residual rows that take it.
fn take(resid: &mut RowMatrix, f: &Grown) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        return unsafe { take_avx512(resid, f) };
    }
    take_body(resid, f)
}

/// [`take`] compiled with AVX-512F: the same subtractions, eight at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn take_avx512(resid: &mut RowMatrix, f: &Grown) {
    take_body(resid, f)
}

#[inline(always)]
fn take_body(resid: &mut RowMatrix, f: &Grown) {
    for (i, _) in f.rows.iter().enumerate().filter(|(_, t)| **t) {
        resid
            .row_mut(i)
            .iter_mut()
            .zip(&f.mean)
            .for_each(|(r, v)| *r -= v);
    }
}

/// One step of a seeding in a given state from a given drawn row: the feature grown from it,
/// whether the seeding takes it (it pays, or there is no penalty), and the state after it
/// (when taken and within the memo's budget).
#[derive(Clone, Debug)]
struct Step {
    grown: Arc<Grown>,
    taken: bool,
    next: Option<u64>,
}

/// The seedings of the restarts of one fit, shared ([`seed_features_shared`]). A seeding's
/// state after some features were taken is a function of those features (their rows and
/// means, in order): the residuals and errors are. So is each feature grown from a drawn
/// row in that state, and whether it pays. States are numbered as they are first met (0:
/// the state every seeding starts in), and each step kept by (state, drawn row) with the
/// state it leads to, until the memo's budget is spent. A restart that meets only known
/// steps draws its rows from the errors alone: it never forms its residuals.
///
/// One memo serves one fit: one data set and one seeding form. [`SeedMemo::start_only`]
/// shares the start alone (for the paper's seedings, whose steps seldom repeat).
#[derive(Debug)]
pub(crate) struct SeedMemo {
    start: OnceLock<Arc<Start>>,
    share_steps: bool,
    /// (state, the bytes of the feature taken in it) → the state after it.
    states: Mutex<States>,
    steps: SharedMemo<Step>,
    paths: Paths,
}

#[derive(Debug, Default)]
struct States {
    next: KeyMap<(u64, Vec<u8>), u64>,
    bytes: usize,
}

/// Memory each of the three parts of a [`SeedMemo`] may take.
const SEED_MEMO_BYTES: usize = 32 << 20;

impl Default for SeedMemo {
    fn default() -> Self {
        Self {
            start: OnceLock::new(),
            share_steps: true,
            states: Mutex::new(States::default()),
            steps: SharedMemo::new(SEED_MEMO_BYTES),
            paths: SharedMemo::new(SEED_MEMO_BYTES),
        }
    }
}

impl SeedMemo {
    /// A memo that shares the seedings' start only: every restart makes its own steps.
    pub fn start_only() -> Self {
        Self {
            share_steps: false,
            ..Self::default()
        }
    }

    /// The start of every seeding of the fit, formed by the first restart that asks.
    fn start(&self, x: MatrixView<'_>, form: FeatureSeeding) -> Arc<Start> {
        let start = self.start.get_or_init(|| Arc::new(Start::new(x, form)));
        assert_eq!(start.form, form, "one SeedMemo serves one fit");
        start.clone()
    }

    /// The number of the state reached from `state` by taking the feature with these rows
    /// and mean (`None` once the budget is spent).
    fn after(&self, state: u64, rows: &[bool], mean: &[f64]) -> Option<u64> {
        let mut key = Vec::with_capacity(rows.len().div_ceil(8) + 8 * mean.len());
        push_bits(&mut key, rows);
        mean.iter()
            .for_each(|v| key.extend_from_slice(&v.to_bits().to_le_bytes()));
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = key.len() + 32;
        let fresh = states.next.len() as u64 + 1;
        let entry = (state, key);
        if let Some(&next) = states.next.get(&entry) {
            return Some(next);
        }
        if states.bytes + bytes > SEED_MEMO_BYTES {
            return None;
        }
        states.next.insert(entry, fresh);
        states.bytes += bytes;
        Some(fresh)
    }

    /// The step from row `pick` in state `state`: remembered, or made by `make`.
    fn step(&self, state: u64, pick: usize, make: impl FnOnce() -> Step) -> Step {
        let mut key = state.to_le_bytes().to_vec();
        key.extend_from_slice(&(pick as u64).to_le_bytes());
        self.steps.get_or_make(key, make, |s| {
            s.grown.rows.len() + 8 * (s.grown.mean.len() + s.grown.dist.len()) + 64
        })
    }
}

/// Seeds (Z, A) on `x` (serial; O(N·D) per feature, and per growth step). With `grow` and
/// a penalty target each drawn residual is grown before it is tested (module documentation);
/// otherwise this is the paper's seeding. The fits seed through [`seed_features_shared`]; this
/// is the seeding on its own, which the tests hold the shared one to.
#[cfg(test)]
pub(crate) fn seed_features(
    x: MatrixView<'_>,
    form: FeatureSeeding,
    target: SeedTarget,
    grow: bool,
    rng: &mut ChaCha8Rng,
) -> (BinaryMatrix, RowMatrix) {
    seed_features_shared(x, form, target, grow, rng, None).z_a()
}

/// `seed_features` (the tests' form, unshared) with the start and the steps met by the other
/// restarts of the fit taken from `memo` (the same bits as making them again); the
/// residuals are formed only when a step has to be made. With [`SeedMemo::start_only`] only the start is shared, and the
/// state is `None`.
pub(crate) fn seed_features_shared(
    x: MatrixView<'_>,
    form: FeatureSeeding,
    target: SeedTarget,
    grow: bool,
    rng: &mut ChaCha8Rng,
    memo: Option<&SeedMemo>,
) -> Seeded {
    let (n, d) = (x.n_rows(), x.n_cols());
    let (limit, penalty) = match target {
        SeedTarget::Fixed(k) => (k, None),
        SeedTarget::Penalty { penalty, k_max } => (k_max, Some(penalty)),
    };
    // The paper's step is a growth of 0 steps, and its first failure stops the seeding.
    let (steps, tries) = if grow && penalty.is_some() {
        (GROW_STEPS, SEED_TRIES)
    } else {
        (0, 1)
    };
    let start = match memo {
        Some(m) => m.start(x, form),
        None => Arc::new(Start::new(x, form)),
    };
    let mut seeded = Seeded {
        with_base: limit > 0 && start.base.is_some(),
        start,
        features: Vec::new(),
        state: memo.filter(|m| m.share_steps).map(|_| 0),
    };
    let mut taken = usize::from(seeded.with_base);
    let mut err = seeded.start.err.clone();
    // The residuals of the current state, once a step needed them.
    let mut resid: Option<RowMatrix> = None;
    let mut failures = 0;
    while taken < limit {
        let total: f64 = err.iter().sum();
        if total.is_nan() || total <= 0.0 {
            if penalty.is_some() {
                break;
            }
            // Nothing left to explain: pad with an empty, zero-mean feature.
            let pad = Grown {
                mean: vec![0.0; d],
                rows: vec![false; n],
                gain: 0.0,
                dist: Vec::new(),
            };
            seeded.state = memo
                .zip(seeded.state)
                .and_then(|(m, s)| m.after(s, &pad.rows, &pad.mean));
            seeded.features.push(Arc::new(pad));
            taken += 1;
            continue;
        }
        let pick = draw_weighted(&err, rng);
        let mut make = || {
            let r = resid.get_or_insert_with(|| seeded.residuals(x));
            let paths = memo.zip(seeded.state).map(|(m, s)| (&m.paths, s));
            let grown = grow_feature_shared(r.view(), &err, r.row(pick), steps, paths);
            let taken = penalty.is_none_or(|p| grown.gain > p);
            let next = memo
                .zip(seeded.state)
                .filter(|_| taken)
                .and_then(|(m, s)| m.after(s, &grown.rows, &grown.mean));
            Step { grown, taken, next }
        };
        let step = match memo.zip(seeded.state) {
            Some((m, s)) => m.step(s, pick, make),
            None => make(),
        };
        if !step.taken {
            failures += 1;
            if failures >= tries {
                break;
            }
            continue;
        }
        let f = step.grown;
        // The new errors of the rows that take the feature, without a branch per row.
        for ((e, &t), &nd) in err.iter_mut().zip(&f.rows).zip(&f.dist) {
            *e = if t { nd } else { *e };
        }
        if let Some(r) = resid.as_mut() {
            take(r, &f);
        }
        seeded.features.push(f);
        seeded.state = step.next;
        taken += 1;
    }
    seeded
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::objective::residual_ss;
    use crate::restarts::run_rng;
    use std::collections::HashMap;

    fn data() -> RowMatrix {
        RowMatrix::from_rows(&[
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 0.0, 5.0],
            [1.0, 0.0, 5.0],
        ])
    }

    /// The start's errors, measured on X against the base mean (or 0), have the bits of the
    /// squared norms of the residuals formed as a copy: those the seeding's steps go on from.
    #[test]
    fn start_errors_are_the_squared_norms_of_the_residuals() {
        for (n, d) in [(0, 3), (1, 1), (5, 4), (9, 37), (30, 100)] {
            let x = RowMatrix::new(
                n,
                d,
                (0..n * d)
                    .map(|i| match i % 11 {
                        0 => -0.0,
                        1 => 0.0,
                        _ => ((i * 37 % 23) as f64).sqrt() * 1e3 - 2.1,
                    })
                    .collect(),
            );
            for form in [FeatureSeeding::BaseFeature, FeatureSeeding::Residual] {
                let start = Start::new(x.view(), form);
                let resid = residuals_of(x.view(), start.base.as_deref(), &[]);
                let want: Vec<u64> = resid
                    .rows()
                    .map(|r| r.iter().map(|v| v * v).sum::<f64>())
                    .map(f64::to_bits)
                    .collect();
                let mut norms = vec![0.0; n];
                sq_dists_to(resid.as_slice(), &vec![0.0; d], &mut norms);
                let got: Vec<u64> = start.err.iter().map(|v| v.to_bits()).collect();
                let norms: Vec<u64> = norms.iter().map(|v| v.to_bits()).collect();
                assert_eq!(got, norms, "n {n} d {d} {form:?}");
                // And near the plain sums (another order of the same additions).
                for (g, w) in start.err.iter().zip(&want) {
                    let w = f64::from_bits(*w);
                    assert!((g - w).abs() <= 1e-12 * w.abs(), "{g} against {w}");
                }
            }
        }
    }

    /// The residuals formed in one pass (AVX2 where the CPU has it) have the bits of the base
    /// mean subtracted from a copy of X, then each feature's mean from its rows in turn (as
    /// the seeding takes them), with and without the base and features, rows taking none,
    /// one or several features.
    #[test]
    fn residuals_in_one_pass_are_a_copy_less_the_means_in_turn() {
        for (n, d) in [(0, 3), (1, 1), (7, 5), (30, 37)] {
            let x = RowMatrix::new(
                n,
                d,
                (0..n * d)
                    .map(|i| ((i * 37 % 23) as f64).sqrt() - 2.1)
                    .collect(),
            );
            let m: Vec<f64> = (0..d).map(|j| (j as f64 * 0.7).sin()).collect();
            let features: Vec<Arc<Grown>> = (0..3)
                .map(|f| {
                    Arc::new(Grown {
                        mean: (0..d)
                            .map(|j| ((j + 3 * f) as f64 * 1.3).cos() / 3.0)
                            .collect(),
                        rows: (0..n).map(|i| (i * (f + 2)) % 3 != 1).collect(),
                        gain: 0.0,
                        dist: Vec::new(),
                    })
                })
                .collect();
            let bits = |v: &[f64]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
            for base in [None, Some(m.as_slice())] {
                for taken in 0..=features.len() {
                    let got = residuals_of(x.view(), base, &features[..taken]);
                    let mut want = x.clone();
                    for i in 0..n {
                        if let Some(m) = base {
                            want.row_mut(i).iter_mut().zip(m).for_each(|(r, v)| *r -= v);
                        }
                    }
                    features[..taken].iter().for_each(|f| take(&mut want, f));
                    assert_eq!(
                        bits(got.as_slice()),
                        bits(want.as_slice()),
                        "n {n} d {d} base {} features {taken}",
                        base.is_some()
                    );
                    assert_eq!(
                        bits(less_means(x.view(), base, &features[..taken]).as_slice()),
                        bits(want.as_slice())
                    );
                }
            }
        }
    }

    /// Rows packed into a key take ⌈N/8⌉ bytes, and every pattern of N rows its own bytes
    /// (all 2^N patterns for N up to 11, across byte boundaries).
    #[test]
    fn packed_rows_tell_every_pattern_apart() {
        for n in 0..=11usize {
            let mut seen = std::collections::HashSet::new();
            for bits in 0..1u32 << n {
                let rows: Vec<bool> = (0..n).map(|i| bits >> i & 1 == 1).collect();
                let mut key = vec![7u8];
                push_bits(&mut key, &rows);
                assert_eq!(key.len(), 1 + n.div_ceil(8));
                assert!(seen.insert(key), "n {n} pattern {bits:b}");
            }
        }
    }

    #[test]
    fn fixed_k_seeds_exactly_k_features_and_never_raises_the_error() {
        let x = data();
        for form in [FeatureSeeding::BaseFeature, FeatureSeeding::Residual] {
            for k in 1..=5 {
                let (z, a) = seed_features(
                    x.view(),
                    form,
                    SeedTarget::Fixed(k),
                    false,
                    &mut run_rng(3, 0),
                );
                assert_eq!((z.k(), a.n_rows()), (k, k));
                if form == FeatureSeeding::BaseFeature {
                    assert!(z.col(0).iter().all(|&v| v == 1));
                }
            }
        }
        // Noise-free data, K = 3: residual seeding explains everything in some draw.
        let ok = (0..20).any(|s| {
            let (z, a) = seed_features(
                x.view(),
                FeatureSeeding::Residual,
                SeedTarget::Fixed(3),
                false,
                &mut run_rng(s, 0),
            );
            residual_ss(x.view(), &z, &a) < 1e-12
        });
        assert!(ok);
    }

    #[test]
    fn penalty_target_stops_when_a_feature_does_not_pay() {
        let x = data();
        let huge = SeedTarget::Penalty {
            penalty: 1e6,
            k_max: 10,
        };
        let (z, _) = seed_features(
            x.view(),
            FeatureSeeding::Residual,
            huge,
            false,
            &mut run_rng(1, 0),
        );
        assert_eq!(z.k(), 0);
        let (z, _) = seed_features(
            x.view(),
            FeatureSeeding::BaseFeature,
            huge,
            false,
            &mut run_rng(1, 0),
        );
        assert_eq!(z.k(), 1);
        let small = SeedTarget::Penalty {
            penalty: 0.1,
            k_max: 2,
        };
        let (z, _) = seed_features(
            x.view(),
            FeatureSeeding::Residual,
            small,
            false,
            &mut run_rng(1, 0),
        );
        assert_eq!(z.k(), 2);
    }

    /// Seedings that share a memo end where each ends alone, bit for bit, whichever
    /// restarts came first; the memo is used (grown features taken from it, states met
    /// again), and restarts that end in the same state hold the same (Z, A).
    #[test]
    fn shared_seedings_give_the_bits_of_their_own() {
        let x = crate::generate::block_images(60, 0.5, 0.5, 3).unwrap().x;
        let target = SeedTarget::Penalty {
            penalty: 30.0,
            k_max: usize::MAX,
        };
        let memo = SeedMemo::default();
        let mut ends: HashMap<u64, (BinaryMatrix, Vec<u64>)> = HashMap::new();
        let bits = |a: &RowMatrix| a.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let mut repeated = 0;
        for pass in 0..2 {
            for r in 0..40 {
                let r = if pass == 0 { r } else { 39 - r };
                let own = seed_features(
                    x.view(),
                    FeatureSeeding::BaseFeature,
                    target,
                    true,
                    &mut run_rng(5, r),
                );
                let seeded = seed_features_shared(
                    x.view(),
                    FeatureSeeding::BaseFeature,
                    target,
                    true,
                    &mut run_rng(5, r),
                    Some(&memo),
                );
                let (z, a) = seeded.z_a();
                let state = seeded.state;
                assert!(
                    z == own.0 && bits(&a) == bits(&own.1),
                    "restart {r}, pass {pass}"
                );
                let state = state.expect("within the budget");
                match ends.get(&state) {
                    Some((z0, a0)) => {
                        assert!(*z0 == z && *a0 == bits(&a), "state {state}");
                        repeated += 1;
                    }
                    None => {
                        ends.insert(state, (z, bits(&a)));
                    }
                }
            }
        }
        assert!(
            memo.steps.hits() > 40,
            "steps remembered: {}",
            memo.steps.hits()
        );
        assert!(memo.paths.hits() > 0, "no growth joined another's path");
        // The second pass meets every state of the first; some restarts meet others' already
        // in the first.
        assert!(repeated > 40, "states met again: {repeated}");
    }

    #[test]
    fn grown_distances_are_the_bits_of_the_updated_residual_norms() {
        use crate::linalg::sq_norm;
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for d in [1, 3, 4, 7, 13] {
            let rows: Vec<Vec<f64>> = (0..9)
                .map(|_| (0..d).map(|_| rng.random_range(-2.0..2.0)).collect())
                .collect();
            let resid = RowMatrix::from_rows(&rows);
            let err: Vec<f64> = rows.iter().map(|r| sq_norm(r)).collect();
            for steps in [0, 3] {
                let g = grow_feature(resid.view(), &err, resid.row(2), steps);
                for (i, r) in rows.iter().enumerate().filter(|(i, _)| g.rows[*i]) {
                    let after: Vec<f64> = r.iter().zip(&g.mean).map(|(v, m)| v - m).collect();
                    assert_eq!(
                        g.dist[i].to_bits(),
                        sq_norm(&after).to_bits(),
                        "d {d} row {i}"
                    );
                }
            }
        }
    }

    /// Residual rows of which every third is on the edge of taking a feature with mean `c`:
    /// moved along c until 2 r·c = ‖c‖², so ‖r − c‖² and ‖r‖² differ by rounding alone. With
    /// their squared norms as `sq_norm` forms them (the errors the growths are given).
    fn near_ties(n: usize, d: usize, seed: u64) -> (RowMatrix, Vec<f64>, Vec<f64>) {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let c: Vec<f64> = (0..d).map(|_| rng.random_range(-3.0..3.0)).collect();
        let cc: f64 = c.iter().map(|v| v * v).sum();
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                let r: Vec<f64> = (0..d).map(|_| rng.random_range(-3.0..3.0)).collect();
                if i % 3 != 0 || cc == 0.0 {
                    return r;
                }
                let rc: f64 = r.iter().zip(&c).map(|(a, b)| a * b).sum();
                let alpha = (cc / 2.0 - rc) / cc;
                r.iter().zip(&c).map(|(v, w)| v + alpha * w).collect()
            })
            .collect();
        let err = rows.iter().map(|r| crate::linalg::sq_norm(r)).collect();
        (RowMatrix::from_rows(&rows), err, c)
    }

    /// The screened rows are the rows the distances choose, near-ties included; without its
    /// slack the screen gets some near-ties wrong, so the data tests the slack.
    #[test]
    fn screened_rows_are_the_rows_the_distances_choose() {
        let mut wrong_without_slack = 0;
        for (n, d, seed) in [(60, 100, 1), (61, 7, 2), (90, 33, 3), (40, 1, 4), (9, 0, 5)] {
            let (resid, err, c) = near_ties(n, d, seed);
            // Far from 1 too: squares near the top of the range, subnormal, or overflowing.
            for scale in [1e150, 1e-150, 1e-160, 1e155] {
                let big =
                    RowMatrix::new(n, d, resid.as_slice().iter().map(|v| v * scale).collect());
                let c: Vec<f64> = c.iter().map(|v| v * scale).collect();
                let err: Vec<f64> = big.rows().map(crate::linalg::sq_norm).collect();
                let want: Vec<bool> = (0..n).map(|i| sq_dist(big.row(i), &c) < err[i]).collect();
                let mut rows = vec![false; n];
                take_rows(
                    big.view(),
                    &err,
                    &c,
                    &mut rows,
                    &mut Vec::new(),
                    SCREEN_SLACK,
                );
                assert_eq!(rows, want, "n {n} d {d} scale {scale}");
            }
            let want: Vec<bool> = (0..n).map(|i| sq_dist(resid.row(i), &c) < err[i]).collect();
            let mut dots = Vec::new();
            for start in [false, true] {
                let mut rows = vec![start; n];
                let changed = take_rows(resid.view(), &err, &c, &mut rows, &mut dots, SCREEN_SLACK);
                assert_eq!(rows, want, "n {n} d {d}");
                assert_eq!(changed, want.iter().any(|&t| t != start), "n {n} d {d}");
            }
            let mut rows = vec![false; n];
            take_rows(resid.view(), &err, &c, &mut rows, &mut dots, 0.0);
            wrong_without_slack += rows.iter().zip(&want).filter(|(a, b)| a != b).count();
        }
        assert!(wrong_without_slack > 0, "no near-tie tested the slack");
    }

    /// The growth as it was before the screen: every row measured at every pass.
    fn grow_measuring_every_row(
        resid: MatrixView<'_>,
        err: &[f64],
        start: &[f64],
        steps: usize,
    ) -> Grown {
        let (n, d) = (resid.n_rows(), resid.n_cols());
        let (mut mean, mut rows, mut dist) = (start.to_vec(), vec![false; n], vec![0.0; n]);
        let mut step = 0;
        loop {
            let (mut gain, mut changed) = (0.0, false);
            sq_dists_to(resid.as_slice(), &mean, &mut dist);
            for i in 0..n {
                let take = dist[i] < err[i];
                if take {
                    gain += err[i] - dist[i];
                }
                changed |= take != rows[i];
                rows[i] = take;
            }
            let taken: Vec<usize> = (0..n).filter(|&i| rows[i]).collect();
            if step == steps || (step > 0 && !changed) || taken.is_empty() {
                return Grown {
                    mean,
                    rows,
                    gain,
                    dist,
                };
            }
            let inv = 1.0 / taken.len() as f64;
            mean = sum_rows(resid.as_slice(), d, &taken)
                .into_iter()
                .map(|v| v * inv)
                .collect();
            step += 1;
        }
    }

    /// Growths that screen their rows end as growths that measure every row do, bit for bit:
    /// the same rows, mean, gain and new errors, from every start row, on near-ties and on
    /// rows of small integers (exact ties).
    #[test]
    fn screened_growths_give_the_bits_of_measured_ones() {
        let ints = RowMatrix::new(
            30,
            6,
            (0..180).map(|i| ((i * 7 % 5) as f64) - 2.0).collect(),
        );
        let int_err: Vec<f64> = ints.rows().map(crate::linalg::sq_norm).collect();
        let (ties, tie_err, _) = near_ties(45, 20, 9);
        for (resid, err) in [(&ints, &int_err), (&ties, &tie_err)] {
            for pick in 0..resid.n_rows() {
                for steps in [0, 1, GROW_STEPS] {
                    let got = grow_feature(resid.view(), err, resid.row(pick), steps);
                    let want = grow_measuring_every_row(resid.view(), err, resid.row(pick), steps);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(got.rows, want.rows, "pick {pick} steps {steps}");
                    assert_eq!(bits(&got.mean), bits(&want.mean), "pick {pick}");
                    assert_eq!(got.gain.to_bits(), want.gain.to_bits(), "pick {pick}");
                    for i in (0..resid.n_rows()).filter(|&i| want.rows[i]) {
                        assert_eq!(got.dist[i].to_bits(), want.dist[i].to_bits(), "row {i}");
                    }
                }
            }
        }
    }
}
