//! Collapsed DP-means (MAD-Bayes Alg. 2): the means are always the exact cluster means, and
//! each row moves to wherever the objective of Eq. 9 is lowest. Its parameters are
//! [`CollapsedDpMeans`](crate::clustering::CollapsedDpMeans).
//!
//! The same descent, with merges, is the optional refinement of DP-means.

mod dense;
mod descent;
mod groups;
mod memo;
mod run;

use crate::MatrixView;
use crate::clustering::model::ClusterRun;
pub use run::collapsed_dp_means_run;
pub(crate) use run::{DescentConfig, descend, descent_to_run};

/// Refines a finished clustering run: exact single-row moves, merges and splits until none
/// lowers the collapsed objective (equal to the DP-means objective once means are cluster
/// means). The sweeps visit the rows of `order` (the run's own order) cluster by cluster
/// (`cluster_by_cluster`).
///
/// With `group_tries` = 0 the descent runs over all rows at once, and so it does with a cap
/// on K. With `group_tries` = t ≥ 1 and no cap on K (`k_max` = `usize::MAX`), the run's
/// clusters are first split into groups that do not trade rows (`groups`),
/// each group descends on its own rows from t row orders, the groups side by side, and keeps
/// its lowest end; then one descent over all rows finishes, unless `groups::settled_across`
/// proves that no move or merge across groups pays (or there is one group).
///
/// The refinement's sweeps (for the groups, the steps of their longest kept try) are added to
/// the run's iterations and trace; the result is converged when the refinement is and the run
/// did not stop at `max_sweeps` sweeps.
pub fn refine(
    x: MatrixView<'_>,
    run: ClusterRun,
    penalty: f64,
    k_max: usize,
    order: &[usize],
    max_sweeps: usize,
    group_tries: usize,
) -> ClusterRun {
    let k = run.means.n_rows();
    let cfg = DescentConfig {
        penalty,
        k_max,
        merges: true,
        max_sweeps,
    };
    let by_groups = group_tries > 0 && k_max == usize::MAX;
    let groups = if by_groups {
        groups::cluster_groups(x, &run.labels, k, penalty)
    } else {
        Vec::new()
    };
    let order = cluster_by_cluster(order, &run.labels, k);
    let mut trace = run.trace;
    let mut sweeps = 0;
    let mut settled = false;
    let (labels, k) = if !groups.is_empty() {
        let ends = groups::descend_groups(x, &run.labels, &groups, &order, group_tries, cfg);
        sweeps = ends.trace.len();
        trace.extend_from_slice(&ends.trace);
        settled = ends.converged
            && (groups.len() == 1 || groups::settled_across(x, &ends.labels, &ends.sizes, penalty));
        (ends.labels, ends.k)
    } else {
        (run.labels, k)
    };
    let mut refined = if settled {
        let done = run::Descent {
            labels,
            k,
            sweeps,
            converged: true,
            trace: Vec::new(),
        };
        descent_to_run(x, done, penalty)
    } else {
        let order = cluster_by_cluster(&order, &labels, k);
        let rest = DescentConfig {
            max_sweeps: max_sweeps.saturating_sub(sweeps),
            ..cfg
        };
        let desc = descend(x, labels, k, &order, rest);
        let mut out = descent_to_run(x, desc, penalty);
        out.n_iter += sweeps;
        out
    };
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

/// The order of a refinement's sweeps: the rows of `order` grouped by their cluster in
/// `labels` (values below `k`), the clusters in label order, each cluster's rows in the order
/// they have in `order`. A row's search scores the means of the clusters near its own; rows
/// of one cluster, visited together, find those means still in cache. On 200 000 × 50 blobs
/// at P = 150 the twenty refinements of the quality table took 17 % less time than in the
/// run's own order, and a default fit 16–17 % less; the refined objectives over eight data
/// sets moved both ways by less than the spread between restarts (docs/defaults.md, "DP-means:
/// the order of the refinement's sweeps").
fn cluster_by_cluster(order: &[usize], labels: &[usize], k: usize) -> Vec<usize> {
    // A counting sort: where each cluster's rows start, then each row put in its place.
    let mut start = vec![0usize; k + 1];
    for &n in order {
        start[labels[n] + 1] += 1;
    }
    for c in 0..k {
        start[c + 1] += start[c];
    }
    let mut grouped = vec![0; order.len()];
    for &n in order {
        let slot = &mut start[labels[n]];
        grouped[*slot] = n;
        *slot += 1;
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::{DescentConfig, cluster_by_cluster, descend, groups, refine};
    use crate::clustering::dp_means::{dp_means_refinement_start, random_order};
    use crate::clustering::objective::collapsed_dp_means_objective;
    use crate::restarts::run_rng;
    use crate::{RowMatrix, clustering::model::ClusterRun};

    /// The paper's run that a fit refines, in the row order of run 0 of `seed`, and the
    /// groups of its clusters: (order, run, groups).
    fn paper_start(
        x: &RowMatrix,
        penalty: f64,
        seed: u64,
    ) -> (Vec<usize>, ClusterRun, Vec<Vec<usize>>) {
        let order = random_order(x.n_rows(), &mut run_rng(seed, 0));
        let mean = crate::linalg::mean_row(x.view());
        let start = dp_means_refinement_start(x.view(), &mean, penalty, usize::MAX, 300, &order);
        let k = start.means.n_rows();
        let found = groups::cluster_groups(x.view(), &start.labels, k, penalty);
        (order, start, found)
    }

    /// The refinement's descent: merges and splits, no cap on K, at most 300 sweeps.
    fn refinement(penalty: f64) -> DescentConfig {
        DescentConfig {
            penalty,
            k_max: usize::MAX,
            merges: true,
            max_sweeps: 300,
        }
    }

    /// The refinement by groups on blobs far apart, each split in several clusters: at least
    /// two groups; the reported objective is the one recomputed from the labels, the trace
    /// never rises and ends there; a descent over all rows from the end (moves, merges and
    /// splits) changes nothing, so the end is one of the whole descent; two tries end no
    /// higher than one (the checked end keeps each group's best try); and one thread gives
    /// the same labels as two. Fails if the groups' labels are put together wrongly, the
    /// check across groups passes what a descent would change, or a try is chosen by
    /// anything but its end.
    #[test]
    fn groups_end_where_the_whole_descent_would_and_alike_on_any_threads() {
        let x = crate::generate::gaussian_blobs(3_000, 6, 8, 40.0, 1.0, 3).x;
        let penalty = 12.0;
        let (order, start, found) = paper_start(&x, penalty, 5);
        let k = start.means.n_rows();
        assert!(found.len() >= 2, "{} groups", found.len());
        let mut ends = Vec::new();
        for tries in [1, 2] {
            // `tries` orders per group (0 would descend over all rows at once).
            let run = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (x, start, order) = (x.view(), start.clone(), &order);
                pool.install(|| refine(x, start, penalty, usize::MAX, order, 300, tries))
            };
            let end = run(2);
            assert_eq!(run(1).labels, end.labels, "tries {tries}");
            let recomputed = collapsed_dp_means_objective(x.view(), &end.labels, penalty);
            assert_eq!(end.objective, recomputed, "tries {tries}");
            assert!(end.converged, "tries {tries}");
            let refined = &end.trace[start.trace.len()..];
            assert!(refined.windows(2).all(|w| w[1] <= w[0] + 1e-9 * w[0].abs()));
            let last = *end.trace.last().unwrap();
            assert!(
                (last - end.objective).abs() <= 1e-9 * end.objective,
                "tries {tries}"
            );
            assert!(end.means.n_rows() > k, "the groups split clusters");
            let cfg = refinement(penalty);
            let k_end = end.means.n_rows();
            let again = descend(x.view(), end.labels.clone(), k_end, &order, cfg);
            assert_eq!(again.sweeps, 1, "tries {tries}: the whole descent moved on");
            assert_eq!(again.labels, end.labels, "tries {tries}");
            ends.push(end.objective);
        }
        assert!(ends[1] <= ends[0], "{ends:?}");
    }

    /// Data that form one group: with two tries the refinement is the lower of two descents
    /// over all rows, one in the refinement's order and one in try 1's, made here by hand
    /// (the earlier on a tie), and the same on one thread as on two. Fails if the one-group
    /// case loses the order of its rows or its labels, or keeps the wrong try.
    #[test]
    fn one_group_is_the_lower_of_whole_descents() {
        let x = crate::generate::gaussian_blobs(2_000, 4, 3, 1.0, 1.5, 7).x;
        let penalty = 20.0;
        let (order, start, found) = paper_start(&x, penalty, 2);
        let k = start.means.n_rows();
        assert_eq!(found.len(), 1, "one group");
        let mut local = vec![usize::MAX; k];
        for (i, &c) in found[0].iter().enumerate() {
            local[c] = i;
        }
        let labels: Vec<usize> = start.labels.iter().map(|&c| local[c]).collect();
        let grouped = cluster_by_cluster(&order, &start.labels, k);
        let cfg = refinement(penalty);
        let ends: Vec<_> = (0..2)
            .map(|t| {
                let visit: Vec<usize> = groups::try_order(grouped.len(), t, 2)
                    .into_iter()
                    .map(|i| grouped[i])
                    .collect();
                descend(x.view(), labels.clone(), found[0].len(), &visit, cfg)
            })
            .collect();
        assert_ne!(ends[0].labels, ends[1].labels, "the tries differ");
        let better = if ends[1].trace.last() < ends[0].trace.last() {
            &ends[1]
        } else {
            &ends[0]
        };
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (xv, run) = (x.view(), start.clone());
            let end = pool.install(|| refine(xv, run, penalty, usize::MAX, &order, 300, 2));
            assert_eq!(end.labels, better.labels, "{threads} threads");
            let recomputed = collapsed_dp_means_objective(x.view(), &end.labels, penalty);
            assert_eq!(end.objective, recomputed);
        }
    }

    /// The rows grouped by cluster in label order, each cluster's rows in their order in
    /// `order`, every row once; an empty cluster and a cluster with one row among them.
    /// Fails if a cluster's rows lose their order, or the clusters come out of label order.
    #[test]
    fn rows_are_grouped_by_cluster_in_their_order() {
        let labels = [2, 0, 2, 1, 0, 2, 0, 3];
        let order = [5, 7, 0, 1, 6, 2, 3, 4];
        let grouped = cluster_by_cluster(&order, &labels, 5);
        assert_eq!(grouped, vec![1, 6, 4, 3, 5, 0, 2, 7]);
        let mut sorted = grouped.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }
}
