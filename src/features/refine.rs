//! Beyond the paper: refinement of converged BP-means and K-features runs.
//!
//! Alg. 1 cannot remove a feature that stays non-empty, join two features, or open a feature
//! that no single row pays for (its sweep opens one only when one row's residual exceeds P,
//! which on noisy data never happens once a residual is mostly noise); Alg. 4 cannot trade
//! one feature for another. Once a run has converged, the refinement tries the moves below,
//! in this order, keeps the first one that strictly lowers the run's own objective (BP-means:
//! ‖X − ZA‖²_F + K·P, Eq. 6; K-features: ‖X − ZA‖²_F, Eq. 14), runs the algorithm again to
//! convergence from there, and starts over, until no move helps (or `max_iter` rounds). Every
//! accepted move lowers the objective, so the refinement terminates and never raises it.
//!
//! BP-means:
//! 1. **grow** a feature from the residuals R = X − ZA ([`grow_feature`], from rows drawn
//!    with probability ∝ ‖r_n‖², [`GROW_TRIES`] draws) when the rows that take it gain more
//!    than P — the feature a whole group of noisy rows pays for although no single one of
//!    them does;
//! 2. **remove** feature j, or **merge** two (z_i ← z_i ∨ z_j, j dropped; the 2K pairs whose
//!    columns of Z overlap most): the rows that held the touched features take their best z
//!    given the remaining means (all 2^K values while K ≤ [`MOVE_EXACT_MAX_K`], coordinate
//!    descent above) and A is re-solved by least squares;
//! 3. **deep** moves: grow a feature whatever its gain, or remove one of the
//!    [`GROW_TRIES`] features whose removal costs least, then descend (K-features at the new
//!    K, then BP-means) and compare where the descent ends — a grown feature that does not
//!    pay as it is may pay once the other features have rearranged around it;
//! 4. **polish**: at most [`POLISH_SWEEPS`] collapsed BP-means sweeps from the run's Z (each
//!    row's best z with A re-solved, Alg. 3), which settle rows whose best value depends on
//!    the move of A they cause.
//!
//! The trace of a refined run records accepted states only: a deep move's descent starts
//! above the run's objective, and its part above it is left out.
//!
//! K-features (K fixed): **replace** feature j by one grown from the residuals left without
//! it — first when the grown feature's gain alone pays for the swap, then (deep) whatever its
//! gain, descending by K-features before comparing.

use super::bp_means::BpMeansRun;
use super::collapsed::collapsed_bp_means_run;
use super::k_features::{k_features_run, k_features_run_until};
use super::kernels::{GraySteps, descend_row, gram, row_cost};
use super::lstsq::{least_squares, least_squares_and_rss};
use super::memo::SharedMemo;
use super::model::FeatureRun;
use super::objective::residual_ss;
use super::seeding::{Grown, grow_feature};
use super::zmat::BinaryMatrix;
use crate::MatrixView;
use crate::RowMatrix;
use crate::linalg::{gemm_xat, sq_norm};
use crate::restarts::draw_weighted;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::sync::Arc;

/// Features grown per round by the grow and deep moves, and features removed per round by
/// the deep moves (the cheapest to remove).
pub(crate) const GROW_TRIES: usize = 5;
/// Mean updates of each grown feature ([`grow_feature`]).
pub(crate) const GROW_STEPS: usize = 10;
/// Collapsed sweeps of one polish (it is tried again after any other move that follows).
pub(crate) const POLISH_SWEEPS: usize = 10;
/// Largest K for which the moves re-optimise a row by enumerating its 2^K values (and the
/// deep moves' descents and the polish do); coordinate descent from the row above. 2^K·K
/// operations per row at most, about what re-solving A costs per row.
pub(crate) const MOVE_EXACT_MAX_K: usize = 8;

/// What a refinement needs besides the run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Setting<'a> {
    /// The data, penalty and caps, as the BP-means runs of the refinement take them (for
    /// K-features: no norms, no penalty, K as the cap).
    pub bp: BpMeansRun<'a>,
    pub exact_max_k: usize,
    /// ‖X‖²_F ([`super::lstsq::entry_sq_sum`]), for K-features' runs and the removals and merges.
    pub x_sq: f64,
    /// The fit's seed, mixed into every round's generator ([`round_rng`]).
    pub seed: u64,
    /// The rounds made so far, shared by the restarts of one fit.
    pub memo: Option<&'a RoundMemo>,
}

/// The rounds of the refinement already made by the restarts of one fit, by the state they
/// start from. A state is the canonical form of a run ([`canonical`]): its Z with sorted
/// columns, A the least-squares means of that Z and the objective recomputed from them, so A
/// and the objective are functions of the sorted Z, and the sorted Z alone is the key. For
/// each state the memo keeps its A, its objective and the run its round ended with (`None`:
/// no move lowered the objective). A round depends on its state alone ([`round_rng`]), so a
/// remembered state and round are exactly what making them again would give; a restart that
/// reaches a remembered Z skips the least-squares solve, the residual and the round.
/// States are remembered until they reach [`ROUND_MEMO_BYTES`]; later ones are made every
/// time (same result, more work).
///
/// It also keeps the deep moves' descents ([`descend`]), by the Z their K-features runs
/// passed.
#[derive(Debug)]
pub(crate) struct RoundMemo {
    rounds: SharedMemo<Remembered>,
    descents: SharedMemo<Descended>,
}

impl Default for RoundMemo {
    fn default() -> Self {
        Self {
            rounds: SharedMemo::new(ROUND_MEMO_BYTES),
            descents: SharedMemo::new(DESCENT_MEMO_BYTES),
        }
    }
}

/// A deep move's descent from a Z its K-features run passed: the sweeps that run took after
/// it (at most), and the BP-means run that ended the descent.
#[derive(Clone, Debug)]
struct Descended {
    left: usize,
    out: Arc<FeatureRun>,
}

/// A remembered state's A and objective, and its round's outcome.
#[derive(Clone, Debug)]
struct Remembered {
    a: RowMatrix,
    objective: f64,
    outcome: Option<FeatureRun>,
}

/// Memory the remembered rounds of one fit may take.
pub(crate) const ROUND_MEMO_BYTES: usize = 64 << 20;
/// Memory the remembered descents of one fit may take (each Z a descent passed holds a
/// share of its run).
const DESCENT_MEMO_BYTES: usize = 32 << 20;
/// The Z a descent remembers its run under: the last it met (runs that meet end alike, so
/// the last are the likeliest to be met again), so that a long descent holds few keys.
const DESCENT_KEYS: usize = 8;
/// Entries of Z (N·K) above which descents are not remembered: keys of half a megabyte and
/// more would fill the memo's budget within a few descents, and each descent holds its keys
/// until it ends.
const DESCENT_KEY_MAX: usize = 1 << 19;

/// Bytes a run's Z, A and trace take.
pub(crate) fn run_bytes(run: &FeatureRun) -> usize {
    run.z.n() * run.z.k() + 8 * (run.a.as_slice().len() + run.trace.len()) + 64
}

/// The memo's key of a sorted Z: K, then the rows' entries.
fn z_key(z: &BinaryMatrix) -> Vec<u8> {
    let mut key = Vec::with_capacity(8 + z.n() * z.k());
    key.extend_from_slice(&(z.k() as u64).to_le_bytes());
    for row in z.rows() {
        key.extend_from_slice(row);
    }
    key
}

impl RoundMemo {
    /// The remembered state and round of the sorted Z `key`.
    fn get(&self, key: &[u8]) -> Option<Remembered> {
        self.rounds.get(key)
    }

    /// Rounds taken from the memo so far.
    #[cfg(test)]
    fn hits(&self) -> usize {
        self.rounds.hits()
    }

    /// Descents taken from the memo so far.
    #[cfg(test)]
    fn descent_hits(&self) -> usize {
        self.descents.hits()
    }

    fn insert(&self, key: Vec<u8>, state: &FeatureRun, outcome: &Option<FeatureRun>) {
        let bytes = run_bytes(state) + outcome.as_ref().map_or(0, run_bytes);
        let remembered = Remembered {
            a: state.a.clone(),
            objective: state.objective,
            outcome: outcome.clone(),
        };
        self.rounds.insert(key, remembered, bytes);
    }
}

/// A 64-bit FNV-1a hash of `seed` and the state's bits (K, Z, A, objective): the same on
/// every platform and run.
fn state_hash(seed: u64, run: &FeatureRun) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
    };
    eat(&seed.to_le_bytes());
    eat(&(run.z.k() as u64).to_le_bytes());
    for row in run.z.rows() {
        eat(row);
    }
    for v in run.a.as_slice() {
        eat(&v.to_bits().to_le_bytes());
    }
    eat(&run.objective.to_bits().to_le_bytes());
    h
}

/// The generator of a refinement round from `run`: seeded by the fit's seed and the
/// state's bits, so a round is a function of its state.
fn round_rng(seed: u64, run: &FeatureRun) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(state_hash(seed, run))
}

/// A relative tolerance below which a drop of the objective does not count.
fn tol(v: f64) -> f64 {
    1e-12 * v.abs().max(1.0)
}

/// `run` continued by `next` (which ends below it): iterations added up, and the trace
/// continued by the part of `next`'s that lies below `run`'s objective — a deep move's
/// descent starts from a state above it, which the run never accepted, so the trace stays a
/// record of accepted states and never rises.
fn chain(run: FeatureRun, next: FeatureRun) -> FeatureRun {
    let mut trace = run.trace;
    let current = run.objective;
    trace.extend(next.trace.iter().copied().skip_while(|&t| t >= current));
    FeatureRun {
        trace,
        n_iter: next.n_iter + run.n_iter,
        ..next
    }
}

/// Refines a converged BP-means run (see the module documentation).
///
/// Each round is a function of the state it starts from alone: its random draws come from
/// a generator seeded by the fit's seed and the state's bits ([`round_rng`]), not from the
/// restart's stream. Restarts that reach the same state therefore make the same round, and
/// rounds are remembered in `s.memo`: a later restart that reaches a state takes the
/// remembered outcome instead of making the round again — exactly what making it would have
/// given, so the result does not depend on which restart got there first (or on the thread
/// count). This matters most for the last round of every restart, which tries every move
/// and fails by definition.
///
/// Of `run`, only Z, the iterations, the convergence flag and the trace are read: its state
/// (A and the objective) is derived from Z ([`canonical`]), so `run` may come from
/// [`BpMeansRun::run_unscored`].
pub(crate) fn refine_bp_means(s: &Setting, mut run: FeatureRun) -> FeatureRun {
    for _ in 0..s.bp.max_iter {
        let z = sorted_columns(&run.z);
        let key = s.memo.map(|_| z_key(&z));
        let known = s.memo.zip(key.as_deref()).and_then(|(m, key)| m.get(key));
        let next = match known {
            Some(known) => {
                run = FeatureRun {
                    z,
                    a: known.a,
                    objective: known.objective,
                    ..run
                };
                known.outcome
            }
            None => {
                run = canonical(s, z, run);
                let out = bp_means_round(s, &mut round_rng(s.seed, &run), &run);
                if let (Some(m), Some(key)) = (s.memo, key) {
                    m.insert(key, &run, &out);
                }
                out
            }
        };
        match next {
            Some(next) => run = chain(run, next),
            None => break,
        }
    }
    run
}

/// Z with its columns sorted by their N entries, as byte strings, descending: the Z of
/// [`canonical`].
fn sorted_columns(z: &BinaryMatrix) -> BinaryMatrix {
    let (n, k) = (z.n(), z.k());
    let cols: Vec<Vec<u8>> = (0..k).map(|c| z.col(c)).collect();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&i, &j| cols[j].cmp(&cols[i]));
    let mut sorted = BinaryMatrix::zeros(n, k);
    for i in 0..n {
        let (from, to) = (z.row(i), sorted.row_mut(i));
        for (w, &c) in order.iter().enumerate() {
            to[w] = from[c];
        }
    }
    sorted
}

/// `run` in the canonical form of its set of features, given its Z with sorted columns
/// ([`sorted_columns`]): A the least-squares means of that Z, the objective recomputed from
/// them. Runs that hold the same features in another order, or whose A differs in its last
/// bits because it was solved with the columns in another order, then start their round
/// from the same state, and share it through the memo.
fn canonical(s: &Setting, z: BinaryMatrix, run: FeatureRun) -> FeatureRun {
    let a = least_squares(s.bp.x, &z).a;
    let objective = residual_ss(s.bp.x, &z, &a) + z.k() as f64 * s.bp.penalty;
    FeatureRun {
        z,
        a,
        objective,
        ..run
    }
}

/// One round of the BP-means refinement from `run`: the run of BP-means after the first
/// move that lowers the objective, or `None` when no move does.
fn bp_means_round(s: &Setting, rng: &mut ChaCha8Rng, run: &FeatureRun) -> Option<FeatureRun> {
    let bp = |(z, a): (BinaryMatrix, RowMatrix)| s.bp.run(z, a);
    // The residuals the grow and deep moves draw from (below the cap on K).
    let resid = (run.a.n_rows() < s.bp.k_max).then(|| residuals(s.bp.x, &run.z, &run.a));
    // 1. Grow a feature that pays as it is.
    if let Some((resid, err)) = &resid {
        for _ in 0..GROW_TRIES {
            let Some(g) = grow_from(resid, err, rng) else {
                break;
            };
            if g.gain > s.bp.penalty + tol(run.objective) {
                return Some(bp(with_feature(&run.z, &run.a, &g)));
            }
        }
    }
    // 2. Remove or merge.
    let removal_costs = match remove_or_merge(s, &run.z, &run.a, run.objective) {
        Ok(za) => return Some(bp(za)),
        Err(costs) => costs,
    };
    // 3. Deep moves.
    if let Some(next) = deep_move(s, rng, run, resid.as_ref(), &removal_costs) {
        return Some(next);
    }
    // 4. Polish.
    let c = collapsed_bp_means_run(
        s.bp.x,
        s.bp.penalty,
        s.bp.k_max,
        s.bp.max_iter.min(POLISH_SWEEPS),
        s.exact_max_k.min(MOVE_EXACT_MAX_K),
        run.z.clone(),
    );
    if c.objective < run.objective - tol(run.objective) {
        return Some(bp((c.z, c.a)));
    }
    None
}

/// Deep moves of BP-means: grow a feature (whatever its gain) from the run's residuals and
/// their errors (`resid`; `None` at the cap on K) or remove one of the cheapest to remove,
/// descend by K-features then BP-means; the first descent that ends below the run's
/// objective.
fn deep_move(
    s: &Setting,
    rng: &mut ChaCha8Rng,
    run: &FeatureRun,
    resid: Option<&(RowMatrix, Vec<f64>)>,
    removal_costs: &[(usize, f64)],
) -> Option<FeatureRun> {
    let current = run.objective;
    if let Some((resid, err)) = resid {
        for _ in 0..GROW_TRIES {
            let Some(g) = grow_from(resid, err, rng) else {
                break;
            };
            let (z, a) = with_feature(&run.z, &run.a, &g);
            let out = descend(s, z, a);
            if out.objective < current - tol(current) {
                return Some(out);
            }
        }
    }
    for &(j, _) in removal_costs.iter().take(GROW_TRIES) {
        let (z, a) = dropped(&run.z, &run.a, j);
        let out = descend(s, z, a);
        if out.objective < current - tol(current) {
            return Some(out);
        }
    }
    None
}

/// (Z, A) without feature j, as they are: the start of a deep move's descent.
fn dropped(z: &BinaryMatrix, a: &RowMatrix, j: usize) -> (BinaryMatrix, RowMatrix) {
    let mut keep = vec![true; z.k()];
    keep[j] = false;
    let mut zc = z.clone();
    zc.retain_cols(&keep);
    let mut ac = a.clone();
    ac.retain_rows(&keep);
    (zc, ac)
}

/// A deep move's descent from (Z, A): K-features at its K, then BP-means from where that
/// ends. The run BP-means makes is a function of the Z K-features passes after any sweep
/// ([`k_features_run_until`]), so descents are remembered in `s.memo` by every such Z they
/// passed (the last [`DESCENT_KEYS`]), with the sweeps they still took from there: a descent
/// that reaches a remembered Z ends with the remembered run, exactly the one it would make.
/// On the tabletop photos 22 % of the deep moves' K-features runs end where an earlier one
/// ended (docs/speed.md §2). Only while Z holds at most [`DESCENT_KEY_MAX`] entries.
fn descend(s: &Setting, z: BinaryMatrix, a: RowMatrix) -> FeatureRun {
    let max_iter = s.bp.max_iter;
    let exact_max_k = s.exact_max_k.min(MOVE_EXACT_MAX_K);
    let small = z.n() * z.k() <= DESCENT_KEY_MAX;
    let Some(memo) = s.memo.filter(|_| small) else {
        let kf = k_features_run_until(
            s.bp.x,
            s.bp.x_cols,
            s.x_sq,
            max_iter,
            exact_max_k,
            z,
            a,
            |_, _| false,
        );
        return s.bp.run(kf.z, kf.a);
    };
    // The last Z met after a sweep, with the sweeps made up to each.
    let mut passed: Vec<(Vec<u8>, usize)> = Vec::with_capacity(DESCENT_KEYS);
    let mut known: Option<(usize, Descended)> = None;
    let kf = k_features_run_until(
        s.bp.x,
        s.bp.x_cols,
        s.x_sq,
        max_iter,
        exact_max_k,
        z,
        a,
        |z, sweeps| {
            let key = z_key(z);
            // A remembered descent took `left` more sweeps from this Z. This one takes at most
            // one more (the sweep that shows nothing changes, when the other's arrival already
            // ended it), so it ends within the cap alike when that fits.
            if let Some(d) = memo.descents.get(&key)
                && sweeps + d.left < max_iter
            {
                known = Some((sweeps, d));
                return true;
            }
            if passed.len() == DESCENT_KEYS {
                passed.remove(0);
            }
            passed.push((key, sweeps));
            false
        },
    );
    // The sweep count this descent's K-features run ends by, at most: remembered from here
    // on, at most one more than the remembered descent took.
    let (end, out) = match known {
        Some((sweeps, d)) => (sweeps + d.left + 1, d.out),
        None if kf.converged => (kf.n_iter, Arc::new(s.bp.run(kf.z, kf.a))),
        // Stopped by the cap: its end is not where the run from these Z would go.
        None => return s.bp.run(kf.z, kf.a),
    };
    for (key, sweeps) in passed {
        let bytes = run_bytes(&out) + 16;
        let d = Descended {
            left: end - sweeps,
            out: out.clone(),
        };
        memo.descents.insert(key, d, bytes);
    }
    Arc::unwrap_or_clone(out)
}

/// Refines a converged K-features run (see the module documentation).
pub(crate) fn refine_k_features(
    s: &Setting,
    rng: &mut ChaCha8Rng,
    mut run: FeatureRun,
) -> FeatureRun {
    let kf = |z: BinaryMatrix, a: RowMatrix| {
        k_features_run(
            s.bp.x,
            s.bp.x_cols,
            s.x_sq,
            s.bp.max_iter,
            s.exact_max_k,
            z,
            a,
        )
    };
    let (x, k, x_sq) = (s.bp.x, run.z.k(), s.x_sq);
    for _ in 0..s.bp.max_iter {
        let current = run.objective;
        // Each feature removed (its rows re-optimised, A re-solved), cheapest first.
        let mut removed: Vec<(f64, BinaryMatrix, RowMatrix)> = (0..k)
            .map(|j| {
                let (z, a, _) = without(x, x_sq, &run.z, &run.a, j);
                (residual_ss(x, &z, &a), z, a)
            })
            .collect();
        removed.sort_by(|p, q| p.0.total_cmp(&q.0));
        let mut next = None;
        // Replace when the grown feature's gain pays for the removal.
        'cheap: for (base, z, a) in &removed {
            let (resid, err) = residuals(x, z, a);
            for _ in 0..GROW_TRIES {
                let Some(g) = grow_from(&resid, &err, rng) else {
                    break;
                };
                if base - g.gain < current - tol(current) {
                    let (z, a) = with_feature(z, a, &g);
                    next = Some(kf(z, a));
                    break 'cheap;
                }
            }
        }
        // Deep: replace whatever the gain, descend, compare.
        if next.is_none() {
            'deep: for (_, z, a) in removed.iter().take(GROW_TRIES) {
                let (resid, err) = residuals(x, z, a);
                for _ in 0..GROW_TRIES {
                    let Some(g) = grow_from(&resid, &err, rng) else {
                        break;
                    };
                    let (z, a) = with_feature(z, a, &g);
                    let out = kf(z, a);
                    if out.objective < current - tol(current) {
                        next = Some(out);
                        break 'deep;
                    }
                }
            }
        }
        let Some(next) = next else {
            break;
        };
        run = chain(run, next);
    }
    run
}

/// The residuals R = X − Z A and their squared norms.
fn residuals(x: MatrixView<'_>, z: &BinaryMatrix, a: &RowMatrix) -> (RowMatrix, Vec<f64>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { residuals_avx512(x, z, a) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { residuals_avx2(x, z, a) };
        }
    }
    residuals_body(x, z, a)
}

/// [`residuals`] compiled with AVX-512F: the same subtractions, eight at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn residuals_avx512(x: MatrixView<'_>, z: &BinaryMatrix, a: &RowMatrix) -> (RowMatrix, Vec<f64>) {
    residuals_body(x, z, a)
}

/// [`residuals`] compiled with AVX2: the same subtractions, four at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn residuals_avx2(x: MatrixView<'_>, z: &BinaryMatrix, a: &RowMatrix) -> (RowMatrix, Vec<f64>) {
    residuals_body(x, z, a)
}

#[inline(always)]
fn residuals_body(x: MatrixView<'_>, z: &BinaryMatrix, a: &RowMatrix) -> (RowMatrix, Vec<f64>) {
    let mut resid = x.to_owned();
    for i in 0..x.n_rows() {
        let r = resid.row_mut(i);
        for (k, ak) in a.rows().enumerate() {
            if z.row(i)[k] != 0 {
                r.iter_mut().zip(ak).for_each(|(v, m)| *v -= m);
            }
        }
    }
    let err = resid.rows().map(sq_norm).collect();
    (resid, err)
}

/// A feature grown from a residual row drawn with probability ∝ ‖r_n‖² (`None` when every
/// residual is zero).
fn grow_from(resid: &RowMatrix, err: &[f64], rng: &mut ChaCha8Rng) -> Option<Grown> {
    let total: f64 = err.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let pick = draw_weighted(err, rng);
    Some(grow_feature(resid.view(), err, resid.row(pick), GROW_STEPS))
}

/// (Z, A) with the grown feature appended.
fn with_feature(z: &BinaryMatrix, a: &RowMatrix, g: &Grown) -> (BinaryMatrix, RowMatrix) {
    let mut zc = z.clone();
    let c = zc.push_col();
    // Without a branch per row (which rows take it is close to random).
    for (i, &t) in g.rows.iter().enumerate() {
        zc.row_mut(i)[c] = u8::from(t);
    }
    let mut ac = a.clone();
    ac.push_row(&g.mean);
    (zc, ac)
}

/// (Z, A) without feature j: its rows re-optimised, A re-solved; with its residual.
fn without(
    x: MatrixView<'_>,
    x_sq: f64,
    z: &BinaryMatrix,
    a: &RowMatrix,
    j: usize,
) -> (BinaryMatrix, RowMatrix, f64) {
    let mut keep = vec![true; z.k()];
    keep[j] = false;
    let affected: Vec<usize> = (0..z.n()).filter(|&n| z.row(n)[j] != 0).collect();
    apply(x, x_sq, z, a, &keep, None, &affected)
}

/// The first removal or merge (removals first, then pairs in order) that lowers the
/// objective below `current`, as the new (Z, A); otherwise the objective after each removal,
/// as (feature, objective), cheapest first.
fn remove_or_merge(
    s: &Setting,
    z: &BinaryMatrix,
    a: &RowMatrix,
    current: f64,
) -> Result<(BinaryMatrix, RowMatrix), Vec<(usize, f64)>> {
    let (x, x_sq, penalty, k) = (s.bp.x, s.x_sq, s.bp.penalty, z.k());
    // Screened on the normal-equation residual, confirmed on the explicit one.
    let lower = |zc: &BinaryMatrix, ac: &RowMatrix, rss: f64| {
        let pen = ac.n_rows() as f64 * penalty;
        rss + pen < current - tol(current) && residual_ss(x, zc, ac) + pen < current - tol(current)
    };
    let mut costs = Vec::with_capacity(k);
    for j in 0..k {
        let (zc, ac, rss) = without(x, x_sq, z, a, j);
        if lower(&zc, &ac, rss) {
            return Ok((zc, ac));
        }
        costs.push((j, rss + ac.n_rows() as f64 * penalty));
    }
    for (i, j) in merge_candidates(z) {
        let mut keep = vec![true; k];
        keep[j] = false;
        let affected: Vec<usize> = (0..z.n())
            .filter(|&n| z.row(n)[i] != 0 || z.row(n)[j] != 0)
            .collect();
        let (zc, ac, rss) = apply(x, x_sq, z, a, &keep, Some((i, j)), &affected);
        if lower(&zc, &ac, rss) {
            return Ok((zc, ac));
        }
    }
    costs.sort_by(|p, q| p.1.total_cmp(&q.1));
    Err(costs)
}

/// The pairs (i < j) a merge is tried on: the 2K whose columns of Z overlap most (Jaccard
/// index |z_i ∧ z_j| / |z_i ∨ z_j|, ties in pair order), in pair order — every pair while
/// K ≤ 5. Two features are worth merging when the same rows hold them; trying all K²/2
/// pairs, each with a least-squares solve, would dominate the refinement at large K.
fn merge_candidates(z: &BinaryMatrix) -> Vec<(usize, usize)> {
    let k = z.k();
    let mut both = vec![0usize; k * k];
    let mut count = vec![0usize; k];
    for n in 0..z.n() {
        let row = z.row(n);
        for i in 0..k {
            if row[i] != 0 {
                count[i] += 1;
                for j in i + 1..k {
                    both[i * k + j] += usize::from(row[j] != 0);
                }
            }
        }
    }
    let mut pairs: Vec<(usize, usize, f64)> = Vec::with_capacity(k * (k.max(1) - 1) / 2);
    for i in 0..k {
        for j in i + 1..k {
            let inter = both[i * k + j];
            let union = count[i] + count[j] - inter;
            let jaccard = if union == 0 {
                1.0
            } else {
                inter as f64 / union as f64
            };
            pairs.push((i, j, jaccard));
        }
    }
    // Stable: equal scores keep pair order.
    pairs.sort_by(|p, q| q.2.total_cmp(&p.2));
    pairs.truncate(2 * k);
    let mut out: Vec<(usize, usize)> = pairs.into_iter().map(|(i, j, _)| (i, j)).collect();
    out.sort_unstable();
    out
}

/// The most values of gathered rows a thread keeps for its next [`apply`] (1 MiB).
const KEPT_GATHERED: usize = 1 << 17;

thread_local! {
    /// [`apply`]'s copy of the affected rows, kept by the thread between calls: a round
    /// makes a candidate for every removal and merge, and a fresh copy each time often met
    /// memory the allocator had returned to the system, so that the kernel zeroed a page
    /// for it again (2 % of a default fit on the tabletop photos, docs/speed.md §2).
    static GATHERED: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// Builds the candidate: optionally OR column `merge.1` into `merge.0`, keep the `keep`
/// columns, solve A by least squares, let the `affected` rows take their best z, re-solve A.
/// Returns it with its residual ‖X − ZA‖² from the normal equations (`x_sq` = ‖X‖²).
fn apply(
    x: MatrixView<'_>,
    x_sq: f64,
    z: &BinaryMatrix,
    a: &RowMatrix,
    keep: &[bool],
    merge: Option<(usize, usize)>,
    affected: &[usize],
) -> (BinaryMatrix, RowMatrix, f64) {
    let mut zc = z.clone();
    if let Some((i, j)) = merge {
        for n in affected {
            let row = zc.row_mut(*n);
            row[i] |= row[j];
        }
    }
    zc.retain_cols(keep);
    let mut ac = a.clone();
    ac.retain_rows(keep);
    if merge.is_some() {
        ac = least_squares(x, &zc).a;
    }
    let kc = zc.k();
    if kc > 0 && !affected.is_empty() {
        let gm = gram(&ac);
        let table = (kc <= MOVE_EXACT_MAX_K).then(|| GraySteps::new(&gm, kc));
        // g = A x_n for the affected rows, by one GEMM on a gathered copy of them, or on X's
        // own rows when they are consecutive (all of them, in a fifth of the calls on the
        // tabletop photos): the same values in the same shape.
        let mut gb = vec![0.0; affected.len() * kc];
        if affected.windows(2).all(|w| w[1] == w[0] + 1) {
            let s = affected[0];
            gemm_xat(
                &mut gb,
                x.rows_slice(s, s + affected.len()),
                affected.len(),
                &ac,
            );
        } else {
            // Taken out while in use, so a call made inside this one would start its own.
            let mut xb = GATHERED.with(|g| std::mem::take(&mut *g.borrow_mut()));
            xb.clear();
            for &n in affected {
                xb.extend_from_slice(x.row(n));
            }
            gemm_xat(&mut gb, &xb, affected.len(), &ac);
            if xb.capacity() <= KEPT_GATHERED {
                GATHERED.with(|g| *g.borrow_mut() = xb);
            }
        }
        // Each row's best given the remaining means (through the table, four rows at a time).
        let mut cands = vec![0u8; affected.len() * kc];
        if let Some(t) = &table {
            t.best_rows(&gb, &mut cands);
        }
        for (idx, &n) in affected.iter().enumerate() {
            let g = &gb[idx * kc..(idx + 1) * kc];
            let cand = &mut cands[idx * kc..(idx + 1) * kc];
            if table.is_none() {
                cand.copy_from_slice(zc.row(n));
                descend_row(cand, g, &gm, 4 * kc + 8);
            }
            if row_cost(cand, g, &gm) < row_cost(zc.row(n), g, &gm) {
                zc.row_mut(n).copy_from_slice(cand);
            }
        }
    }
    let (ls, rss) = least_squares_and_rss(x, &zc, x_sq);
    (zc, ls.a, rss)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::seeding::{FeatureSeeding, SeedTarget, seed_features};
    use crate::linalg::row_sq_norms;
    use crate::restarts::run_rng;

    /// Whether two runs hold the same state bit for bit: Z, A and the objective.
    fn same_state(p: &FeatureRun, q: &FeatureRun) -> bool {
        p.objective.to_bits() == q.objective.to_bits()
            && p.z == q.z
            && p.a.n_rows() == q.a.n_rows()
            && p.a.as_slice().len() == q.a.as_slice().len()
            && p.a
                .as_slice()
                .iter()
                .zip(q.a.as_slice())
                .all(|(u, v)| u.to_bits() == v.to_bits())
    }

    fn same_run(p: &FeatureRun, q: &FeatureRun) -> bool {
        same_state(p, q)
            && p.n_iter == q.n_iter
            && p.converged == q.converged
            && p.trace.len() == q.trace.len()
            && p.trace
                .iter()
                .zip(&q.trace)
                .all(|(u, v)| u.to_bits() == v.to_bits())
    }

    /// Noisy block images (60 rows) and their rows' squared norms: the data of the memo tests.
    fn blocks() -> (RowMatrix, Vec<f64>) {
        let x = crate::generate::block_images(60, 0.5, 0.5, 3).unwrap().x;
        let norms = row_sq_norms(x.view());
        (x, norms)
    }

    /// The residuals, whichever form the CPU runs, are X less each held mean in turn, bit for
    /// bit, with their squared norms.
    #[test]
    fn residuals_are_the_data_less_the_held_means() {
        let (x, _) = blocks();
        let (n, d, k) = (x.n_rows(), x.n_cols(), 5);
        let a = RowMatrix::new(k, d, (0..k * d).map(|i| (i % 13) as f64 / 3.7).collect());
        let mut z = BinaryMatrix::zeros(n, k);
        for i in 0..n {
            for c in 0..k {
                z.row_mut(i)[c] = u8::from((i + 2 * c) % 3 == 0);
            }
        }
        let (resid, err) = residuals(x.view(), &z, &a);
        for i in 0..n {
            let mut want = x.row(i).to_vec();
            for c in (0..k).filter(|&c| z.row(i)[c] != 0) {
                for (v, m) in want.iter_mut().zip(a.row(c)) {
                    *v -= m;
                }
            }
            let bits = |r: &[f64]| r.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(resid.row(i)), bits(&want), "row {i}");
            assert_eq!(err[i].to_bits(), sq_norm(&want).to_bits(), "row {i}");
        }
    }

    /// The memo tests' setting on `blocks()`: P = 30, no cap on K, seed 5.
    fn blocks_setting<'a>(
        x: &'a RowMatrix,
        norms: &'a [f64],
        memo: Option<&'a RoundMemo>,
        max_iter: usize,
    ) -> Setting<'a> {
        Setting {
            bp: BpMeansRun {
                x: x.view(),
                x_norms: norms,
                penalty: 30.0,
                k_max: usize::MAX,
                max_iter,
                x_cols: None,
            },
            exact_max_k: 12,
            x_sq: crate::features::lstsq::entry_sq_sum(x.view()),
            seed: 5,
            memo,
        }
    }

    /// `count` BP-means runs from grown seeds, restart r drawing from stream r of `seed`
    /// (each run's generator is returned with it, for draws after its seeding).
    fn seeded_runs(s: &Setting, seed: u64, count: u64) -> Vec<(FeatureRun, ChaCha8Rng)> {
        let target = SeedTarget::Penalty {
            penalty: s.bp.penalty,
            k_max: s.bp.k_max,
        };
        (0..count)
            .map(|r| {
                let mut rng = run_rng(seed, r);
                let (z, a) =
                    seed_features(s.bp.x, FeatureSeeding::BaseFeature, target, true, &mut rng);
                (s.bp.run(z, a), rng)
            })
            .collect()
    }

    /// A remembered round is the round made afresh: every restart refined with one memo
    /// shared by all ends bit for bit where it ends without a memo (Z, A, objective, trace,
    /// iterations), whichever restarts came before it, and later restarts do take rounds
    /// from the memo.
    #[test]
    fn remembered_rounds_give_the_rounds_made_afresh() {
        let (x, norms) = blocks();
        let setting = |memo| blocks_setting(&x, &norms, memo, 300);
        let memo = RoundMemo::default();
        let runs: Vec<FeatureRun> = seeded_runs(&setting(None), 5, 16)
            .into_iter()
            .map(|(run, _)| run)
            .collect();
        let fresh: Vec<FeatureRun> = runs
            .iter()
            .map(|run| refine_bp_means(&setting(None), run.clone()))
            .collect();
        // A run whose objective was never computed refines to the same end: the refinement
        // derives its state from Z.
        for (run, refined) in runs.iter().zip(&fresh) {
            let unscored = FeatureRun {
                objective: f64::NAN,
                a: RowMatrix::zeros(0, x.n_cols()),
                ..run.clone()
            };
            let from_z = refine_bp_means(&setting(None), unscored);
            assert!(same_run(&from_z, refined));
        }
        // Forward, then backward through the same memo: each restart meets it filled
        // differently.
        for pass in 0..2 {
            for i in 0..runs.len() {
                let i = if pass == 0 { i } else { runs.len() - 1 - i };
                let shared = refine_bp_means(&setting(Some(&memo)), runs[i].clone());
                assert!(same_run(&shared, &fresh[i]), "restart {i}, pass {pass}");
                assert!(shared.objective <= runs[i].objective + tol(runs[i].objective));
            }
        }
        assert!(memo.hits() >= runs.len(), "hits {}", memo.hits());
    }

    /// A remembered descent is the descent made afresh: from removals and grown features of
    /// many runs, taken in two orders through one memo, every descent ends bit for bit where
    /// it ends without the memo, under caps on the sweeps that stop some K-features runs
    /// short (those must not be taken from descents that went further), and later descents
    /// do take the memo's.
    #[test]
    fn remembered_descents_give_the_descents_made_afresh() {
        let (x, norms) = blocks();
        let caps = [1, 2, 3, 300];
        let memos: Vec<RoundMemo> = caps.iter().map(|_| RoundMemo::default()).collect();
        let setting = |memo, max_iter| blocks_setting(&x, &norms, memo, max_iter);
        let mut starts = Vec::new();
        for (run, mut rng) in seeded_runs(&setting(None, 300), 7, 12) {
            starts.extend((0..run.z.k()).map(|j| dropped(&run.z, &run.a, j)));
            let (resid, err) = residuals(x.view(), &run.z, &run.a);
            for _ in 0..3 {
                if let Some(g) = grow_from(&resid, &err, &mut rng) {
                    starts.push(with_feature(&run.z, &run.a, &g));
                }
            }
        }
        // Each start beside the states its K-features run reaches after one and two sweeps:
        // the same path one and two sweeps on, so they meet the same Z at different sweep
        // counts, and under a cap one may end where another does not.
        let x_sq = setting(None, 300).x_sq;
        let on = |(z, a): &(BinaryMatrix, RowMatrix), sweeps| {
            let r = k_features_run_until(
                x.view(),
                None,
                x_sq,
                sweeps,
                12,
                z.clone(),
                a.clone(),
                |_, _| false,
            );
            (r.z, r.a)
        };
        let starts: Vec<(BinaryMatrix, RowMatrix)> = starts
            .iter()
            .flat_map(|start| [start.clone(), on(start, 1), on(start, 2)])
            .collect();
        for (&max_iter, memo) in caps.iter().zip(&memos) {
            let fresh: Vec<FeatureRun> = starts
                .iter()
                .map(|(z, a)| descend(&setting(None, max_iter), z.clone(), a.clone()))
                .collect();
            for pass in 0..2 {
                for i in 0..starts.len() {
                    let i = if pass == 0 { i } else { starts.len() - 1 - i };
                    let (z, a) = starts[i].clone();
                    let shared = descend(&setting(Some(memo), max_iter), z, a);
                    assert!(
                        same_run(&shared, &fresh[i]),
                        "start {i}, pass {pass}, cap {max_iter}"
                    );
                }
            }
            // The second pass meets every start's own Z again (from its second sweep on,
            // within the largest cap).
            if max_iter == 300 {
                assert!(
                    memo.descent_hits() >= starts.len(),
                    "hits {}",
                    memo.descent_hits()
                );
            }
        }
    }

    /// The state hash sees every part of the state.
    #[test]
    fn the_state_hash_changes_with_z_a_and_the_objective() {
        let z = BinaryMatrix::from_rows(&[[1, 0], [0, 1], [1, 1]]);
        let a = RowMatrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]);
        let run = FeatureRun {
            z,
            a,
            objective: 1.5,
            n_iter: 3,
            converged: true,
            trace: vec![2.0, 1.5],
        };
        let h = state_hash(0, &run);
        let bare = FeatureRun {
            n_iter: 0,
            trace: Vec::new(),
            ..run.clone()
        };
        assert_eq!(h, state_hash(0, &bare));
        assert_ne!(h, state_hash(1, &run));
        let mut other = run.clone();
        other.z.set(2, 0, false);
        assert_ne!(h, state_hash(0, &other));
        let mut other = run.clone();
        other.a.row_mut(1)[0] = 3.0 + f64::EPSILON * 4.0;
        assert_ne!(h, state_hash(0, &other));
        let mut other = run.clone();
        other.objective = 1.5 + f64::EPSILON;
        assert_ne!(h, state_hash(0, &other));
        assert!(!same_state(&run, &other));
    }
}
