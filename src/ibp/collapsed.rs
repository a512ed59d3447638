//! Collapsed Gibbs sampler for the linear-Gaussian IBP (Griffiths & Ghahramani 2006;
//! D-V&G §3, Eqs. 3–5), A integrated out.
//!
//! For each row n: for each feature k with m_{−n,k} > 0,
//! P(z_nk = 1 | Z_{−nk}, X) ∝ (m_{−n,k}/N) p(X | Z) (Eq. 3), with n's singleton features
//! (held by n alone) still in Z; then those singletons are dropped and their number redrawn
//! with P(k_new = j) ∝ Poisson(j; α/N) p(X | Z_new) (Eq. 4), j = 0..=`k_new_max`. (Dropping
//! the singletons *before* the z_nk updates would condition those updates on a state the
//! chain is not in, and biases the chain towards shared features.)
//!
//! p(X | Z) (Eq. 5) is evaluated in O(K² + KD) per value of z_n from M⁻¹ = (ZᵀZ + rI)⁻¹,
//! r = σ_X²/σ_A², and B = ZᵀX kept up to date by Sherman–Morrison updates. With row n taken
//! out (Q = M_{−n}⁻¹, B₋ = B − z_n x_nᵀ) and a candidate row z, u = Q z, c = 1 + zᵀu and
//! v = B₋ᵀu:
//!
//! M⁻¹ = Q − u uᵀ/c,  log det M = log det M_{−n} + log c,
//! tr(BᵀM⁻¹B) = tr(B₋ᵀQB₋) + 2 v·x + (c−1)‖x‖² − ‖v + (c−1)x‖²/c,
//!
//! so, up to terms that do not depend on z,
//! log p(X | Z) = −(D/2) log c + \[2 v·x + (c−1)‖x‖² − ‖v + (c−1)x‖²/c\] / (2σ_X²).
//! j new singleton columns only add j/r to c (Q grows by I/r, B₋ by zero rows), and the
//! K-dependent constants of Eq. 5 cancel the j log r of log det M, so the same expression
//! with c_j = c + j/r gives p(X | Z_new). v·v = uᵀGu needs G = B₋B₋ᵀ: it comes from
//! H = BBᵀ, kept up to date like M⁻¹ and B, as G = H − (B₋x)zᵀ − z(B₋x)ᵀ − ‖x‖²zzᵀ in O(K²)
//! per row (a product of B₋ with itself would cost O(K²D)). M⁻¹, B and H are recomputed from
//! Z every `refresh` sweeps against rounding drift.

use super::common::{
    BlockPick, Hyper, block_log_prior, draw_binary, draw_log_weighted_with,
    log_poisson_unnorm_into, log_prior_flip,
};
use super::dense::{chol_inverse, cholesky, grow_diag, matvec, remove_index};
use super::model::gram;
use super::state::Feats;
use crate::RowMatrix;
use crate::linalg::dot;
use crate::restarts::shuffle;
use rand_chacha::ChaCha8Rng;

/// State of the collapsed sampler.
#[derive(Clone, Debug)]
pub(crate) struct Collapsed {
    pub feats: Feats,
    hyper: Hyper,
    /// M⁻¹ = (ZᵀZ + rI)⁻¹, `K × K`.
    minv: Vec<f64>,
    /// B = ZᵀX, `K × D`.
    b: Vec<f64>,
    /// H = BBᵀ, `K × K`.
    bbt: Vec<f64>,
    /// Recompute M⁻¹ and B from Z every this many sweeps (0: never).
    refresh: usize,
    sweeps: usize,
    /// Boxed, so that the sampler stays small beside the others in `params::Chain`.
    scratch: Box<Scratch>,
}

/// Buffers of one row's update, kept from row to row so that a row allocates nothing unless
/// it drops or adds features. They carry no state between rows.
#[derive(Clone, Debug, Default)]
struct Scratch {
    z: Vec<f64>,
    w: Vec<f64>,
    u: Vec<f64>,
    bx: Vec<f64>,
    g: Vec<f64>,
    order: Vec<usize>,
    logw: Vec<f64>,
    weights: Vec<f64>,
    blocks: BlockPick,
}

/// M⁻¹ and ZᵀX recomputed from Z.
pub(crate) fn fresh_state(x: &RowMatrix, feats: &Feats, hyper: &Hyper) -> (Vec<f64>, Vec<f64>) {
    let (ztz, ztx) = gram(x.view(), &feats.to_row_matrix());
    state_of_gram(ztz, ztx, feats.k(), hyper)
}

/// M⁻¹ and ZᵀX from ZᵀZ (`m`, `k × k`) and ZᵀX (`b`).
fn state_of_gram(mut m: Vec<f64>, b: Vec<f64>, k: usize, hyper: &Hyper) -> (Vec<f64>, Vec<f64>) {
    let r = (hyper.sigma_x / hyper.sigma_a).powi(2);
    for i in 0..k {
        m[i * k + i] += r;
    }
    let l = cholesky(&m, k).expect("ZᵀZ + rI is positive definite");
    (chol_inverse(&l, k), b)
}

/// H = BBᵀ (`k × k`) for B (`k × d`), by four-lane products.
fn outer_of(b: &[f64], k: usize, d: usize) -> Vec<f64> {
    let row = |i: usize| &b[i * d..(i + 1) * d];
    let mut h = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..=i {
            let v = dot(row(i), row(j));
            h[i * k + j] = v;
            h[j * k + i] = v;
        }
    }
    h
}

impl Collapsed {
    pub fn new(x: &RowMatrix, feats: Feats, hyper: Hyper, refresh: usize) -> Self {
        let (minv, b) = fresh_state(x, &feats, &hyper);
        let bbt = outer_of(&b, feats.k(), x.n_cols());
        Self {
            feats,
            hyper,
            minv,
            b,
            bbt,
            refresh,
            sweeps: 0,
            scratch: Box::default(),
        }
    }

    /// Replaces the hyperparameters and recomputes M⁻¹ (which depends on σ_X²/σ_A²), from
    /// `gram` = (ZᵀZ, ZᵀX) of the current Z when the caller has them, else from Z and `x`.
    pub fn set_hyper(&mut self, x: &RowMatrix, hyper: Hyper, gram: Option<(&[f64], &[f64])>) {
        self.hyper = hyper;
        let (minv, b) = match gram {
            Some((ztz, ztx)) => state_of_gram(ztz.to_vec(), ztx.to_vec(), self.feats.k(), &hyper),
            None => fresh_state(x, &self.feats, &self.hyper),
        };
        self.bbt = outer_of(&b, self.feats.k(), x.n_cols());
        self.minv = minv;
        self.b = b;
    }

    /// The incrementally maintained (M⁻¹, ZᵀX).
    #[cfg(test)]
    pub fn state(&self) -> (&[f64], &[f64]) {
        (&self.minv, &self.b)
    }

    /// The incrementally maintained H = BBᵀ.
    #[cfg(test)]
    fn bbt(&self) -> &[f64] {
        &self.bbt
    }

    /// One sweep over the rows in order 0..N.
    pub fn sweep(&mut self, x: &RowMatrix, rng: &mut ChaCha8Rng) {
        for n in 0..x.n_rows() {
            self.row(x, n, rng);
        }
        self.sweeps += 1;
        if self.refresh > 0 && self.sweeps.is_multiple_of(self.refresh) {
            let (minv, b) = fresh_state(x, &self.feats, &self.hyper);
            self.bbt = outer_of(&b, self.feats.k(), x.n_cols());
            self.minv = minv;
            self.b = b;
        }
    }

    fn row(&mut self, x: &RowMatrix, n: usize, rng: &mut ChaCha8Rng) {
        let (nn, d) = (x.n_rows(), x.n_cols());
        let xn = x.row(n);
        let xx: f64 = xn.iter().map(|v| v * v).sum();
        let r = (self.hyper.sigma_x / self.hyper.sigma_a).powi(2);
        let s2 = self.hyper.sigma_x * self.hyper.sigma_x;
        let mut k = self.feats.k();
        let Scratch {
            mut z,
            mut w,
            mut u,
            mut bx,
            mut g,
            mut order,
            mut logw,
            mut weights,
            mut blocks,
        } = std::mem::take(&mut *self.scratch);
        self.feats.row_into(n, &mut z);

        // Take row n out: Q = M⁻¹ + w wᵀ/(1 − zᵀw) with w = M⁻¹z, B₋ = B − z xᵀ.
        // (In place: M⁻¹ and B are rebuilt from Q and B₋ when the row is put back.)
        let mut q = std::mem::take(&mut self.minv);
        let mut bm = std::mem::take(&mut self.b);
        let mut h = std::mem::take(&mut self.bbt);
        if z.iter().any(|&v| v != 0.0) {
            w.clear();
            w.resize(k, 0.0);
            matvec(&q, k, &z, &mut w);
            let den = 1.0 - z.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
            for (qi, &wi) in q.chunks_exact_mut(k).zip(&w) {
                qi.iter_mut()
                    .zip(&w)
                    .for_each(|(v, &wj)| *v += wi * wj / den);
            }
            for (bi, _) in bm
                .chunks_exact_mut(d.max(1))
                .zip(&z)
                .filter(|(_, zi)| **zi != 0.0)
            {
                bi.iter_mut().zip(xn).for_each(|(v, xc)| *v -= xc);
            }
        }
        // B₋x and G = B₋B₋ᵀ: with them each evaluation costs O(K²), not O(KD) (`row_loglik`).
        // G from H = BBᵀ (module documentation).
        b_minus_x(&bm, k, d, xn, &mut bx);
        g.clear();
        g.extend_from_slice(&h);
        rank_two_update(&mut g, &bx, &z, xx, -1.0);
        // Existing features (Eq. 3); n's singletons stay in Z meanwhile.
        // `cur` is the value of the row as it stands, so each flip evaluates only the other
        // value (Q, G and B₋x do not change within the row).
        u.clear();
        u.resize(k, 0.0);
        let mut cur = row_loglik(&q, &g, &bx, &z, d, xx, s2, 0.0, &mut u);
        // The features in a fresh random order (`common::shuffled`, without its allocation).
        order.clear();
        order.extend(0..k);
        shuffle(&mut order, rng);
        for &c in &order {
            let m_minus = self.feats.m(c) - usize::from(z[c] != 0.0);
            if m_minus == 0 {
                continue;
            }
            let (p0, p1) = log_prior_flip(m_minus, nn);
            let was_on = z[c] != 0.0;
            z[c] = if was_on { 0.0 } else { 1.0 };
            let other = row_loglik(&q, &g, &bx, &z, d, xx, s2, 0.0, &mut u);
            let (l0, l1) = if was_on { (other, cur) } else { (cur, other) };
            let on = draw_binary(p0 + l0, p1 + l1, rng);
            z[c] = f64::from(u8::from(on));
            self.feats.set(n, c, on);
            cur = if on { l1 } else { l0 };
        }
        // The joint update on a block of shared features (`common::pick_block`).
        if self.hyper.block >= 2 {
            let held = |c: usize| z[c] != 0.0;
            if let Some(now) = blocks.pick(&self.feats, held, &self.hyper, rng) {
                let BlockPick { block, terms, .. } = &blocks;
                logw.clear();
                for bits in 0..1usize << block.len() {
                    for (t, &c) in block.iter().enumerate() {
                        z[c] = f64::from(u8::from((bits >> t) & 1 == 1));
                    }
                    logw.push(
                        block_log_prior(terms, bits)
                            + if bits == now {
                                cur
                            } else {
                                row_loglik(&q, &g, &bx, &z, d, xx, s2, 0.0, &mut u)
                            },
                    );
                }
                let bits = draw_log_weighted_with(&logw, &mut weights, rng);
                for (t, &c) in block.iter().enumerate() {
                    let on = (bits >> t) & 1 == 1;
                    z[c] = f64::from(u8::from(on));
                    self.feats.set(n, c, on);
                }
            }
        }

        // Drop the features held by row n alone (their rows of Q are e_k/r, of B₋ zero);
        // the new-feature step below redraws their number.
        for c in (0..k).rev() {
            if z[c] != 0.0 && self.feats.m(c) == 1 {
                q = remove_index(&q, k, c);
                g = remove_index(&g, k, c);
                bx.remove(c);
                bm.drain(c * d..(c + 1) * d);
                z.remove(c);
                self.feats.remove(c);
                k -= 1;
            }
        }

        // New features (Eq. 4), truncated at k_new_max.
        u.truncate(k);
        let kmax = self.hyper.k_new_max;
        log_poisson_unnorm_into(self.hyper.alpha / nn as f64, kmax, &mut logw);
        // z is the same for every j: only c changes.
        let terms = row_terms(&q, &g, &bx, &z, &mut u);
        for (j, lw) in logw.iter_mut().enumerate() {
            *lw += loglik_of(terms, d, xx, s2, j as f64 / r);
        }
        let j = draw_log_weighted_with(&logw, &mut weights, rng);
        if j > 0 {
            q = grow_diag(&q, k, j, 1.0 / r);
            g = grow_diag(&g, k, j, 0.0);
            bx.resize(k + j, 0.0);
            bm.resize((k + j) * d, 0.0);
            z.resize(k + j, 1.0);
            for _ in 0..j {
                self.feats.push_singleton(n);
            }
            k += j;
        }

        // Put row n back: M⁻¹ = Q − u uᵀ/c, B = B₋ + z xᵀ.
        u.clear();
        u.resize(k, 0.0);
        matvec(&q, k, &z, &mut u);
        let c = 1.0 + z.iter().zip(&u).map(|(a, b)| a * b).sum::<f64>();
        for (qi, &ui) in q.chunks_exact_mut(k.max(1)).zip(&u) {
            qi.iter_mut().zip(&u).for_each(|(v, &uj)| *v -= ui * uj / c);
        }
        for (bi, _) in bm
            .chunks_exact_mut(d.max(1))
            .zip(&z)
            .filter(|(_, zi)| **zi != 0.0)
        {
            bi.iter_mut().zip(xn).for_each(|(v, xc)| *v += xc);
        }
        // H = G + (B₋x)zᵀ + z(B₋x)ᵀ + ‖x‖²zzᵀ for the row as it now is.
        h.clear();
        h.extend_from_slice(&g);
        rank_two_update(&mut h, &bx, &z, xx, 1.0);
        self.minv = q;
        self.b = bm;
        self.bbt = h;
        *self.scratch = Scratch {
            z,
            w,
            u,
            bx,
            g,
            order,
            logw,
            weights,
            blocks,
        };
    }
}

/// B₋x (`K`, into `bx`) for `bm` = B₋ (`K × D`) and row `x`, by four-lane products.
fn b_minus_x(bm: &[f64], k: usize, d: usize, x: &[f64], bx: &mut Vec<f64>) {
    bx.clear();
    bx.extend((0..k).map(|i| dot(&bm[i * d..(i + 1) * d], x)));
}

/// a ← a + sign·(b zᵀ + z bᵀ + xx z zᵀ) for the symmetric `K × K` matrix `a`, K = `z.len()`:
/// the change of BBᵀ when row x with memberships z joins B (sign 1) or leaves it (−1), b the
/// product of x with the rows of B without it.
fn rank_two_update(a: &mut [f64], b: &[f64], z: &[f64], xx: f64, sign: f64) {
    let k = z.len();
    for (i, &zi) in z.iter().enumerate() {
        let row = &mut a[i * k..(i + 1) * k];
        if zi != 0.0 {
            for ((v, &zj), &bj) in row.iter_mut().zip(z).zip(b) {
                *v += sign * (b[i] * zj + bj + xx * zj);
            }
        } else {
            for (v, &zj) in row.iter_mut().zip(z) {
                if zj != 0.0 {
                    *v += sign * b[i];
                }
            }
        }
    }
}

/// log p(X | Z) for row n set to `z`, up to terms that do not depend on `z` (module
/// documentation), D = `d`; `extra_c` = j/r adds j singleton columns held by n. With v = B₋ᵀu, the
/// products v·x = u·(B₋x) and v·v = uᵀGu come from `bx` = B₋x and `g` = B₋B₋ᵀ, computed
/// once per row. `u` is scratch (K).
#[allow(clippy::too_many_arguments)]
fn row_loglik(
    q: &[f64],
    g: &[f64],
    bx: &[f64],
    z: &[f64],
    d: usize,
    xx: f64,
    s2: f64,
    extra_c: f64,
    u: &mut [f64],
) -> f64 {
    loglik_of(row_terms(q, g, bx, z, u), d, xx, s2, extra_c)
}

/// The parts of [`row_loglik`] that depend on z only: (zᵀu, v·x, v·v) with u = Qz.
fn row_terms(q: &[f64], g: &[f64], bx: &[f64], z: &[f64], u: &mut [f64]) -> (f64, f64, f64) {
    let k = z.len();
    // u = Q z over the non-zero entries of z (Q is symmetric: column j is row j).
    u.iter_mut().for_each(|v| *v = 0.0);
    for (j, &zj) in z.iter().enumerate() {
        if zj != 0.0 {
            for (ui, qj) in u.iter_mut().zip(&q[j * k..(j + 1) * k]) {
                *ui += qj;
            }
        }
    }
    let ztu: f64 = z.iter().zip(u.iter()).map(|(a, b)| a * b).sum();
    let vx: f64 = u.iter().zip(bx).map(|(a, b)| a * b).sum();
    let mut vv = 0.0;
    for (i, &ui) in u.iter().enumerate() {
        if ui != 0.0 {
            let gu: f64 = g[i * k..(i + 1) * k]
                .iter()
                .zip(u.iter())
                .map(|(a, b)| a * b)
                .sum();
            vv += ui * gu;
        }
    }
    (ztu, vx, vv)
}

/// [`row_loglik`] from the terms of [`row_terms`].
fn loglik_of((ztu, vx, vv): (f64, f64, f64), d: usize, xx: f64, s2: f64, extra_c: f64) -> f64 {
    let c = 1.0 + ztu + extra_c;
    let cm1 = c - 1.0;
    let explained = 2.0 * vx + cm1 * xx - (vv + 2.0 * cm1 * vx + cm1 * cm1 * xx) / c;
    -0.5 * d as f64 * c.ln() + explained / (2.0 * s2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ibp::BlockFault;
    use crate::ibp::model::{collapsed_log_lik, log_ibp_prior};
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

    fn hyper() -> Hyper {
        Hyper {
            alpha: 2.0,
            sigma_x: 0.4,
            sigma_a: 1.0,
            k_new_max: 4,
            block: 0,
            block_fault: BlockFault::None,
        }
    }

    #[test]
    fn row_loglik_matches_eq5_differences() {
        // The expression of the module documentation agrees with Eq. 5 evaluated directly,
        // for existing features and for j new singleton columns.
        let x = data(6, 3, 1);
        let h = hyper();
        let z = RowMatrix::from_rows(&[
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 1.0],
        ]);
        let n = 2;
        let mut zm = z.clone();
        zm.row_mut(n).iter_mut().for_each(|v| *v = 0.0);
        let feats_minus = {
            let mut f = Feats::empty(6);
            for _ in 0..3 {
                f.push_singleton(0);
                let k = f.k() - 1;
                f.set(0, k, false);
            }
            for i in 0..6 {
                for c in 0..3 {
                    f.set(i, c, zm.row(i)[c] != 0.0);
                }
            }
            f
        };
        let (q, bm) = fresh_state(&x, &feats_minus, &h);
        let s2 = h.sigma_x * h.sigma_x;
        let r = s2 / (h.sigma_a * h.sigma_a);
        let xx: f64 = x.row(n).iter().map(|v| v * v).sum();
        let base = collapsed_log_lik(x.view(), &zm, h.sigma_x, h.sigma_a);
        let mut u = vec![0.0; 3];
        let mut bx = vec![7.0; 9];
        b_minus_x(&bm, 3, 3, x.row(n), &mut bx);
        let g = outer_of(&bm, 3, 3);
        // G from H = BBᵀ of the state with row n (the sampler's way) is the same.
        let (_, b_full) = fresh_state(&x, &Feats::from_matrix(&z), &h);
        let mut g2 = outer_of(&b_full, 3, 3);
        rank_two_update(&mut g2, &bx, z.row(n), xx, -1.0);
        for (a, b) in g.iter().zip(&g2) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
        for pattern in 0..8u32 {
            let zr: Vec<f64> = (0..3).map(|c| f64::from((pattern >> c) & 1)).collect();
            for j in 0..3usize {
                let mut zz = RowMatrix::zeros(6, 3 + j);
                for i in 0..6 {
                    let src = if i == n { &zr[..] } else { zm.row(i) };
                    zz.row_mut(i)[..3].copy_from_slice(src);
                }
                for c in 3..3 + j {
                    zz.row_mut(n)[c] = 1.0;
                }
                let direct = collapsed_log_lik(x.view(), &zz, h.sigma_x, h.sigma_a) - base;
                let fast = row_loglik(&q, &g, &bx, &zr, 3, xx, s2, j as f64 / r, &mut u);
                assert!(
                    (direct - fast).abs() < 1e-10,
                    "{pattern} {j}: {direct} {fast}"
                );
            }
        }
    }

    #[test]
    fn rank_one_updates_track_fresh_state_over_200_sweeps() {
        let x = data(30, 5, 2);
        let h = hyper();
        let mut s = Collapsed::new(&x, Feats::empty(30), h, 0);
        let mut rng = run_rng(5, 0);
        let mut worst: f64 = 0.0;
        for _ in 0..200 {
            s.sweep(&x, &mut rng);
            let (minv, b) = fresh_state(&x, &s.feats, &h);
            let (m2, b2) = s.state();
            for (a, bb) in minv.iter().zip(m2) {
                worst = worst.max((a - bb).abs());
            }
            for (a, bb) in b.iter().zip(b2) {
                assert!((a - bb).abs() < 1e-9);
            }
            let h = outer_of(&b, s.feats.k(), 5);
            for (a, bb) in h.iter().zip(s.bbt()) {
                assert!((a - bb).abs() < 1e-8 * (1.0 + a.abs()), "H: {a} vs {bb}");
            }
        }
        assert!(worst < 1e-9, "drift of M⁻¹ {worst}");
        // The chain moved somewhere sensible.
        let z = s.feats.to_row_matrix();
        let lj = collapsed_log_lik(x.view(), &z, h.sigma_x, h.sigma_a) + log_ibp_prior(&z, h.alpha);
        assert!(lj.is_finite() && s.feats.k() > 0);
    }
}
