//! The Mahalanobis clustering objective (MAD-Bayes Sup. Mat. E) with the inverse-Wishart scale
//! term kept, as plain functions so any state or labelling can be scored.
//!
//! With Φ = φ·I:
//!
//! J(c, a, Σ) = Σ_k [ Σ_{n: c_n = k} (x_n − a_k)ᵀ Σ_k⁻¹ (x_n − a_k) + tr(Φ Σ_k⁻¹) + P log det Σ_k ].
//!
//! For fixed labels the exact minimiser is a_k = x̄_k and Σ_k = (S_k + Φ)/P, with
//! S_k = Σ_{n: c_n = k} (x_n − x̄_k)(x_n − x̄_k)ᵀ the cluster's scatter, and there
//! tr(Σ_k⁻¹(S_k + Φ)) = P·D, so the profile objective of a labelling is
//!
//! J*(c) = Σ_k [ P·D + P log det((S_k + Φ)/P) ].

use super::chol::Cholesky;
use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::objective::{cluster_means, compact_labels};
use crate::linalg::{BLOCK_ROWS, ordered_block_reduce};

/// φ = `reg` × (mean per-dimension variance of `x`), the scale of Φ = φ·I. The variance of a
/// column is Σ_n (x_nd − x̄_d)² / N. When every column is constant the variance is taken as 1,
/// so φ = `reg` (Φ then only fixes the scale of the otherwise zero scatters). Because φ
/// scales like the data squared, rescaling X by c rescales every S_k + Φ by c².
pub fn mahalanobis_phi(x: MatrixView<'_>, reg: f64) -> f64 {
    let (n, d) = (x.n_rows(), x.n_cols());
    if n == 0 || d == 0 {
        return reg;
    }
    let mean = cluster_means(x, &vec![0; n], 1);
    let mut total = 0.0;
    ordered_block_reduce(
        n,
        BLOCK_ROWS,
        |_, s, e| {
            (s..e)
                .map(|i| {
                    x.row(i)
                        .iter()
                        .zip(mean.row(0))
                        .map(|(v, m)| (v - m) * (v - m))
                        .sum::<f64>()
                })
                .sum::<f64>()
        },
        |p| total += p,
    );
    let var = total / (n as f64 * d as f64);
    if var > 0.0 { reg * var } else { reg }
}

/// Scatter matrix S_k = Σ_{n: c_n = k} (x_n − a_k)(x_n − a_k)ᵀ of each cluster `0..K`
/// (K = `means.n_rows()`), about the given means; `D × D` each. Row blocks are added in
/// block order, so the result is the same for any thread count.
///
/// # Panics
/// When shapes disagree or a label is not below K.
#[track_caller]
pub fn scatter_matrices(x: MatrixView<'_>, labels: &[usize], means: &RowMatrix) -> Vec<RowMatrix> {
    let (k, d) = (means.n_rows(), x.n_cols());
    assert_eq!(labels.len(), x.n_rows(), "one label per row");
    assert_eq!(means.n_cols(), d, "means and data differ in D");
    assert!(
        labels.iter().all(|&c| c < k),
        "a label is not below K = {k}"
    );
    let mut total = vec![0.0; k * d * d];
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| {
            let mut part = vec![0.0; k * d * d];
            let mut diff = vec![0.0; d];
            for (n, &c) in labels.iter().enumerate().take(e).skip(s) {
                for ((v, xi), ai) in diff.iter_mut().zip(x.row(n)).zip(means.row(c)) {
                    *v = xi - ai;
                }
                let block = &mut part[c * d * d..(c + 1) * d * d];
                for i in 0..d {
                    for j in 0..=i {
                        block[i * d + j] += diff[i] * diff[j];
                    }
                }
            }
            part
        },
        |part| total.iter_mut().zip(&part).for_each(|(t, p)| *t += p),
    );
    (0..k)
        .map(|c| {
            let mut m = RowMatrix::new(d, d, total[c * d * d..(c + 1) * d * d].to_vec());
            for i in 0..d {
                for j in 0..i {
                    let v = m.row(i)[j];
                    m.row_mut(j)[i] = v;
                }
            }
            m
        })
        .collect()
}

/// The optimal covariances for labels and means: Σ_k = (S_k + φ·I)/P.
#[track_caller]
pub fn optimal_covariances(
    x: MatrixView<'_>,
    labels: &[usize],
    means: &RowMatrix,
    penalty: f64,
    phi: f64,
) -> Vec<RowMatrix> {
    scatter_matrices(x, labels, means)
        .into_iter()
        .map(|mut s| {
            let d = s.n_cols();
            for i in 0..d {
                s.row_mut(i)[i] += phi;
            }
            s.as_mut_slice().iter_mut().for_each(|v| *v /= penalty);
            s
        })
        .collect()
}

/// The objective J(c, a, Σ) of a full state (module docs; Sup. Mat. E with the scale term
/// tr(ΦΣ_k⁻¹), Φ = `phi`·I, kept): Σ_n (x_n − a_{c_n})ᵀ Σ_{c_n}⁻¹ (x_n − a_{c_n}) +
/// Σ_k [φ tr(Σ_k⁻¹) + P log det Σ_k], summed over all K = `means.n_rows()` clusters.
///
/// A covariance that is not numerically positive definite gives +∞ (the limit of
/// tr(ΦΣ⁻¹) as Σ turns singular when φ > 0; the state is not a valid one).
///
/// # Panics
/// When shapes disagree (K covariances of `D × D`) or a label is not below K.
#[track_caller]
pub fn mahalanobis_objective(
    x: MatrixView<'_>,
    labels: &[usize],
    means: &RowMatrix,
    covariances: &[RowMatrix],
    penalty: f64,
    phi: f64,
) -> f64 {
    let (k, d) = (means.n_rows(), x.n_cols());
    assert_eq!(labels.len(), x.n_rows(), "one label per row");
    assert_eq!(means.n_cols(), d, "means and data differ in D");
    assert_eq!(covariances.len(), k, "one covariance per mean");
    assert!(
        covariances
            .iter()
            .all(|s| s.n_rows() == d && s.n_cols() == d),
        "covariances must be D × D"
    );
    assert!(
        labels.iter().all(|&c| c < k),
        "a label is not below K = {k}"
    );
    let Some(chols) = covariances
        .iter()
        .map(|s| Cholesky::factor(s.as_slice(), d))
        .collect::<Option<Vec<_>>>()
    else {
        return f64::INFINITY;
    };
    let mut fit = 0.0;
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| {
            let mut buf = vec![0.0; d];
            (s..e)
                .map(|n| chols[labels[n]].quad_form(x.row(n), means.row(labels[n]), &mut buf))
                .sum::<f64>()
        },
        |p| fit += p,
    );
    let prior: f64 = chols
        .iter()
        .map(|c| phi * c.trace_inverse() + penalty * c.log_det())
        .sum();
    fit + prior
}

/// The profile objective J*(c) = min over a, Σ of J(c, a, Σ) = Σ_k [P·D + P log det((S_k +
/// Φ)/P)] (module docs), over the K non-empty clusters of the partition that `labels`
/// defines (only the partition matters, as for [`collapsed_dp_means_objective`]).
///
/// When some S_k + Φ is singular (possible only for φ = 0: a cluster of at most D points, or
/// of points on a hyperplane) the value is −∞, the infimum of J for that labelling.
///
/// [`collapsed_dp_means_objective`]: crate::clustering::objective::collapsed_dp_means_objective
#[track_caller]
pub fn mahalanobis_profile_objective(
    x: &RowMatrix,
    labels: &[usize],
    penalty: f64,
    phi: f64,
) -> f64 {
    let (compact, k) = compact_labels(labels);
    let means = cluster_means(x.view(), &compact, k);
    let d = x.n_cols();
    let covs = optimal_covariances(x.view(), &compact, &means, penalty, phi);
    let mut total = 0.0;
    for s in &covs {
        match Cholesky::factor(s.as_slice(), d) {
            Some(c) => total += penalty * (d as f64 + c.log_det()),
            None => return f64::NEG_INFINITY,
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dimensional_values_by_hand() {
        // Cluster 0 = {0, 2}: mean 1, S = 2. Cluster 1 = {10, 11, 12}: mean 11, S = 2.
        let x = RowMatrix::from_rows(&[[0.0], [2.0], [10.0], [11.0], [12.0]]);
        let labels = [0, 0, 1, 1, 1];
        let (p, phi) = (2.0, 0.5);
        // Σ_k = (2 + 0.5)/2 = 1.25 for both: J* = 2 · [2 · (1 + ln 1.25)].
        let expect = 4.0 * (1.0 + 1.25f64.ln());
        let prof = mahalanobis_profile_objective(&x, &labels, p, phi);
        assert!((prof - expect).abs() < 1e-12, "{prof} vs {expect}");
        let means = cluster_means(x.view(), &labels, 2);
        let covs = optimal_covariances(x.view(), &labels, &means, p, phi);
        assert!((covs[0].row(0)[0] - 1.25).abs() < 1e-15);
        let full = mahalanobis_objective(x.view(), &labels, &means, &covs, p, phi);
        assert!((full - expect).abs() < 1e-12, "{full} vs {expect}");
        // Another Σ for the same labels costs more: Σ = 1 gives 2 + 2 + 2·0.5 + 0 = 5.
        let ones = vec![RowMatrix::from_rows(&[[1.0]]); 2];
        let other = mahalanobis_objective(x.view(), &labels, &means, &ones, p, phi);
        assert!((other - 5.0).abs() < 1e-12 && other > full);
        // Relabelling the partition changes nothing.
        let again = mahalanobis_profile_objective(&x, &[4, 4, 9, 9, 9], p, phi);
        assert_eq!(again.to_bits(), prof.to_bits());
    }

    #[test]
    fn scatter_of_a_two_dimensional_cluster() {
        let x = RowMatrix::from_rows(&[[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]]);
        let means = cluster_means(x.view(), &[0, 0, 0], 1);
        let s = scatter_matrices(x.view(), &[0, 0, 0], &means);
        // Deviations: (−1, −1), (1, −1), (0, 2): Sxx = 2, Sxy = 0, Syy = 6.
        assert_eq!(s[0].as_slice(), &[2.0, 0.0, 0.0, 6.0]);
    }

    #[test]
    fn singular_scatter_is_minus_infinity_without_phi() {
        // Three collinear points in 2-D: S is singular.
        let x = RowMatrix::from_rows(&[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]);
        assert_eq!(
            mahalanobis_profile_objective(&x, &[0, 0, 0], 1.0, 0.0),
            f64::NEG_INFINITY
        );
        assert!(mahalanobis_profile_objective(&x, &[0, 0, 0], 1.0, 0.1).is_finite());
        let means = cluster_means(x.view(), &[0, 0, 0], 1);
        let covs = optimal_covariances(x.view(), &[0, 0, 0], &means, 1.0, 0.0);
        assert_eq!(
            mahalanobis_objective(x.view(), &[0, 0, 0], &means, &covs, 1.0, 0.0),
            f64::INFINITY
        );
    }

    #[test]
    fn phi_is_reg_times_mean_column_variance() {
        // Column variances 1 and 4 (population): mean 2.5.
        let x = RowMatrix::from_rows(&[[0.0, 0.0], [2.0, 4.0]]);
        assert!((mahalanobis_phi(x.view(), 0.1) - 0.25).abs() < 1e-15);
        // Constant data: scale 1.
        let c = RowMatrix::from_rows(&[[3.0], [3.0]]);
        assert_eq!(mahalanobis_phi(c.view(), 0.1), 0.1);
    }
}
