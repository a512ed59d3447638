//! OCC DP-means (Pan et al. 2013, Alg. 2–3): objective Σ_n ‖x_n − a_{c_n}‖² + (K − 1)·P
//! (MAD-Bayes Eq. 3), the serial algorithm of [`crate::clustering::DpMeans`] with its sweep
//! cut into epochs.
//!
//! * Worker ([`dp_propose`]): each row joins its nearest centre of the epoch's start (ties to
//!   the lowest index) unless that centre is farther than P (squared distance, strict `>`):
//!   then it proposes itself as a centre. At the cap K_max no row proposes.
//! * Validator ([`dp_validate`]): proposals in block order, then row order. A proposal within
//!   P of a centre accepted earlier in the epoch (not `> P`) joins the nearest of those;
//!   otherwise it is accepted as a new centre (at the cap it joins the nearest of all).
//! * Update: every mean becomes its members' mean from [`ClusterStats`] summed per block in
//!   row order and over blocks in block order; empty clusters are dropped. Stop when an
//!   iteration changes no label.

use super::params::{OccDpMeansValidParams, OccParams};
use super::{OccFit, OccTrace};
use crate::clustering::Clustering;
use crate::clustering::model::ClusterRun;
use crate::error::{FitError, check_data};
use crate::linalg::{
    Screened, axpy, direct_nearest as nearest, screened_nearest, sq_dist, sq_norm,
};
use crate::restarts::Best;
use crate::{MatrixView, RowMatrix};
use rayon::prelude::*;
use std::ops::Range;

/// The worker step's result for one block's rows of one epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct DpProposals {
    /// For each row: the centre it joined, or `None` when it proposed itself.
    pub labels: Vec<Option<usize>>,
    /// The rows that proposed themselves, in row order.
    pub proposals: RowMatrix,
}

/// The worker step: `rows` against the `centres` of the epoch's start (module
/// documentation). With `centres.n_rows() ≥ k_max` no row proposes.
///
/// The nearest centre is the one [`direct_nearest`](crate::linalg::direct_nearest) finds by direct distances, found faster: a GEMM
/// gives every distance as ‖x‖² − 2x·c + ‖c‖² ([`screened_nearest`]), and only the centres
/// that rounding could make the nearest are measured directly. Labels, distances and
/// proposals are those of the direct search, bit for bit.
pub fn dp_propose(
    rows: MatrixView<'_>,
    centres: MatrixView<'_>,
    penalty: f64,
    k_max: usize,
) -> DpProposals {
    let mut labels = Vec::with_capacity(rows.n_rows());
    let mut proposals = RowMatrix::zeros(0, rows.n_cols());
    let capped = centres.n_rows() >= k_max;
    let c_norms: Vec<f64> = centres.rows().map(sq_norm).collect();
    screened_nearest(rows, centres, &c_norms, |_, x, best| match best {
        Some(Screened { label, dist, .. }) if dist <= penalty || capped => labels.push(Some(label)),
        _ => {
            labels.push(None);
            proposals.push_row(x);
        }
    });
    DpProposals { labels, proposals }
}

/// The validator's decisions for one epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct DpValidation {
    /// The accepted centres, in validation order: they take the indices K, K + 1, … after the
    /// K centres of the epoch's start.
    pub accepted: RowMatrix,
    /// For each block and each of its proposals (in row order), the centre it joined.
    pub labels: Vec<Vec<usize>>,
}

/// The serial validation of one epoch's proposals, given block by block in block order,
/// against the `centres` of the epoch's start (module documentation).
pub fn dp_validate(
    proposals: &[MatrixView<'_>],
    centres: MatrixView<'_>,
    penalty: f64,
    k_max: usize,
) -> DpValidation {
    let k0 = centres.n_rows();
    let mut accepted = RowMatrix::zeros(0, centres.n_cols());
    let mut labels = Vec::with_capacity(proposals.len());
    for block in proposals {
        let mut out = Vec::with_capacity(block.n_rows());
        for x in block.rows() {
            let label = if k0 + accepted.n_rows() >= k_max {
                // At the cap: the nearest of every centre, old or new.
                let old = nearest(x, centres);
                let new = nearest(x, accepted.view()).map(|(k, d)| (k0 + k, d));
                match (old, new) {
                    (Some(o), Some(n)) => {
                        if n.1 < o.1 {
                            n.0
                        } else {
                            o.0
                        }
                    }
                    (Some(o), None) => o.0,
                    (None, Some(n)) => n.0,
                    (None, None) => unreachable!("k_max ≥ 1 leaves a centre"),
                }
            } else {
                match nearest(x, accepted.view()) {
                    Some((k, d)) if d <= penalty => k0 + k,
                    _ => {
                        accepted.push_row(x);
                        k0 + accepted.n_rows() - 1
                    }
                }
            };
            out.push(label);
        }
        labels.push(out);
    }
    DpValidation { accepted, labels }
}

/// Sufficient statistics of a clustering: the size and the sum of each cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterStats {
    /// Rows in each cluster.
    pub counts: Vec<u64>,
    /// Sum of each cluster's rows (`K × D`).
    pub sums: RowMatrix,
}

impl ClusterStats {
    /// The statistics of `rows` with `labels` (all below `k`), summed in row order.
    ///
    /// # Panics
    /// When a label is not below `k` or the lengths disagree.
    #[track_caller]
    pub fn of_rows(rows: MatrixView<'_>, labels: &[usize], k: usize) -> Self {
        assert_eq!(rows.n_rows(), labels.len(), "one label per row");
        let mut s = Self {
            counts: vec![0; k],
            sums: RowMatrix::zeros(k, rows.n_cols()),
        };
        for (x, &c) in rows.rows().zip(labels) {
            s.counts[c] += 1;
            axpy(1.0, x, s.sums.row_mut(c));
        }
        s
    }

    /// Adds another block's statistics (same K and D).
    pub fn add(&mut self, other: &ClusterStats) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        axpy(1.0, other.sums.as_slice(), self.sums.as_mut_slice());
    }

    /// The means of the non-empty clusters and each old index's new one (`None`: dropped).
    pub fn means(&self) -> (RowMatrix, Vec<Option<usize>>) {
        let d = self.sums.n_cols();
        let mut means = RowMatrix::zeros(0, d);
        let mut map = Vec::with_capacity(self.counts.len());
        for (k, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                map.push(None);
            } else {
                let inv = 1.0 / c as f64;
                let m: Vec<f64> = self.sums.row(k).iter().map(|v| v * inv).collect();
                map.push(Some(means.n_rows()));
                means.push_row(&m);
            }
        }
        (means, map)
    }
}

/// Entry point: `OccDpMeans::params(penalty)`; also the marker of its [`OccParams`].
#[derive(Clone, Copy, Debug)]
pub struct OccDpMeans;

impl OccDpMeans {
    /// OCC DP-means with penalty P (defaults in [`OccParams`]).
    pub fn params(penalty: f64) -> OccParams<OccDpMeans> {
        OccParams::new(penalty)
    }
}

impl OccDpMeansValidParams {
    /// Runs OCC DP-means on `x` from one centre at the mean of X, recording the
    /// serial-equivalent order of every iteration.
    pub fn fit_traced(&self, x: MatrixView<'_>) -> Result<OccFit<Clustering>, FitError> {
        check_data(x)?;
        let n = x.n_rows();
        let blocks = self.block_ranges(n)?;
        let k_max = self.k_cap();
        let all_zero = vec![0usize; n];
        let mut centres = block_stats(x, &blocks, &all_zero, 1).means().0;
        let mut labels = vec![usize::MAX; n];
        let mut occ = OccTrace::default();
        let mut trace = Vec::new();
        let mut converged = false;
        let mut n_iter = 0;
        let epochs = self.epochs(&blocks);
        while n_iter < self.max_iter() {
            n_iter += 1;
            let mut next = vec![0usize; n];
            let mut order = Vec::with_capacity(n);
            let mut log = Vec::with_capacity(epochs);
            for e in 0..epochs {
                let windows = self.windows(&blocks, e);
                let steps: Vec<DpProposals> = windows
                    .par_iter()
                    .map(|w| {
                        dp_propose(
                            x.rows_view(w.start, w.end),
                            centres.view(),
                            self.penalty,
                            k_max,
                        )
                    })
                    .collect();
                let proposals: Vec<MatrixView<'_>> =
                    steps.iter().map(|s| s.proposals.view()).collect();
                let v = dp_validate(&proposals, centres.view(), self.penalty, k_max);
                let mut proposers = Vec::new();
                for ((w, step), resolved) in windows.iter().zip(&steps).zip(&v.labels) {
                    let mut resolved = resolved.iter();
                    for (i, l) in w.clone().zip(&step.labels) {
                        match l {
                            Some(k) => {
                                next[i] = *k;
                                order.push(i);
                            }
                            None => {
                                next[i] = *resolved.next().expect("one label per proposal");
                                proposers.push(i);
                            }
                        }
                    }
                }
                order.extend(proposers);
                log.push((v.labels.iter().map(Vec::len).sum(), v.accepted.n_rows()));
                for a in v.accepted.rows() {
                    centres.push_row(a);
                }
            }
            occ.orders.push(order);
            occ.epochs.push(log);
            let (means, map) = block_stats(x, &blocks, &next, centres.n_rows()).means();
            for l in &mut next {
                *l = map[*l].expect("a label's cluster is not empty");
            }
            centres = means;
            trace.push(block_objective(x, &blocks, &next, &centres, self.penalty));
            let same = next == labels;
            labels = next;
            if same {
                converged = true;
                break;
            }
        }
        let objective = *trace.last().expect("at least one iteration");
        let run = ClusterRun {
            labels,
            means: centres,
            objective,
            n_iter,
            converged,
            trace,
        };
        Ok(OccFit {
            model: Clustering::from_best(Best {
                best: run,
                best_run: 0,
                run_objectives: vec![objective],
            }),
            occ,
        })
    }
}

/// [`ClusterStats`] of every block (in parallel), added in block order.
fn block_stats(
    x: MatrixView<'_>,
    blocks: &[Range<usize>],
    labels: &[usize],
    k: usize,
) -> ClusterStats {
    let parts: Vec<ClusterStats> = blocks
        .par_iter()
        .map(|b| ClusterStats::of_rows(x.rows_view(b.start, b.end), &labels[b.clone()], k))
        .collect();
    let mut total = ClusterStats {
        counts: vec![0; k],
        sums: RowMatrix::zeros(k, x.n_cols()),
    };
    for p in &parts {
        total.add(p);
    }
    total
}

/// Σ_n ‖x_n − a_{c_n}‖² + (K − 1)·P, summed per block in row order and over blocks in order.
pub(super) fn block_objective(
    x: MatrixView<'_>,
    blocks: &[Range<usize>],
    labels: &[usize],
    means: &RowMatrix,
    penalty: f64,
) -> f64 {
    let parts: Vec<f64> = blocks
        .par_iter()
        .map(|b| {
            b.clone()
                .map(|i| sq_dist(x.row(i), means.row(labels[i])))
                .sum::<f64>()
        })
        .collect();
    parts.iter().sum::<f64>() + (means.n_rows() as f64 - 1.0) * penalty
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_proposes_only_beyond_the_penalty() {
        let centres = RowMatrix::from_rows(&[[0.0, 0.0], [10.0, 0.0]]);
        let rows = RowMatrix::from_rows(&[[1.0, 0.0], [3.0, 0.0], [9.0, 0.0], [5.0, 5.0]]);
        // P = 4: (1,0) is 1 from centre 0; (3,0) exactly 9 > 4 → proposes; (9,0) joins 1.
        let s = dp_propose(rows.view(), centres.view(), 4.0, usize::MAX);
        assert_eq!(s.labels, vec![Some(0), None, Some(1), None]);
        assert_eq!(s.proposals, RowMatrix::from_rows(&[[3.0, 0.0], [5.0, 5.0]]));
        // A tie at exactly P stays: (2, 0) is at squared distance 4 = P.
        let s = dp_propose(
            RowMatrix::from_rows(&[[2.0, 0.0]]).view(),
            centres.view(),
            4.0,
            9,
        );
        assert_eq!(s.labels, vec![Some(0)]);
        // At the cap nobody proposes.
        let s = dp_propose(rows.view(), centres.view(), 4.0, 2);
        assert!(s.labels.iter().all(Option::is_some));
    }

    #[test]
    fn the_validator_accepts_in_order_and_resolves_against_earlier_acceptances() {
        let centres = RowMatrix::from_rows(&[[0.0, 0.0]]);
        let a = RowMatrix::from_rows(&[[10.0, 0.0], [11.0, 0.0]]);
        let b = RowMatrix::from_rows(&[[12.0, 0.0], [10.0, 2.0], [30.0, 0.0]]);
        let v = dp_validate(&[a.view(), b.view()], centres.view(), 4.0, usize::MAX);
        // (10,0) accepted as 1; (11,0) within 1 of it; (12,0) at exactly 4 → joins 1;
        // (10,2) at 4 → joins 1; (30,0) accepted as 2.
        assert_eq!(
            v.accepted,
            RowMatrix::from_rows(&[[10.0, 0.0], [30.0, 0.0]])
        );
        assert_eq!(v.labels, vec![vec![1, 1], vec![1, 1, 2]]);
        // With a cap of 2 the last proposal joins the nearest centre of all.
        let v = dp_validate(&[a.view(), b.view()], centres.view(), 4.0, 2);
        assert_eq!(v.labels, vec![vec![1, 1], vec![1, 1, 1]]);
    }

    #[test]
    fn statistics_add_up_and_empty_clusters_are_dropped() {
        let x = RowMatrix::from_rows(&[[1.0], [3.0], [10.0], [20.0]]);
        let mut s = ClusterStats::of_rows(x.rows_view(0, 2), &[0, 0], 3);
        s.add(&ClusterStats::of_rows(x.rows_view(2, 4), &[2, 2], 3));
        assert_eq!(s.counts, vec![2, 0, 2]);
        let (means, map) = s.means();
        assert_eq!(means, RowMatrix::from_rows(&[[2.0], [15.0]]));
        assert_eq!(map, vec![Some(0), None, Some(1)]);
    }
}
