//! A penalty chosen from the data, for callers that give none (the Python estimators'
//! `penalty=None`).
//!
//! The rule: P = the mean squared distance of the rows to their mean,
//! (1/N) Σₙ ‖xₙ − x̄‖² (the sum of the column variances). DP-means opens a cluster for a row
//! farther than √P from every mean, and BP-means a feature for a row whose residual exceeds
//! P: so by default a new cluster or feature is paid for by a row that lies as far from what
//! the model has as a typical row lies from the centre of the data. The rule scales with the
//! data (P is a squared distance), so it suits standardised data and raw data alike, and it
//! costs one pass over X.

use crate::MatrixView;
use crate::error::{FitError, check_data};

/// The default penalty of `x`: (1/N) Σₙ ‖xₙ − x̄‖², see the [module](self) documentation.
///
/// When every row is the same (the sum is 0) every penalty gives the same clustering, and the
/// mean squared norm (1/N) Σₙ ‖xₙ‖² is returned instead, or 1 for data that are all 0.
/// Fails on data that [`check_data`] refuses (empty, non-finite, out of the scale band).
pub fn default_penalty(x: MatrixView<'_>) -> Result<f64, FitError> {
    check_data(x)?;
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut mean = vec![0.0; d];
    for row in x.rows() {
        mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
    }
    mean.iter_mut().for_each(|m| *m /= n as f64);
    let mut spread = 0.0;
    let mut norms = 0.0;
    for row in x.rows() {
        for (v, m) in row.iter().zip(&mean) {
            spread += (v - m) * (v - m);
            norms += v * v;
        }
    }
    let p = if spread > 0.0 { spread } else { norms } / n as f64;
    Ok(if p > 0.0 && p.is_finite() { p } else { 1.0 })
}

/// The default penalty of Mahalanobis clustering with `k` clusters of `n` rows: P = N / K.
///
/// There P weighs log det Σₖ against the scatter, and the fitted covariance of a cluster is
/// Σₖ = (Sₖ + Φ)/P (Sₖ its scatter matrix): with P = N/K, a cluster of the average size gets
/// (about) its sample covariance. It is at least 1.
pub fn default_mahalanobis_penalty(n: usize, k: usize) -> f64 {
    (n as f64 / k.max(1) as f64).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RowMatrix;

    #[test]
    fn is_the_mean_squared_distance_to_the_mean() {
        // Rows (0, 0), (2, 0), (1, 3): mean (1, 1); squared distances 2, 2, 4.
        let x = RowMatrix::from_rows(&[[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]]);
        assert!((default_penalty(x.view()).unwrap() - 8.0 / 3.0).abs() < 1e-15);
        // A squared distance: scaling the data by 10 scales it by 100; a shift leaves it.
        let scaled = RowMatrix::from_rows(&[[0.0, 0.0], [20.0, 0.0], [10.0, 30.0]]);
        assert!((default_penalty(scaled.view()).unwrap() - 800.0 / 3.0).abs() < 1e-12);
        let shifted = RowMatrix::from_rows(&[[5.0, -1.0], [7.0, -1.0], [6.0, 2.0]]);
        assert!((default_penalty(shifted.view()).unwrap() - 8.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn mahalanobis_penalty_is_the_average_cluster_size() {
        assert_eq!(default_mahalanobis_penalty(50, 3), 50.0 / 3.0);
        assert_eq!(default_mahalanobis_penalty(2, 5), 1.0);
    }

    #[test]
    fn equal_rows_and_bad_data() {
        let same = RowMatrix::from_rows(&[[3.0, 4.0], [3.0, 4.0]]);
        assert_eq!(default_penalty(same.view()).unwrap(), 25.0);
        assert_eq!(default_penalty(RowMatrix::zeros(2, 2).view()).unwrap(), 1.0);
        assert!(default_penalty(RowMatrix::zeros(0, 2).view()).is_err());
        let nan = RowMatrix::from_rows(&[[1.0, f64::NAN]]);
        assert!(matches!(
            default_penalty(nan.view()),
            Err(FitError::NonFinite { .. })
        ));
    }
}
