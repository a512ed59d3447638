//! The linear-Gaussian IBP model: X = Z A + E with E_nd ~ N(0, σ_X²), A_kd ~ N(0, σ_A²) and
//! Z ~ IBP(α) (Griffiths & Ghahramani 2006; Doshi-Velez & Ghahramani 2009, "D-V&G").
//!
//! * [`log_ibp_prior`]: log P(\[Z\]) of the left-ordered equivalence class (D-V&G Eq. 1).
//! * [`collapsed_log_lik`]: log p(X | Z) with A integrated out (D-V&G Eq. 5).
//! * [`a_posterior`]: the Gaussian posterior of A given Z (D-V&G Eq. 6) and draws from it.
//!
//! `z` is an `N × K` matrix whose non-zero entries count as 1.

use super::dense::{
    backward, chol_inverse, chol_logdet, chol_solve, cholesky, forward, std_normal,
};
use crate::MatrixView;
use crate::RowMatrix;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// log n! = Σ_{i=2}^{n} log i (exact sum; the factorials here have n ≤ N).
pub fn ln_factorial(n: usize) -> f64 {
    (2..=n).map(|i| (i as f64).ln()).sum()
}

/// Table of log i! for i = 0..=n.
pub(crate) fn ln_factorial_table(n: usize) -> Vec<f64> {
    let mut t = vec![0.0; n + 1];
    for i in 2..=n {
        t[i] = t[i - 1] + (i as f64).ln();
    }
    t
}

/// The N-th harmonic number H_N = Σ_{j=1}^{N} 1/j.
pub fn harmonic(n: usize) -> f64 {
    (1..=n).map(|j| 1.0 / j as f64).sum()
}

/// log P(\[Z\]) under IBP(α) of the left-ordered equivalence class of `z` (D-V&G Eq. 1;
/// Griffiths & Ghahramani 2006 Eq. 14):
///
/// log P(\[Z\]) = K log α − α H_N − Σ_h log K_h! + Σ_k log\[(N − m_k)! (m_k − 1)! / N!\],
///
/// with K the number of non-zero columns (columns of zeros are ignored), m_k the column sums,
/// H_N the N-th harmonic number and K_h the number of columns with history (binary pattern) h.
///
/// # Panics
/// When `alpha` is not positive.
pub fn log_ibp_prior(z: &RowMatrix, alpha: f64) -> f64 {
    assert!(alpha > 0.0, "alpha must be positive");
    let (n, k) = (z.n_rows(), z.n_cols());
    let lf = ln_factorial_table(n.max(k));
    let mut histories: BTreeMap<Vec<bool>, usize> = BTreeMap::new();
    let mut sum = -alpha * harmonic(n);
    for c in 0..k {
        let h: Vec<bool> = (0..n).map(|i| z.row(i)[c] != 0.0).collect();
        let m = h.iter().filter(|&&b| b).count();
        if m == 0 {
            continue;
        }
        sum += alpha.ln() + lf[n - m] + lf[m - 1] - lf[n];
        *histories.entry(h).or_default() += 1;
    }
    sum - histories.values().map(|&kh| lf[kh]).sum::<f64>()
}

/// ZᵀZ (`K × K`) and ZᵀX (`K × D`), row-major.
pub(crate) fn gram(x: MatrixView<'_>, z: &RowMatrix) -> (Vec<f64>, Vec<f64>) {
    let (n, k, d) = (x.n_rows(), z.n_cols(), x.n_cols());
    assert_eq!(z.n_rows(), n, "Z and X differ in N");
    let mut ztz = vec![0.0; k * k];
    let mut ztx = vec![0.0; k * d];
    let mut on = Vec::with_capacity(k);
    for i in 0..n {
        on.clear();
        on.extend((0..k).filter(|&c| z.row(i)[c] != 0.0));
        for &a in &on {
            for &b in &on {
                ztz[a * k + b] += 1.0;
            }
            for (t, v) in ztx[a * d..(a + 1) * d].iter_mut().zip(x.row(i)) {
                *t += v;
            }
        }
    }
    (ztz, ztx)
}

/// M = ZᵀZ + (σ_X²/σ_A²) I.
fn m_matrix(ztz: &[f64], k: usize, sigma_x: f64, sigma_a: f64) -> Vec<f64> {
    let r = (sigma_x * sigma_x) / (sigma_a * sigma_a);
    let mut m = ztz.to_vec();
    for i in 0..k {
        m[i * k + i] += r;
    }
    m
}

/// log p(X | Z, σ_X, σ_A) with A integrated out (D-V&G Eq. 5; G&G 2006 Eq. 26): with
/// M = ZᵀZ + (σ_X²/σ_A²) I,
///
/// log p = −(ND/2) log 2π − (N−K)D log σ_X − K D log σ_A − (D/2) log det M
///         − tr(Xᵀ(I − Z M⁻¹ Zᵀ)X) / (2σ_X²),
///
/// computed through the Cholesky factor L of M: log det M = 2 Σ log L_ii and
/// tr(Xᵀ Z M⁻¹ Zᵀ X) = ‖L⁻¹ ZᵀX‖²_F. Columns of zeros do not change the value.
///
/// # Panics
/// When `z` and `x` differ in N or a σ is not positive.
pub fn collapsed_log_lik(x: MatrixView<'_>, z: &RowMatrix, sigma_x: f64, sigma_a: f64) -> f64 {
    assert!(sigma_x > 0.0 && sigma_a > 0.0, "sigmas must be positive");
    let (n, k, d) = (x.n_rows(), z.n_cols(), x.n_cols());
    let (ztz, mut ztx) = gram(x, z);
    let m = m_matrix(&ztz, k, sigma_x, sigma_a);
    let l = cholesky(&m, k).expect("ZᵀZ + rI is positive definite");
    forward(&l, k, &mut ztx, d);
    let explained: f64 = ztx.iter().map(|v| v * v).sum();
    let total: f64 = x.as_slice().iter().map(|v| v * v).sum();
    let (nf, kf, df) = (n as f64, k as f64, d as f64);
    -0.5 * nf * df * (std::f64::consts::TAU).ln()
        - (nf - kf) * df * sigma_x.ln()
        - kf * df * sigma_a.ln()
        - 0.5 * df * chol_logdet(&l, k)
        - (total - explained) / (2.0 * sigma_x * sigma_x)
}

/// The Gaussian posterior of A given Z and X (D-V&G Eq. 6): each column a_d of A is
/// independently N(μ_d, Σ) with mean M⁻¹ZᵀX and covariance Σ = σ_X² M⁻¹,
/// M = ZᵀZ + (σ_X²/σ_A²) I.
#[derive(Clone, Debug)]
pub struct APosterior {
    /// The posterior mean M⁻¹ZᵀX (`K × D`).
    pub mean: RowMatrix,
    /// The covariance σ_X² M⁻¹ shared by every column of A (`K × K`).
    pub cov: RowMatrix,
    chol_m: Vec<f64>,
    sigma_x: f64,
}

impl APosterior {
    /// One draw of A (`K × D`): mean + σ_X L⁻ᵀ ε with M = L Lᵀ and ε ~ N(0, I)
    /// (Cov = σ_X² L⁻ᵀ L⁻¹ = σ_X² M⁻¹).
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> RowMatrix {
        let (k, d) = (self.mean.n_rows(), self.mean.n_cols());
        let mut eps: Vec<f64> = (0..k * d).map(|_| std_normal(rng)).collect();
        backward(&self.chol_m, k, &mut eps, d);
        let data = self
            .mean
            .as_slice()
            .iter()
            .zip(&eps)
            .map(|(m, e)| m + self.sigma_x * e)
            .collect();
        RowMatrix::new(k, d, data)
    }
}

/// The posterior of A given Z (see [`APosterior`]).
///
/// # Panics
/// When `z` and `x` differ in N or a σ is not positive.
pub fn a_posterior(x: MatrixView<'_>, z: &RowMatrix, sigma_x: f64, sigma_a: f64) -> APosterior {
    assert!(sigma_x > 0.0 && sigma_a > 0.0, "sigmas must be positive");
    let (k, d) = (z.n_cols(), x.n_cols());
    let (ztz, mut mean) = gram(x, z);
    let m = m_matrix(&ztz, k, sigma_x, sigma_a);
    let l = cholesky(&m, k).expect("ZᵀZ + rI is positive definite");
    chol_solve(&l, k, &mut mean, d);
    let s2 = sigma_x * sigma_x;
    let cov: Vec<f64> = chol_inverse(&l, k).iter().map(|v| v * s2).collect();
    APosterior {
        mean: RowMatrix::new(k, d, mean),
        cov: RowMatrix::new(k, k, cov),
        chol_m: l,
        sigma_x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restarts::run_rng;

    #[test]
    fn prior_of_small_matrices() {
        // One row holding one feature: log α − α H_1 + log(0! 0! / 1!) = log α − α.
        let z = RowMatrix::from_rows(&[[1.0]]);
        assert!((log_ibp_prior(&z, 2.0) - (2.0f64.ln() - 2.0)).abs() < 1e-14);
        // The empty matrix (or only zero columns): −α H_N.
        let z0 = RowMatrix::zeros(3, 2);
        assert!((log_ibp_prior(&z0, 1.5) + 1.5 * harmonic(3)).abs() < 1e-14);
        // Two identical columns on N = 2: 2 log α − α·1.5 − log 2! + 2 log(1!·0!/2!).
        let z2 = RowMatrix::from_rows(&[[1.0, 1.0], [0.0, 0.0]]);
        let want = 2.0 * 1.0f64.ln() - 1.5 - 2.0f64.ln() + 2.0 * (0.5f64).ln();
        assert!((log_ibp_prior(&z2, 1.0) - want).abs() < 1e-14);
    }

    #[test]
    fn likelihood_ignores_zero_columns_and_order() {
        let x = RowMatrix::from_rows(&[[1.0, -0.5], [0.3, 2.0], [-1.0, 0.2]]);
        let z = RowMatrix::from_rows(&[[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]);
        let zp = RowMatrix::from_rows(&[[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]]);
        let a = collapsed_log_lik(x.view(), &z, 0.7, 1.3);
        let b = collapsed_log_lik(x.view(), &zp, 0.7, 1.3);
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }

    #[test]
    fn posterior_draws_match_mean_and_cov() {
        let x = RowMatrix::from_rows(&[[1.0], [0.5], [2.0]]);
        let z = RowMatrix::from_rows(&[[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]);
        let post = a_posterior(x.view(), &z, 0.5, 1.0);
        let mut rng = run_rng(11, 0);
        let n = 100_000;
        let (mut m0, mut m1, mut c01) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let a = post.draw(&mut rng);
            let (u, v) = (a.row(0)[0], a.row(1)[0]);
            m0 += u;
            m1 += v;
            c01 += (u - post.mean.row(0)[0]) * (v - post.mean.row(1)[0]);
        }
        let nf = n as f64;
        assert!((m0 / nf - post.mean.row(0)[0]).abs() < 0.01);
        assert!((m1 / nf - post.mean.row(1)[0]).abs() < 0.01);
        assert!((c01 / nf - post.cov.row(0)[1]).abs() < 0.01);
    }
}
