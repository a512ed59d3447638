//! Accelerated Gibbs sampler (D-V&G §4, Algorithm 1; Eqs. 4, 8 and footnote 3).
//!
//! The posterior of A given all rows is kept in information form: precision
//! P = ZᵀZ/σ_X² + I/σ_A² and information h = ZᵀX/σ_X² (`K × D`); each column of A is
//! N(P⁻¹h_d, P⁻¹). Every sweep the rows are shuffled and cut into windows of W rows. For a
//! window:
//! 1. its rows are removed, P₋W = P − Σ_{n∈W} z_n z_nᵀ/σ_X², h₋W = h − Σ_{n∈W} z_n x_nᵀ/σ_X²,
//!    and converted (Cholesky) to the moment form Σ₋W = P₋W⁻¹, μ₋W = Σ₋W h₋W (footnote 3);
//! 2. for each row n of the window, each z_nk with m_{−n,k} > 0 is drawn by Eq. 8:
//!    P(z_nk | …) ∝ (m_{−n,k}/N) N(X_W; Z_W μ₋W, Z_W Σ₋W Z_Wᵀ + σ_X² I_W), independently
//!    over the D columns (the window's joint density given the other rows equals
//!    p(x_n | X_{−n}, Z) times a factor free of z_n, so this is the exact Gibbs conditional);
//! 3. the features held by n alone are dropped and redrawn by Eq. 4: j new features held by n alone add j σ_A² to entry (n, n)
//!    of the window covariance (their A has the prior N(0, σ_A²) — no other row holds them);
//! 4. the window's rows are added back into P and h.
//!
//! P and h are recomputed from Z every `refresh` sweeps against rounding drift.

use super::common::{
    BlockPick, Hyper, block_log_prior, block_prior_terms, draw_binary, draw_log_weighted,
    draw_log_weighted_with, gray, log_poisson_unnorm, log_poisson_unnorm_into, log_prior_flip,
    pick_block, shuffled,
};
use super::dense::{chol_inverse, chol_logdet, cholesky, forward, grow_diag, remove_index};
use super::model::gram;
use super::state::Feats;
use crate::RowMatrix;
use crate::linalg::sq_dist;
use crate::restarts::shuffle;
use rand_chacha::ChaCha8Rng;

/// State of the accelerated sampler.
#[derive(Clone, Debug)]
pub(crate) struct Accelerated {
    pub feats: Feats,
    hyper: Hyper,
    window: usize,
    /// Precision P (`K × K`).
    p: Vec<f64>,
    /// Information h (`K × D`).
    h: Vec<f64>,
    refresh: usize,
    sweeps: usize,
    /// Boxed, so that the sampler stays small beside the others in `params::Chain`.
    scratch: Box<RowScratch>,
}

/// Buffers of one row's update (W = 1), kept from row to row so that a row allocates nothing
/// unless it drops or adds features. They carry no state between rows.
#[derive(Clone, Debug, Default)]
struct RowScratch {
    /// The row's value, and the zero row [`RowFit::reset`] starts from.
    z: Vec<f64>,
    zero: Vec<f64>,
    fit: RowFit,
    order: Vec<usize>,
    logw: Vec<f64>,
    weights: Vec<f64>,
    blocks: BlockPick,
}

/// (P, h) recomputed from Z.
pub(crate) fn fresh_information(
    x: &RowMatrix,
    feats: &Feats,
    hyper: &Hyper,
) -> (Vec<f64>, Vec<f64>) {
    let (ztz, ztx) = gram(x.view(), &feats.to_row_matrix());
    information_of_gram(&ztz, &ztx, feats.k(), hyper)
}

/// (P, h) from ZᵀZ (`k × k`) and ZᵀX.
fn information_of_gram(ztz: &[f64], ztx: &[f64], k: usize, hyper: &Hyper) -> (Vec<f64>, Vec<f64>) {
    let (sx2, sa2) = (hyper.sigma_x.powi(2), hyper.sigma_a.powi(2));
    let mut p: Vec<f64> = ztz.iter().map(|v| v / sx2).collect();
    for i in 0..k {
        p[i * k + i] += 1.0 / sa2;
    }
    (p, ztx.iter().map(|v| v / sx2).collect())
}

impl Accelerated {
    pub fn new(x: &RowMatrix, feats: Feats, hyper: Hyper, window: usize, refresh: usize) -> Self {
        let (p, h) = fresh_information(x, &feats, &hyper);
        Self {
            feats,
            hyper,
            window: window.max(1),
            p,
            h,
            refresh,
            sweeps: 0,
            scratch: Box::default(),
        }
    }

    /// Replaces the hyperparameters and recomputes P and h (which depend on the σ's), from
    /// `gram` = (ZᵀZ, ZᵀX) of the current Z when the caller has them, else from Z and `x`.
    pub fn set_hyper(&mut self, x: &RowMatrix, hyper: Hyper, gram: Option<(&[f64], &[f64])>) {
        self.hyper = hyper;
        let (p, h) = match gram {
            Some((ztz, ztx)) => information_of_gram(ztz, ztx, self.feats.k(), &hyper),
            None => fresh_information(x, &self.feats, &self.hyper),
        };
        self.p = p;
        self.h = h;
    }

    /// The incrementally maintained (P, h).
    #[cfg(test)]
    pub fn state(&self) -> (&[f64], &[f64]) {
        (&self.p, &self.h)
    }

    /// One sweep: the rows in a random order, W at a time.
    pub fn sweep(&mut self, x: &RowMatrix, rng: &mut ChaCha8Rng) {
        let order = shuffled(x.n_rows(), rng);
        if self.window == 1 {
            let mut moments = Moments::of(&self.p, &self.h, self.feats.k(), x.n_cols());
            for &n in &order {
                self.row_step(x, n, &mut moments, rng);
            }
        } else {
            for w in order.chunks(self.window) {
                self.window_step(x, w, rng);
            }
        }
        self.sweeps += 1;
        if self.refresh > 0 && self.sweeps.is_multiple_of(self.refresh) {
            let (p, h) = fresh_information(x, &self.feats, &self.hyper);
            self.p = p;
            self.h = h;
        }
    }

    /// Adds (`sign` = 1) or removes (−1) row n in P and h.
    fn apply_row(&mut self, x: &RowMatrix, n: usize, sign: f64) {
        let (k, d) = (self.feats.k(), x.n_cols());
        let s = sign / self.hyper.sigma_x.powi(2);
        let feats = &self.feats;
        for i in (0..k).filter(|&c| feats.get(n, c)) {
            for j in (0..k).filter(|&c| feats.get(n, c)) {
                self.p[i * k + j] += s;
            }
            for (t, v) in self.h[i * d..(i + 1) * d].iter_mut().zip(x.row(n)) {
                *t += s * v;
            }
        }
    }

    /// One row (W = 1) in O(K² + KD): the moments of the posterior of A are carried from row
    /// to row. Removing row n (value u) downdates them,
    /// Σ₋ = Σ + Σu uᵀΣ / (σ_X² − uᵀΣu),  μ₋ = μ + Σu (uᵀμ − x_n)ᵀ / (σ_X² − uᵀΣu);
    /// each z_nk is then scored by N(x_n; zᵀμ₋, (zᵀΣ₋z + σ_X²) I) with zᵀμ₋, Σ₋z and zᵀΣ₋z
    /// updated per flip in O(K + D); j new features add jσ_A² to the variance; and putting
    /// the row back (value v) is the matching update with σ_X² + vᵀΣ₋v. The same
    /// conditionals as [`window_step`](Self::window_step) with W = 1.
    fn row_step(&mut self, x: &RowMatrix, n: usize, mo: &mut Moments, rng: &mut ChaCha8Rng) {
        let (nn, d) = (x.n_rows(), x.n_cols());
        let (sx2, sa2) = (self.hyper.sigma_x.powi(2), self.hyper.sigma_a.powi(2));
        let xn = x.row(n);
        self.apply_row(x, n, -1.0);
        let mut k = self.feats.k();
        let mut sc = std::mem::take(&mut *self.scratch);
        let mut z = std::mem::take(&mut sc.z);
        let mut fit = std::mem::take(&mut sc.fit);
        z.clear();
        z.extend((0..k).map(|c| f64::from(u8::from(self.feats.get(n, c)))));
        mo.update(&z, xn, -1.0, sx2);
        // The row's current value, scored incrementally.
        fit.reset(&z, mo, &mut sc.zero);
        // `cur` is the value of the row as it stands, so each flip evaluates only the other
        // value.
        let mut cur = fit.loglik(xn, sx2, 0.0);
        // The features in a fresh random order (`common::shuffled`, without its allocation).
        sc.order.clear();
        sc.order.extend(0..k);
        shuffle(&mut sc.order, rng);
        for &c in &sc.order {
            let on_now = self.feats.get(n, c);
            let m_minus = self.feats.m(c) - usize::from(on_now);
            if m_minus == 0 {
                continue;
            }
            let (p0, p1) = log_prior_flip(m_minus, nn);
            fit.flip(c, &mut z, mo);
            let other = fit.loglik(xn, sx2, 0.0);
            let (l0, l1) = if on_now { (other, cur) } else { (cur, other) };
            let on = draw_binary(p0 + l0, p1 + l1, rng);
            if on == on_now {
                fit.flip(c, &mut z, mo);
            }
            cur = if on { l1 } else { l0 };
            self.feats.set(n, c, on);
        }
        if self.hyper.block >= 2 {
            self.block_step(n, xn, (&mut z, &mut fit, &mut sc), mo, rng);
        }
        // Drop the features held by n alone: with row n out, their moments are the prior's.
        for c in (0..k).rev() {
            if self.feats.get(n, c) && self.feats.m(c) == 1 {
                fit.flip(c, &mut z, mo);
                mo.remove(c);
                fit.remove(c);
                z.remove(c);
                self.p = remove_index(&self.p, k, c);
                self.h.drain(c * d..(c + 1) * d);
                self.feats.remove(c);
                k -= 1;
            }
        }
        // New features (Eq. 4).
        let logw = &mut sc.logw;
        log_poisson_unnorm_into(self.hyper.alpha / nn as f64, self.hyper.k_new_max, logw);
        // z is the same for every j: only the variance changes.
        let sq = sq_dist(xn, &fit.mean);
        for (j, lw) in logw.iter_mut().enumerate() {
            *lw += fit.loglik_of(sq, d, sx2 + j as f64 * sa2);
        }
        let j = draw_log_weighted_with(logw, &mut sc.weights, rng);
        if j > 0 {
            mo.grow(j, sa2);
            self.p = grow_diag(&self.p, k, j, 1.0 / sa2);
            self.h.resize((k + j) * d, 0.0);
            for _ in 0..j {
                self.feats.push_singleton(n);
            }
            z.extend(std::iter::repeat_n(1.0, j));
            k += j;
        }
        debug_assert_eq!(z.len(), k);
        mo.update(&z, xn, 1.0, sx2);
        self.apply_row(x, n, 1.0);
        sc.z = z;
        sc.fit = fit;
        *self.scratch = sc;
    }

    /// The joint update of row n on a block of shared features (W = 1; [`pick_block`]):
    /// the 2^b values are visited in Gray-code order from the current one, one flip each.
    fn block_step(
        &mut self,
        n: usize,
        xn: &[f64],
        (z, fit, sc): (&mut [f64], &mut RowFit, &mut RowScratch),
        mo: &Moments,
        rng: &mut ChaCha8Rng,
    ) {
        let sx2 = self.hyper.sigma_x.powi(2);
        let RowScratch {
            blocks,
            logw,
            weights,
            ..
        } = sc;
        let held = |c: usize| self.feats.get(n, c);
        let Some(cur) = blocks.pick(&self.feats, held, &self.hyper, rng) else {
            return;
        };
        let BlockPick { block, terms, .. } = &*blocks;
        let b = block.len();
        logw.clear();
        for t in 0..1usize << b {
            if t > 0 {
                let bit = (gray(t) ^ gray(t - 1)).trailing_zeros() as usize;
                fit.flip(block[bit], z, mo);
            }
            let bits = cur ^ gray(t);
            logw.push(fit.loglik(xn, sx2, 0.0) + block_log_prior(terms, bits));
        }
        let pick = draw_log_weighted_with(logw, weights, rng);
        let last = gray((1 << b) - 1);
        let diff = last ^ gray(pick);
        for (t, &c) in block.iter().enumerate() {
            if (diff >> t) & 1 == 1 {
                fit.flip(c, z, mo);
            }
            self.feats.set(n, c, ((cur ^ gray(pick)) >> t) & 1 == 1);
        }
    }

    fn window_step(&mut self, x: &RowMatrix, rows: &[usize], rng: &mut ChaCha8Rng) {
        let (nn, d) = (x.n_rows(), x.n_cols());
        let (sx2, sa2) = (self.hyper.sigma_x.powi(2), self.hyper.sigma_a.powi(2));
        for &n in rows {
            self.apply_row(x, n, -1.0);
        }
        // Moment form of p(A | X₋W, Z₋W).
        let mut k = self.feats.k();
        let l = cholesky(&self.p, k).expect("the precision is positive definite");
        let mut sigma = chol_inverse(&l, k);
        let mut mu = vec![0.0; k * d];
        for i in 0..k {
            for j in 0..k {
                let s = sigma[i * k + j];
                for c in 0..d {
                    mu[i * d + c] += s * self.h[j * d + c];
                }
            }
        }
        let xw: Vec<f64> = rows
            .iter()
            .flat_map(|&n| x.row(n).iter().copied())
            .collect();
        let w = rows.len();
        let mut zw = vec![0.0; w * k];
        let mut scratch = WindowScratch::default();
        for (i, &n) in rows.iter().enumerate() {
            // Z_W for the current feature set.
            zw.clear();
            for &m in rows {
                zw.extend((0..k).map(|c| f64::from(u8::from(self.feats.get(m, c)))));
            }
            for c in shuffled(k, rng) {
                let on_now = self.feats.get(n, c);
                let m_minus = self.feats.m(c) - usize::from(on_now);
                if m_minus == 0 {
                    continue;
                }
                let (p0, p1) = log_prior_flip(m_minus, nn);
                zw[i * k + c] = 0.0;
                let l0 = window_loglik(&zw, w, k, &sigma, &mu, &xw, d, sx2, i, 0.0, &mut scratch);
                zw[i * k + c] = 1.0;
                let l1 = window_loglik(&zw, w, k, &sigma, &mu, &xw, d, sx2, i, 0.0, &mut scratch);
                let on = draw_binary(p0 + l0, p1 + l1, rng);
                zw[i * k + c] = f64::from(u8::from(on));
                self.feats.set(n, c, on);
            }
            // The joint update on a block of shared features (`common::pick_block`).
            if self.hyper.block >= 2 {
                let eligible: Vec<usize> = (0..k)
                    .filter(|&c| self.feats.m(c) > usize::from(self.feats.get(n, c)))
                    .collect();
                if eligible.len() >= 2 {
                    let block = pick_block(&eligible, self.hyper.block, rng);
                    let m_minus: Vec<usize> = block
                        .iter()
                        .map(|&c| self.feats.m(c) - usize::from(self.feats.get(n, c)))
                        .collect();
                    let terms = block_prior_terms(&m_minus, nn, self.hyper.block_fault);
                    let logw: Vec<f64> = (0..1usize << block.len())
                        .map(|bits| {
                            for (t, &c) in block.iter().enumerate() {
                                zw[i * k + c] = f64::from(u8::from((bits >> t) & 1 == 1));
                            }
                            block_log_prior(&terms, bits)
                                + window_loglik(
                                    &zw,
                                    w,
                                    k,
                                    &sigma,
                                    &mu,
                                    &xw,
                                    d,
                                    sx2,
                                    i,
                                    0.0,
                                    &mut scratch,
                                )
                        })
                        .collect();
                    let bits = draw_log_weighted(&logw, rng);
                    for (t, &c) in block.iter().enumerate() {
                        let on = (bits >> t) & 1 == 1;
                        zw[i * k + c] = f64::from(u8::from(on));
                        self.feats.set(n, c, on);
                    }
                }
            }
            // Drop the features held by n alone (no row outside the window holds them, so
            // their rows of Σ₋W, μ₋W, P₋W, h₋W are the prior's).
            for c in (0..k).rev() {
                if self.feats.get(n, c) && self.feats.m(c) == 1 {
                    sigma = remove_index(&sigma, k, c);
                    self.p = remove_index(&self.p, k, c);
                    mu.drain(c * d..(c + 1) * d);
                    self.h.drain(c * d..(c + 1) * d);
                    self.feats.remove(c);
                    k -= 1;
                }
            }
            zw.clear();
            for &m in rows {
                zw.extend((0..k).map(|c| f64::from(u8::from(self.feats.get(m, c)))));
            }
            // New features (Eq. 4).
            let mut logw = log_poisson_unnorm(self.hyper.alpha / nn as f64, self.hyper.k_new_max);
            for (j, lw) in logw.iter_mut().enumerate() {
                let extra = j as f64 * sa2;
                *lw += window_loglik(&zw, w, k, &sigma, &mu, &xw, d, sx2, i, extra, &mut scratch);
            }
            let j = draw_log_weighted(&logw, rng);
            if j > 0 {
                sigma = grow_diag(&sigma, k, j, sa2);
                self.p = grow_diag(&self.p, k, j, 1.0 / sa2);
                mu.resize((k + j) * d, 0.0);
                self.h.resize((k + j) * d, 0.0);
                for _ in 0..j {
                    self.feats.push_singleton(n);
                }
                k += j;
            }
        }
        for &n in rows {
            self.apply_row(x, n, 1.0);
        }
    }
}

/// The moments of the posterior of A: Σ (`K × K`) and μ (`K × D`).
struct Moments {
    k: usize,
    d: usize,
    sigma: Vec<f64>,
    mu: Vec<f64>,
    /// Buffers of [`Moments::update`] (no state).
    g: Vec<f64>,
    resid: Vec<f64>,
}

impl Moments {
    /// Σ = P⁻¹, μ = Σ h (by Cholesky).
    fn of(p: &[f64], h: &[f64], k: usize, d: usize) -> Self {
        let l = cholesky(p, k).expect("the precision is positive definite");
        let sigma = chol_inverse(&l, k);
        let mut mu = vec![0.0; k * d];
        for i in 0..k {
            for j in 0..k {
                let s = sigma[i * k + j];
                for c in 0..d {
                    mu[i * d + c] += s * h[j * d + c];
                }
            }
        }
        Self {
            k,
            d,
            sigma,
            mu,
            g: Vec::new(),
            resid: Vec::new(),
        }
    }

    /// Adds (`sign` = 1) or removes (−1) an observation x with design `z` and noise σ_X²:
    /// with g = Σz and s = σ_X² + sign·zᵀg, Σ −= sign·g gᵀ/s and μ += sign·g (x − zᵀμ)ᵀ/s.
    fn update(&mut self, z: &[f64], x: &[f64], sign: f64, sx2: f64) {
        let (k, d) = (self.k, self.d);
        let (mut g, mut resid) = (std::mem::take(&mut self.g), std::mem::take(&mut self.resid));
        g.clear();
        g.extend((0..k).map(|i| {
            (0..k)
                .filter(|&j| z[j] != 0.0)
                .map(|j| self.sigma[i * k + j])
                .sum::<f64>()
        }));
        let s = sx2 + sign * (0..k).filter(|&j| z[j] != 0.0).map(|j| g[j]).sum::<f64>();
        resid.clear();
        resid.extend_from_slice(x);
        for j in (0..k).filter(|&j| z[j] != 0.0) {
            for (r, m) in resid.iter_mut().zip(&self.mu[j * d..(j + 1) * d]) {
                *r -= m;
            }
        }
        for i in 0..k {
            let gi = g[i];
            if gi == 0.0 {
                continue;
            }
            for j in 0..k {
                self.sigma[i * k + j] -= sign * gi * g[j] / s;
            }
            let f = sign * gi / s;
            for (m, r) in self.mu[i * d..(i + 1) * d].iter_mut().zip(&resid) {
                *m += f * r;
            }
        }
        (self.g, self.resid) = (g, resid);
    }

    fn remove(&mut self, c: usize) {
        self.sigma = remove_index(&self.sigma, self.k, c);
        self.mu.drain(c * self.d..(c + 1) * self.d);
        self.k -= 1;
    }

    /// `j` new features with the prior N(0, σ_A²) and no data.
    fn grow(&mut self, j: usize, sa2: f64) {
        self.sigma = grow_diag(&self.sigma, self.k, j, sa2);
        self.mu.resize((self.k + j) * self.d, 0.0);
        self.k += j;
    }
}

/// zᵀμ (`D`), Σz (`K`) and zᵀΣz of one row's value z under [`Moments`], updated per flip.
#[derive(Clone, Debug, Default)]
struct RowFit {
    mean: Vec<f64>,
    g: Vec<f64>,
    q: f64,
}

impl RowFit {
    #[cfg(test)]
    fn new(z: &[f64], mo: &Moments) -> Self {
        let mut fit = Self::default();
        fit.reset(z, mo, &mut Vec::new());
        fit
    }

    /// Makes this the fit of `z`, reusing its buffers: the flips of z's entries from the zero
    /// row (`zero` is scratch).
    fn reset(&mut self, z: &[f64], mo: &Moments, zero: &mut Vec<f64>) {
        let (k, d) = (mo.k, mo.d);
        self.mean.clear();
        self.mean.resize(d, 0.0);
        self.g.clear();
        self.g.resize(k, 0.0);
        self.q = 0.0;
        zero.clear();
        zero.resize(k, 0.0);
        for c in (0..k).filter(|&c| z[c] != 0.0) {
            self.flip(c, zero, mo);
        }
    }

    /// Flips z_c (0 ↔ 1) in `z` and updates the fit.
    fn flip(&mut self, c: usize, z: &mut [f64], mo: &Moments) {
        let (k, d) = (mo.k, mo.d);
        let s = if z[c] != 0.0 { -1.0 } else { 1.0 };
        z[c] += s;
        self.q += 2.0 * s * self.g[c] + mo.sigma[c * k + c];
        for (gi, v) in self.g.iter_mut().zip(&mo.sigma[c * k..(c + 1) * k]) {
            *gi += s * v;
        }
        for (m, v) in self.mean.iter_mut().zip(&mo.mu[c * d..(c + 1) * d]) {
            *m += s * v;
        }
    }

    fn remove(&mut self, c: usize) {
        self.g.remove(c);
    }

    /// log N(x; zᵀμ, (zᵀΣz + σ_X² + extra) I) up to −(D/2) log 2π.
    fn loglik(&self, x: &[f64], sx2: f64, extra: f64) -> f64 {
        self.loglik_of(sq_dist(x, &self.mean), x.len(), sx2 + extra)
    }

    /// [`RowFit::loglik`] from ‖x − zᵀμ‖² (`sq`), which `extra` does not change; D = `d`.
    fn loglik_of(&self, sq: f64, d: usize, noise: f64) -> f64 {
        let var = self.q + noise;
        -0.5 * d as f64 * var.ln() - 0.5 * sq / var
    }
}

/// Reusable buffers of [`window_loglik`].
#[derive(Default)]
struct WindowScratch {
    g: Vec<f64>,
    s: Vec<f64>,
    r: Vec<f64>,
}

/// log N(X_W; Z_W μ, Z_W Σ Z_Wᵀ + σ_X² I + extra·e_i e_iᵀ) over the D columns, up to the
/// constant −(WD/2) log 2π (Eq. 8; `extra` = jσ_A² for j new features of window row i).
#[allow(clippy::too_many_arguments)]
fn window_loglik(
    zw: &[f64],
    w: usize,
    k: usize,
    sigma: &[f64],
    mu: &[f64],
    xw: &[f64],
    d: usize,
    sx2: f64,
    i_new: usize,
    extra: f64,
    sc: &mut WindowScratch,
) -> f64 {
    // G = Z_W Σ (W × K), S = G Z_Wᵀ + σ_X² I (W × W), R = X_W − Z_W μ (W × D).
    sc.g.clear();
    sc.g.resize(w * k, 0.0);
    for a in 0..w {
        for (c, &zc) in zw[a * k..(a + 1) * k].iter().enumerate() {
            if zc != 0.0 {
                for j in 0..k {
                    sc.g[a * k + j] += sigma[c * k + j];
                }
            }
        }
    }
    sc.s.clear();
    sc.s.resize(w * w, 0.0);
    for a in 0..w {
        for b in 0..w {
            let zb = &zw[b * k..(b + 1) * k];
            sc.s[a * w + b] = sc.g[a * k..(a + 1) * k]
                .iter()
                .zip(zb)
                .map(|(p, q)| p * q)
                .sum();
        }
        sc.s[a * w + a] += sx2;
    }
    sc.s[i_new * w + i_new] += extra;
    sc.r.clear();
    sc.r.extend_from_slice(xw);
    for a in 0..w {
        for (c, &zc) in zw[a * k..(a + 1) * k].iter().enumerate() {
            if zc != 0.0 {
                for t in 0..d {
                    sc.r[a * d + t] -= mu[c * d + t];
                }
            }
        }
    }
    let l = cholesky(&sc.s, w).expect("the window covariance is positive definite");
    forward(&l, w, &mut sc.r, d);
    let quad: f64 = sc.r.iter().map(|v| v * v).sum();
    -0.5 * d as f64 * chol_logdet(&l, w) - 0.5 * quad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ibp::BlockFault;
    use crate::restarts::run_rng;
    use rand::RngExt;

    fn data(n: usize, d: usize, seed: u64) -> RowMatrix {
        let mut rng = run_rng(seed, 9);
        RowMatrix::new(
            n,
            d,
            (0..n * d)
                .map(|_| rng.random::<f64>() * 2.0 - 1.0)
                .collect(),
        )
    }

    #[test]
    fn information_form_tracks_fresh_state_over_200_sweeps() {
        let x = data(30, 5, 3);
        let h = Hyper {
            alpha: 2.0,
            sigma_x: 0.4,
            sigma_a: 1.0,
            k_new_max: 4,
            block: 0,
            block_fault: BlockFault::None,
        };
        for window in [1, 3] {
            let mut s = Accelerated::new(&x, Feats::empty(30), h, window, 0);
            let mut rng = run_rng(6, window as u64);
            for _ in 0..200 {
                s.sweep(&x, &mut rng);
                let (p, hh) = fresh_information(&x, &s.feats, &h);
                let (p2, h2) = s.state();
                let scale = 1.0 / h.sigma_x.powi(2);
                for (a, b) in p.iter().zip(p2) {
                    assert!((a - b).abs() < 1e-9 * scale, "P drift {a} {b}");
                }
                for (a, b) in hh.iter().zip(h2) {
                    assert!((a - b).abs() < 1e-9 * scale, "h drift {a} {b}");
                }
            }
            assert!(s.feats.k() > 0);
        }
    }

    #[test]
    fn carried_moments_match_fresh_ones_after_rows_leave_and_return() {
        let x = data(12, 4, 5);
        let h = Hyper {
            alpha: 2.0,
            sigma_x: 0.4,
            sigma_a: 1.0,
            k_new_max: 4,
            block: 0,
            block_fault: BlockFault::None,
        };
        let mut s = Accelerated::new(&x, Feats::empty(12), h, 1, 0);
        let mut rng = run_rng(2, 0);
        for _ in 0..5 {
            s.sweep(&x, &mut rng);
        }
        let (k, d) = (s.feats.k(), 4);
        assert!(k > 1);
        let sx2 = h.sigma_x.powi(2);
        let mut mo = Moments::of(&s.p, &s.h, k, d);
        let close = |a: &Moments, b: &Moments| {
            for (p, q) in a.sigma.iter().zip(&b.sigma).chain(a.mu.iter().zip(&b.mu)) {
                assert!((p - q).abs() < 1e-9 * (1.0 + q.abs()), "{p} vs {q}");
            }
        };
        for n in 0..12 {
            let u: Vec<f64> = (0..k)
                .map(|c| f64::from(u8::from(s.feats.get(n, c))))
                .collect();
            mo.update(&u, x.row(n), -1.0, sx2);
            s.apply_row(&x, n, -1.0);
            close(&mo, &Moments::of(&s.p, &s.h, k, d));
            // The fit of the row's value matches a direct computation.
            let fit = RowFit::new(&u, &mo);
            for t in 0..d {
                let want: f64 = (0..k).map(|c| u[c] * mo.mu[c * d + t]).sum();
                assert!((fit.mean[t] - want).abs() < 1e-12 * (1.0 + want.abs()));
            }
            mo.update(&u, x.row(n), 1.0, sx2);
            s.apply_row(&x, n, 1.0);
            close(&mo, &Moments::of(&s.p, &s.h, k, d));
        }
    }

    #[test]
    fn window_loglik_equals_collapsed_conditional() {
        // For W = 1, log N(x_n; z μ₋n, zᵀΣ₋n z + σ_X²) differences equal those of Eq. 5.
        use crate::ibp::model::collapsed_log_lik;
        let x = data(5, 2, 4);
        let h = Hyper {
            alpha: 1.0,
            sigma_x: 0.5,
            sigma_a: 1.2,
            k_new_max: 3,
            block: 0,
            block_fault: BlockFault::None,
        };
        let z = RowMatrix::from_rows(&[[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]);
        let mut f = Feats::empty(5);
        f.push_singleton(0);
        f.push_singleton(1);
        for i in 0..5 {
            for c in 0..2 {
                f.set(i, c, z.row(i)[c] != 0.0);
            }
        }
        let n = 3;
        let (p, hh) = fresh_information(&x, &f, &h);
        let l = cholesky(&p, 2).unwrap();
        let sigma = chol_inverse(&l, 2);
        let mut mu = vec![0.0; 4];
        for i in 0..2 {
            for j in 0..2 {
                for c in 0..2 {
                    mu[i * 2 + c] += sigma[i * 2 + j] * hh[j * 2 + c];
                }
            }
        }
        let mut sc = WindowScratch::default();
        let sx2 = h.sigma_x.powi(2);
        let base = collapsed_log_lik(x.view(), &z, h.sigma_x, h.sigma_a);
        let lbase = window_loglik(
            &[0.0, 0.0],
            1,
            2,
            &sigma,
            &mu,
            x.row(n),
            2,
            sx2,
            0,
            0.0,
            &mut sc,
        );
        for pat in 0..4u32 {
            for j in 0..3usize {
                let zr = [f64::from(pat & 1), f64::from((pat >> 1) & 1)];
                let mut zz = RowMatrix::zeros(5, 2 + j);
                for i in 0..5 {
                    zz.row_mut(i)[..2].copy_from_slice(if i == n { &zr } else { z.row(i) });
                }
                for c in 2..2 + j {
                    zz.row_mut(n)[c] = 1.0;
                }
                let direct = collapsed_log_lik(x.view(), &zz, h.sigma_x, h.sigma_a) - base;
                let extra = j as f64 * h.sigma_a.powi(2);
                let fast =
                    window_loglik(&zr, 1, 2, &sigma, &mu, x.row(n), 2, sx2, 0, extra, &mut sc)
                        - lbase;
                assert!((direct - fast).abs() < 1e-10, "{pat} {j}: {direct} {fast}");
            }
        }
    }
}
