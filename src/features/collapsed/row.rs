//! The exact row move of collapsed BP-means. With row n removed (M₋ = ZᵀZ − z zᵀ,
//! B₋ = ZᵀX − z x_nᵀ, Â₋ their least-squares solution, S a basis of Z₋'s columns found by
//! the dependent-column Cholesky), giving row n the value z raises the residual by the
//! recursive-least-squares increment
//!
//! q(z) = ‖x_n − z Â₋‖² / (1 + z_Sᵀ (M₋)_SS⁻¹ z_S)   when z lies in the row space of Z₋,
//! q(z) = 0                                            otherwise (a direction of A then
//!                                                      touches row n alone and fits it),
//!
//! and the objective of Eq. 10 is RSS₋ + q(z) + P·#{non-empty columns}. RSS₋ is the same for
//! every z, so the row takes argmin_z q(z) + P·#{k: (M₋)_kk > 0 or z_k = 1}.

use crate::RowMatrix;
use crate::features::lstsq::solve_normal;
use crate::linalg::dot;

/// Everything needed to score values of one row.
pub(crate) struct RowModel {
    k: usize,
    /// Â₋ x_n and Â₋ Â₋ᵀ.
    g: Vec<f64>,
    gm: Vec<f64>,
    x_norm: f64,
    /// Basis columns S, their inverse Gram (M₋)_SS⁻¹, and for every other column d the
    /// coefficients c_d with col_d(Z₋) = Σ_s c_ds col_s(Z₋).
    basis: Vec<usize>,
    w: Vec<f64>,
    dependent: Vec<(usize, Vec<f64>)>,
    /// Columns with (M₋)_kk > 0.
    occupied: Vec<bool>,
    penalty: f64,
}

impl RowModel {
    /// Builds the model of row `x` (current value `z`) from M = ZᵀZ (row-major K × K) and
    /// B = ZᵀX.
    pub fn new(x: &[f64], z: &[u8], m: &[f64], b: &RowMatrix, penalty: f64) -> Self {
        let k = z.len();
        let mut mm = m.to_vec();
        let mut bm = b.clone();
        for i in (0..k).filter(|&i| z[i] != 0) {
            for j in (0..k).filter(|&j| z[j] != 0) {
                mm[i * k + j] -= 1.0;
            }
            bm.row_mut(i).iter_mut().zip(x).for_each(|(v, xv)| *v -= xv);
        }
        let ls = solve_normal(&mm, bm);
        let a = ls.a;
        let g: Vec<f64> = a.rows().map(|r| dot(r, x)).collect();
        let mut gm = vec![0.0; k * k];
        for i in 0..k {
            for j in 0..=i {
                let v = dot(a.row(i), a.row(j));
                gm[i * k + j] = v;
                gm[j * k + i] = v;
            }
        }
        let basis: Vec<usize> = (0..k).filter(|c| !ls.dependent.contains(c)).collect();
        let s = basis.len();
        let mss: Vec<f64> = basis
            .iter()
            .flat_map(|&i| basis.iter().map(move |&j| (i, j)))
            .map(|(i, j)| mm[i * k + j])
            .collect();
        let mut eye = RowMatrix::zeros(s, s);
        (0..s).for_each(|i| eye.row_mut(i)[i] = 1.0);
        let w = solve_normal(&mss, eye).a.into_vec();
        let mut rhs = RowMatrix::zeros(s, ls.dependent.len());
        for (r, &i) in basis.iter().enumerate() {
            for (c, &d) in ls.dependent.iter().enumerate() {
                rhs.row_mut(r)[c] = mm[i * k + d];
            }
        }
        let coef = solve_normal(&mss, rhs).a;
        let dependent = ls
            .dependent
            .iter()
            .enumerate()
            .map(|(c, &d)| (d, (0..s).map(|r| coef.row(r)[c]).collect()))
            .collect();
        Self {
            k,
            g,
            gm,
            x_norm: dot(x, x),
            basis,
            w,
            dependent,
            occupied: (0..k).map(|i| mm[i * k + i] > 0.0).collect(),
            penalty,
        }
    }

    /// The model of a row whose M₋ is non-singular, from Â₋x_n (`g`), Â₋Â₋ᵀ (`gm`), ‖x_n‖²
    /// and M₋⁻¹ (`w`): every column is in the basis and none is dependent.
    pub fn from_inverse(
        g: Vec<f64>,
        gm: Vec<f64>,
        x_norm: f64,
        w: Vec<f64>,
        occupied: Vec<bool>,
        penalty: f64,
    ) -> Self {
        let k = g.len();
        Self {
            k,
            g,
            gm,
            x_norm,
            basis: (0..k).collect(),
            w,
            dependent: Vec::new(),
            occupied,
            penalty,
        }
    }

    /// q(z): how much giving row n the value z adds to the residual (see module docs).
    pub fn increment(&self, z: &[u8]) -> f64 {
        let zs: Vec<f64> = self.basis.iter().map(|&i| f64::from(z[i])).collect();
        for (d, c) in &self.dependent {
            if (f64::from(z[*d]) - dot(c, &zs)).abs() > 1e-9 {
                return 0.0;
            }
        }
        let k = self.k;
        let mut err = self.x_norm;
        for i in (0..k).filter(|&i| z[i] != 0) {
            err -= 2.0 * self.g[i];
            for j in (0..k).filter(|&j| z[j] != 0) {
                err += self.gm[i * k + j];
            }
        }
        let s = zs.len();
        let mut lev = 0.0;
        for i in 0..s {
            if zs[i] != 0.0 {
                lev += dot(&self.w[i * s..(i + 1) * s], &zs);
            }
        }
        err.max(0.0) / (1.0 + lev)
    }

    /// The value of lowest cost among all 2^K, visited in Gray-code order so that each differs
    /// from the previous one in a single entry: z·g, zᵀ(Â₋Â₋ᵀ)z, zᵀ(M₋)⁻¹z and the count of
    /// used columns are then updated in O(K) per value instead of recomputed in O(K²). Only
    /// for rows with no dependent columns (then every z lies in the row space and the basis
    /// is all K columns). The caller re-scores the winner with [`cost`](Self::cost); `None`
    /// when K = 0.
    fn best_by_gray_code(&self) -> Option<Vec<u8>> {
        let k = self.k;
        if k == 0 || k >= 64 {
            return None;
        }
        debug_assert_eq!(self.w.len(), k * k);
        // Columns of G and W laid out as rows, so a step's O(K) updates read them in order.
        let transpose =
            |m: &[f64]| -> Vec<f64> { (0..k * k).map(|t| m[(t % k) * k + t / k]).collect() };
        let (gm_cols, w_cols) = (transpose(&self.gm), transpose(&self.w));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return Some(unsafe { self.gray_search_avx2(&gm_cols, &w_cols) });
        }
        Some(self.gray_search(&gm_cols, &w_cols))
    }

    /// [`RowModel::gray_search`] compiled with AVX2: the same operations (no FMA), four
    /// lanes wide.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn gray_search_avx2(&self, gm_cols: &[f64], w_cols: &[f64]) -> Vec<u8> {
        self.gray_search(gm_cols, w_cols)
    }

    /// Every value in Gray-code order from z = 0, each scored from the previous one in
    /// O(K) (`gm_cols`, `w_cols`: G and W with their columns as rows); the first best.
    #[inline(always)]
    fn gray_search(&self, gm_cols: &[f64], w_cols: &[f64]) -> Vec<u8> {
        let k = self.k;
        let mut z = vec![0u8; k];
        let (mut lin, mut quad, mut lev) = (0.0, 0.0, 0.0);
        let mut hg = vec![0.0; k];
        let mut hw = vec![0.0; k];
        let mut used = self.occupied.iter().filter(|&&o| o).count();
        let score = |lin: f64, quad: f64, lev: f64, used: usize| {
            (self.x_norm - 2.0 * lin + quad).max(0.0) / (1.0 + lev) + self.penalty * used as f64
        };
        let mut best = z.clone();
        let mut best_cost = score(lin, quad, lev, used);
        for step in 1u64..(1u64 << k) {
            let i = step.trailing_zeros() as usize;
            let s = if z[i] == 0 { 1.0 } else { -1.0 };
            quad += 2.0 * s * hg[i] + self.gm[i * k + i];
            lev += 2.0 * s * hw[i] + self.w[i * k + i];
            lin += s * self.g[i];
            let (gc, wc) = (&gm_cols[i * k..(i + 1) * k], &w_cols[i * k..(i + 1) * k]);
            for j in 0..k {
                hg[j] += s * gc[j];
                hw[j] += s * wc[j];
            }
            z[i] ^= 1;
            if !self.occupied[i] {
                if z[i] != 0 {
                    used += 1;
                } else {
                    used -= 1;
                }
            }
            let c = score(lin, quad, lev, used);
            if c < best_cost {
                best_cost = c;
                best.copy_from_slice(&z);
            }
        }
        best
    }

    pub fn cost(&self, z: &[u8]) -> f64 {
        let used = (0..self.k)
            .filter(|&i| self.occupied[i] || z[i] != 0)
            .count();
        self.increment(z) + self.penalty * used as f64
    }

    /// The best row: all 2^K values while K ≤ `exact_max_k`, else coordinate descent from
    /// `z`. `z` is replaced only when the cost strictly drops.
    pub fn best(&self, z: &mut [u8], exact_max_k: usize) {
        let k = self.k;
        let current = self.cost(z);
        let mut best = z.to_vec();
        let mut best_cost = current;
        if k <= exact_max_k && self.dependent.is_empty() {
            // Every value in Gray-code order, each scored from the previous one in O(K).
            if let Some(cand) = self.best_by_gray_code() {
                let c = self.cost(&cand);
                if c < best_cost {
                    best_cost = c;
                    best = cand;
                }
            }
        } else if k <= exact_max_k {
            let mut cand = vec![0u8; k];
            for mask in 0u64..(1u64 << k) {
                for (i, c) in cand.iter_mut().enumerate() {
                    *c = ((mask >> i) & 1) as u8;
                }
                let c = self.cost(&cand);
                if c < best_cost {
                    best_cost = c;
                    best.copy_from_slice(&cand);
                }
            }
        } else {
            let mut improved = true;
            while improved {
                improved = false;
                for i in 0..k {
                    best[i] ^= 1;
                    let c = self.cost(&best);
                    if c < best_cost {
                        best_cost = c;
                        improved = true;
                    } else {
                        best[i] ^= 1;
                    }
                }
            }
        }
        if best_cost < current - 1e-12 * current.abs().max(1.0) {
            z.copy_from_slice(&best);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// The Gray-code search as first written, reading the columns of G and W in place: the
    /// oracle for the laid-out and AVX2 forms.
    fn reference_search(m: &RowModel) -> Vec<u8> {
        let k = m.k;
        let mut z = vec![0u8; k];
        let (mut lin, mut quad, mut lev) = (0.0, 0.0, 0.0);
        let (mut hg, mut hw) = (vec![0.0; k], vec![0.0; k]);
        let mut used = m.occupied.iter().filter(|&&o| o).count();
        let score = |lin: f64, quad: f64, lev: f64, used: usize| {
            (m.x_norm - 2.0 * lin + quad).max(0.0) / (1.0 + lev) + m.penalty * used as f64
        };
        let mut best = z.clone();
        let mut best_cost = score(lin, quad, lev, used);
        for step in 1u64..(1u64 << k) {
            let i = step.trailing_zeros() as usize;
            let s = if z[i] == 0 { 1.0 } else { -1.0 };
            quad += 2.0 * s * hg[i] + m.gm[i * k + i];
            lev += 2.0 * s * hw[i] + m.w[i * k + i];
            lin += s * m.g[i];
            for j in 0..k {
                hg[j] += s * m.gm[j * k + i];
                hw[j] += s * m.w[j * k + i];
            }
            z[i] ^= 1;
            if !m.occupied[i] {
                used = if z[i] != 0 { used + 1 } else { used - 1 };
            }
            let c = score(lin, quad, lev, used);
            if c < best_cost {
                best_cost = c;
                best.copy_from_slice(&z);
            }
        }
        best
    }

    /// The search over laid-out columns, portable and with AVX2, picks the row the oracle
    /// picks, on models whose G and W are not symmetric (so a row read for a column shows).
    #[test]
    fn gray_search_reads_the_columns_of_g_and_w() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut differs = 0;
        for k in 1..=10 {
            for _ in 0..40 {
                let mut r = |lo: f64, hi: f64, n: usize| -> Vec<f64> {
                    (0..n).map(|_| rng.random_range(lo..hi)).collect()
                };
                let model = RowModel::from_inverse(
                    r(-3.0, 3.0, k),
                    r(-1.0, 2.0, k * k),
                    r(0.0, 20.0, 1)[0],
                    r(-0.05, 0.3, k * k),
                    (0..k).map(|i| i % 3 == 0).collect(),
                    0.7,
                );
                let expected = reference_search(&model);
                let cols = |m: &[f64]| {
                    (0..k * k)
                        .map(|t| m[(t % k) * k + t / k])
                        .collect::<Vec<_>>()
                };
                let (gc, wc) = (cols(&model.gm), cols(&model.w));
                assert_eq!(model.gray_search(&gc, &wc), expected, "k {k}");
                assert_eq!(model.best_by_gray_code(), Some(expected.clone()), "k {k}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    assert_eq!(unsafe { model.gray_search_avx2(&gc, &wc) }, expected);
                }
                // Rows read for columns: a different search on these models.
                differs += usize::from(model.gray_search(&model.gm, &model.w) != expected);
            }
        }
        assert!(differs > 20, "only {differs} models tell rows from columns");
    }
}
