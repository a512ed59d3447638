//! The MEIBP state and its coordinate-ascent steps, written so that an iteration costs
//! O(K²D) for q(A), one N × D × K GEMM (XΦᵀ) and O(K) per local-search move for the rows:
//! ZᵀZ and ZᵀX are kept up to date row by row (as in R&G's MATLAB code), so the q(A) update
//! of Eq. 14, the evidence of Eq. 10 and the gain of removing a feature never touch X.

use super::row::RowObjective;
use crate::MatrixView;
use crate::RowMatrix;
use crate::ibp::dense::{chol_solve, cholesky};
use crate::ibp::erfcx::{TruncNormal, trunc_normal};
use crate::ibp::model::ln_factorial_table;
use crate::linalg::{BLOCK_ROWS, axpy, dot, gemm_xat, ordered_block_reduce};
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

/// [`State::start_q`] stops when a sweep raises the bound by at most this × |bound|.
const Q_CONVERGED: f64 = 1e-10;
/// [`State::start_q`] stops after this many sweeps in any case.
const Q_SWEEPS: usize = 1000;

/// Z (`N × K`), q(A) and the sufficient statistics m = column sums of Z, ZᵀZ and ZᵀX.
#[derive(Clone)]
pub(crate) struct State {
    pub z: Vec<Vec<bool>>,
    /// q(a_kd), row-major `K × D`.
    pub q: Vec<TruncNormal>,
    /// Φ = E_q\[A\] (`K × D`), the means of `q`.
    phi: RowMatrix,
    m: Vec<usize>,
    /// ZᵀZ, `K × K` (integer counts, exact in f64).
    ztz: Vec<f64>,
    /// ZᵀX, `K × D`.
    ztx: RowMatrix,
    n: usize,
    /// Eq. 10's constant: −(ND/2) log(2πσ_X²) − ‖X‖²/(2σ_X²) − αH_N.
    constant: f64,
    pub alpha: f64,
    pub sx: f64,
    pub sa: f64,
    pub lf: Vec<f64>,
}

/// What the row steps of one sweep share while q(A) is fixed.
pub(crate) struct RowContext {
    /// G = ΦΦᵀ/σ_X², `K × K`.
    g: Vec<f64>,
    /// XΦᵀ, `N × K`.
    xphi: RowMatrix,
    /// ½ Σ_d (E\[a_kd\]² − E\[a²_kd\]) per feature (Eq. 11's second term).
    half_var: Vec<f64>,
    /// η_k − log N! per feature: a feature's bonus when the row opens it.
    open: Vec<f64>,
}

/// ZᵀZ and ZᵀX by GEMM over fixed row blocks (bit-identical for any thread count).
fn cross_products(x: MatrixView<'_>, z: &[Vec<bool>], k: usize) -> (Vec<f64>, RowMatrix) {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut ztz = vec![0.0; k * k];
    let mut ztx = RowMatrix::zeros(k, d);
    if k == 0 || d == 0 {
        return (ztz, ztx);
    }
    ordered_block_reduce(
        n,
        BLOCK_ROWS,
        |_, s, e| {
            let b = e - s;
            let zb: Vec<f64> = z[s..e]
                .iter()
                .flat_map(|r| r.iter().map(|&v| f64::from(u8::from(v))))
                .collect();
            let zr = MatRef::from_row_major_slice(&zb, b, k);
            let xb = MatRef::from_row_major_slice(x.rows_slice(s, e), b, d);
            let mut g = vec![0.0; k * k];
            let mut c = vec![0.0; k * d];
            let gm = MatMut::from_row_major_slice_mut(&mut g, k, k);
            faer::linalg::matmul::matmul(gm, Accum::Replace, zr.transpose(), zr, 1.0, Par::Seq);
            let cm = MatMut::from_row_major_slice_mut(&mut c, k, d);
            faer::linalg::matmul::matmul(cm, Accum::Replace, zr.transpose(), xb, 1.0, Par::Seq);
            (g, c)
        },
        |(g, c)| {
            axpy(1.0, &g, &mut ztz);
            axpy(1.0, &c, ztx.as_mut_slice());
        },
    );
    (ztz, ztx)
}

impl State {
    /// The state with assignments `z` (`N` rows of `K` flags) and q(A) at the prior.
    pub fn new(x: MatrixView<'_>, z: Vec<Vec<bool>>, alpha: f64, sx: f64, sa: f64) -> Self {
        let k = z.first().map_or(0, Vec::len);
        let (n, d) = (x.n_rows(), x.n_cols());
        let mut m = vec![0; k];
        for row in &z {
            for (c, &v) in row.iter().enumerate() {
                m[c] += usize::from(v);
            }
        }
        let (ztz, ztx) = cross_products(x, &z, k);
        let prior = trunc_normal(0.0, sa);
        let x_sq: f64 = x.as_slice().iter().map(|v| v * v).sum();
        let h_n: f64 = (1..=n).map(|i| 1.0 / i as f64).sum();
        let s2 = sx * sx;
        let constant = -((n * d) as f64) / 2.0 * (2.0 * std::f64::consts::PI * s2).ln()
            - x_sq / (2.0 * s2)
            - alpha * h_n;
        Self {
            lf: ln_factorial_table(n.max(k) + 1),
            z,
            q: vec![prior; k * d],
            phi: RowMatrix::new(k, d, vec![prior.mean; k * d]),
            m,
            ztz,
            ztx,
            n,
            constant,
            alpha,
            sx,
            sa,
        }
    }

    pub fn k(&self) -> usize {
        self.m.len()
    }

    fn d(&self) -> usize {
        self.phi.n_cols()
    }

    pub fn active(&self) -> Vec<usize> {
        (0..self.k()).filter(|&c| self.m[c] > 0).collect()
    }

    /// Replaces q(A) (and Φ with its means).
    #[cfg(test)]
    pub fn set_q(&mut self, q: Vec<TruncNormal>) {
        for (p, t) in self.phi.as_mut_slice().iter_mut().zip(&q) {
            *p = t.mean;
        }
        self.q = q;
    }

    /// ZᵀZ and ZᵀX as kept row by row (for tests against fresh products).
    #[cfg(test)]
    pub fn cross(&self) -> (&[f64], &RowMatrix) {
        (&self.ztz, &self.ztx)
    }

    #[cfg(test)]
    pub fn fresh_cross(&self, x: &RowMatrix) -> (Vec<f64>, RowMatrix) {
        cross_products(x.view(), &self.z, self.k())
    }

    /// The active columns of Z (as 0/1 numbers) and the means of q(A) on them.
    pub fn active_z_and_means(&self) -> (RowMatrix, RowMatrix) {
        let active = self.active();
        let mut zm = RowMatrix::zeros(self.n, active.len());
        let mut am = RowMatrix::zeros(active.len(), self.d());
        for (j, &c) in active.iter().enumerate() {
            for i in 0..self.n {
                zm.row_mut(i)[j] = f64::from(u8::from(self.z[i][c]));
            }
            am.row_mut(j).copy_from_slice(self.phi.row(c));
        }
        (zm, am)
    }

    /// Eqs. 13–17, feature by feature in order (each feature sees the new means of those
    /// before it): μ̃_k = ρ_k Σ_n z_nk (x_n − Σ_{k'≠k} z_nk' Φ_k')
    /// = ρ_k ((ZᵀX)_k − Σ_{k'≠k} (ZᵀZ)_kk' Φ_k'), σ̃²_k = ρ_k σ_X², ρ_k = 1/(m_k + σ_X²/σ_A²):
    /// O(K²D), whatever N.
    pub fn update_q(&mut self) {
        let (k, d) = (self.k(), self.d());
        let r = (self.sx / self.sa).powi(2);
        let mut acc = vec![0.0; d];
        for c in 0..k {
            let rho = 1.0 / (self.m[c] as f64 + r);
            acc.copy_from_slice(self.ztx.row(c));
            for c2 in (0..k).filter(|&c2| c2 != c) {
                let w = self.ztz[c * k + c2];
                if w != 0.0 {
                    axpy(-w, self.phi.row(c2), &mut acc);
                }
            }
            let s = (rho * self.sx * self.sx).sqrt();
            let phi = self.phi.row_mut(c);
            for t in 0..d {
                let q = trunc_normal(rho * acc[t], s);
                phi[t] = q.mean;
                self.q[c * d + t] = q;
            }
        }
    }

    /// The first q(A) for the current Z: Φ from the posterior mean of A given Z under a
    /// Gaussian N(0, σ_A²) prior, (ZᵀZ + (σ_X²/σ_A²) I)⁻¹ ZᵀX, clipped at 0, then
    /// [`update_q`](Self::update_q) until a sweep raises the bound by at most
    /// [`Q_CONVERGED`] × |bound| (at most [`Q_SWEEPS`] sweeps): q(A) at a fixed point of its
    /// coordinate ascent for the initial Z. (A single sweep from the prior, whose mean
    /// σ_A√(2/π) in each of the features a row holds over-explains X, sends most features'
    /// means to about zero; the ridge start makes the sweeps few: 8 for N = 10 000, D = 1000,
    /// K = 50 against 565 from the prior.) Returns the number of sweeps.
    pub fn start_q(&mut self) -> usize {
        let (k, d) = (self.k(), self.d());
        let mut m = self.ztz.clone();
        let r = (self.sx / self.sa).powi(2);
        for c in 0..k {
            m[c * k + c] += r;
        }
        if let Some(l) = cholesky(&m, k) {
            let mut b = self.ztx.as_slice().to_vec();
            chol_solve(&l, k, &mut b, d);
            for (p, v) in self.phi.as_mut_slice().iter_mut().zip(&b) {
                *p = v.max(0.0);
            }
        }
        self.update_q();
        let mut prev = self.evidence();
        for sweep in 2..=Q_SWEEPS {
            self.update_q();
            let e = self.evidence();
            if e - prev <= Q_CONVERGED * e.abs() {
                return sweep;
            }
            prev = e;
        }
        Q_SWEEPS
    }

    /// η_k of Eq. 12.
    fn eta(&self, c: usize) -> f64 {
        let d = self.d();
        let sa2 = self.sa * self.sa;
        let base = -0.5 * (std::f64::consts::PI * sa2 / 2.0).ln() + self.alpha.ln() / d as f64;
        self.q[c * d..(c + 1) * d]
            .iter()
            .map(|q| base - q.second / (2.0 * sa2) + q.entropy)
            .sum()
    }

    /// ½ Σ_d (E\[a_kd\]² − E\[a²_kd\]) for feature k.
    fn half_var(&self, c: usize) -> f64 {
        let d = self.d();
        self.q[c * d..(c + 1) * d]
            .iter()
            .map(|q| 0.5 * (q.mean * q.mean - q.second))
            .sum()
    }

    /// ΦΦᵀ (`K × K`).
    fn phi_gram(&self) -> Vec<f64> {
        let k = self.k();
        let mut g = vec![0.0; k * k];
        gemm_xat(&mut g, self.phi.as_slice(), k, &self.phi);
        g
    }

    /// The quantities the rows share under the current q(A); XΦᵀ by GEMM over fixed row
    /// blocks in parallel (the same bits for any thread count).
    pub fn row_context(&self, x: MatrixView<'_>) -> RowContext {
        let (n, d, k) = (self.n, self.d(), self.k());
        let s2 = self.sx * self.sx;
        let g: Vec<f64> = self.phi_gram().into_iter().map(|v| v / s2).collect();
        let mut xphi = RowMatrix::zeros(n, k);
        if k > 0 && d > 0 {
            xphi.as_mut_slice()
                .par_chunks_mut(BLOCK_ROWS * k)
                .zip(x.as_slice().par_chunks(BLOCK_ROWS * d))
                .for_each(|(dst, xb)| gemm_xat(dst, xb, xb.len() / d, &self.phi));
        }
        RowContext {
            g,
            xphi,
            half_var: (0..k).map(|c| self.half_var(c)).collect(),
            open: (0..k).map(|c| self.eta(c) - self.lf[n]).collect(),
        }
    }

    /// Eq. 19 for row `i` under `ctx` (see the module documentation of [`super`] for ω).
    pub fn row_objective<'a>(&'a self, ctx: &'a RowContext, i: usize) -> RowObjective<'a> {
        let (n, k) = (self.n, self.k());
        let s2 = self.sx * self.sx;
        let lf = &self.lf;
        let nu = |m: usize, z: usize| -> f64 {
            if m == 0 && z == 0 {
                0.0
            } else {
                lf[n - m - z] + lf[m + z - 1]
            }
        };
        let m_minus: Vec<usize> = (0..k)
            .map(|c| self.m[c] - usize::from(self.z[i][c]))
            .collect();
        let xphi = ctx.xphi.row(i);
        let omega: Vec<f64> = (0..k)
            .map(|c| {
                let mut w = (xphi[c] + ctx.half_var[c]) / s2;
                w += nu(m_minus[c], 1) - nu(m_minus[c], 0);
                if m_minus[c] == 0 {
                    w += ctx.open[c];
                }
                w
            })
            .collect();
        let opens: Vec<bool> = m_minus.iter().map(|&m| m == 0).collect();
        let k_plus = m_minus.iter().filter(|&&m| m > 0).count();
        RowObjective::new(&ctx.g, omega, opens, k_plus, lf)
    }

    /// Re-optimizes row `i` by the local search (after `hook(objective, z_i)`); returns
    /// whether z_i changed. The row keeps z_i unless the search found a strictly better set,
    /// so F never decreases.
    pub fn update_row(
        &mut self,
        ctx: &RowContext,
        x: MatrixView<'_>,
        i: usize,
        hook: &mut dyn FnMut(&RowObjective<'_>, &[bool]),
    ) -> bool {
        let best = {
            let obj = self.row_objective(ctx, i);
            hook(&obj, &self.z[i]);
            let (best, v) = obj.local_search();
            if best == self.z[i] || v <= obj.value(&self.z[i]) {
                return false;
            }
            best
        };
        self.set_row(x, i, best);
        true
    }

    /// z_i := `on`, updating m, ZᵀZ (O(K²)) and ZᵀX (O(D) per flipped feature).
    fn set_row(&mut self, x: MatrixView<'_>, i: usize, on: Vec<bool>) {
        let k = self.k();
        let old = std::mem::replace(&mut self.z[i], on);
        let new = &self.z[i];
        for c in 0..k {
            if old[c] != new[c] {
                let sign = if new[c] { 1.0 } else { -1.0 };
                if new[c] {
                    self.m[c] += 1;
                } else {
                    self.m[c] -= 1;
                }
                axpy(sign, x.row(i), self.ztx.row_mut(c));
            }
            for c2 in 0..k {
                let delta =
                    f64::from(u8::from(new[c] && new[c2])) - f64::from(u8::from(old[c] && old[c2]));
                self.ztz[c * k + c2] += delta;
            }
        }
    }

    /// The change of the bound when feature `c` (active) leaves every row and q(a_c) returns
    /// to the prior, the other q's fixed (`gram` = ΦΦᵀ): the feature's terms of Eq. 10 leave,
    /// −log K₊! becomes −log (K₊ − 1)!, and an inactive feature whose q is the prior adds
    /// nothing (R&G Eq. 18). O(KD).
    fn removal_gain(&self, c: usize, gram: &[f64], k_plus: usize) -> f64 {
        let (n, k) = (self.n, self.k());
        let m = self.m[c];
        let s2 = self.sx * self.sx;
        let cross: f64 = (0..k)
            .filter(|&c2| c2 != c)
            .map(|c2| self.ztz[c * k + c2] * gram[c * k + c2])
            .sum();
        let data = dot(self.phi.row(c), self.ztx.row(c)) + m as f64 * self.half_var(c)
            - cross
            - 0.5 * m as f64 * gram[c * k + c];
        let prior = self.lf[n - m] + self.lf[m - 1] - self.lf[n] + self.eta(c);
        -data / s2 - prior + self.lf[k_plus] - self.lf[k_plus - 1]
    }

    /// Removes, one at a time, the active feature whose removal raises the bound most
    /// ([`removal_gain`](Self::removal_gain)), while one does; returns how many left. Each
    /// removal is a coordinate-ascent step on (column c of Z, q(a_c)) jointly, so the bound
    /// rises. It frees the state of a feature no single row can leave: one that is on in every
    /// row with weights near zero costs the bound roughly (D/2)(log(Nσ_A²/σ_X²) − 1) through η_k,
    /// but each row that dropped it alone would lose log(N − 1) of the IBP prior (ν).
    pub fn remove_features(&mut self) -> usize {
        let gram = self.phi_gram();
        let mut removed = 0;
        loop {
            let active = self.active();
            let best = active
                .iter()
                .map(|&c| (self.removal_gain(c, &gram, active.len()), c))
                .fold(None, |b: Option<(f64, usize)>, v| match b {
                    Some(b) if b.0 >= v.0 => Some(b),
                    _ => Some(v),
                });
            match best {
                Some((gain, c)) if gain > 0.0 => {
                    self.clear_feature(c);
                    removed += 1;
                }
                _ => return removed,
            }
        }
    }

    /// [`removal_gain`](Self::removal_gain) of active feature `c` (for tests).
    #[cfg(test)]
    pub fn removal_gain_of(&self, c: usize) -> f64 {
        self.removal_gain(c, &self.phi_gram(), self.active().len())
    }

    /// Column c of Z to zero (m, ZᵀZ, ZᵀX with it) and q(a_c) to the prior TN(0, σ_A²).
    fn clear_feature(&mut self, c: usize) {
        let (k, d) = (self.k(), self.d());
        for row in &mut self.z {
            row[c] = false;
        }
        self.m[c] = 0;
        for c2 in 0..k {
            self.ztz[c * k + c2] = 0.0;
            self.ztz[c2 * k + c] = 0.0;
        }
        self.ztx.row_mut(c).fill(0.0);
        let prior = trunc_normal(0.0, self.sa);
        self.q[c * d..(c + 1) * d].fill(prior);
        self.phi.row_mut(c).fill(prior.mean);
    }

    /// Eq. 10 with its constant, the quantity R&G's code computes (`compute_vlb`):
    /// Σ_n \[−½ z_n ΦΦᵀ z_nᵀ + z_n·ξ_n\]/σ_X² − log K₊! plus
    /// Σ_{active k} \[log((N − m_k)! (m_k − 1)!/N!) + η_k\], plus the constant
    /// −(ND/2) log(2πσ_X²) − ‖X‖²/(2σ_X²) − αH_N, with the sum over rows written as
    /// −½ ⟨ZᵀZ, ΦΦᵀ⟩ + ⟨ZᵀX, Φ⟩ + Σ_k m_k · ½ Σ_d (E\[a_kd\]² − E\[a²_kd\]), so O(K²D).
    pub fn evidence(&self) -> f64 {
        let (n, k) = (self.n, self.k());
        let s2 = self.sx * self.sx;
        let gram = self.phi_gram();
        let quad: f64 = self.ztz.iter().zip(&gram).map(|(a, b)| a * b).sum();
        let lin: f64 = (0..k)
            .map(|c| dot(self.phi.row(c), self.ztx.row(c)) + self.m[c] as f64 * self.half_var(c))
            .sum();
        let mut f = self.constant + (lin - 0.5 * quad) / s2;
        let active = self.active();
        f -= self.lf[active.len()];
        for &c in &active {
            let m = self.m[c];
            f += self.lf[n - m] + self.lf[m - 1] - self.lf[n] + self.eta(c);
        }
        f
    }
}
