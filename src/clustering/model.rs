//! The result of every clustering algorithm: labels, means, objective and how the runs went.

use crate::RowMatrix;
use crate::clustering::center::centred_on_means;
use crate::linalg::{nearest_rows, row_sq_norms, sq_dist};
use crate::restarts::{Best, RunOutcome};

/// What one run of a clustering algorithm returns.
#[derive(Clone, Debug)]
pub struct ClusterRun {
    /// Label of each row, in `0..K`.
    pub labels: Vec<usize>,
    /// Cluster means, `K × D`.
    pub means: RowMatrix,
    /// The algorithm's objective at (labels, means), recomputed from them.
    pub objective: f64,
    /// Iterations (sweeps) performed.
    pub n_iter: usize,
    /// Whether the run stopped because nothing changed (not because of `max_iter`).
    pub converged: bool,
    /// The objective after each iteration (non-increasing).
    pub trace: Vec<f64>,
}

impl RunOutcome for ClusterRun {
    fn objective(&self) -> f64 {
        self.objective
    }
}

/// A fitted clustering: the best of the restarts, with the objective of every restart.
#[derive(Clone, Debug)]
pub struct Clustering {
    run: ClusterRun,
    best_run: usize,
    run_objectives: Vec<f64>,
}

impl Clustering {
    pub(crate) fn from_best(best: Best<ClusterRun>) -> Self {
        Self {
            run: best.best,
            best_run: best.best_run,
            run_objectives: best.run_objectives,
        }
    }

    /// Label of each training row, in `0..k()`.
    pub fn labels(&self) -> &[usize] {
        &self.run.labels
    }

    /// Cluster means, one row per cluster.
    pub fn means(&self) -> &RowMatrix {
        &self.run.means
    }

    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.run.means.n_rows()
    }

    /// The objective of the returned labels and means (as defined for the algorithm).
    pub fn objective(&self) -> f64 {
        self.run.objective
    }

    /// Iterations of the winning run.
    pub fn n_iter(&self) -> usize {
        self.run.n_iter
    }

    /// Whether the winning run converged (rather than hitting the iteration cap).
    pub fn converged(&self) -> bool {
        self.run.converged
    }

    /// Objective after each iteration of the winning run.
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

    /// The one-hot `N × K` assignment matrix Z of the training rows.
    pub fn z(&self) -> RowMatrix {
        one_hot(&self.run.labels, self.k())
    }

    /// The nearest mean of each row of `x` (Euclidean).
    ///
    /// # Panics
    /// When `x` has a different number of columns than the training data.
    #[track_caller]
    pub fn predict(&self, x: &RowMatrix) -> Vec<usize> {
        assert_eq!(
            x.n_cols(),
            self.run.means.n_cols(),
            "wrong number of columns"
        );
        // Far from the origin the GEMM distances cancel; translate data and means together.
        let means = &self.run.means;
        let nearest = match centred_on_means(x, means) {
            Some((xc, mc)) => nearest_rows(&xc, &row_sq_norms(&xc), &mc, &row_sq_norms(&mc)),
            None => nearest_rows(x, &row_sq_norms(x), means, &row_sq_norms(means)),
        };
        nearest.into_iter().map(|nr| nr.label).collect()
    }

    /// Squared distance of each row of `x` to each mean (`N × K`).
    #[track_caller]
    pub fn transform(&self, x: &RowMatrix) -> RowMatrix {
        assert_eq!(
            x.n_cols(),
            self.run.means.n_cols(),
            "wrong number of columns"
        );
        let k = self.k();
        let mut out = RowMatrix::zeros(x.n_rows(), k);
        for n in 0..x.n_rows() {
            for j in 0..k {
                out.row_mut(n)[j] = sq_dist(x.row(n), self.run.means.row(j));
            }
        }
        out
    }
}

/// The one-hot `N × K` matrix of a labelling.
pub fn one_hot(labels: &[usize], k: usize) -> RowMatrix {
    let mut z = RowMatrix::zeros(labels.len(), k);
    for (n, &c) in labels.iter().enumerate() {
        z.row_mut(n)[c] = 1.0;
    }
    z
}
