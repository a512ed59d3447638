//! One run of Lloyd's algorithm from given initial means.
//!
//! Each iteration is one pass over the data in fixed blocks of rows: every row's nearest
//! mean by direct distance (ties to the lowest index), found for most rows by Hamerly's
//! bounds without a search and for the rest by a GEMM screen ([`super::bounds`]), and the
//! block's partial sums of its members; partial sums are then added in block order
//! (bit-identical for any thread count) and divided into the new means. Cost per iteration
//! O(N D) plus O(K D) for each row searched; memory O(K D) per block in flight and two values
//! per row.

use super::bounds::{BlockPass, MeanMoves, RowBounds};
use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::model::ClusterRun;
use crate::clustering::objective::sum_of_squares;
use crate::linalg::{BLOCK_ROWS, axpy, ordered_block_stream, row_sq_norms, sq_dist};

/// One assignment pass of every row against `means`, folding the blocks' partials in block
/// order.
fn assign(
    x: MatrixView<'_>,
    rows: &RowBounds,
    means: &RowMatrix,
    moves: &MeanMoves,
    fold: impl FnMut(BlockPass) + Send,
) {
    let m_norms = row_sq_norms(means.view());
    ordered_block_stream(
        x.n_rows(),
        BLOCK_ROWS,
        |b, s, e| rows.pass_block(b, x, (s, e), means, &m_norms, moves),
        fold,
    );
}

/// Runs Lloyd iterations from `init` (K ≥ 1 rows) until no label changes or `max_iter`
/// passes.
///
/// An empty cluster's mean is moved onto the row farthest from its (updated) cluster mean
/// among rows whose cluster keeps at least one other member (distinct rows, ties to the
/// lowest index), so K stays fixed and the next assignment fills it. If the iteration cap is
/// hit, a last assignment pass makes the labels the nearest means of the returned means. The
/// reported objective is recomputed exactly from the returned labels and means; `trace[t]` is
/// the objective of iteration t's labels against the means they were assigned to
/// (non-increasing).
pub fn lloyd(x: MatrixView<'_>, init: RowMatrix, max_iter: usize) -> ClusterRun {
    lloyd_with(x, init, max_iter, true).0
}

/// [`lloyd`], with Hamerly's bounds or (`bounded = false`) a search of every row in every
/// pass: the same iterations bit for bit. Also returns how many rows were searched, over all
/// passes.
fn lloyd_with(
    x: MatrixView<'_>,
    init: RowMatrix,
    max_iter: usize,
    bounded: bool,
) -> (ClusterRun, usize) {
    let (n, d) = (x.n_rows(), x.n_cols());
    let k = init.n_rows();
    assert!(k >= 1, "Lloyd needs at least one initial mean");
    let mut means = init;
    let rows = RowBounds::new(n, BLOCK_ROWS, bounded);
    let mut moves = MeanMoves::none(&means, n);
    let mut trace = Vec::new();
    let mut converged = false;
    let mut n_iter = 0;
    while n_iter < max_iter {
        n_iter += 1;
        let mut sums = RowMatrix::zeros(k, d);
        let mut counts = vec![0usize; k];
        let mut changed = 0usize;
        let mut total = 0.0;
        assign(x, &rows, &means, &moves, |p| {
            changed += p.changed;
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
        let old = means.clone();
        for j in 0..k {
            if counts[j] > 0 {
                let inv = 1.0 / counts[j] as f64;
                for (m, s) in means.row_mut(j).iter_mut().zip(sums.row(j)) {
                    *m = s * inv;
                }
            }
        }
        if counts.contains(&0) {
            relocate_empty(x, &rows.labels(), &counts, &mut means);
        }
        moves = MeanMoves::between(&old, &means, n);
    }
    if !converged {
        assign(x, &rows, &means, &moves, |_| {});
    }
    let labels = rows.labels();
    let objective = sum_of_squares(x, &labels, &means);
    let run = ClusterRun {
        labels,
        means,
        objective,
        n_iter,
        converged,
        trace,
    };
    (run, rows.searched())
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

    #[test]
    fn an_empty_cluster_is_not_parked_on_a_singleton() {
        // From these means the first assignment leaves cluster 2 empty; the farthest row
        // (0, alone in cluster 0) must not be taken, or the run stops with K − 1 clusters.
        let x = RowMatrix::from_rows(&[[0.0], [1.0], [2.0], [10.0]]);
        let init = RowMatrix::from_rows(&[[-5.0], [5.0], [40.0]]);
        let run = lloyd(x.view(), init, 100);
        assert!(run.converged);
        let mut used = vec![false; 3];
        run.labels.iter().for_each(|&c| used[c] = true);
        assert_eq!(used, vec![true; 3], "labels {:?}", run.labels);
    }

    /// `n` rows around `k` centres in `d` columns at `offset` from the origin, with spread
    /// `sd`; every third row a copy of the row before it (exact ties between rows), every
    /// fifth the midpoint of two centres (near ties between means).
    fn blobs(n: usize, k: usize, d: usize, offset: f64, sd: f64, seed: u64) -> RowMatrix {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let centres: Vec<Vec<f64>> = (0..k)
            .map(|_| {
                (0..d)
                    .map(|_| offset + rng.random_range(-4.0..4.0))
                    .collect()
            })
            .collect();
        let mut x = RowMatrix::zeros(n, d);
        for i in 0..n {
            if i % 3 == 2 {
                let prev = x.row(i - 1).to_vec();
                x.row_mut(i).copy_from_slice(&prev);
                continue;
            }
            let (a, b) = (rng.random_range(0..k), rng.random_range(0..k));
            for j in 0..d {
                let base = if i % 5 == 0 {
                    0.5 * (centres[a][j] + centres[b][j])
                } else {
                    centres[a][j]
                };
                x.row_mut(i)[j] = base + sd * rng.random_range(-1.0..1.0);
            }
        }
        x
    }

    fn first_rows(x: &RowMatrix, k: usize, step: usize) -> RowMatrix {
        let mut init = RowMatrix::zeros(k, x.n_cols());
        for j in 0..k {
            init.row_mut(j)
                .copy_from_slice(x.row((j * step) % x.n_rows()));
        }
        init
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn bounded_passes_give_the_unbounded_iterations() {
        // Near the origin and far from it, several blocks with a partial last one, more
        // means than the blobs (clusters emptied and refilled), K = 1, K large enough that
        // the half-gaps are not computed, duplicate initial means (exact ties), and the cap
        // on iterations (the last pass of an unconverged run).
        let cases: &[(usize, usize, usize, usize, f64, f64, usize)] = &[
            // (n, k_true, k, d, offset, sd, max_iter)
            (9000, 12, 12, 7, 0.0, 1.0, 100),
            (9000, 12, 20, 7, 0.0, 2.5, 100),
            (5000, 8, 8, 16, 1e5, 1.0, 100),
            (3000, 5, 1, 4, 0.0, 1.0, 100),
            (600, 30, 120, 3, 0.0, 1.0, 100),
            (9000, 12, 16, 7, 0.0, 3.0, 4),
        ];
        let mut effective = 0;
        for (c, &(n, k_true, k, d, offset, sd, max_iter)) in cases.iter().enumerate() {
            for seed in 0..3 {
                let x = blobs(n, k_true, d, offset, sd, seed);
                let mut init = first_rows(&x, k, 7 + seed as usize);
                if k >= 3 {
                    let dup = init.row(0).to_vec();
                    init.row_mut(2).copy_from_slice(&dup);
                }
                let (a, searched_a) = lloyd_with(x.view(), init.clone(), max_iter, true);
                let (b, searched_b) = lloyd_with(x.view(), init, max_iter, false);
                let what = format!("case {c} seed {seed}");
                assert_eq!(a.labels, b.labels, "{what}");
                assert_eq!(bits(a.means.as_slice()), bits(b.means.as_slice()), "{what}");
                assert_eq!(bits(&a.trace), bits(&b.trace), "{what}");
                assert_eq!((a.n_iter, a.converged), (b.n_iter, b.converged), "{what}");
                assert_eq!(a.objective.to_bits(), b.objective.to_bits(), "{what}");
                // The bounds do their work (else the equality above proves nothing).
                let passes = b.n_iter + usize::from(!b.converged);
                assert_eq!(searched_b, passes * n, "{what}");
                if b.converged && b.n_iter > 5 && offset == 0.0 {
                    effective += 1;
                    // Half the rows at most with the half-gaps, fewer rows without them.
                    let most = if k * k <= 16 * n {
                        searched_b / 2
                    } else {
                        searched_b - 1
                    };
                    assert!(searched_a <= most, "{what}: {searched_a} of {searched_b}");
                }
            }
        }
        assert!(
            effective >= 6,
            "only {effective} runs long enough to show the bounds"
        );
    }

    #[test]
    fn labels_are_the_direct_nearest_of_the_returned_means() {
        // Converged or stopped by the cap: each label is the nearest mean by direct distance,
        // ties to the lowest index, and the trace never increases.
        for max_iter in [2, 100] {
            let x = blobs(5000, 10, 5, 0.0, 2.0, 4);
            let run = lloyd(x.view(), first_rows(&x, 14, 3), max_iter);
            for (i, &l) in run.labels.iter().enumerate() {
                let want = crate::linalg::direct_nearest(x.row(i), run.means.view());
                assert_eq!(Some(l), want.map(|w| w.0), "row {i}");
            }
            assert!(
                run.trace.windows(2).all(|w| w[1] <= w[0]),
                "{:?}",
                run.trace
            );
        }
    }
}
