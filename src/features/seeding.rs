//! Feature k-means++ seeding (MAD-Bayes §5) in two forms.
//!
//! * [`FeatureSeeding::BaseFeature`] (the paper's text): feature 1 holds every point with
//!   a_1 = mean of X. Then repeatedly: e_n = ‖x_n − z_n A‖²; draw n with probability ∝ e_n;
//!   the new feature's mean is that point's residual r_n; every row m takes the feature
//!   (z_mk = 1) exactly when that lowers ‖x_m − z_m A‖².
//! * [`FeatureSeeding::Residual`] (the authors' MATLAB code): the same, but starting from no
//!   features, so even the first point is drawn with probability ∝ ‖x_n‖².
//!
//! With a fixed K (K-features) features are added until there are K (zero-mean, empty
//! features pad when every residual is already zero). With a penalty (BP-means) a drawn
//! feature is kept only while it lowers the BP-means objective ‖X − ZA‖² + K·P, i.e. while its
//! total error reduction exceeds P; the first draw that does not stops the seeding.

use super::zmat::BinaryMatrix;
use crate::RowMatrix;
use crate::linalg::{mean_row, sq_dist, sq_norm};
use crate::restarts::draw_weighted;
use rand_chacha::ChaCha8Rng;

/// How runs are seeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FeatureSeeding {
    /// The paper's feature k-means++: a base feature holding every point at the mean of X,
    /// then residual draws.
    #[default]
    BaseFeature,
    /// The authors' MATLAB form: no base feature; the first draw is ∝ ‖x_n‖².
    Residual,
}

/// When the seeding stops adding features.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SeedTarget {
    /// Exactly K features.
    Fixed(usize),
    /// While a feature lowers the BP-means objective with this penalty, at most `k_max`.
    Penalty { penalty: f64, k_max: usize },
}

/// Seeds (Z, A) on `x` (serial; O(N·D) per feature).
pub(crate) fn seed_features(
    x: &RowMatrix,
    form: FeatureSeeding,
    target: SeedTarget,
    rng: &mut ChaCha8Rng,
) -> (BinaryMatrix, RowMatrix) {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut z = BinaryMatrix::zeros(n, 0);
    let mut a = RowMatrix::zeros(0, d);
    let mut resid = x.clone();
    let (limit, penalty) = match target {
        SeedTarget::Fixed(k) => (k, None),
        SeedTarget::Penalty { penalty, k_max } => (k_max, Some(penalty)),
    };
    if limit == 0 {
        return (z, a);
    }
    if form == FeatureSeeding::BaseFeature {
        let m = mean_row(x);
        let c = z.push_col();
        for i in 0..n {
            z.row_mut(i)[c] = 1;
            resid
                .row_mut(i)
                .iter_mut()
                .zip(&m)
                .for_each(|(r, v)| *r -= v);
        }
        a.push_row(&m);
    }
    let mut err: Vec<f64> = resid.rows().map(sq_norm).collect();
    let mut new_err = vec![0.0; n];
    while a.n_rows() < limit {
        let total: f64 = err.iter().sum();
        if total.is_nan() || total <= 0.0 {
            if penalty.is_some() {
                break;
            }
            // Nothing left to explain: pad with an empty, zero-mean feature.
            z.push_col();
            a.push_row(&vec![0.0; d]);
            continue;
        }
        let pick = draw_weighted(&err, rng);
        let cand = resid.row(pick).to_vec();
        let mut gain = 0.0;
        for i in 0..n {
            new_err[i] = sq_dist(resid.row(i), &cand);
            if new_err[i] < err[i] {
                gain += err[i] - new_err[i];
            }
        }
        if let Some(p) = penalty
            && gain <= p
        {
            break;
        }
        let c = z.push_col();
        for i in 0..n {
            if new_err[i] < err[i] {
                z.row_mut(i)[c] = 1;
                resid
                    .row_mut(i)
                    .iter_mut()
                    .zip(&cand)
                    .for_each(|(r, v)| *r -= v);
                err[i] = sq_norm(resid.row(i));
            }
        }
        a.push_row(&cand);
    }
    (z, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::objective::residual_ss;
    use crate::restarts::run_rng;

    fn data() -> RowMatrix {
        RowMatrix::from_rows(&[
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 0.0, 5.0],
            [1.0, 0.0, 5.0],
        ])
    }

    #[test]
    fn fixed_k_seeds_exactly_k_features_and_never_raises_the_error() {
        let x = data();
        for form in [FeatureSeeding::BaseFeature, FeatureSeeding::Residual] {
            for k in 1..=5 {
                let (z, a) = seed_features(&x, form, SeedTarget::Fixed(k), &mut run_rng(3, 0));
                assert_eq!((z.k(), a.n_rows()), (k, k));
                if form == FeatureSeeding::BaseFeature {
                    assert!(z.col(0).iter().all(|&v| v == 1));
                }
            }
        }
        // Noise-free data, K = 3: residual seeding explains everything in some draw.
        let ok = (0..20).any(|s| {
            let (z, a) = seed_features(
                &x,
                FeatureSeeding::Residual,
                SeedTarget::Fixed(3),
                &mut run_rng(s, 0),
            );
            residual_ss(&x, &z, &a) < 1e-12
        });
        assert!(ok);
    }

    #[test]
    fn penalty_target_stops_when_a_feature_does_not_pay() {
        let x = data();
        let huge = SeedTarget::Penalty {
            penalty: 1e6,
            k_max: 10,
        };
        let (z, _) = seed_features(&x, FeatureSeeding::Residual, huge, &mut run_rng(1, 0));
        assert_eq!(z.k(), 0);
        let (z, _) = seed_features(&x, FeatureSeeding::BaseFeature, huge, &mut run_rng(1, 0));
        assert_eq!(z.k(), 1);
        let small = SeedTarget::Penalty {
            penalty: 0.1,
            k_max: 2,
        };
        let (z, _) = seed_features(&x, FeatureSeeding::Residual, small, &mut run_rng(1, 0));
        assert_eq!(z.k(), 2);
    }
}
