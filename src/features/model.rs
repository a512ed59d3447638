//! The result of every feature algorithm: Z, A, the objective and how the runs went, and the
//! assignment of features to new rows.

use super::kernels::{best_row_exact, descend_row, gram};
use super::zmat::ZMat;
use crate::RowMatrix;
use crate::linalg::{BLOCK_ROWS, axpy, for_each_block, gemm_xat};
use crate::restarts::{Best, RunOutcome};
use std::sync::Mutex;

/// Largest K for which rows are assigned by exact enumeration of all 2^K rows (above it,
/// by coordinate descent from z = 0).
pub const EXACT_ROW_MAX_K: usize = 12;

/// What one run of a feature algorithm returns.
#[derive(Clone, Debug)]
pub(crate) struct FeatureRun {
    pub z: ZMat,
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

    /// The `N × K` 0/1 feature allocation Z of the training rows.
    pub fn z(&self) -> RowMatrix {
        self.run.z.to_row_matrix()
    }

    /// The feature means A, `K × D` (for collapsed BP-means the least-squares (ZᵀZ)⁻¹ZᵀX).
    pub fn a(&self) -> &RowMatrix {
        &self.run.a
    }

    /// Number of features K.
    pub fn k(&self) -> usize {
        self.run.a.n_rows()
    }

    /// The objective of the returned Z and A, as defined for the algorithm.
    pub fn objective(&self) -> f64 {
        self.run.objective
    }

    /// Iterations (sweeps) of the winning run.
    pub fn n_iter(&self) -> usize {
        self.run.n_iter
    }

    /// Whether the winning run stopped because Z stopped changing.
    pub fn converged(&self) -> bool {
        self.run.converged
    }

    /// Objective after each iteration of the winning run (non-increasing).
    pub fn trace(&self) -> &[f64] {
        &self.run.trace
    }

    /// Index of the winning restart.
    pub fn best_run(&self) -> usize {
        self.best_run
    }

    /// Final objective of every restart, in restart order.
    pub fn run_objectives(&self) -> &[f64] {
        &self.run_objectives
    }

    /// The best z for each row of `x` given A: argmin_z ‖x_n − z A‖² (exact for
    /// K ≤ [`EXACT_ROW_MAX_K`], coordinate descent from z = 0 above). `N × K`, 0/1.
    ///
    /// # Panics
    /// When `x` has a different number of columns than the training data.
    #[track_caller]
    pub fn predict(&self, x: &RowMatrix) -> RowMatrix {
        assert_eq!(x.n_cols(), self.run.a.n_cols(), "wrong number of columns");
        assign_rows(x, &self.run.a).to_row_matrix()
    }

    /// The reconstruction Z A of each row of `x`, with Z from [`predict`](Self::predict).
    #[track_caller]
    pub fn transform(&self, x: &RowMatrix) -> RowMatrix {
        let z = self.predict(x);
        let mut out = RowMatrix::zeros(x.n_rows(), x.n_cols());
        for n in 0..x.n_rows() {
            for k in 0..self.k() {
                if z.row(n)[k] != 0.0 {
                    axpy(1.0, self.run.a.row(k), out.row_mut(n));
                }
            }
        }
        out
    }
}

/// The best row of Z for every row of `x` given `a`, in parallel over row blocks (each row
/// alone, so the result does not depend on the thread count).
pub(crate) fn assign_rows(x: &RowMatrix, a: &RowMatrix) -> ZMat {
    let (n, k) = (x.n_rows(), a.n_rows());
    let gm = gram(a);
    let out = Mutex::new(ZMat::zeros(n, k));
    for_each_block(n, BLOCK_ROWS, |_, s, e| {
        let b = e - s;
        let mut g = vec![0.0; b * k];
        gemm_xat(&mut g, x.rows_slice(s, e), b, a);
        let mut rows = vec![0u8; b * k];
        for i in 0..b {
            let zi = &mut rows[i * k..(i + 1) * k];
            let gi = &g[i * k..(i + 1) * k];
            if k <= EXACT_ROW_MAX_K {
                best_row_exact(gi, &gm, zi);
            } else {
                descend_row(zi, gi, &gm, 4 * k + 8);
            }
        }
        let mut z = out.lock().expect("no panics while holding the lock");
        for i in 0..b {
            z.row_mut(s + i).copy_from_slice(&rows[i * k..(i + 1) * k]);
        }
    });
    out.into_inner().expect("no panics while holding the lock")
}
