//! One run of collapsed DP-means, and the same descent used to refine any clustering.

use super::descent::Partition;
use crate::MatrixView;
use crate::clustering::model::ClusterRun;
use crate::clustering::objective::{cluster_means, collapsed_dp_means_objective};

/// What a descent may do.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DescentConfig {
    /// The penalty P.
    pub penalty: f64,
    /// The most clusters allowed.
    pub k_max: usize,
    /// Whether merges and splits are tried (the refinement).
    pub merges: bool,
    /// Sweep cap.
    pub max_sweeps: usize,
}

/// Result of a descent: the compacted labels, K, sweeps made and the trace.
pub(crate) struct Descent {
    pub labels: Vec<usize>,
    pub k: usize,
    pub sweeps: usize,
    pub converged: bool,
    pub trace: Vec<f64>,
}

/// Exact coordinate descent from `labels` (values in `0..k`): sweeps over `order` until one
/// moves nothing; with `merges` (the refinement), then the best merges while they pay, or
/// else splits that pay, and again sweeps, until nothing changes. At most `max_sweeps` sweeps.
pub(crate) fn descend(
    x: MatrixView<'_>,
    labels: Vec<usize>,
    k: usize,
    order: &[usize],
    cfg: DescentConfig,
) -> Descent {
    let DescentConfig {
        penalty,
        k_max,
        merges,
        max_sweeps,
    } = cfg;
    // The trace starts from J of the starting labels and adds each step's exact change;
    // the returned objective is computed afresh from the final labels.
    let start = collapsed_dp_means_objective(x, &labels, penalty);
    let mut part = Partition::new(x, labels, k);
    let mut trace = Vec::new();
    let mut sweeps = 0;
    let mut converged = false;
    while sweeps < max_sweeps {
        sweeps += 1;
        let moved = part.sweep(x, order, penalty, k_max);
        let mut merged = 0;
        if merges && moved == 0 {
            merged = part.merge_while_better(penalty);
            if merged == 0 {
                merged = part.split_while_better(x, penalty, k_max);
            }
        }
        trace.push(start + part.change);
        if moved == 0 && merged == 0 {
            converged = true;
            break;
        }
    }
    let (labels, k) = part.compact_labels();
    Descent {
        labels,
        k,
        sweeps,
        converged,
        trace,
    }
}

/// One collapsed DP-means run: all rows start in one cluster, then `descend`.
pub fn collapsed_dp_means_run(
    x: MatrixView<'_>,
    penalty: f64,
    k_max: usize,
    max_iter: usize,
    order: &[usize],
    merges: bool,
) -> ClusterRun {
    let start = vec![0; x.n_rows()];
    descent_to_run(
        x,
        descend(
            x,
            start,
            1,
            order,
            DescentConfig {
                penalty,
                k_max,
                merges,
                max_sweeps: max_iter,
            },
        ),
        penalty,
    )
}

/// Packs a finished descent as a run: means are the exact cluster means.
pub(crate) fn descent_to_run(x: MatrixView<'_>, desc: Descent, penalty: f64) -> ClusterRun {
    let means = cluster_means(x, &desc.labels, desc.k);
    let objective = collapsed_dp_means_objective(x, &desc.labels, penalty);
    ClusterRun {
        labels: desc.labels,
        means,
        objective,
        n_iter: desc.sweeps,
        converged: desc.converged,
        trace: desc.trace,
    }
}
