//! One run of DP-means (Kulis & Jordan 2012; MAD-Bayes Eq. 3 and §3.1).
//!
//! Objective: Σ_n ‖x_n − a_{c_n}‖² + (K − 1)·P. Start with one cluster at the mean of X.
//! Each sweep visits the rows in the run's order; a row joins its nearest mean unless that
//! mean is farther than P (squared distance, strict `>`), in which case it opens a new cluster
//! at itself (never beyond `k_max`). After the sweep each mean becomes its members' mean and
//! empty clusters are dropped. Stop when a sweep changes no label.
//!
//! The means of the clusters that existed when a sweep began do not move during it, so the
//! nearest of them is found for whole blocks of rows by GEMM, in parallel; only clusters
//! opened during the sweep are checked row by row, in order.

use crate::RowMatrix;
use crate::clustering::model::ClusterRun;
use crate::clustering::objective::{cluster_means, dp_means_objective};
use crate::linalg::{
    BLOCK_ROWS, Nearest, mean_row, nearest_rows_in_block, ordered_block_reduce, row_sq_norms,
    sq_dist,
};

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
        let k_old = means.n_rows();
        let m_norms = row_sq_norms(&means);
        let mut opened = RowMatrix::zeros(0, d);
        let mut changed = 0usize;
        let mut sweep_cost = 0.0;
        ordered_block_reduce(
            n,
            BLOCK_ROWS,
            |_, s, e| {
                let rows: Vec<usize> = order[s..e].to_vec();
                let mut xb = Vec::with_capacity(rows.len() * d);
                for &r in &rows {
                    xb.extend_from_slice(x.row(r));
                }
                let norms: Vec<f64> = rows.iter().map(|&r| x_norms[r]).collect();
                let mut nearest = vec![Nearest::NONE; rows.len()];
                nearest_rows_in_block(&xb, &norms, &means, &m_norms, &mut Vec::new(), &mut nearest);
                (rows, nearest)
            },
            |(rows, nearest)| {
                for (&r, old) in rows.iter().zip(&nearest) {
                    let mut best = *old;
                    for (j, a) in opened.rows().enumerate() {
                        let dist = sq_dist(x.row(r), a);
                        if dist < best.dist {
                            best = Nearest {
                                label: k_old + j,
                                dist,
                            };
                        }
                    }
                    if best.dist > penalty && k_old + opened.n_rows() < k_max {
                        best = Nearest {
                            label: k_old + opened.n_rows(),
                            dist: 0.0,
                        };
                        opened.push_row(x.row(r));
                    }
                    if labels[r] != best.label {
                        labels[r] = best.label;
                        changed += 1;
                    }
                    sweep_cost += best.dist;
                }
            },
        );
        let k_now = k_old + opened.n_rows();
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
