//! The feature-allocation objectives of MAD-Bayes as plain functions, so any (Z, A) can be
//! scored. Notation (`docs/algorithms.md`): X is `N × D`, Z is an `N × K` [`BinaryMatrix`], A is
//! `K × D`, P = λ² the penalty. Residuals are computed directly as x_n − z_n A (never through
//! ‖x‖² − 2 z·g + zᵀGz), summed over fixed row blocks in block order, so each value is exact
//! to rounding and bit-identical for any thread count.

use super::lstsq::least_squares;
use super::residual::residual_ss_rows;
use super::zmat::BinaryMatrix;
use crate::MatrixView;
use crate::RowMatrix;
use crate::linalg::{BLOCK_ROWS, axpy, ordered_block_reduce, sq_norm};

/// ‖X − Z A‖²_F.
///
/// # Panics
/// When the shapes disagree.
#[track_caller]
pub fn sum_of_squares(x: &RowMatrix, z: &BinaryMatrix, a: &RowMatrix) -> f64 {
    assert_eq!(z.n_rows(), x.n_rows(), "Z and X differ in N");
    assert_eq!(
        z.n_cols(),
        a.n_rows(),
        "Z has K columns, A must have K rows"
    );
    assert_eq!(a.n_cols(), x.n_cols(), "A and X differ in D");
    residual_ss(x.view(), z, a)
}

pub(crate) fn residual_ss(x: MatrixView<'_>, z: &BinaryMatrix, a: &RowMatrix) -> f64 {
    let mut total = 0.0;
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| residual_ss_rows(x, z, a, s, e),
        |p| total += p,
    );
    total
}

/// Writes r = x − z A into `r` and returns ‖r‖².
#[inline]
pub(crate) fn row_residual(x: &[f64], z: &[u8], a: &RowMatrix, r: &mut [f64]) -> f64 {
    r.copy_from_slice(x);
    for (k, &v) in z.iter().enumerate() {
        if v != 0 {
            axpy(-1.0, a.row(k), r);
        }
    }
    sq_norm(r)
}

/// BP-means objective (MAD-Bayes Eq. 6): ‖X − Z A‖²_F + K·P, K = `a.n_rows()` (every
/// feature is charged, used or not; K = 0 is allowed).
#[track_caller]
pub fn bp_means_objective(x: &RowMatrix, z: &BinaryMatrix, a: &RowMatrix, penalty: f64) -> f64 {
    sum_of_squares(x, z, a) + a.n_rows() as f64 * penalty
}

/// K-features objective (Eq. 14, K fixed): ‖X − Z A‖²_F.
#[track_caller]
pub fn k_features_objective(x: &RowMatrix, z: &BinaryMatrix, a: &RowMatrix) -> f64 {
    sum_of_squares(x, z, a)
}

/// Collapsed BP-means objective (Eq. 10): tr(Xᵀ(I − Z(ZᵀZ)⁻¹Zᵀ)X) + K·P = ‖X − Z Â‖²_F + K·P
/// with Â the least-squares means ([`least_squares_means`](super::least_squares_means);
/// singular ZᵀZ is handled by dropping dependent columns, which leaves Z Â unchanged).
/// K = `z.n_cols()`: every column is charged.
#[track_caller]
pub fn collapsed_bp_means_objective(x: &RowMatrix, z: &BinaryMatrix, penalty: f64) -> f64 {
    assert_eq!(z.n_rows(), x.n_rows(), "Z and X differ in N");
    let ls = least_squares(x.view(), z);
    residual_ss(x.view(), z, &ls.a) + z.n_cols() as f64 * penalty
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        let x = RowMatrix::from_rows(&[[1.0, 1.0], [3.0, 0.0], [0.0, 2.0]]);
        let z = BinaryMatrix::from_row_matrix(&RowMatrix::from_rows(&[
            [1.0, 0.0],
            [1.0, 1.0],
            [0.0, 0.0],
        ]));
        let a = RowMatrix::from_rows(&[[1.0, 0.0], [1.0, 1.0]]);
        // Residuals: (0, 1), (1, −1), (0, 2) → 1 + 2 + 4 = 7.
        assert_eq!(sum_of_squares(&x, &z, &a), 7.0);
        assert_eq!(k_features_objective(&x, &z, &a), 7.0);
        assert_eq!(bp_means_objective(&x, &z, &a, 0.5), 8.0);
        // Least squares: a_1 = x_1 = (1, 1), a_2 = x_2 − a_1 = (2, −1); only x_3 is left.
        assert!((collapsed_bp_means_objective(&x, &z, 0.5) - 5.0).abs() < 1e-12);
        // No features: ‖X‖², nothing charged.
        let none = BinaryMatrix::zeros(3, 0);
        let empty = RowMatrix::zeros(0, 2);
        assert_eq!(bp_means_objective(&x, &none, &empty, 3.0), 15.0);
    }
}
