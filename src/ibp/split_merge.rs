//! Split–merge Metropolis–Hastings moves for the features of the linear-Gaussian IBP, after
//! the sequentially-allocated merge–split of Dahl (2003) and its feature form in Meeds et al.
//! (2007), scored on the collapsed marginal p(X | Z) (A integrated out, D-V&G Eq. 5).
//!
//! Single-entry Gibbs moves cannot take apart a feature that stands for the sum of two true
//! ones, nor join two halves of one: every intermediate state is far less probable. One
//! attempt:
//!
//! 1. Draw two distinct rows i ≠ j uniformly; if either holds no feature, nothing happens.
//!    Draw a feature k uniformly among those i holds and l among those j holds.
//! 2. k = l: propose to **split** k into k₁ ∋ i and k₂ ∋ j. k₂ is new; the other holders of k
//!    (the set S) are allocated to k₁ only, k₂ only or both by one of three proposals
//!    ([`MIX`]): sequential allocation — one by one, in a uniformly random order, each with
//!    probability ∝ its predictive density under a two-feature linear-Gaussian model of the
//!    residuals fitted to the rows allocated so far (anchors first: i on k₁, j on k₂; last,
//!    i may also take k₂ and j also k₁, by the same rule) —, random halves, or all on both.
//!    The residual of row n is x_n − Σ_{f ∉ {k}} z_nf â_f, with â the posterior mean of A
//!    given Z without k (the same in the split and the merged state). q is the mixture's
//!    probability of the allocation drawn.
//! 3. k ≠ l: propose to **merge** k and l into one feature held by every row that holds
//!    either. The reverse split is the one of step 2 that would give back k (with i) and l
//!    (with j); its allocation probability q is computed by replaying step 2 with the
//!    allocations forced to the current ones.
//! 4. Accept with probability min(1, R): for a split (Z → Z′),
//!    R = \[π(Z′) / π(Z)\] · \[(1/(K′_i K′_j)) / ((1/(K_i K_j)) q)\],
//!    and for a merge the reciprocal form, where K_i counts the features row i holds.
//!
//! The target. The chain's features form a list; read as a list in uniformly random order,
//! \[Z\] has K!/∏_h K_h! orderings, so P(Z) = P(\[Z\]) ∏_h K_h!/K! and
//! π(Z) ∝ (α^K/K!) ∏_k (N − m_k)!(m_k − 1)!/N! · p(X | Z): the history counts K_h of Eq. 1
//! cancel. A move that also placed its new features at uniformly random positions would add
//! 1/(K′(K′ − 1)) (split: two positions in a list of K′ = K + 1) or 1/K′ (merge) to the
//! proposal; with the K! of π these leave α^K ∏_k f(m_k) p(X | Z) as the ratio's target,
//! and that is what R uses. No choice above depends on the order of the list, so where the
//! new features are actually put changes nothing: the move leaves P(\[Z\] | X) invariant,
//! which `tests/ibp_exact.rs` checks on 3 rows (the move alone from exact posterior draws,
//! and chains of Gibbs sweeps with split–merge attempts).
//!
//! Cost of one attempt: the Gram matrices ZᵀZ, ZᵀX are kept for the current state (built
//! once per call, O(N k̄ (k̄ + D)) for k̄ features per row), and a proposal costs
//! O(NK + |S| k̄ D + K³ + K²D).

use super::common::{BlockFault, Hyper};
use super::dense::{chol_logdet, chol_solve, cholesky, forward, remove_index};
use super::model::ln_factorial_table;
use super::recode::{self, RecodeFault};
use super::state::Feats;
use crate::RowMatrix;
use crate::restarts::random_permutation;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// A deliberate error in the acceptance ratio, for the tests that show the exact-posterior
/// checks catch it. Only [`Fault::None`] is a correct sampler.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The correct move.
    None,
    /// The allocation probability q of the split is left out of the ratio.
    NoAllocation,
    /// The row-choice terms K_i K_j are left out of the ratio.
    NoRowChoice,
    /// The 1/K! of π(Z) is kept in the ratio without the matching positions of the new
    /// features in the proposal (the ratio of a list read in a fixed order).
    KFactorial,
}

/// What one attempt did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// No proposal (a chosen row holds no feature).
    Nothing,
    /// A proposal was rejected.
    Rejected,
    /// A split was accepted.
    Split,
    /// A merge was accepted.
    Merged,
}

/// ZᵀZ (`K × K`) and ZᵀX (`K × D`) of the current state, with the constants of Eq. 5.
pub(crate) struct Marginal {
    k: usize,
    ztz: Vec<f64>,
    ztx: Vec<f64>,
}

impl Marginal {
    pub(super) fn of(x: &RowMatrix, feats: &Feats) -> Self {
        let (n, d, k) = (x.n_rows(), x.n_cols(), feats.k());
        let mut ztz = vec![0.0; k * k];
        let mut ztx = vec![0.0; k * d];
        let mut on = Vec::with_capacity(k);
        for r in 0..n {
            on.clear();
            on.extend((0..k).filter(|&c| feats.get(r, c)));
            for &a in &on {
                for &b in &on {
                    ztz[a * k + b] += 1.0;
                }
                for (t, v) in ztx[a * d..(a + 1) * d].iter_mut().zip(x.row(r)) {
                    *t += v;
                }
            }
        }
        Self { k, ztz, ztx }
    }

    /// log p(X | Z) up to the terms that do not depend on Z: −(N − K)D log σ_X − KD log σ_A
    /// − (D/2) log det M + ‖L⁻¹ZᵀX‖²/(2σ_X²), M = ZᵀZ + (σ_X²/σ_A²)I = L Lᵀ (Eq. 5 without
    /// −(ND/2) log 2π − ‖X‖²/(2σ_X²)).
    pub(super) fn log_lik(&self, d: usize, h: &Hyper) -> f64 {
        let k = self.k;
        let r = (h.sigma_x / h.sigma_a).powi(2);
        let mut m = self.ztz.clone();
        for i in 0..k {
            m[i * k + i] += r;
        }
        let l = cholesky(&m, k).expect("ZᵀZ + rI is positive definite");
        let mut b = self.ztx.clone();
        forward(&l, k, &mut b, d);
        let explained: f64 = b.iter().map(|v| v * v).sum();
        let (kf, df) = (k as f64, d as f64);
        kf * df * (h.sigma_x.ln() - h.sigma_a.ln()) - 0.5 * df * chol_logdet(&l, k)
            + explained / (2.0 * h.sigma_x * h.sigma_x)
    }

    /// The Gram matrices after removing the columns `gone` (increasing) and appending `new`.
    pub(super) fn proposal(
        &self,
        x: &RowMatrix,
        feats: &Feats,
        gone: &[usize],
        new: &[Vec<u8>],
    ) -> Marginal {
        let d = x.n_cols();
        let kept: Vec<usize> = (0..self.k).filter(|c| !gone.contains(c)).collect();
        let k2 = kept.len() + new.len();
        let mut ztz = vec![0.0; k2 * k2];
        let mut ztx = vec![0.0; k2 * d];
        for (a, &ca) in kept.iter().enumerate() {
            for (b, &cb) in kept.iter().enumerate() {
                ztz[a * k2 + b] = self.ztz[ca * self.k + cb];
            }
            ztx[a * d..(a + 1) * d].copy_from_slice(&self.ztx[ca * d..(ca + 1) * d]);
        }
        for (t, col) in new.iter().enumerate() {
            let a = kept.len() + t;
            for (r, _) in col.iter().enumerate().filter(|(_, v)| **v != 0) {
                for (b, &cb) in kept.iter().enumerate() {
                    if feats.get(r, cb) {
                        ztz[a * k2 + b] += 1.0;
                        ztz[b * k2 + a] += 1.0;
                    }
                }
                for (u, other) in new.iter().enumerate() {
                    if other[r] != 0 {
                        ztz[a * k2 + kept.len() + u] += 1.0;
                    }
                }
                for (s, v) in ztx[a * d..(a + 1) * d].iter_mut().zip(x.row(r)) {
                    *s += v;
                }
            }
        }
        Marginal { k: k2, ztz, ztx }
    }

    /// The Gram matrices ZᵀZ (`K × K`) and ZᵀX (`K × D`).
    pub(super) fn gram(&self) -> (&[f64], &[f64]) {
        (&self.ztz, &self.ztx)
    }

    /// The posterior mean of A (`K × D`) given Z without the columns `gone`, in the order of
    /// the remaining columns.
    fn mean_without(&self, gone: &[usize], d: usize, h: &Hyper) -> (Vec<usize>, Vec<f64>) {
        let mut m = self.ztz.clone();
        let mut b = self.ztx.clone();
        let mut k = self.k;
        let mut kept: Vec<usize> = (0..k).collect();
        for &c in gone.iter().rev() {
            m = remove_index(&m, k, c);
            b.drain(c * d..(c + 1) * d);
            kept.remove(c);
            k -= 1;
        }
        let r = (h.sigma_x / h.sigma_a).powi(2);
        for i in 0..k {
            m[i * k + i] += r;
        }
        let l = cholesky(&m, k).expect("ZᵀZ + rI is positive definite");
        chol_solve(&l, k, &mut b, d);
        (kept, b)
    }
}

/// The two-feature linear-Gaussian model of the allocation step: precision P (2 × 2),
/// information h (2 × D) of the two features' A given the rows allocated so far.
struct PairModel {
    p: [f64; 3],
    h: Vec<f64>,
    sx2: f64,
}

impl PairModel {
    fn new(d: usize, hyper: &Hyper) -> Self {
        let pa = 1.0 / hyper.sigma_a.powi(2);
        Self {
            p: [pa, 0.0, pa],
            h: vec![0.0; 2 * d],
            sx2: hyper.sigma_x.powi(2),
        }
    }

    /// Adds (`sign` = 1) or removes (−1) residual `r` with memberships `z`.
    fn add(&mut self, z: (bool, bool), r: &[f64], sign: f64) {
        let (a, b) = (f64::from(u8::from(z.0)), f64::from(u8::from(z.1)));
        let s = sign / self.sx2;
        self.p[0] += s * a * a;
        self.p[1] += s * a * b;
        self.p[2] += s * b * b;
        let d = r.len();
        for (t, v) in r.iter().enumerate() {
            self.h[t] += s * a * v;
            self.h[d + t] += s * b * v;
        }
    }

    /// log N(r; zᵀμ, (zᵀΣz + σ_X²) I) up to −(D/2) log 2π, with Σ = P⁻¹, μ = Σh.
    #[cfg(test)]
    fn log_pred(&self, z: (bool, bool), r: &[f64]) -> f64 {
        let t = OPTIONS
            .iter()
            .position(|&o| o == z)
            .expect("a valid option");
        self.log_pred3(r)[t]
    }

    /// The predictive log densities of [`OPTIONS`] — z = (1, 0), (0, 1), (1, 1) — in one pass
    /// over the D entries: with m₁ = Σ₀·h and m₂ = Σ₁·h (the rows of Σ times h), the means
    /// are m₁, m₂ and m₁ + m₂, and the variances Σ₀₀, Σ₁₁ and Σ₀₀ + 2Σ₀₁ + Σ₁₁, plus σ_X².
    fn log_pred3(&self, r: &[f64]) -> [f64; 3] {
        let [p00, p01, p11] = self.p;
        let det = p00 * p11 - p01 * p01;
        let (s00, s01, s11) = (p11 / det, -p01 / det, p00 / det);
        let d = r.len();
        let (h0, h1) = self.h.split_at(d);
        let (mut q1, mut q2, mut q3) = (0.0, 0.0, 0.0);
        for ((&v, &a), &b) in r.iter().zip(h0).zip(h1) {
            let m1 = s00 * a + s01 * b;
            let m2 = s01 * a + s11 * b;
            let (e1, e2) = (v - m1, v - m2);
            let e3 = e1 - m2;
            q1 += e1 * e1;
            q2 += e2 * e2;
            q3 += e3 * e3;
        }
        let var = [
            s00 + self.sx2,
            s11 + self.sx2,
            s00 + 2.0 * s01 + s11 + self.sx2,
        ];
        let df = d as f64;
        [
            -0.5 * df * var[0].ln() - 0.5 * q1 / var[0],
            -0.5 * df * var[1].ln() - 0.5 * q2 / var[1],
            -0.5 * df * var[2].ln() - 0.5 * q3 / var[2],
        ]
    }
}

/// A row's memberships (k₁, k₂) in a split, in the order of [`PairModel::log_pred3`].
const OPTIONS: [(bool, bool); 3] = [(true, false), (false, true), (true, true)];

/// Draws (or, with `forced`, scores) the allocation of the split: returns each row's
/// memberships (k₁, k₂) and log q. `rows[0]` is the anchor i, `rows[1]` the anchor j, the
/// rest S in the order to allocate them; `res` holds their residuals in the same order.
fn allocate(
    res: &[Vec<f64>],
    forced: Option<&[(bool, bool)]>,
    hyper: &Hyper,
    rng: &mut ChaCha8Rng,
) -> (Vec<(bool, bool)>, f64) {
    let d = res[0].len();
    let mut model = PairModel::new(d, hyper);
    let mut alloc = vec![(true, false), (false, true)];
    model.add(alloc[0], &res[0], 1.0);
    model.add(alloc[1], &res[1], 1.0);
    let mut logq = 0.0;
    let mut choose = |options: &[(bool, bool)],
                      r: &[f64],
                      model: &PairModel,
                      want: Option<(bool, bool)>,
                      rng: &mut ChaCha8Rng| {
        let all = model.log_pred3(r);
        let lw: Vec<f64> = options
            .iter()
            .map(|&z| {
                all[OPTIONS
                    .iter()
                    .position(|&o| o == z)
                    .expect("a valid option")]
            })
            .collect();
        let max = lw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = lw.iter().map(|l| (l - max).exp()).collect();
        let total: f64 = w.iter().sum();
        let pick = match want {
            Some(z) => options
                .iter()
                .position(|&o| o == z)
                .expect("a valid option"),
            None => {
                let u = rng.random::<f64>() * total;
                let mut acc = 0.0;
                let mut pick = options.len() - 1;
                for (t, wt) in w.iter().enumerate() {
                    acc += wt;
                    if u < acc {
                        pick = t;
                        break;
                    }
                }
                pick
            }
        };
        logq += (w[pick] / total).ln();
        options[pick]
    };
    for (t, r) in res.iter().enumerate().skip(2) {
        let z = choose(&OPTIONS, r, &model, forced.map(|f| f[t]), rng);
        model.add(z, r, 1.0);
        alloc.push(z);
    }
    // The anchors' second membership, each with itself taken out of the model.
    for (t, options) in [
        (0, [(true, false), (true, true)]),
        (1, [(false, true), (true, true)]),
    ] {
        model.add(alloc[t], &res[t], -1.0);
        let z = choose(&options, &res[t], &model, forced.map(|f| f[t]), rng);
        model.add(z, &res[t], 1.0);
        alloc[t] = z;
    }
    (alloc, logq)
}

/// How a split allocates the rows of S: with probability `MIX[0]` by sequential allocation,
/// `MIX[1]` in random halves (each row of S on k₁ or k₂ with probability ½, the anchors on
/// their own feature only), `MIX[2]` all on both (k₁ and k₂ then have the same rows).
///
/// Sequential allocation alone almost never gives back the arbitrary partition of two
/// copies of one feature held by disjoint halves of its rows (log q ≈ −2.3 per row on the
/// block images), nor the "all on both" of two halves of one feature: the merges that would
/// undo those traps were then always rejected. The mixture keeps them reversible at a
/// price near the prior's own gain, log q ≥ log ¼ − |S| log 2.
const MIX: [f64; 3] = [0.5, 0.25, 0.25];

/// log q of an allocation under the mixture [`MIX`], given its log q under sequential
/// allocation.
fn log_q_mixture(alloc: &[(bool, bool)], sams: f64) -> f64 {
    let halves = alloc[0] == (true, false)
        && alloc[1] == (false, true)
        && alloc[2..].iter().all(|&z| z != (true, true));
    let both = alloc.iter().all(|&z| z == (true, true));
    let mut terms = vec![MIX[0].ln() + sams];
    if halves {
        terms.push(MIX[1].ln() - (alloc.len() - 2) as f64 * std::f64::consts::LN_2);
    }
    if both {
        terms.push(MIX[2].ln());
    }
    let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    max + terms.iter().map(|t| (t - max).exp()).sum::<f64>().ln()
}

/// Runs `attempts` split–merge attempts and `recodes` recoding attempts (module `recode`)
/// on `feats`, interleaved (one of each while both last); returns how many were accepted and
/// the Gram matrices of the final Z ([`Marginal::gram`]), or `None` when no attempt ran.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    x: &RowMatrix,
    feats: &mut Feats,
    hyper: &Hyper,
    attempts: usize,
    recodes: usize,
    fault: Fault,
    recode_fault: RecodeFault,
    rng: &mut ChaCha8Rng,
) -> (usize, Option<Marginal>) {
    if attempts.max(recodes) == 0 || x.n_rows() < 2 {
        return (0, None);
    }
    let lf = ln_factorial_table(x.n_rows());
    let mut marg = Marginal::of(x, feats);
    let mut ll = marg.log_lik(x.n_cols(), hyper);
    let mut accepted = 0;
    for t in 0..attempts.max(recodes) {
        if t < attempts {
            match attempt(x, feats, &mut marg, &mut ll, hyper, &lf, fault, rng) {
                Outcome::Split | Outcome::Merged => accepted += 1,
                Outcome::Nothing | Outcome::Rejected => {}
            }
        }
        if t < recodes
            && recode::attempt(x, feats, &mut marg, &mut ll, hyper, &lf, recode_fault, rng)
        {
            accepted += 1;
        }
    }
    (accepted, Some(marg))
}

/// Applies `attempts` split–merge attempts (module documentation) to `z` (`N × K`, non-zero
/// entries count as 1, columns no row holds are dropped) under the linear-Gaussian IBP with
/// the given α, σ_X, σ_A, and returns the new Z. Each attempt leaves P(\[Z\] | X) invariant.
///
/// # Panics
/// When `z` and `x` differ in N or a hyperparameter is not positive.
pub fn split_merge_steps(
    x: &RowMatrix,
    z: &RowMatrix,
    alpha: f64,
    sigma_x: f64,
    sigma_a: f64,
    attempts: usize,
    rng: &mut ChaCha8Rng,
) -> RowMatrix {
    split_merge_steps_with_fault(x, z, alpha, sigma_x, sigma_a, attempts, Fault::None, rng)
}

/// [`split_merge_steps`] with a deliberate error in the acceptance ratio (tests only).
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn split_merge_steps_with_fault(
    x: &RowMatrix,
    z: &RowMatrix,
    alpha: f64,
    sigma_x: f64,
    sigma_a: f64,
    attempts: usize,
    fault: Fault,
    rng: &mut ChaCha8Rng,
) -> RowMatrix {
    let hyper = (alpha, sigma_x, sigma_a);
    moves_alone(x, z, hyper, (attempts, 0), (fault, RecodeFault::None), rng)
}

/// Only the Metropolis–Hastings moves on Z, at fixed α, σ_X, σ_A (`hyper`): `attempts`
/// split–merge and recoding attempts, with the given faults (tests of the moves alone).
///
/// # Panics
/// When `z` and `x` differ in N or a hyperparameter is not positive.
pub(crate) fn moves_alone(
    x: &RowMatrix,
    z: &RowMatrix,
    (alpha, sigma_x, sigma_a): (f64, f64, f64),
    (split_merges, recodes): (usize, usize),
    (fault, recode_fault): (Fault, RecodeFault),
    rng: &mut ChaCha8Rng,
) -> RowMatrix {
    assert_eq!(x.n_rows(), z.n_rows(), "Z and X differ in N");
    assert!(
        alpha > 0.0 && sigma_x > 0.0 && sigma_a > 0.0,
        "hyperparameters must be positive"
    );
    let mut feats = Feats::from_matrix(z);
    let h = Hyper {
        alpha,
        sigma_x,
        sigma_a,
        k_new_max: 0,
        block: 0,
        block_fault: BlockFault::None,
    };
    run(
        x,
        &mut feats,
        &h,
        split_merges,
        recodes,
        fault,
        recode_fault,
        rng,
    );
    feats.to_row_matrix()
}

/// log f(m) = log\[(N − m)! (m − 1)! / N!\], one feature's part of Eq. 1.
pub(super) fn log_f(m: usize, lf: &[f64]) -> f64 {
    let n = lf.len() - 1;
    lf[n - m] + lf[m - 1] - lf[n]
}

#[allow(clippy::too_many_arguments)]
fn attempt(
    x: &RowMatrix,
    feats: &mut Feats,
    marg: &mut Marginal,
    ll: &mut f64,
    hyper: &Hyper,
    lf: &[f64],
    fault: Fault,
    rng: &mut ChaCha8Rng,
) -> Outcome {
    let (n, d) = (x.n_rows(), x.n_cols());
    let i = rng.random_range(0..n);
    let mut j = rng.random_range(0..n - 1);
    if j >= i {
        j += 1;
    }
    let held = |r: usize| -> Vec<usize> { (0..feats.k()).filter(|&c| feats.get(r, c)).collect() };
    let (fi, fj) = (held(i), held(j));
    if fi.is_empty() || fj.is_empty() {
        return Outcome::Nothing;
    }
    let k = fi[rng.random_range(0..fi.len())];
    let l = fj[rng.random_range(0..fj.len())];
    let split = k == l;
    // The features taken out, increasing, and the rows of the merged feature.
    let gone: Vec<usize> = if split {
        vec![k]
    } else {
        vec![k.min(l), k.max(l)]
    };
    let union: Vec<u8> = (0..n)
        .map(|r| u8::from(gone.iter().any(|&c| feats.get(r, c))))
        .collect();
    // Allocation order: anchors, then S in a uniformly random order.
    let mut rows = vec![i, j];
    let s: Vec<usize> = (0..n)
        .filter(|&r| union[r] != 0 && r != i && r != j)
        .collect();
    rows.extend(random_permutation(s.len(), rng).into_iter().map(|t| s[t]));
    // Residuals given the other features' posterior mean.
    let (kept, a_rest) = marg.mean_without(&gone, d, hyper);
    let res: Vec<Vec<f64>> = rows
        .iter()
        .map(|&r| {
            let mut e = x.row(r).to_vec();
            for (t, &c) in kept.iter().enumerate() {
                if feats.get(r, c) {
                    e.iter_mut()
                        .zip(&a_rest[t * d..(t + 1) * d])
                        .for_each(|(v, w)| *v -= w);
                }
            }
            e
        })
        .collect();
    let (new_cols, logq, log_prior, ki2, kj2) = if split {
        let u = rng.random::<f64>();
        let (alloc, sams) = if u < MIX[0] {
            allocate(&res, None, hyper, rng)
        } else {
            let alloc: Vec<(bool, bool)> = if u < MIX[0] + MIX[1] {
                let mut a = vec![(true, false), (false, true)];
                a.extend((2..rows.len()).map(|_| {
                    let one = rng.random::<bool>();
                    (one, !one)
                }));
                a
            } else {
                vec![(true, true); rows.len()]
            };
            let sams = allocate(&res, Some(&alloc), hyper, rng).1;
            (alloc, sams)
        };
        let logq = log_q_mixture(&alloc, sams);
        let mut c1 = vec![0u8; n];
        let mut c2 = vec![0u8; n];
        for (&r, &(a, b)) in rows.iter().zip(&alloc) {
            c1[r] = u8::from(a);
            c2[r] = u8::from(b);
        }
        let m1 = c1.iter().filter(|&&v| v != 0).count();
        let m2 = c2.iter().filter(|&&v| v != 0).count();
        let lp = hyper.alpha.ln() + log_f(m1, lf) + log_f(m2, lf) - log_f(feats.m(k), lf);
        // Row i gains k₂ when it takes both; so does j.
        let (ki2, kj2) = (
            fi.len() + usize::from(alloc[0].1),
            fj.len() + usize::from(alloc[1].0),
        );
        (vec![c1, c2], logq, lp, ki2, kj2)
    } else {
        let forced: Vec<(bool, bool)> = rows
            .iter()
            .map(|&r| (feats.get(r, k), feats.get(r, l)))
            .collect();
        let (_, sams) = allocate(&res, Some(&forced), hyper, rng);
        let logq = log_q_mixture(&forced, sams);
        let m = union.iter().filter(|&&v| v != 0).count();
        let lp = -hyper.alpha.ln() + log_f(m, lf) - log_f(feats.m(k), lf) - log_f(feats.m(l), lf);
        let (ki2, kj2) = (
            fi.len() - usize::from(feats.get(i, l)),
            fj.len() - usize::from(feats.get(j, k)),
        );
        (vec![union], logq, lp, ki2, kj2)
    };
    let prop = marg.proposal(x, feats, &gone, &new_cols);
    let ll2 = prop.log_lik(d, hyper);
    // log of (choice of rows' features after) / (before): 1/(K′_i K′_j) over 1/(K_i K_j).
    let choice = ((fi.len() * fj.len()) as f64).ln() - ((ki2 * kj2) as f64).ln();
    let mut log_r = ll2 - *ll;
    log_r += log_prior;
    if fault == Fault::KFactorial {
        // K!/(K + 1)! for a split, K!/(K − 1)! for a merge.
        let k = feats.k() as f64;
        log_r += if split { -(k + 1.0).ln() } else { k.ln() };
    }
    if fault != Fault::NoRowChoice {
        log_r += choice;
    }
    if fault != Fault::NoAllocation {
        log_r += if split { -logq } else { logq };
    }
    if std::env::var_os("SM_DEBUG").is_some() {
        eprintln!(
            "{} k={k} l={l} |S|={} dll={:.1} prior={log_prior:.1} choice={choice:.2} logq={logq:.1} logR={log_r:.1}",
            if split { "split" } else { "merge" },
            rows.len() - 2,
            ll2 - *ll
        );
    }
    if log_r >= 0.0 || rng.random::<f64>() < log_r.exp() {
        for &c in gone.iter().rev() {
            feats.remove(c);
        }
        for col in new_cols {
            feats.push_col(col);
        }
        *marg = prop;
        *ll = ll2;
        if split {
            Outcome::Split
        } else {
            Outcome::Merged
        }
    } else {
        Outcome::Rejected
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ibp::model::collapsed_log_lik;
    use crate::restarts::run_rng;

    fn hyper() -> Hyper {
        Hyper {
            alpha: 1.5,
            sigma_x: 0.4,
            sigma_a: 1.1,
            k_new_max: 4,
            block: 0,
            block_fault: BlockFault::None,
        }
    }

    #[test]
    fn marginal_and_proposal_match_eq5() {
        let g = crate::generate::ibp_linear_gaussian(25, 4, 2.0, 1.0, 0.3, 7).unwrap();
        let feats = Feats::from_matrix(&g.z);
        let h = hyper();
        let (n, d) = (25, 4);
        let total: f64 = g.x.as_slice().iter().map(|v| v * v).sum();
        let constant = -0.5 * (n * d) as f64 * std::f64::consts::TAU.ln()
            - (n * d) as f64 * h.sigma_x.ln()
            - total / (2.0 * h.sigma_x * h.sigma_x);
        let marg = Marginal::of(&g.x, &feats);
        let want = collapsed_log_lik(g.x.view(), &feats.to_row_matrix(), h.sigma_x, h.sigma_a);
        assert!((marg.log_lik(d, &h) + constant - want).abs() < 1e-9);
        // Remove columns 0 and 2, add their union and a column of rows 0..5.
        assert!(feats.k() >= 3);
        let union: Vec<u8> = (0..n)
            .map(|r| u8::from(feats.get(r, 0) || feats.get(r, 2)))
            .collect();
        let block: Vec<u8> = (0..n).map(|r| u8::from(r < 5)).collect();
        let prop = marg.proposal(&g.x, &feats, &[0, 2], &[union.clone(), block.clone()]);
        let mut f2 = feats.clone();
        f2.remove(2);
        f2.remove(0);
        f2.push_col(union);
        f2.push_col(block);
        let fresh = Marginal::of(&g.x, &f2);
        assert_eq!(prop.ztz, fresh.ztz);
        for (a, b) in prop.ztx.iter().zip(&fresh.ztx) {
            assert!((a - b).abs() < 1e-12);
        }
        // The posterior mean without a column equals the one of the smaller Z.
        let (kept, mean) = marg.mean_without(&[1], d, &h);
        let mut f3 = feats.clone();
        f3.remove(1);
        let post =
            crate::ibp::model::a_posterior(g.x.view(), &f3.to_row_matrix(), h.sigma_x, h.sigma_a);
        assert_eq!(kept.len(), feats.k() - 1);
        for (a, b) in mean.iter().zip(post.mean.as_slice()) {
            assert!((a - b).abs() < 1e-10);
        }
    }

    #[test]
    fn pair_model_predictive_matches_eq5_differences() {
        // log N(r; zᵀμ, zᵀΣz + σ²) is the change of the two-feature Eq. 5 when r joins.
        let h = hyper();
        let rows = [
            [0.3, -1.0, 0.5],
            [1.2, 0.1, -0.4],
            [0.9, 0.8, 0.2],
            [-0.5, 0.4, 1.0],
        ];
        let zs = [(true, false), (false, true), (true, true)];
        let mut model = PairModel::new(3, &h);
        let x3 = RowMatrix::from_rows(&rows[..3]);
        let mut z3 = RowMatrix::zeros(3, 2);
        for (t, z) in zs.iter().enumerate() {
            model.add(*z, &rows[t], 1.0);
            z3.row_mut(t)[0] = f64::from(u8::from(z.0));
            z3.row_mut(t)[1] = f64::from(u8::from(z.1));
        }
        let base = collapsed_log_lik(x3.view(), &z3, h.sigma_x, h.sigma_a);
        let x4 = RowMatrix::from_rows(&rows);
        for z in zs {
            let mut z4 = RowMatrix::zeros(4, 2);
            for t in 0..3 {
                z4.row_mut(t).copy_from_slice(z3.row(t));
            }
            z4.row_mut(3)[0] = f64::from(u8::from(z.0));
            z4.row_mut(3)[1] = f64::from(u8::from(z.1));
            let direct = collapsed_log_lik(x4.view(), &z4, h.sigma_x, h.sigma_a) - base
                + 1.5 * std::f64::consts::TAU.ln();
            let fast = model.log_pred(z, &rows[3]);
            assert!((direct - fast).abs() < 1e-10, "{z:?}: {direct} vs {fast}");
        }
    }

    #[test]
    fn forced_allocation_scores_what_a_draw_produced() {
        // Replaying a drawn allocation gives the same log q.
        let h = hyper();
        let mut rng = run_rng(3, 0);
        let res: Vec<Vec<f64>> = (0..9)
            .map(|t| vec![f64::from(t % 3) - 1.0, 0.5 * f64::from(t), -0.2])
            .collect();
        for _ in 0..20 {
            let (alloc, logq) = allocate(&res, None, &h, &mut rng);
            let (again, logq2) = allocate(&res, Some(&alloc), &h, &mut rng);
            assert_eq!(alloc, again);
            assert!((logq - logq2).abs() < 1e-12);
            assert!(logq <= 0.0);
        }
    }
}
