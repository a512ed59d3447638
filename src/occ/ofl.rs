//! OCC online facility location (Pan et al. 2013, §3.3; the serial algorithm is Meyerson's,
//! 2001): one pass over the rows; a row at squared distance d² from the nearest open
//! facility opens a new one at itself with probability min(1, d²/P), and otherwise joins that
//! facility (the first row always opens one). The result is scored as a DP-means clustering
//! with the facilities as centres: Σ_n ‖x_n − c_{z_n}‖² + (K − 1)·P (MAD-Bayes Eq. 3), which
//! OFL bounds within a constant factor in expectation.
//!
//! Row n's draw is u_n = [`ofl_uniform`]`(seed, n)`, fixed by the seed and the row's index
//! alone, and "opens" means `u_n · P < d²` ([`ofl_opens`]) for every party, so:
//! * Worker ([`ofl_propose`]): against the facilities of the epoch's start, a row that would
//!   open one proposes itself; the others join their nearest facility (ties to the lowest
//!   index). At the cap K_max no row proposes.
//! * Validator ([`ofl_validate`]): proposals in block order, then row order; the proposal's
//!   d² becomes its distance to every facility so far (those of the epoch's start and those
//!   accepted earlier in the epoch); it opens if `u_n · P < d²` still holds, and otherwise
//!   joins the nearest of them. Since d² only shrinks, a row that the serial algorithm would
//!   let open has always proposed: the run equals serial OFL over the recorded order with
//!   the same draws, bit for bit.

use super::dp::{DpValidation, block_objective};
use super::params::{OccOflValidParams, OccParams};
use super::{OccFit, OccTrace};
use crate::clustering::Clustering;
use crate::clustering::model::ClusterRun;
use crate::error::{FitError, check_data};
use crate::linalg::direct_nearest as nearest;
use crate::restarts::Best;
use crate::{MatrixView, RowMatrix};
use rayon::prelude::*;

/// Row `row`'s uniform draw in [0, 1) under `seed`: the SplitMix64 finaliser of a counter,
/// so that it depends on nothing but the two numbers.
pub fn ofl_uniform(seed: u64, row: usize) -> f64 {
    let mut z = seed
        .wrapping_add(
            (row as u64)
                .wrapping_add(1)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
        .wrapping_add(0x6A09_E667_F3BC_C909);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The one opening rule: a row with draw `u` at squared distance `d2` from the nearest
/// facility (infinite when there is none) opens one when `u · P < d²`.
pub fn ofl_opens(u: f64, d2: f64, penalty: f64) -> bool {
    u * penalty < d2
}

/// The worker step's result for one block's rows of one epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct OflProposals {
    /// For each row: the facility it joined, or `None` when it proposed itself.
    pub labels: Vec<Option<usize>>,
    /// The global indices of the rows that proposed themselves, in row order.
    pub rows: Vec<usize>,
    /// Those rows' values.
    pub proposals: RowMatrix,
}

/// The worker step: `rows` (global indices `first..`) against the `facilities` of the
/// epoch's start (module documentation).
pub fn ofl_propose(
    rows: MatrixView<'_>,
    first: usize,
    facilities: MatrixView<'_>,
    penalty: f64,
    seed: u64,
    k_max: usize,
) -> OflProposals {
    let mut out = OflProposals {
        labels: Vec::with_capacity(rows.n_rows()),
        rows: Vec::new(),
        proposals: RowMatrix::zeros(0, rows.n_cols()),
    };
    let capped = facilities.n_rows() >= k_max;
    for (i, x) in rows.rows().enumerate() {
        let near = nearest(x, facilities);
        let d2 = near.map_or(f64::INFINITY, |(_, d)| d);
        match near {
            Some((k, _)) if capped || !ofl_opens(ofl_uniform(seed, first + i), d2, penalty) => {
                out.labels.push(Some(k));
            }
            _ => {
                out.labels.push(None);
                out.rows.push(first + i);
                out.proposals.push_row(x);
            }
        }
    }
    out
}

/// The serial validation of one epoch's proposals (each block's proposing rows and their
/// global indices, in block order) against the `facilities` of the epoch's start.
pub fn ofl_validate(
    proposals: &[(MatrixView<'_>, &[usize])],
    facilities: MatrixView<'_>,
    penalty: f64,
    seed: u64,
    k_max: usize,
) -> DpValidation {
    let k0 = facilities.n_rows();
    let mut accepted = RowMatrix::zeros(0, facilities.n_cols());
    let mut labels = Vec::with_capacity(proposals.len());
    for (block, rows) in proposals {
        let mut out = Vec::with_capacity(block.n_rows());
        for (x, &row) in block.rows().zip(rows.iter()) {
            // The nearest of all facilities so far: the old ones first, so ties go to the
            // lowest index, as a serial scan over them in index order gives.
            let old = nearest(x, facilities);
            let new = nearest(x, accepted.view()).map(|(k, d)| (k0 + k, d));
            let near = match (old, new) {
                (Some(o), Some(n)) => Some(if n.1 < o.1 { n } else { o }),
                (o, n) => o.or(n),
            };
            let d2 = near.map_or(f64::INFINITY, |(_, d)| d);
            let room = k0 + accepted.n_rows() < k_max;
            let label = match near {
                Some((k, _)) if !room || !ofl_opens(ofl_uniform(seed, row), d2, penalty) => k,
                _ => {
                    accepted.push_row(x);
                    k0 + accepted.n_rows() - 1
                }
            };
            out.push(label);
        }
        labels.push(out);
    }
    DpValidation { accepted, labels }
}

/// Entry point: `OccOfl::params(penalty)`; also the marker of its [`OccParams`].
#[derive(Clone, Copy, Debug)]
pub struct OccOfl;

impl OccOfl {
    /// OCC online facility location with facility cost P (defaults in [`OccParams`]; OFL
    /// adds a seed and is one pass).
    pub fn params(penalty: f64) -> OccParams<OccOfl> {
        OccParams::new(penalty)
    }
}

impl OccOflValidParams {
    /// Runs OCC OFL on `x`: one pass, recording the serial-equivalent order. The model's
    /// means are the facilities (rows of X), its objective the DP-means objective at them;
    /// it reports one iteration, converged (the pass is the whole algorithm).
    pub fn fit_traced(&self, x: MatrixView<'_>) -> Result<OccFit<Clustering>, FitError> {
        check_data(x)?;
        let n = x.n_rows();
        let blocks = self.block_ranges(n)?;
        let k_max = self.k_cap();
        let mut facilities = RowMatrix::zeros(0, x.n_cols());
        let mut labels = vec![0usize; n];
        let mut order = Vec::with_capacity(n);
        let mut log = Vec::new();
        for e in 0..self.epochs(&blocks) {
            let windows = self.windows(&blocks, e);
            let steps: Vec<OflProposals> = windows
                .par_iter()
                .map(|w| {
                    ofl_propose(
                        x.rows_view(w.start, w.end),
                        w.start,
                        facilities.view(),
                        self.penalty,
                        self.seed,
                        k_max,
                    )
                })
                .collect();
            let proposals: Vec<(MatrixView<'_>, &[usize])> = steps
                .iter()
                .map(|s| (s.proposals.view(), s.rows.as_slice()))
                .collect();
            let v = ofl_validate(
                &proposals,
                facilities.view(),
                self.penalty,
                self.seed,
                k_max,
            );
            for (w, step) in windows.iter().zip(&steps) {
                for (i, l) in w.clone().zip(&step.labels) {
                    if let Some(k) = l {
                        labels[i] = *k;
                        order.push(i);
                    }
                }
            }
            for (step, resolved) in steps.iter().zip(&v.labels) {
                for (&i, &k) in step.rows.iter().zip(resolved) {
                    labels[i] = k;
                    order.push(i);
                }
            }
            log.push((v.labels.iter().map(Vec::len).sum(), v.accepted.n_rows()));
            for f in v.accepted.rows() {
                facilities.push_row(f);
            }
        }
        let objective = block_objective(x, &blocks, &labels, &facilities, self.penalty);
        let run = ClusterRun {
            labels,
            means: facilities,
            objective,
            n_iter: 1,
            converged: true,
            trace: vec![objective],
        };
        Ok(OccFit {
            model: Clustering::from_best(Best {
                best: run,
                best_run: 0,
                run_objectives: vec![objective],
            }),
            occ: OccTrace {
                orders: vec![order],
                epochs: vec![log],
            },
        })
    }
}
