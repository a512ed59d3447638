//! A small dense Cholesky factorisation Σ = L Lᵀ of a symmetric positive definite D × D
//! matrix (row-major), with what Mahalanobis clustering needs from it: log det Σ, the
//! quadratic form (x − a)ᵀ Σ⁻¹ (x − a) and tr(Σ⁻¹). D is small in practice (the number of
//! data columns), so the plain O(D³/3) right-looking loop is enough; every operation runs in
//! a fixed order and is bit-reproducible.

/// The lower-triangular factor L of Σ = L Lᵀ (row-major `d × d`, upper part zero).
#[derive(Clone, Debug)]
pub(crate) struct Cholesky {
    d: usize,
    l: Vec<f64>,
}

impl Cholesky {
    /// Factors the symmetric matrix `sigma` (row-major `d × d`; only the lower triangle is
    /// read). Returns `None` when a pivot is not a finite number above the rounding noise of
    /// its column (4·d·ε·Σ_jj), i.e. when `sigma` is not numerically positive definite.
    pub(crate) fn factor(sigma: &[f64], d: usize) -> Option<Self> {
        assert_eq!(sigma.len(), d * d, "Cholesky::factor: not a d × d matrix");
        let mut l = vec![0.0; d * d];
        for j in 0..d {
            let mut diag = sigma[j * d + j];
            for p in 0..j {
                diag -= l[j * d + p] * l[j * d + p];
            }
            // Below this, the pivot is rounding noise of the cancellation: numerically
            // singular (e.g. an exactly rank-deficient scatter leaves ~ε-sized pivots).
            let noise = 4.0 * d as f64 * f64::EPSILON * sigma[j * d + j].abs();
            if !(diag > noise && diag.is_finite()) {
                return None;
            }
            let ljj = diag.sqrt();
            l[j * d + j] = ljj;
            for i in j + 1..d {
                let mut v = sigma[i * d + j];
                for p in 0..j {
                    v -= l[i * d + p] * l[j * d + p];
                }
                l[i * d + j] = v / ljj;
            }
        }
        Some(Self { d, l })
    }

    /// log det Σ = 2 Σ_j log L_jj.
    pub(crate) fn log_det(&self) -> f64 {
        2.0 * (0..self.d)
            .map(|j| self.l[j * self.d + j].ln())
            .sum::<f64>()
    }

    /// (x − a)ᵀ Σ⁻¹ (x − a) = ‖L⁻¹(x − a)‖², by forward substitution on the difference;
    /// leaves the whitened residual L⁻¹(x − a) in `buf[..d]`.
    pub(crate) fn quad_form(&self, x: &[f64], a: &[f64], buf: &mut [f64]) -> f64 {
        let d = self.d;
        debug_assert!(x.len() == d && a.len() == d && buf.len() >= d);
        let mut total = 0.0;
        for i in 0..d {
            let row = &self.l[i * d..i * d + i];
            let mut v = x[i] - a[i];
            for (lip, yp) in row.iter().zip(&buf[..i]) {
                v -= lip * yp;
            }
            let y = v / self.l[i * d + i];
            buf[i] = y;
            total += y * y;
        }
        total
    }

    /// tr(Σ⁻¹) = ‖L⁻¹‖²_F, column by column of L⁻¹ (forward substitution on e_j).
    pub(crate) fn trace_inverse(&self) -> f64 {
        let d = self.d;
        let mut col = vec![0.0; d];
        let mut total = 0.0;
        for j in 0..d {
            col.iter_mut().for_each(|v| *v = 0.0);
            for i in j..d {
                let mut v = if i == j { 1.0 } else { 0.0 };
                for (lip, cp) in self.l[i * d + j..i * d + i].iter().zip(&col[j..i]) {
                    v -= lip * cp;
                }
                col[i] = v / self.l[i * d + i];
                total += col[i] * col[i];
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_two_by_two() {
        // Σ = [[4, 2], [2, 3]]: L = [[2, 0], [1, √2]], det = 8, Σ⁻¹ = [[3, −2], [−2, 4]] / 8.
        let c = Cholesky::factor(&[4.0, 2.0, 2.0, 3.0], 2).unwrap();
        assert!((c.log_det() - 8f64.ln()).abs() < 1e-14);
        assert!((c.trace_inverse() - 7.0 / 8.0).abs() < 1e-14);
        let mut buf = [0.0; 2];
        // v = (1, 1): vᵀΣ⁻¹v = (3 − 4 + 4) / 8.
        let q = c.quad_form(&[2.0, 3.0], &[1.0, 2.0], &mut buf);
        assert!((q - 3.0 / 8.0).abs() < 1e-14);
        // v = (1, −1): (3 + 4 + 4) / 8.
        let q = c.quad_form(&[1.0, -1.0], &[0.0, 0.0], &mut buf);
        assert!((q - 11.0 / 8.0).abs() < 1e-14);
    }

    #[test]
    fn matches_a_diagonal_matrix_in_three_dimensions() {
        let s = [2.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 4.0];
        let c = Cholesky::factor(&s, 3).unwrap();
        assert!((c.log_det() - 4f64.ln()).abs() < 1e-14);
        assert!((c.trace_inverse() - (0.5 + 2.0 + 0.25)).abs() < 1e-14);
        let mut buf = [0.0; 3];
        let q = c.quad_form(&[1.0, 1.0, 1.0], &[0.0; 3], &mut buf);
        assert!((q - 2.75).abs() < 1e-14);
    }

    #[test]
    fn rejects_singular_and_indefinite_matrices() {
        assert!(Cholesky::factor(&[1.0, 1.0, 1.0, 1.0], 2).is_none());
        assert!(Cholesky::factor(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
        assert!(Cholesky::factor(&[0.0], 1).is_none());
        assert!(Cholesky::factor(&[f64::NAN], 1).is_none());
        // Rank one up to rounding: [[2, 2], [2, 2]] leaves a pivot of rounding size.
        assert!(Cholesky::factor(&[2.0, 2.0, 2.0, 2.0], 2).is_none());
        let (a, b) = (0.1f64, 0.3f64);
        assert!(Cholesky::factor(&[a * a, a * b, a * b, b * b], 2).is_none());
    }
}
