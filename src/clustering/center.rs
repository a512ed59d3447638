//! Moving the data to the origin before the GEMM distance kernels.
//!
//! The kernels compute ‖x − a‖² = ‖x‖² − 2 x·a + ‖a‖², whose rounding error scales with
//! ‖x‖², not with the distance. Data far from the origin relative to their spread (say
//! coordinates near 10⁶ with unit spread) then lose every digit of the distance, and the
//! nearest-mean and `> P` decisions of K-means and DP-means turn arbitrary. Distances do not
//! change under translation, so the algorithms run on a centred copy and the means are
//! moved back afterwards.

use crate::RowMatrix;
use crate::clustering::model::ClusterRun;
use crate::linalg::{BLOCK_ROWS, axpy, mean_row, ordered_block_reduce, sq_dist};

/// `x` minus its column means `x̄`, and `x̄`, when the offset dominates the spread
/// (‖x̄‖² > (1/N) Σ_n ‖x_n − x̄‖²); `None` when `x` is already near the origin, so no copy is
/// made. Sums run over fixed blocks added in order, so the result is the same for any
/// thread count.
pub(crate) fn centred_copy(x: &RowMatrix) -> Option<(RowMatrix, Vec<f64>)> {
    let mu = mean_row(x);
    let mut spread = 0.0;
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| (s..e).map(|n| sq_dist(x.row(n), &mu)).sum::<f64>(),
        |part| spread += part,
    );
    spread /= x.n_rows() as f64;
    if mu.iter().map(|v| v * v).sum::<f64>() <= spread {
        return None;
    }
    let mut c = x.clone();
    for n in 0..c.n_rows() {
        axpy(-1.0, &mu, c.row_mut(n));
    }
    Some((c, mu))
}

/// Moves every mean of `run` by `+offset` (back to the data's original position).
pub(crate) fn shift_means(run: &mut ClusterRun, offset: &[f64]) {
    for j in 0..run.means.n_rows() {
        axpy(1.0, offset, run.means.row_mut(j));
    }
}

/// `x` and `means`, both minus the mean of the means `m̄`, when ‖m̄‖² exceeds the means'
/// mean squared distance to `m̄` (the same rule as [`centred_copy`], applied to the means,
/// which stand for the data at prediction time); `None` otherwise.
pub(crate) fn centred_on_means(x: &RowMatrix, means: &RowMatrix) -> Option<(RowMatrix, RowMatrix)> {
    let mid = mean_row(means);
    let spread = means.rows().map(|r| sq_dist(r, &mid)).sum::<f64>() / means.n_rows().max(1) as f64;
    if mid.iter().map(|v| v * v).sum::<f64>() <= spread {
        return None;
    }
    let shift = |m: &RowMatrix| {
        let mut c = m.clone();
        for n in 0..c.n_rows() {
            axpy(-1.0, &mid, c.row_mut(n));
        }
        c
    };
    Some((shift(x), shift(means)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centres_only_data_far_from_the_origin() {
        let near = RowMatrix::from_rows(&[[-1.0, 0.0], [1.0, 0.5]]);
        assert!(centred_copy(&near).is_none());
        let far = RowMatrix::from_rows(&[[1e6, 3.0], [1e6 + 2.0, 5.0]]);
        let (c, mu) = centred_copy(&far).expect("offset dominates");
        assert_eq!(mu, vec![1e6 + 1.0, 4.0]);
        assert_eq!(c.as_slice(), &[-1.0, -1.0, 1.0, 1.0]);
    }
}
