//! One run of DP-means (Kulis & Jordan 2012; MAD-Bayes Eq. 3 and §3.1).
//!
//! Objective: Σ_n ‖x_n − a_{c_n}‖² + (K − 1)·P. Start with one cluster at the mean of X.
//! Each sweep visits the rows in the run's order; a row joins its nearest mean unless that
//! mean is farther than P (squared distance, strict `>`), in which case it opens a new cluster
//! at itself (never beyond `k_max`). After the sweep each mean becomes its members' mean and
//! empty clusters are dropped. Stop when a sweep changes no label.
//!
//! Means do not move during a sweep; they only get added. So the nearest of the means that
//! exist when a sweep begins is found for all rows first, by GEMM over contiguous row blocks
//! in parallel (the same pass as K-means). The rows are then visited in order, in waves: the
//! nearest of the clusters opened earlier in the sweep is found for a wave's rows by GEMM, in
//! parallel (skipped while none has been opened, as in most sweeps after the first); only
//! the clusters opened during the wave itself are checked row by row. Without waves, every
//! cluster opened in the first sweep (all K of them, starting from one) would be checked row
//! by row for the rest of that sweep.

use crate::RowMatrix;
use crate::clustering::model::ClusterRun;
use crate::clustering::objective::{cluster_means, dp_means_objective};
use crate::linalg::{
    BLOCK_ROWS, Nearest, mean_row, nearest_rows, nearest_rows_in_block, ordered_block_reduce,
    row_sq_norms, sq_dist,
};

/// Most rows in one wave of a sweep. Within a wave, the nearest of the clusters opened before
/// the wave began is found in parallel by GEMM; clusters opened during the wave are checked
/// row by row. Waves start at `FIRST_WAVE_ROWS` and double up to this size, so the
/// many clusters opened early in the first sweep soon join the GEMM. The schedule depends on
/// row positions only (not on the thread count), which fixes which distances are computed
/// which way: the result is the same for any number of threads.
const WAVE_ROWS: usize = 8 * BLOCK_ROWS;

/// Rows in the first wave of a sweep.
const FIRST_WAVE_ROWS: usize = 256;

/// Runs DP-means sweeps over the rows in `order` (a permutation of `0..N`).
pub fn dp_means_run(
    x: &RowMatrix,
    x_norms: &[f64],
    penalty: f64,
    k_max: usize,
    max_iter: usize,
    order: &[usize],
) -> ClusterRun {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut means = RowMatrix::from_rows(&[mean_row(x)]);
    let mut labels = vec![0usize; n];
    let mut trace = Vec::new();
    let mut converged = false;
    let mut n_iter = 0;
    while n_iter < max_iter {
        n_iter += 1;
        // The means at the start of the sweep (indices 0..k0), then every cluster opened
        // during it. The nearest of the first k0 is found for all rows at once, in row-index
        // order (contiguous, in parallel, as in a K-means pass).
        let mut current = means;
        let k0 = current.n_rows();
        let base = nearest_rows(x, x_norms, &current, &row_sq_norms(&current));
        let mut changed = 0usize;
        let mut sweep_cost = 0.0;
        let mut visit = |current: &mut RowMatrix, r: usize, from: usize, mut best: Nearest| {
            // Clusters opened after `from` was fixed: checked row by row.
            for j in from..current.n_rows() {
                let dist = sq_dist(x.row(r), current.row(j));
                if dist < best.dist {
                    best = Nearest { label: j, dist };
                }
            }
            if best.dist > penalty && current.n_rows() < k_max {
                best = Nearest {
                    label: current.n_rows(),
                    dist: 0.0,
                };
                current.push_row(x.row(r));
            }
            if labels[r] != best.label {
                labels[r] = best.label;
                changed += 1;
            }
            sweep_cost += best.dist;
        };
        let mut wave_start = 0;
        let mut wave_len = FIRST_WAVE_ROWS;
        while wave_start < n {
            let wave_end = (wave_start + wave_len).min(n);
            wave_len = (2 * wave_len).min(WAVE_ROWS);
            let k_snap = current.n_rows();
            if k_snap == k0 {
                // Nothing opened yet in this sweep: the base search is complete.
                for &r in &order[wave_start..wave_end] {
                    visit(&mut current, r, k0, base[r]);
                }
                wave_start = wave_end;
                continue;
            }
            // Parallel, by GEMM: nearest of the clusters opened so far in this sweep.
            let opened = RowMatrix::new(k_snap - k0, d, current.rows_slice(k0, k_snap).to_vec());
            let opened_norms = row_sq_norms(&opened);
            ordered_block_reduce(
                wave_end - wave_start,
                BLOCK_ROWS,
                |_, s, e| {
                    let rows = &order[wave_start + s..wave_start + e];
                    let mut xb = Vec::with_capacity(rows.len() * d);
                    for &r in rows {
                        xb.extend_from_slice(x.row(r));
                    }
                    let norms: Vec<f64> = rows.iter().map(|&r| x_norms[r]).collect();
                    let mut nearest = vec![Nearest::NONE; rows.len()];
                    nearest_rows_in_block(
                        &xb,
                        &norms,
                        &opened,
                        &opened_norms,
                        &mut Vec::new(),
                        &mut nearest,
                    );
                    (rows, nearest)
                },
                // In order: the better of the two searches (ties to the older cluster), then
                // the clusters opened during this wave.
                |(rows, nearest)| {
                    for (&r, o) in rows.iter().zip(&nearest) {
                        let mut best = base[r];
                        if o.dist < best.dist {
                            best = Nearest {
                                label: k0 + o.label,
                                dist: o.dist,
                            };
                        }
                        visit(&mut current, r, k_snap, best);
                    }
                },
            );
            wave_start = wave_end;
        }
        let k_now = current.n_rows();
        means = current;
        trace.push(sweep_cost + (k_now as f64 - 1.0) * penalty);
        if changed == 0 {
            converged = true;
            break;
        }
        means = cluster_means(x, &labels, k_now);
        drop_empty_clusters(&mut labels, &mut means);
    }
    let objective = dp_means_objective(x, &labels, &means, penalty);
    ClusterRun {
        labels,
        means,
        objective,
        n_iter,
        converged,
        trace,
    }
}

/// Removes clusters no row is labelled with, keeping the others in order.
pub(crate) fn drop_empty_clusters(labels: &mut [usize], means: &mut RowMatrix) {
    let k = means.n_rows();
    let mut used = vec![false; k];
    for &c in labels.iter() {
        used[c] = true;
    }
    if used.iter().all(|&u| u) {
        return;
    }
    let mut new_index = vec![usize::MAX; k];
    let mut next = 0;
    for j in 0..k {
        if used[j] {
            new_index[j] = next;
            next += 1;
        }
    }
    for c in labels.iter_mut() {
        *c = new_index[*c];
    }
    means.retain_rows(&used);
}
