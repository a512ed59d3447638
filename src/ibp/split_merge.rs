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
//!    (`MIX`): sequential allocation — one by one, in a uniformly random order, each with
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
//! O(NK + |S| k̄ D + K³ + K²D). The allocation keeps the Gram matrix of its two features'
//! information vectors, so a row's three predictive densities need two products with them
//! (O(D)) and two logarithms. A merge is scored first without q: q ≤ 1, so log R is at most
//! the rest of the ratio, and when the uniform draw's log is above that bound the merge is
//! rejected without ordering S, computing residuals or replaying the split — most merges of
//! two features that both fit the data end there.

use super::common::{BlockFault, Hyper};
use super::dense::{chol_logdet, chol_solve, cholesky_into, forward};
use super::model::ln_factorial_table;
use super::recode::{self, RecodeFault};
use super::state::Feats;
use crate::RowMatrix;
use crate::restarts::shuffle;
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
#[derive(Clone, Debug, Default)]
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
    /// `lin` holds the working matrices.
    pub(super) fn log_lik(&self, d: usize, h: &Hyper, lin: &mut Linear) -> f64 {
        let k = self.k;
        let r = (h.sigma_x / h.sigma_a).powi(2);
        let Linear { m, l, b } = lin;
        m.clear();
        m.extend_from_slice(&self.ztz);
        for i in 0..k {
            m[i * k + i] += r;
        }
        assert!(cholesky_into(m, k, l), "ZᵀZ + rI is positive definite");
        b.clear();
        b.extend_from_slice(&self.ztx);
        forward(l, k, b, d);
        let explained: f64 = b.iter().map(|v| v * v).sum();
        let (kf, df) = (k as f64, d as f64);
        kf * df * (h.sigma_x.ln() - h.sigma_a.ln()) - 0.5 * df * chol_logdet(l, k)
            + explained / (2.0 * h.sigma_x * h.sigma_x)
    }

    /// Makes this the zero Gram matrices of `k` features in `d` dimensions, reusing its buffers.
    fn zeroed(&mut self, k: usize, d: usize) {
        self.k = k;
        self.ztz.clear();
        self.ztz.resize(k * k, 0.0);
        self.ztx.clear();
        self.ztx.resize(k * d, 0.0);
    }

    /// The Gram matrices after removing the columns `gone` (increasing) and appending `new`,
    /// written to `out`; `kept` receives the remaining columns.
    pub(super) fn proposal_into(
        &self,
        x: &RowMatrix,
        feats: &Feats,
        (gone, new): (&[usize], &[&[u8]]),
        kept: &mut Vec<usize>,
        out: &mut Marginal,
    ) {
        let d = x.n_cols();
        kept.clear();
        kept.extend((0..self.k).filter(|c| !gone.contains(c)));
        let k2 = kept.len() + new.len();
        out.zeroed(k2, d);
        let (ztz, ztx) = (&mut out.ztz, &mut out.ztx);
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
    }

    /// The Gram matrices after merging columns `a` < `b` into their union, appended last,
    /// written to `out` (as [`Marginal::proposal_into`] with the union as the new column);
    /// `kept` receives the remaining columns. The union's products are those of a plus those
    /// of b, less those of the rows holding both: only those rows are read.
    pub(super) fn merged_into(
        &self,
        x: &RowMatrix,
        feats: &Feats,
        (a, b): (usize, usize),
        kept: &mut Vec<usize>,
        out: &mut Marginal,
    ) {
        let (d, k) = (x.n_cols(), self.k);
        kept.clear();
        kept.extend((0..k).filter(|&c| c != a && c != b));
        let u = kept.len();
        let k2 = u + 1;
        out.zeroed(k2, d);
        let (ztz, ztx) = (&mut out.ztz, &mut out.ztx);
        for (t, &ct) in kept.iter().enumerate() {
            for (s, &cs) in kept.iter().enumerate() {
                ztz[t * k2 + s] = self.ztz[ct * k + cs];
            }
            let v = self.ztz[a * k + ct] + self.ztz[b * k + ct];
            ztz[t * k2 + u] = v;
            ztz[u * k2 + t] = v;
            ztx[t * d..(t + 1) * d].copy_from_slice(&self.ztx[ct * d..(ct + 1) * d]);
        }
        ztz[u * k2 + u] = self.ztz[a * k + a] + self.ztz[b * k + b] - self.ztz[a * k + b];
        let (ra, rb) = (&self.ztx[a * d..(a + 1) * d], &self.ztx[b * d..(b + 1) * d]);
        for ((s, &va), &vb) in ztx[u * d..].iter_mut().zip(ra).zip(rb) {
            *s = va + vb;
        }
        let (col_a, col_b) = (feats.col(a), feats.col(b));
        for (r, _) in col_a
            .iter()
            .zip(col_b)
            .enumerate()
            .filter(|&(_, (&va, &vb))| va != 0 && vb != 0)
        {
            for (t, &ct) in kept.iter().enumerate() {
                if feats.get(r, ct) {
                    ztz[t * k2 + u] -= 1.0;
                    ztz[u * k2 + t] -= 1.0;
                }
            }
            for (s, v) in ztx[u * d..].iter_mut().zip(x.row(r)) {
                *s -= v;
            }
        }
    }

    /// The Gram matrices ZᵀZ (`K × K`) and ZᵀX (`K × D`).
    pub(super) fn gram(&self) -> (&[f64], &[f64]) {
        (&self.ztz, &self.ztx)
    }

    /// The posterior mean of A given Z without the columns `gone` (increasing): `kept`
    /// receives the remaining columns and `lin.b` their means (`kept.len() × D`), in order.
    fn mean_without(
        &self,
        gone: &[usize],
        (d, h): (usize, &Hyper),
        kept: &mut Vec<usize>,
        lin: &mut Linear,
    ) {
        kept.clear();
        kept.extend((0..self.k).filter(|c| !gone.contains(c)));
        let k = kept.len();
        let Linear { m, l, b } = lin;
        m.clear();
        b.clear();
        for &ca in kept.iter() {
            m.extend(kept.iter().map(|&cb| self.ztz[ca * self.k + cb]));
            b.extend_from_slice(&self.ztx[ca * d..(ca + 1) * d]);
        }
        let r = (h.sigma_x / h.sigma_a).powi(2);
        for i in 0..k {
            m[i * k + i] += r;
        }
        assert!(cholesky_into(m, k, l), "ZᵀZ + rI is positive definite");
        chol_solve(l, k, b, d);
    }
}

/// Working matrices of one evaluation of Eq. 5: M = ZᵀZ + (σ_X²/σ_A²)I, its Cholesky
/// factor, and the right-hand side.
#[derive(Default)]
pub(super) struct Linear {
    m: Vec<f64>,
    l: Vec<f64>,
    b: Vec<f64>,
}

/// Buffers kept from one attempt to the next (split–merge and recoding), so that an attempt
/// allocates only the columns of an accepted proposal.
#[derive(Default)]
pub(super) struct Scratch {
    /// The Gram matrices of the proposal; swapped with the current ones on acceptance.
    pub(super) spare: Marginal,
    pub(super) lin: Linear,
    pub(super) kept: Vec<usize>,
    held_i: Vec<usize>,
    held_j: Vec<usize>,
    rows: Vec<usize>,
    others: Vec<usize>,
    /// Residuals of `rows`, `rows.len() × D`, and their squared norms.
    res: Vec<f64>,
    norms: Vec<f64>,
    alloc: Vec<(bool, bool)>,
    forced: Vec<(bool, bool)>,
    union: Vec<u8>,
    c1: Vec<u8>,
    c2: Vec<u8>,
}

/// The two-feature linear-Gaussian model of the allocation step: precision P (2 × 2),
/// information h (2 × D) of the two features' A given the rows allocated so far, and the
/// Gram matrix of h's two rows, kept up to date so that a row's predictive densities need
/// only its products with h (O(D) a row, not a pass over each option's errors).
struct PairModel {
    p: [f64; 3],
    h: Vec<f64>,
    /// h₀·h₀, h₀·h₁, h₁·h₁.
    hh: [f64; 3],
    sx2: f64,
}

impl PairModel {
    fn new(d: usize, hyper: &Hyper) -> Self {
        let pa = 1.0 / hyper.sigma_a.powi(2);
        Self {
            p: [pa, 0.0, pa],
            h: vec![0.0; 2 * d],
            hh: [0.0; 3],
            sx2: hyper.sigma_x.powi(2),
        }
    }

    /// (r·h₀, r·h₁), the products a row's densities and its addition need.
    fn dots(&self, r: &[f64]) -> [f64; 2] {
        let (h0, h1) = self.h.split_at(r.len());
        let mut lanes = [[0.0; 4]; 2];
        let (rc, c0, c1) = (r.chunks_exact(4), h0.chunks_exact(4), h1.chunks_exact(4));
        let (rt, t0, t1) = (rc.remainder(), c0.remainder(), c1.remainder());
        for ((v, a), b) in rc.zip(c0).zip(c1) {
            for l in 0..4 {
                lanes[0][l] += v[l] * a[l];
                lanes[1][l] += v[l] * b[l];
            }
        }
        let mut out = lanes.map(|a| (a[0] + a[1]) + (a[2] + a[3]));
        for ((&v, &a), &b) in rt.iter().zip(t0).zip(t1) {
            out[0] += v * a;
            out[1] += v * b;
        }
        out
    }

    /// Adds (`sign` = 1) or removes (−1) residual `r` with memberships `z`; `rr` = ‖r‖² and
    /// `rh` = [`PairModel::dots`] of r before the change.
    fn add(&mut self, z: (bool, bool), r: &[f64], (rr, rh): (f64, [f64; 2]), sign: f64) {
        let (a, b) = (f64::from(u8::from(z.0)), f64::from(u8::from(z.1)));
        let s = sign / self.sx2;
        self.p[0] += s * a * a;
        self.p[1] += s * a * b;
        self.p[2] += s * b * b;
        // hᵢ gains s·zᵢ·r: (hᵢ + s zᵢ r)·(hⱼ + s zⱼ r) = hᵢ·hⱼ + s zᵢ r·hⱼ + s zⱼ r·hᵢ + s² zᵢ zⱼ ‖r‖².
        let (sa, sb) = (s * a, s * b);
        self.hh[0] += 2.0 * sa * rh[0] + sa * sa * rr;
        self.hh[1] += sa * rh[1] + sb * rh[0] + sa * sb * rr;
        self.hh[2] += 2.0 * sb * rh[1] + sb * sb * rr;
        let d = r.len();
        let (h0, h1) = self.h.split_at_mut(d);
        for (h, f) in [(h0, sa), (h1, sb)] {
            if f != 0.0 {
                h.iter_mut().zip(r).for_each(|(h, v)| *h += f * v);
            }
        }
    }

    /// log N(r; zᵀμ, (zᵀΣz + σ_X²) I) for the three z of [`OPTIONS`] — z = (1, 0), (0, 1),
    /// (1, 1) —, with Σ = P⁻¹, μ = Σh, up to one additive constant common to the three
    /// (−(D/2) log 2π − (D/2) log v₁, v₁ the first option's variance): the allocation needs
    /// only their differences. The means are m = α h₀ + β h₁ with (α, β) the rows of Σ and
    /// their sum, so ‖r − m‖² = ‖r‖² − 2(α r·h₀ + β r·h₁) + α² h₀·h₀ + 2αβ h₀·h₁ + β² h₁·h₁
    /// from `rr` = ‖r‖², `rh` = (r·h₀, r·h₁) and the kept Gram of h; the variances are Σ₀₀,
    /// Σ₁₁ and Σ₀₀ + 2Σ₀₁ + Σ₁₁, plus σ_X².
    fn log_pred3(&self, d: usize, (rr, rh): (f64, [f64; 2])) -> [f64; 3] {
        let [p00, p01, p11] = self.p;
        let det = p00 * p11 - p01 * p01;
        let (s00, s01, s11) = (p11 / det, -p01 / det, p00 / det);
        let [g00, g01, g11] = self.hh;
        let err = |al: f64, be: f64| {
            let q = rr - 2.0 * (al * rh[0] + be * rh[1])
                + al * al * g00
                + 2.0 * al * be * g01
                + be * be * g11;
            q.max(0.0)
        };
        let q = [err(s00, s01), err(s01, s11), err(s00 + s01, s01 + s11)];
        let var = [
            s00 + self.sx2,
            s11 + self.sx2,
            s00 + 2.0 * s01 + s11 + self.sx2,
        ];
        let half_d = 0.5 * d as f64;
        [
            -0.5 * q[0] / var[0],
            -half_d * (var[1] / var[0]).ln() - 0.5 * q[1] / var[1],
            -half_d * (var[2] / var[0]).ln() - 0.5 * q[2] / var[2],
        ]
    }
}

/// A row's memberships (k₁, k₂) in a split, in the order of [`PairModel::log_pred3`].
const OPTIONS: [(bool, bool); 3] = [(true, false), (false, true), (true, true)];

/// Draws (or, with `forced`, scores) the allocation of the split: writes each row's
/// memberships (k₁, k₂) to `alloc` and returns log q. `res` holds the residuals
/// (`norms.len() × d`) of the anchor i, the anchor j, then S in the order to allocate them,
/// and `norms` their squared norms.
fn allocate(
    (res, norms, d): (&[f64], &[f64], usize),
    forced: Option<&[(bool, bool)]>,
    hyper: &Hyper,
    alloc: &mut Vec<(bool, bool)>,
    rng: &mut ChaCha8Rng,
) -> f64 {
    let row = |t: usize| &res[t * d..(t + 1) * d];
    let mut model = PairModel::new(d, hyper);
    alloc.clear();
    alloc.extend([(true, false), (false, true)]);
    for t in 0..2 {
        let rh = model.dots(row(t));
        model.add(alloc[t], row(t), (norms[t], rh), 1.0);
    }
    let mut logq = 0.0;
    let mut choose = |options: &[(bool, bool)],
                      all: [f64; 3],
                      want: Option<(bool, bool)>,
                      rng: &mut ChaCha8Rng| {
        let n = options.len();
        let mut lw = [0.0; 3];
        for (l, &z) in lw.iter_mut().zip(options) {
            *l = all[option_index(z)];
        }
        let max = lw[..n].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut w = [0.0; 3];
        for (wt, &l) in w.iter_mut().zip(&lw[..n]) {
            *wt = if l == max { 1.0 } else { (l - max).exp() };
        }
        let total: f64 = w[..n].iter().sum();
        let pick = match want {
            Some(z) => options
                .iter()
                .position(|&o| o == z)
                .expect("a valid option"),
            None => {
                let u = rng.random::<f64>() * total;
                let mut acc = 0.0;
                let mut pick = n - 1;
                for (t, wt) in w[..n].iter().enumerate() {
                    acc += wt;
                    if u < acc {
                        pick = t;
                        break;
                    }
                }
                pick
            }
        };
        logq += (lw[pick] - max) - total.ln();
        options[pick]
    };
    // Row t's memberships among `options`, drawn (or forced) and added to the model.
    let mut place = |options: &[(bool, bool)], t: usize, model: &mut PairModel, rng: &mut _| {
        let prod = (norms[t], model.dots(row(t)));
        let z = choose(options, model.log_pred3(d, prod), forced.map(|f| f[t]), rng);
        model.add(z, row(t), prod, 1.0);
        z
    };
    for t in 2..norms.len() {
        let z = place(&OPTIONS, t, &mut model, rng);
        alloc.push(z);
    }
    // The anchors' second membership, each with itself taken out of the model.
    for (t, options) in [
        (0, [(true, false), (true, true)]),
        (1, [(false, true), (true, true)]),
    ] {
        model.add(alloc[t], row(t), (norms[t], model.dots(row(t))), -1.0);
        alloc[t] = place(&options, t, &mut model, rng);
    }
    logq
}

/// The position of memberships `z` in [`OPTIONS`].
fn option_index(z: (bool, bool)) -> usize {
    OPTIONS
        .iter()
        .position(|&o| o == z)
        .expect("a valid option")
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
    let mut terms = [MIX[0].ln() + sams, 0.0, 0.0];
    let mut n = 1;
    if halves {
        terms[n] = MIX[1].ln() - (alloc.len() - 2) as f64 * std::f64::consts::LN_2;
        n += 1;
    }
    if both {
        terms[n] = MIX[2].ln();
        n += 1;
    }
    let terms = &terms[..n];
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
    let mut sc = Scratch::default();
    let mut marg = Marginal::of(x, feats);
    let mut ll = marg.log_lik(x.n_cols(), hyper, &mut sc.lin);
    let mut accepted = 0;
    for t in 0..attempts.max(recodes) {
        if t < attempts {
            let state = (&mut *feats, &mut marg, &mut ll);
            match attempt(x, state, hyper, &lf, fault, &mut sc, rng) {
                Outcome::Split | Outcome::Merged => accepted += 1,
                Outcome::Nothing | Outcome::Rejected => {}
            }
        }
        let state = (&mut *feats, &mut marg, &mut ll);
        if t < recodes && recode::attempt(x, state, hyper, &lf, recode_fault, &mut sc, rng) {
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

/// One split–merge attempt on `state` (the features, their Gram matrices and log p(X | Z),
/// kept up to date) — module documentation.
fn attempt(
    x: &RowMatrix,
    (feats, marg, ll): (&mut Feats, &mut Marginal, &mut f64),
    hyper: &Hyper,
    lf: &[f64],
    fault: Fault,
    sc: &mut Scratch,
    rng: &mut ChaCha8Rng,
) -> Outcome {
    let (n, d) = (x.n_rows(), x.n_cols());
    let i = rng.random_range(0..n);
    let mut j = rng.random_range(0..n - 1);
    if j >= i {
        j += 1;
    }
    let held = |r: usize, out: &mut Vec<usize>| {
        out.clear();
        out.extend((0..feats.k()).filter(|&c| feats.get(r, c)));
    };
    held(i, &mut sc.held_i);
    held(j, &mut sc.held_j);
    let (ni, nj) = (sc.held_i.len(), sc.held_j.len());
    if ni == 0 || nj == 0 {
        return Outcome::Nothing;
    }
    let k = sc.held_i[rng.random_range(0..ni)];
    let l = sc.held_j[rng.random_range(0..nj)];
    let split = k == l;
    // The features taken out, increasing, and the rows that hold any of them.
    let pair = [k.min(l), k.max(l)];
    let gone: &[usize] = if split { &pair[..1] } else { &pair };
    sc.union.clear();
    sc.union
        .extend((0..n).map(|r| u8::from(gone.iter().any(|&c| feats.get(r, c)))));
    let k_now = feats.k() as f64;
    let (accept, ll2) = if split {
        order_and_residuals(x, (feats, &*marg), gone, (i, j), hyper, sc, rng);
        let n_rows = sc.rows.len();
        let res = (sc.res.as_slice(), sc.norms.as_slice(), d);
        let u = rng.random::<f64>();
        let sams = if u < MIX[0] {
            allocate(res, None, hyper, &mut sc.alloc, rng)
        } else {
            sc.forced.clear();
            if u < MIX[0] + MIX[1] {
                sc.forced.extend([(true, false), (false, true)]);
                sc.forced.extend((2..n_rows).map(|_| {
                    let one = rng.random::<bool>();
                    (one, !one)
                }));
            } else {
                sc.forced.resize(n_rows, (true, true));
            }
            allocate(res, Some(&sc.forced), hyper, &mut sc.alloc, rng)
        };
        let alloc = &sc.alloc;
        let logq = log_q_mixture(alloc, sams);
        for (c, side) in [(&mut sc.c1, 0), (&mut sc.c2, 1)] {
            c.clear();
            c.resize(n, 0);
            for (&r, &z) in sc.rows.iter().zip(alloc) {
                c[r] = u8::from(if side == 0 { z.0 } else { z.1 });
            }
        }
        let m1 = sc.c1.iter().filter(|&&v| v != 0).count();
        let m2 = sc.c2.iter().filter(|&&v| v != 0).count();
        let log_prior = hyper.alpha.ln() + log_f(m1, lf) + log_f(m2, lf) - log_f(feats.m(k), lf);
        // Row i gains k₂ when it takes both; so does j.
        let (ki2, kj2) = (ni + usize::from(alloc[0].1), nj + usize::from(alloc[1].0));
        let cols = [sc.c1.as_slice(), sc.c2.as_slice()];
        marg.proposal_into(x, feats, (gone, &cols), &mut sc.kept, &mut sc.spare);
        let ll2 = sc.spare.log_lik(d, hyper, &mut sc.lin);
        // log of (choice of rows' features after) / (before): 1/(K′_i K′_j) over 1/(K_i K_j).
        let choice = ((ni * nj) as f64).ln() - ((ki2 * kj2) as f64).ln();
        let mut log_r = ll2 - *ll + log_prior;
        if fault == Fault::KFactorial {
            log_r -= (k_now + 1.0).ln(); // K!/(K + 1)!
        }
        if fault != Fault::NoRowChoice {
            log_r += choice;
        }
        if fault != Fault::NoAllocation {
            log_r -= logq;
        }
        let accept = log_r >= 0.0 || rng.random::<f64>() < log_r.exp();
        (accept, ll2)
    } else {
        // The merged state first: its likelihood and the terms that need no allocation give
        // an upper bound on log R, for q ≤ 1. When log u is above it, the merge is rejected
        // without replaying the reverse split (the same decision as with q, at any q). u
        // is drawn before the order of S; both are independent uniform draws, so the order of
        // drawing changes nothing.
        marg.merged_into(x, feats, (pair[0], pair[1]), &mut sc.kept, &mut sc.spare);
        let ll2 = sc.spare.log_lik(d, hyper, &mut sc.lin);
        let m = sc.union.iter().filter(|&&v| v != 0).count();
        let log_prior =
            -hyper.alpha.ln() + log_f(m, lf) - log_f(feats.m(k), lf) - log_f(feats.m(l), lf);
        let (ki2, kj2) = (
            ni - usize::from(feats.get(i, l)),
            nj - usize::from(feats.get(j, k)),
        );
        let choice = ((ni * nj) as f64).ln() - ((ki2 * kj2) as f64).ln();
        let mut bound = ll2 - *ll + log_prior;
        if fault == Fault::KFactorial {
            bound += k_now.ln(); // K!/(K − 1)!
        }
        if fault != Fault::NoRowChoice {
            bound += choice;
        }
        let log_u = rng.random::<f64>().ln();
        let accept = if log_u >= bound {
            false
        } else if fault == Fault::NoAllocation {
            true
        } else {
            order_and_residuals(x, (feats, &*marg), gone, (i, j), hyper, sc, rng);
            sc.forced.clear();
            sc.forced
                .extend(sc.rows.iter().map(|&r| (feats.get(r, k), feats.get(r, l))));
            let res = (sc.res.as_slice(), sc.norms.as_slice(), d);
            let sams = allocate(res, Some(&sc.forced), hyper, &mut sc.alloc, rng);
            log_u < bound + log_q_mixture(&sc.forced, sams)
        };
        (accept, ll2)
    };
    if !accept {
        return Outcome::Rejected;
    }
    for &c in gone.iter().rev() {
        feats.remove(c);
    }
    if split {
        feats.push_col(sc.c1.clone());
        feats.push_col(sc.c2.clone());
    } else {
        feats.push_col(sc.union.clone());
    }
    std::mem::swap(marg, &mut sc.spare);
    *ll = ll2;
    if split {
        Outcome::Split
    } else {
        Outcome::Merged
    }
}

/// The rows of the allocation into `sc.rows` — the anchors i and j, then the other rows of
/// `sc.union` (S) in a uniformly random order — and their residuals given the posterior mean
/// of the features other than `gone` into `sc.res`, with their squared norms in `sc.norms`.
fn order_and_residuals(
    x: &RowMatrix,
    (feats, marg): (&Feats, &Marginal),
    gone: &[usize],
    (i, j): (usize, usize),
    hyper: &Hyper,
    sc: &mut Scratch,
    rng: &mut ChaCha8Rng,
) {
    let (n, d) = (x.n_rows(), x.n_cols());
    sc.others.clear();
    sc.others
        .extend((0..n).filter(|&r| sc.union[r] != 0 && r != i && r != j));
    shuffle(&mut sc.others, rng);
    sc.rows.clear();
    sc.rows.extend([i, j]);
    sc.rows.extend_from_slice(&sc.others);
    marg.mean_without(gone, (d, hyper), &mut sc.kept, &mut sc.lin);
    let a_rest = &sc.lin.b;
    sc.res.clear();
    sc.norms.clear();
    for &r in &sc.rows {
        let start = sc.res.len();
        sc.res.extend_from_slice(x.row(r));
        let e = &mut sc.res[start..];
        for (t, &c) in sc.kept.iter().enumerate() {
            if feats.get(r, c) {
                e.iter_mut()
                    .zip(&a_rest[t * d..(t + 1) * d])
                    .for_each(|(v, w)| *v -= w);
            }
        }
        sc.norms.push(e.iter().map(|v| v * v).sum());
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
        let mut sc = Scratch::default();
        assert!((marg.log_lik(d, &h, &mut sc.lin) + constant - want).abs() < 1e-9);
        // Remove columns 0 and 2, add their union and a column of rows 0..5.
        assert!(feats.k() >= 3);
        let union: Vec<u8> = (0..n)
            .map(|r| u8::from(feats.get(r, 0) || feats.get(r, 2)))
            .collect();
        let block: Vec<u8> = (0..n).map(|r| u8::from(r < 5)).collect();
        let cols = [union.as_slice(), block.as_slice()];
        let mut prop = Marginal::default();
        marg.proposal_into(&g.x, &feats, (&[0, 2], &cols), &mut sc.kept, &mut prop);
        let mut f2 = feats.clone();
        f2.remove(2);
        f2.remove(0);
        f2.push_col(union.clone());
        f2.push_col(block);
        let fresh = Marginal::of(&g.x, &f2);
        assert_eq!(prop.ztz, fresh.ztz);
        for (a, b) in prop.ztx.iter().zip(&fresh.ztx) {
            assert!((a - b).abs() < 1e-12);
        }
        // The merge's shortcut gives the Gram matrices of the merged Z.
        let mut merged = Marginal::default();
        marg.merged_into(&g.x, &feats, (0, 2), &mut sc.kept, &mut merged);
        let mut f4 = feats.clone();
        f4.remove(2);
        f4.remove(0);
        f4.push_col(union.clone());
        let fresh = Marginal::of(&g.x, &f4);
        assert_eq!(merged.k, fresh.k);
        assert_eq!(merged.ztz, fresh.ztz);
        for (a, b) in merged.ztx.iter().zip(&fresh.ztx) {
            assert!((a - b).abs() < 1e-12);
        }
        // Columns 0 and 2 overlap, so the rows holding both were subtracted.
        assert!((0..n).any(|r| feats.get(r, 0) && feats.get(r, 2)));
        // The posterior mean without a column equals the one of the smaller Z.
        marg.mean_without(&[1], (d, &h), &mut sc.kept, &mut sc.lin);
        let (kept, mean) = (&sc.kept, &sc.lin.b);
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
        // log N(r; zᵀμ, zᵀΣz + σ²) is the change of the two-feature Eq. 5 when r joins, up to
        // a constant common to the three options. D = 6 covers the four lanes and the tail.
        let h = hyper();
        let rows = [
            [0.3, -1.0, 0.5, 0.7, -0.2, 1.1],
            [1.2, 0.1, -0.4, 0.0, 0.6, -0.8],
            [0.9, 0.8, 0.2, -1.3, 0.4, 0.3],
            [-0.5, 0.4, 1.0, 0.2, -0.9, 0.6],
        ];
        let norm = |r: &[f64]| r.iter().map(|v| v * v).sum::<f64>();
        let mut model = PairModel::new(6, &h);
        // A row added and taken out again leaves the model as it was (up to rounding).
        model.add(
            (true, true),
            &rows[3],
            (norm(&rows[3]), model.dots(&rows[3])),
            1.0,
        );
        model.add(
            (true, true),
            &rows[3],
            (norm(&rows[3]), model.dots(&rows[3])),
            -1.0,
        );
        let x3 = RowMatrix::from_rows(&rows[..3]);
        let mut z3 = RowMatrix::zeros(3, 2);
        for (t, z) in OPTIONS.iter().enumerate() {
            model.add(*z, &rows[t], (norm(&rows[t]), model.dots(&rows[t])), 1.0);
            z3.row_mut(t)[0] = f64::from(u8::from(z.0));
            z3.row_mut(t)[1] = f64::from(u8::from(z.1));
        }
        let x4 = RowMatrix::from_rows(&rows);
        let direct: Vec<f64> = OPTIONS
            .iter()
            .map(|z| {
                let mut z4 = RowMatrix::zeros(4, 2);
                for t in 0..3 {
                    z4.row_mut(t).copy_from_slice(z3.row(t));
                }
                z4.row_mut(3)[0] = f64::from(u8::from(z.0));
                z4.row_mut(3)[1] = f64::from(u8::from(z.1));
                collapsed_log_lik(x4.view(), &z4, h.sigma_x, h.sigma_a)
            })
            .collect();
        // The kept Gram of h equals the one of h itself.
        let (h0, h1) = model.h.split_at(6);
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(u, v)| u * v).sum::<f64>();
        for (kept, direct) in model.hh.iter().zip([dot(h0, h0), dot(h0, h1), dot(h1, h1)]) {
            assert!((kept - direct).abs() < 1e-10, "{kept} vs {direct}");
        }
        let fast = model.log_pred3(6, (norm(&rows[3]), model.dots(&rows[3])));
        for t in 1..3 {
            let (want, got) = (direct[t] - direct[0], fast[t] - fast[0]);
            assert!(
                (want - got).abs() < 1e-10,
                "{:?}: {want} vs {got}",
                OPTIONS[t]
            );
        }
        // The common constant is −(D/2) log 2π − (D/2) log v₁ against the change of Eq. 5.
        let base = collapsed_log_lik(x3.view(), &z3, h.sigma_x, h.sigma_a);
        let [p00, p01, p11] = model.p;
        let v1 = p11 / (p00 * p11 - p01 * p01) + h.sigma_x.powi(2);
        let constant = -3.0 * std::f64::consts::TAU.ln() - 3.0 * v1.ln();
        assert!((direct[0] - base - (fast[0] + constant)).abs() < 1e-10);
    }

    #[test]
    fn run_returns_the_gram_matrices_of_the_final_z() {
        // Split–merge and recoding interleaved from a scrambled state of the block images: the
        // Gram matrices `run` returns (which the samplers rebuild their state from) are those of
        // the Z it leaves, column for column, after many accepted moves.
        let g = crate::generate::block_images(120, 0.5, 0.3, 4).unwrap();
        let mut rng = run_rng(9, 0);
        // Features 0 and 1 cut in halves, 2 and 3 joined: moves have something to undo.
        let mut cols: Vec<Vec<u8>> = Vec::new();
        for t in 0..2 {
            let on: Vec<usize> = (0..120).filter(|&r| g.z.row(r)[t] != 0.0).collect();
            for half in 0..2 {
                let mut c = vec![0u8; 120];
                for &r in on.iter().skip(half).step_by(2) {
                    c[r] = 1;
                }
                cols.push(c);
            }
        }
        cols.push(
            (0..120)
                .map(|r| u8::from(g.z.row(r)[2] != 0.0 || g.z.row(r)[3] != 0.0))
                .collect(),
        );
        let mut feats = Feats::from_matrix(&RowMatrix::zeros(120, 0));
        for c in cols {
            feats.push_col(c);
        }
        let h = Hyper {
            alpha: 1.0,
            sigma_x: 0.3,
            sigma_a: 1.0,
            ..hyper()
        };
        let (accepted, gram) = run(
            &g.x,
            &mut feats,
            &h,
            400,
            400,
            Fault::None,
            RecodeFault::None,
            &mut rng,
        );
        assert!(accepted >= 3, "only {accepted} moves accepted");
        let got = gram.expect("attempts ran");
        let fresh = Marginal::of(&g.x, &feats);
        assert_eq!(got.k, feats.k());
        assert_eq!(got.ztz, fresh.ztz);
        assert_eq!(got.ztx.len(), fresh.ztx.len());
        for (a, b) in got.ztx.iter().zip(&fresh.ztx) {
            assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        }
        // K changed: some accepted move split, merged, dissolved or fused features, not only
        // rewrote them in place. (A merge's Gram shortcut made wrong fails the ZᵀX check above.)
        assert_ne!(feats.k(), 5, "no move changed K");
    }

    #[test]
    fn forced_allocation_scores_what_a_draw_produced() {
        // Replaying a drawn allocation gives the same log q.
        let h = hyper();
        let mut rng = run_rng(3, 0);
        let res: Vec<f64> = (0..9)
            .flat_map(|t| [f64::from(t % 3) - 1.0, 0.5 * f64::from(t), -0.2])
            .collect();
        let norms: Vec<f64> = res
            .chunks(3)
            .map(|r| r.iter().map(|v| v * v).sum())
            .collect();
        let (mut alloc, mut again) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            let logq = allocate((&res, &norms, 3), None, &h, &mut alloc, &mut rng);
            let logq2 = allocate((&res, &norms, 3), Some(&alloc), &h, &mut again, &mut rng);
            assert_eq!(alloc, again);
            assert!((logq - logq2).abs() < 1e-12);
            assert!(logq <= 0.0);
        }
    }
}
