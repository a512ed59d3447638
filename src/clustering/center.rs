//! Moving the data to the origin before the GEMM distance kernels.
//!
//! The kernels compute ‖x − a‖² = ‖x‖² − 2 x·a + ‖a‖², whose rounding error scales with
//! ‖x‖², not with the distance. Data far from the origin relative to their spread (say
//! coordinates near 10⁶ with unit spread) then lose every digit of the distance, and the
//! nearest-mean and `> P` decisions of K-means and DP-means turn arbitrary. Distances do not
//! change under translation, so the algorithms run on a centred copy and the means are
//! moved back afterwards.

use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::model::ClusterRun;
use crate::linalg::{
    BLOCK_ROWS, axpy, mean_row, ordered_block_reduce, row_sq_norms, sq_dist, sq_norm,
};

/// The data as the GEMM kernels see them, from one pass over `x`: a centred copy when the
/// offset dominates the spread, the squared row norms and the column means of the data the
/// algorithm runs on.
pub(crate) struct Prepared {
    /// `x` minus its column means `x̄`, and `x̄`; `None` when `x` is used as it is.
    pub centred: Option<(RowMatrix, Vec<f64>)>,
    /// ‖x_n‖² of the rows the algorithm runs on.
    pub norms: Vec<f64>,
    /// Column means of the rows the algorithm runs on.
    pub mean: Vec<f64>,
}

impl Prepared {
    /// The rows the algorithm runs on: the centred copy, or `x` itself.
    pub fn data<'a>(&'a self, x: MatrixView<'a>) -> MatrixView<'a> {
        self.centred.as_ref().map_or(x, |(c, _)| c.view())
    }
}

/// Prepares `x` (see [`Prepared`]). The copy is made when ‖x̄‖² exceeds the mean squared
/// distance to x̄, (1/N) Σ_n ‖x_n − x̄‖² = (1/N) Σ_n ‖x_n‖² − ‖x̄‖², that is when
/// 2‖x̄‖² > (1/N) Σ_n ‖x_n‖²: both sides are sums of squares, so the test itself cancels
/// nothing, and the row norms it needs are the ones the kernels need anyway. Column sums
/// run over fixed blocks added in order, so everything is the same for any thread count
/// (the mean has the bits of [`mean_row`]).
pub(crate) fn prepare(x: MatrixView<'_>) -> Prepared {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut norms = Vec::with_capacity(n);
    let mut mean = vec![0.0; d];
    ordered_block_reduce(
        n,
        BLOCK_ROWS,
        |_, s, e| {
            let mut part = vec![0.0; d];
            let block_norms: Vec<f64> = (s..e)
                .map(|i| {
                    axpy(1.0, x.row(i), &mut part);
                    sq_norm(x.row(i))
                })
                .collect();
            (block_norms, part)
        },
        |(block_norms, part)| {
            norms.extend_from_slice(&block_norms);
            axpy(1.0, &part, &mut mean);
        },
    );
    if n > 0 {
        let inv = 1.0 / n as f64;
        mean.iter_mut().for_each(|v| *v *= inv);
    }
    let mean_sq_norm = norms.iter().sum::<f64>() / n.max(1) as f64;
    if 2.0 * sq_norm(&mean) <= mean_sq_norm {
        return Prepared {
            centred: None,
            norms,
            mean,
        };
    }
    let mut c = x.to_owned();
    for i in 0..n {
        axpy(-1.0, &mean, c.row_mut(i));
    }
    Prepared {
        norms: row_sq_norms(c.view()),
        mean: mean_row(c.view()),
        centred: Some((c, mean)),
    }
}

/// Moves every mean of `run` by `+offset` (back to the data's original position).
pub(crate) fn shift_means(run: &mut ClusterRun, offset: &[f64]) {
    for j in 0..run.means.n_rows() {
        axpy(1.0, offset, run.means.row_mut(j));
    }
}

/// `x` and `means`, both minus the mean of the means `m̄`, when ‖m̄‖² exceeds the means'
/// mean squared distance to `m̄` (the same rule as [`prepare`], applied to the means,
/// which stand for the data at prediction time); `None` otherwise.
pub(crate) fn centred_on_means(
    x: MatrixView<'_>,
    means: &RowMatrix,
) -> Option<(RowMatrix, RowMatrix)> {
    let mid = mean_row(means.view());
    let spread = means.rows().map(|r| sq_dist(r, &mid)).sum::<f64>() / means.n_rows().max(1) as f64;
    if mid.iter().map(|v| v * v).sum::<f64>() <= spread {
        return None;
    }
    let shift = |m: MatrixView<'_>| {
        let mut c = m.to_owned();
        for n in 0..c.n_rows() {
            axpy(-1.0, &mid, c.row_mut(n));
        }
        c
    };
    Some((shift(x), shift(means.view())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centres_only_data_far_from_the_origin() {
        let near = RowMatrix::from_rows(&[[-1.0, 0.0], [1.0, 0.5]]);
        assert!(prepare(near.view()).centred.is_none());
        let far = RowMatrix::from_rows(&[[1e6, 3.0], [1e6 + 2.0, 5.0]]);
        let (c, mu) = prepare(far.view()).centred.expect("offset dominates");
        assert_eq!(mu, vec![1e6 + 1.0, 4.0]);
        assert_eq!(c.as_slice(), &[-1.0, -1.0, 1.0, 1.0]);
    }
}
