//! One run of Lloyd's algorithm from given initial means.
//!
//! Each iteration is one pass over the data: for every block of rows, distances to all means
//! by GEMM (`GEMM_ROWS` rows at a time), the nearest mean, and the block's partial sums of
//! its members; partial sums are then added in block order (bit-identical for any thread
//! count) and divided into the new means. Cost per iteration O(N K D), memory O(K D) per
//! block in flight.

use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::model::ClusterRun;
use crate::clustering::objective::sum_of_squares;
use crate::linalg::{
    BLOCK_ROWS, Nearest, axpy, nearest_rows, nearest_rows_in_block, ordered_block_reduce,
    row_sq_norms, sq_dist,
};

/// What one block of rows contributes to an assignment pass.
pub(crate) struct BlockPass {
    /// Nearest mean of each row of the block.
    pub nearest: Vec<Nearest>,
    /// Σ over the block of the squared distance to the nearest mean.
    pub dist_sum: f64,
    /// Per-cluster sums of member rows (`K × D`) and member counts.
    pub sums: RowMatrix,
    pub counts: Vec<usize>,
}

/// Assigns every row to its nearest mean and accumulates the new cluster sums, in one pass.
/// `fold` receives the block partials in block order.
pub(crate) fn assign_and_sum(
    x: MatrixView<'_>,
    x_norms: &[f64],
    means: &RowMatrix,
    mut fold: impl FnMut(usize, BlockPass),
) {
    let (k, d) = (means.n_rows(), means.n_cols());
    let m_norms = row_sq_norms(means.view());
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| {
            let mut nearest = vec![Nearest::NONE; e - s];
            let mut buf = Vec::new();
            nearest_rows_in_block(
                x.rows_slice(s, e),
                &x_norms[s..e],
                means,
                &m_norms,
                &mut buf,
                &mut nearest,
            );
            let mut sums = RowMatrix::zeros(k, d);
            let mut counts = vec![0usize; k];
            let mut dist_sum = 0.0;
            for (i, nr) in nearest.iter().enumerate() {
                axpy(1.0, x.row(s + i), sums.row_mut(nr.label));
                counts[nr.label] += 1;
                dist_sum += nr.dist;
            }
            (
                s,
                BlockPass {
                    nearest,
                    dist_sum,
                    sums,
                    counts,
                },
            )
        },
        |(s, p)| fold(s, p),
    );
}

/// Runs Lloyd iterations from `init` until no label changes or `max_iter` passes.
///
/// An empty cluster's mean is moved onto the row farthest from its (updated) cluster mean
/// among rows whose cluster keeps at least one other member (distinct rows, ties to the
/// lowest index), so K stays fixed and the next assignment fills it. If the iteration cap is hit, a last assignment pass
/// makes the labels the nearest means of the returned means. The reported objective is
/// recomputed exactly from the returned labels and means; `trace[t]` is the objective of
/// iteration t's labels against the means they were assigned to (non-increasing).
pub fn lloyd(x: MatrixView<'_>, x_norms: &[f64], init: RowMatrix, max_iter: usize) -> ClusterRun {
    let (n, d) = (x.n_rows(), x.n_cols());
    let k = init.n_rows();
    let mut means = init;
    let mut labels = vec![usize::MAX; n];
    let mut trace = Vec::new();
    let mut converged = false;
    let mut n_iter = 0;
    while n_iter < max_iter {
        n_iter += 1;
        let mut sums = RowMatrix::zeros(k, d);
        let mut counts = vec![0usize; k];
        let mut changed = 0usize;
        let mut total = 0.0;
        assign_and_sum(x, x_norms, &means, |s, p| {
            for (i, nr) in p.nearest.iter().enumerate() {
                if labels[s + i] != nr.label {
                    changed += 1;
                    labels[s + i] = nr.label;
                }
            }
            total += p.dist_sum;
            for j in 0..k {
                if p.counts[j] > 0 {
                    axpy(1.0, p.sums.row(j), sums.row_mut(j));
                    counts[j] += p.counts[j];
                }
            }
        });
        trace.push(total);
        if changed == 0 {
            converged = true;
            break;
        }
        for j in 0..k {
            if counts[j] > 0 {
                let inv = 1.0 / counts[j] as f64;
                for (m, s) in means.row_mut(j).iter_mut().zip(sums.row(j)) {
                    *m = s * inv;
                }
            }
        }
        relocate_empty(x, &labels, &counts, &mut means);
    }
    if !converged {
        let nearest = nearest_rows(x, x_norms, &means, &row_sq_norms(means.view()));
        labels = nearest.into_iter().map(|nr| nr.label).collect();
    }
    let objective = sum_of_squares(x, &labels, &means);
    ClusterRun {
        labels,
        means,
        objective,
        n_iter,
        converged,
        trace,
    }
}

/// Moves each empty cluster's mean onto a distinct row, farthest from its cluster's new mean
/// first, taking a row only from a cluster that keeps another member.
///
/// Taking a row that is alone in its cluster would be useless: that cluster's new mean *is*
/// the row, so the row ties between the two means, stays, and the run can stop with an empty
/// cluster. A cluster of m members can spare m − 1 rows, and N ≥ K guarantees enough spares.
fn relocate_empty(x: MatrixView<'_>, labels: &[usize], counts: &[usize], means: &mut RowMatrix) {
    let empty: Vec<usize> = (0..counts.len()).filter(|&j| counts[j] == 0).collect();
    if empty.is_empty() {
        return;
    }
    let dist: Vec<f64> = (0..x.n_rows())
        .map(|i| sq_dist(x.row(i), means.row(labels[i])))
        .collect();
    let mut order: Vec<usize> = (0..dist.len()).collect();
    order.sort_by(|&a, &b| dist[b].total_cmp(&dist[a]).then(a.cmp(&b)));
    let mut spare: Vec<usize> = counts.iter().map(|&c| c.saturating_sub(1)).collect();
    let mut rows = order.into_iter();
    for &j in &empty {
        let Some(row) = rows.by_ref().find(|&r| spare[labels[r]] > 0) else {
            return;
        };
        spare[labels[row]] -= 1;
        means.row_mut(j).copy_from_slice(x.row(row));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::row_sq_norms;

    #[test]
    fn an_empty_cluster_is_not_parked_on_a_singleton() {
        // From these means the first assignment leaves cluster 2 empty; the farthest row
        // (0, alone in cluster 0) must not be taken, or the run stops with K − 1 clusters.
        let x = RowMatrix::from_rows(&[[0.0], [1.0], [2.0], [10.0]]);
        let init = RowMatrix::from_rows(&[[-5.0], [5.0], [40.0]]);
        let run = lloyd(x.view(), &row_sq_norms(x.view()), init, 100);
        assert!(run.converged);
        let mut used = vec![false; 3];
        run.labels.iter().for_each(|&c| used[c] = true);
        assert_eq!(used, vec![true; 3], "labels {:?}", run.labels);
    }
}
