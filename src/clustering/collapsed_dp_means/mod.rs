//! Collapsed DP-means (MAD-Bayes Alg. 2): the means are always the exact cluster means, and
//! each row moves to wherever the objective of Eq. 9 is lowest. Its parameters are
//! [`CollapsedDpMeans`](crate::clustering::CollapsedDpMeans).
//!
//! The same descent, with merges, is the optional refinement of DP-means.

mod descent;
mod run;

use crate::MatrixView;
use crate::clustering::model::ClusterRun;
pub use run::collapsed_dp_means_run;
pub(crate) use run::{DescentConfig, descend, descent_to_run};

/// Refines a finished clustering run: exact single-row moves and merges until neither
/// lowers the collapsed objective (equal to the DP-means objective once means are cluster
/// means). The refinement's sweeps are added to the run's iterations and trace; the result
/// is converged when the refinement is and the run did not stop at `max_sweeps` sweeps.
pub fn refine(
    x: MatrixView<'_>,
    run: ClusterRun,
    penalty: f64,
    k_max: usize,
    order: &[usize],
    max_sweeps: usize,
) -> ClusterRun {
    let k = run.means.n_rows();
    let cfg = DescentConfig {
        penalty,
        k_max,
        merges: true,
        max_sweeps,
    };
    let desc = descend(x, run.labels, k, order, cfg);
    let mut refined = descent_to_run(x, desc, penalty);
    let mut trace = run.trace;
    trace.extend_from_slice(&refined.trace);
    refined.trace = trace;
    refined.n_iter += run.n_iter;
    // Converged unless either stopped at its cap (`max_sweeps`, the cap of the run too): a
    // run stopped early on purpose ([`dp_means_refinement_start`]) did not stop at its cap.
    //
    // [`dp_means_refinement_start`]: crate::clustering::dp_means::dp_means_refinement_start
    refined.converged &= run.converged || run.n_iter < max_sweeps;
    refined
}
