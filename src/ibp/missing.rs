//! The linear-Gaussian model with some entries of X hidden (the missing-entry protocol of
//! D-V&G §6, [`HiddenEntries`]): the quantities that use only the visible entries.
//!
//! Given Z, the columns of A are independent a posteriori, and column d of A sees only the
//! rows O_d where x_nd is visible: with r = σ_X²/σ_A²,
//!
//!   M_d = Z_{O_d}ᵀ Z_{O_d} + r I,  b_d = Z_{O_d}ᵀ x_{O_d, d},  a_d | Z, X_O ~ N(M_d⁻¹ b_d, σ_X² M_d⁻¹)
//!
//! (D-V&G Eq. 6, one column at a time). This gives
//! * the visible data's likelihood log p(X_O | Z), A integrated out: D-V&G Eq. 5 applied to
//!   each column with its own N_d = |O_d| rows;
//! * the predictive of a hidden entry: x_nd ~ N(z_n M_d⁻¹ b_d, σ_X² (1 + z_n M_d⁻¹ z_nᵀ)).
//!
//! M_d is ZᵀZ less the outer products z_n z_nᵀ of the column's hidden rows, so the cost is
//! O(NK² + NKD) for the shared products plus O(|H|K² + DK³) for the columns.

use super::dense::{chol_logdet, cholesky, forward};
use super::model::gram;
use crate::MatrixView;
use crate::RowMatrix;
use crate::eval::HiddenEntries;

/// The per-column posteriors of A given Z and the visible entries of X.
#[derive(Clone, Debug)]
pub struct ColumnPosteriors {
    k: usize,
    d: usize,
    sigma_x: f64,
    /// Cholesky factor of each M_d, `K × K`, one after another.
    chol: Vec<f64>,
    /// Posterior mean of each column of A, M_d⁻¹ b_d, `D × K`.
    mean: Vec<f64>,
    /// log p(X_O | Z).
    log_lik: f64,
}

/// Sums over the hidden entries of their predictive log-density and squared error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HiddenScore {
    /// Σ log N(x_nd; prediction, predictive variance) over the hidden entries.
    pub loglik_sum: f64,
    /// Σ (x_nd − prediction)² over the hidden entries.
    pub l2_sum: f64,
    /// Number of hidden entries.
    pub count: usize,
}

impl HiddenScore {
    /// Mean log-density per hidden entry.
    pub fn loglik_per_entry(&self) -> f64 {
        self.loglik_sum / self.count as f64
    }

    /// Mean squared error per hidden entry.
    pub fn l2_per_entry(&self) -> f64 {
        self.l2_sum / self.count as f64
    }
}

impl ColumnPosteriors {
    /// The posteriors for Z (`N × K`, non-zero entries count as 1) from the visible
    /// entries of `x` (its hidden entries are never read).
    ///
    /// # Panics
    /// When the shapes disagree or a σ is not positive.
    pub fn new(
        x: MatrixView<'_>,
        hidden: &HiddenEntries,
        z: &RowMatrix,
        sigma_x: f64,
        sigma_a: f64,
    ) -> Self {
        assert!(sigma_x > 0.0 && sigma_a > 0.0, "sigmas must be positive");
        let (n, d, k) = (x.n_rows(), x.n_cols(), z.n_cols());
        assert_eq!((hidden.n_rows(), hidden.n_cols()), (n, d), "mask shape");
        assert_eq!(z.n_rows(), n, "Z and X differ in N");
        let mut visible = x.to_owned();
        for &(r, c) in hidden.entries() {
            visible.row_mut(r)[c] = 0.0;
        }
        let (ztz, ztx) = gram(visible.view(), z);
        let r = (sigma_x / sigma_a).powi(2);
        let s2 = sigma_x * sigma_x;
        let by_col = hidden.by_column();
        let mut chol = Vec::with_capacity(d * k * k);
        let mut mean = vec![0.0; d * k];
        let mut log_lik = 0.0;
        let mut m = vec![0.0; k * k];
        for (c, rows) in by_col.iter().enumerate() {
            m.copy_from_slice(&ztz);
            for &row in rows {
                let zr = z.row(row);
                for a in (0..k).filter(|&a| zr[a] != 0.0) {
                    for b in (0..k).filter(|&b| zr[b] != 0.0) {
                        m[a * k + b] -= 1.0;
                    }
                }
            }
            for i in 0..k {
                m[i * k + i] += r;
            }
            let l = cholesky(&m, k).expect("Z_Oᵀ Z_O + rI is positive definite");
            let mut w: Vec<f64> = (0..k).map(|a| ztx[a * d + c]).collect();
            forward(&l, k, &mut w, 1);
            let explained: f64 = w.iter().map(|v| v * v).sum();
            let total: f64 = (0..n)
                .filter(|&i| !hidden.is_hidden(i, c))
                .map(|i| x.row(i)[c] * x.row(i)[c])
                .sum();
            let (nd, kf) = ((n - rows.len()) as f64, k as f64);
            log_lik += -0.5 * nd * std::f64::consts::TAU.ln()
                - (nd - kf) * sigma_x.ln()
                - kf * sigma_a.ln()
                - 0.5 * chol_logdet(&l, k)
                - (total - explained) / (2.0 * s2);
            // mean = L⁻ᵀ w (w = L⁻¹ b_d)
            backward_vec(&l, k, &mut w);
            mean[c * k..(c + 1) * k].copy_from_slice(&w);
            chol.extend_from_slice(&l);
        }
        Self {
            k,
            d,
            sigma_x,
            chol,
            mean,
            log_lik,
        }
    }

    /// log p(X_O | Z, σ_X, σ_A), A integrated out.
    pub fn log_lik(&self) -> f64 {
        self.log_lik
    }

    /// The posterior mean of A given Z and the visible entries (`K × D`).
    pub fn mean_a(&self) -> RowMatrix {
        let (k, d) = (self.k, self.d);
        let mut a = RowMatrix::zeros(k, d);
        for c in 0..d {
            for f in 0..k {
                a.row_mut(f)[c] = self.mean[c * k + f];
            }
        }
        a
    }

    /// The predictive mean and variance of entry (n, d) for row n's features `zn`.
    pub fn predict(&self, zn: &[f64], d: usize) -> (f64, f64) {
        let k = self.k;
        let mu = &self.mean[d * k..(d + 1) * k];
        let mean: f64 = zn
            .iter()
            .zip(mu)
            .filter(|(z, _)| **z != 0.0)
            .map(|(_, m)| m)
            .sum();
        let mut w: Vec<f64> = zn.iter().map(|&v| f64::from(u8::from(v != 0.0))).collect();
        forward(&self.chol[d * k * k..(d + 1) * k * k], k, &mut w, 1);
        let quad: f64 = w.iter().map(|v| v * v).sum();
        (mean, self.sigma_x * self.sigma_x * (1.0 + quad))
    }

    /// The hidden entries of `x` (their true values) scored against their predictive.
    pub fn score(&self, x: &RowMatrix, hidden: &HiddenEntries, z: &RowMatrix) -> HiddenScore {
        let mut s = HiddenScore {
            loglik_sum: 0.0,
            l2_sum: 0.0,
            count: 0,
        };
        for &(r, c) in hidden.entries() {
            let (mean, var) = self.predict(z.row(r), c);
            let e = x.row(r)[c] - mean;
            s.loglik_sum += -0.5 * (std::f64::consts::TAU * var).ln() - e * e / (2.0 * var);
            s.l2_sum += e * e;
            s.count += 1;
        }
        s
    }
}

/// w ← L⁻ᵀ w for one vector.
fn backward_vec(l: &[f64], k: usize, w: &mut [f64]) {
    for i in (0..k).rev() {
        let mut v = w[i];
        for p in i + 1..k {
            v -= l[p * k + i] * w[p];
        }
        w[i] = v / l[i * k + i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::ibp_linear_gaussian;
    use crate::ibp::model::{a_posterior, collapsed_log_lik};

    fn sub_rows(x: &RowMatrix, rows: &[usize], col: usize) -> RowMatrix {
        RowMatrix::new(rows.len(), 1, rows.iter().map(|&r| x.row(r)[col]).collect())
    }

    #[test]
    fn each_column_is_the_full_model_on_its_visible_rows() {
        let data = ibp_linear_gaussian(30, 4, 2.0, 1.0, 0.5, 5).unwrap();
        let (x, z) = (&data.x, &data.z);
        let hidden = HiddenEntries::scattered(30, 4, 25, 2).unwrap();
        let post = ColumnPosteriors::new(x.view(), &hidden, z, 0.5, 1.0);
        let mut want = 0.0;
        for c in 0..4 {
            let rows: Vec<usize> = (0..30).filter(|&r| !hidden.is_hidden(r, c)).collect();
            let xc = sub_rows(x, &rows, c);
            let zc = RowMatrix::new(
                rows.len(),
                z.n_cols(),
                rows.iter().flat_map(|&r| z.row(r).to_vec()).collect(),
            );
            want += collapsed_log_lik(xc.view(), &zc, 0.5, 1.0);
            let full = a_posterior(xc.view(), &zc, 0.5, 1.0);
            let mean = post.mean_a();
            for f in 0..z.n_cols() {
                assert!((mean.row(f)[c] - full.mean.row(f)[0]).abs() < 1e-10);
            }
            // Predictive variance: σ_X² + z Σ zᵀ with Σ the full posterior covariance.
            for &r in rows.iter().take(3) {
                let zr = z.row(r);
                let k = z.n_cols();
                let mut q = 0.0;
                for a in 0..k {
                    for b in 0..k {
                        q += zr[a] * full.cov.row(a)[b] * zr[b];
                    }
                }
                let (_, var) = post.predict(zr, c);
                assert!((var - (0.25 + q)).abs() < 1e-10, "{var} vs {}", 0.25 + q);
            }
        }
        assert!(
            (post.log_lik() - want).abs() < 1e-9,
            "{} vs {want}",
            post.log_lik()
        );
    }

    #[test]
    fn hidden_values_are_never_read() {
        let data = ibp_linear_gaussian(20, 3, 2.0, 1.0, 0.5, 9).unwrap();
        let hidden = HiddenEntries::scattered(20, 3, 10, 4).unwrap();
        let mut x2 = data.x.clone();
        for &(r, c) in hidden.entries() {
            x2.row_mut(r)[c] = 1e6;
        }
        let a = ColumnPosteriors::new(data.x.view(), &hidden, &data.z, 0.5, 1.0);
        let b = ColumnPosteriors::new(x2.view(), &hidden, &data.z, 0.5, 1.0);
        assert_eq!(a.log_lik(), b.log_lik());
        assert_eq!(a.mean_a(), b.mean_a());
        // …while the score reads them.
        let sa = a.score(&data.x, &hidden, &data.z);
        let sb = b.score(&x2, &hidden, &data.z);
        assert!(sb.l2_sum > sa.l2_sum * 1e3);
        assert_eq!(sa.count, 10);
    }
}
