//! The result of every feature algorithm: Z, A, the objective and how the runs went, and the
//! assignment of features to new rows.

use super::kernels::{GRAY_TABLE_MAX_K, GraySteps, descend_row, gram};

// Every K searched exactly here has a Gray-step table.
const _: () = assert!(EXACT_ROW_MAX_K <= GRAY_TABLE_MAX_K);
use super::zmat::BinaryMatrix;
use crate::MatrixView;
use crate::RowMatrix;
use crate::error::FitError;
use crate::linalg::{BLOCK_ROWS, for_each_block, gemm_xat};
use crate::model::{Model, Stop, check_new_rows};
use crate::restarts::{Best, RunOutcome};
use std::sync::Mutex;

/// Largest K for which rows are assigned by exact enumeration of all 2^K rows (above it,
/// by coordinate descent from z = 0).
pub const EXACT_ROW_MAX_K: usize = 12;

/// What one run of a feature algorithm returns.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Debug)]
pub(crate) struct FeatureRun {
    pub z: BinaryMatrix,
    pub a: RowMatrix,
    /// The algorithm's objective at (Z, A), recomputed from them.
    pub objective: f64,
    pub n_iter: usize,
    pub converged: bool,
    pub trace: Vec<f64>,
}

impl RunOutcome for FeatureRun {
    fn objective(&self) -> f64 {
        self.objective
    }
}

/// A fitted feature allocation: the best of the restarts, with the objective of every
/// restart.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Debug)]
pub struct FeatureModel {
    run: FeatureRun,
    best_run: usize,
    run_objectives: Vec<f64>,
    objective_by_k: Vec<f64>,
}

impl FeatureModel {
    pub(crate) fn from_best(best: Best<FeatureRun>) -> Self {
        Self {
            run: best.best,
            best_run: best.best_run,
            run_objectives: best.run_objectives,
            objective_by_k: Vec::new(),
        }
    }

    pub(crate) fn from_parts(run: FeatureRun, best_run: usize, run_objectives: Vec<f64>) -> Self {
        Self {
            run,
            best_run,
            run_objectives,
            objective_by_k: Vec::new(),
        }
    }

    pub(crate) fn with_objective_by_k(mut self, by_k: Vec<f64>) -> Self {
        self.objective_by_k = by_k;
        self
    }

    /// Stepwise K-features only: E(K) = best BP-means objective at K = 1, 2, … as tried (the
    /// last entry is the increase that stopped the search, unless K_max was reached). Empty
    /// for the other algorithms.
    pub fn objective_by_k(&self) -> &[f64] {
        &self.objective_by_k
    }

    /// Index of the winning restart.
    pub fn best_run(&self) -> usize {
        self.best_run
    }

    /// Final objective of every restart, in restart order.
    pub fn run_objectives(&self) -> &[f64] {
        &self.run_objectives
    }
}

impl Model for FeatureModel {
    fn z(&self) -> BinaryMatrix {
        self.run.z.clone()
    }

    /// The feature means A, `K × D` (for collapsed BP-means the least-squares (ZᵀZ)⁻¹ZᵀX).
    fn means(&self) -> &RowMatrix {
        &self.run.a
    }

    fn objective(&self) -> f64 {
        self.run.objective
    }

    fn trace(&self) -> &[f64] {
        &self.run.trace
    }

    fn n_iter(&self) -> usize {
        self.run.n_iter
    }

    fn stop(&self) -> Stop {
        if self.run.converged {
            Stop::Converged
        } else {
            Stop::IterationCap
        }
    }

    /// The best z for each row of `x` given A: argmin_z ‖x_n − z A‖² (exact for
    /// K ≤ [`EXACT_ROW_MAX_K`], coordinate descent from z = 0 above).
    fn predict_z(&self, x: MatrixView<'_>) -> Result<BinaryMatrix, FitError> {
        check_new_rows(x, self.run.a.n_cols())?;
        Ok(assign_rows(x, &self.run.a))
    }
}

/// The best row of Z for every row of `x` given `a`, in parallel over row blocks (each row
/// alone, so the result does not depend on the thread count).
pub(crate) fn assign_rows(x: MatrixView<'_>, a: &RowMatrix) -> BinaryMatrix {
    assign_rows_shifted(x, a, None)
}

/// [`assign_rows`] for the cost ‖x_n − z A‖² − 2 Σ_k z_k s_k: each row's g = A x_n is shifted
/// by `shift` (s) before its z is chosen. A shift s_k = σ² logit(p_k) makes the chosen z the
/// most probable one under Gaussian noise of variance σ² and independent priors P(z_k = 1) = p_k.
pub(crate) fn assign_rows_shifted(
    x: MatrixView<'_>,
    a: &RowMatrix,
    shift: Option<&[f64]>,
) -> BinaryMatrix {
    let (n, k) = (x.n_rows(), a.n_rows());
    let gm = gram(a);
    // The row-independent half of the exact search, once for every row.
    let table = (k <= EXACT_ROW_MAX_K).then(|| GraySteps::new(&gm, k));
    let out = Mutex::new(BinaryMatrix::zeros(n, k));
    for_each_block(n, BLOCK_ROWS, |_, s, e| {
        let b = e - s;
        let mut g = vec![0.0; b * k];
        gemm_xat(&mut g, x.rows_slice(s, e), b, a);
        if let Some(shift) = shift {
            for gi in g.chunks_exact_mut(k.max(1)) {
                gi.iter_mut().zip(shift).for_each(|(v, s)| *v += s);
            }
        }
        let mut rows = vec![0u8; b * k];
        if let Some(t) = &table {
            t.best_rows(&g, &mut rows);
        } else {
            for i in 0..b {
                let zi = &mut rows[i * k..(i + 1) * k];
                descend_row(zi, &g[i * k..(i + 1) * k], &gm, 4 * k + 8);
            }
        }
        let mut z = out.lock().expect("no panics while holding the lock");
        for i in 0..b {
            z.row_mut(s + i).copy_from_slice(&rows[i * k..(i + 1) * k]);
        }
    });
    out.into_inner().expect("no panics while holding the lock")
}
