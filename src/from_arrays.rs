//! Predictions from a fitted model's arrays alone (means, covariances, feature counts), for
//! models kept outside a Rust model value — the Python estimators keep theirs as NumPy arrays
//! so that they pickle. Each function gives exactly what the model's own method gives.

use crate::error::FitError;
use crate::features::BinaryMatrix;
use crate::model::check_new_rows;
use crate::{MatrixView, RowMatrix};

pub use crate::clustering::{mahalanobis_distances_to, nearest_means, squared_distances};

/// The best z of each row of `x` given feature means `a` (`K × D`): argmin_z ‖xₙ − z A‖²,
/// exact for K ≤ [`EXACT_ROW_MAX_K`](crate::features::EXACT_ROW_MAX_K), coordinate descent
/// from z = 0 above, as `predict_z` of the feature algorithms.
///
/// Fails when `x` does not have D columns or holds a non-finite value.
pub fn best_features(x: MatrixView<'_>, a: &RowMatrix) -> Result<BinaryMatrix, FitError> {
    check_new_rows(x, a.n_cols())?;
    Ok(crate::features::model::assign_rows(x, a))
}

/// The most probable z of each row of `x` under the IBP methods' rule: feature means `a`,
/// noise σ_X = `sigma_x`, and priors P(z_k = 1) = m_k / (N + 1) from the training rows'
/// feature counts `counts` (m_k) and their number `n_train` (N), as `predict_z` of the
/// samplers and of MEIBP.
///
/// Fails when `counts` does not have one entry per row of `a`, or `x` does not have D
/// columns or holds a non-finite value.
pub fn most_probable_features(
    x: MatrixView<'_>,
    a: &RowMatrix,
    counts: &[usize],
    n_train: usize,
    sigma_x: f64,
) -> Result<BinaryMatrix, FitError> {
    if counts.len() != a.n_rows() {
        return Err(FitError::Shape(format!(
            "{} feature counts for {} features; give one count per feature",
            counts.len(),
            a.n_rows()
        )));
    }
    check_new_rows(x, a.n_cols())?;
    let shift = crate::ibp::frequency_shift(counts, n_train, sigma_x);
    Ok(crate::features::model::assign_rows_shifted(
        x,
        a,
        Some(&shift),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clustering::{DpMeans, Mahalanobis};
    use crate::features::BpMeans;
    use crate::ibp::{IbpKind, IbpSampler, Meibp};
    use crate::{Fit, Model};

    fn data() -> RowMatrix {
        crate::generate::ibp_linear_gaussian(60, 6, 2.0, 1.0, 0.3, 7)
            .unwrap()
            .x
    }

    #[test]
    fn the_arrays_predict_what_the_models_predict() {
        let x = data();
        let new = crate::generate::ibp_linear_gaussian(25, 6, 2.0, 1.0, 0.3, 8)
            .unwrap()
            .x;
        let c = DpMeans::params(2.0).check().unwrap().fit(&x).unwrap();
        assert_eq!(
            nearest_means(new.view(), c.means()).unwrap(),
            c.predict(new.view()).unwrap()
        );
        assert_eq!(
            squared_distances(new.view(), c.means()).unwrap(),
            c.transform(&new).unwrap()
        );
        let m = Mahalanobis::params(2, 1.0)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        assert_eq!(
            mahalanobis_distances_to(new.view(), m.means(), m.covariances()).unwrap(),
            m.transform(new.view()).unwrap()
        );
        let f = BpMeans::params(2.0).check().unwrap().fit(&x).unwrap();
        assert_eq!(
            best_features(new.view(), f.means()).unwrap(),
            f.predict_z(new.view()).unwrap()
        );
        let s = IbpSampler::params(IbpKind::Accelerated)
            .iterations(30)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let z = s.z();
        let got = most_probable_features(new.view(), s.means(), &z.col_sums(), 60, s.sigma_x());
        assert_eq!(got.unwrap(), s.predict_z(new.view()).unwrap());
        let e = Meibp::params(5).check().unwrap().fit(&x).unwrap();
        let got = most_probable_features(new.view(), e.means(), &e.z().col_sums(), 60, e.sigma_x());
        assert_eq!(got.unwrap(), e.predict_z(new.view()).unwrap());
    }

    #[test]
    fn shapes_are_checked() {
        let a = RowMatrix::from_rows(&[[1.0, 0.0]]);
        let wide = RowMatrix::from_rows(&[[1.0, 0.0, 0.0]]);
        assert!(best_features(wide.view(), &a).is_err());
        assert!(nearest_means(wide.view(), &a).is_err());
        assert!(
            nearest_means(
                RowMatrix::from_rows(&[[1.0]]).view(),
                &RowMatrix::zeros(0, 1)
            )
            .is_err()
        );
        assert!(most_probable_features(a.view(), &a, &[1, 2], 3, 1.0).is_err());
        let not_pd = RowMatrix::from_rows(&[[1.0, 2.0], [2.0, 1.0]]);
        assert!(mahalanobis_distances_to(a.view(), &a, &[not_pd]).is_err());
        assert!(mahalanobis_distances_to(a.view(), &a, &[]).is_err());
    }
}
