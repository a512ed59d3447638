//! The result of every clustering algorithm: labels, means, objective and how the runs went.

use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::center::centred_on_means;
use crate::error::FitError;
use crate::features::BinaryMatrix;
use crate::linalg::{nearest_rows, row_sq_norms, sq_dist};
use crate::model::{Model, Stop, check_new_rows};
use crate::restarts::{Best, RunOutcome};

/// What one run of a clustering algorithm returns.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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

    /// Index of the winning restart.
    pub fn best_run(&self) -> usize {
        self.best_run
    }

    /// Final objective of every restart, in restart order. When DP-means refines only the best
    /// restarts (more than [`LARGE_DATA_REFINED`](crate::clustering::dp_means::LARGE_DATA_REFINED)
    /// of them on data above [`REFINE_EVERY_RUN_MAX_VALUES`](crate::clustering::dp_means::REFINE_EVERY_RUN_MAX_VALUES)
    /// values), the refined runs' entries are their refined objectives and the others' those
    /// of the paper's algorithm.
    pub fn run_objectives(&self) -> &[f64] {
        &self.run_objectives
    }

    /// The nearest mean of each row of `x` (Euclidean; ties to the lowest index).
    ///
    /// Fails when `x` does not have the model's number of columns or holds a non-finite value.
    pub fn predict(&self, x: MatrixView<'_>) -> Result<Vec<usize>, FitError> {
        nearest_means(x, &self.run.means)
    }

    /// Squared distance of each row of `x` to each mean (`N × K`).
    ///
    /// Fails when `x` does not have the model's number of columns or holds a non-finite value.
    pub fn transform(&self, x: &RowMatrix) -> Result<RowMatrix, FitError> {
        squared_distances(x.view(), &self.run.means)
    }
}

impl Model for Clustering {
    fn z(&self) -> BinaryMatrix {
        BinaryMatrix::one_hot(&self.run.labels, self.k())
    }

    /// Cluster means, one row per cluster.
    fn means(&self) -> &RowMatrix {
        &self.run.means
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

    /// One-hot [`predict`](Clustering::predict).
    fn predict_z(&self, x: MatrixView<'_>) -> Result<BinaryMatrix, FitError> {
        Ok(BinaryMatrix::one_hot(&self.predict(x)?, self.k()))
    }
}

/// The nearest of `means` (`K × D`) to each row of `x` (Euclidean; ties to the lowest index):
/// what [`Clustering::predict`] does, for means kept elsewhere (e.g. a saved model's arrays).
///
/// Fails when `x` does not have D columns or holds a non-finite value.
pub fn nearest_means(x: MatrixView<'_>, means: &RowMatrix) -> Result<Vec<usize>, FitError> {
    check_new_rows(x, means.n_cols())?;
    if means.n_rows() == 0 {
        return Err(FitError::Shape(
            "there are no means to choose from; give at least one".into(),
        ));
    }
    if x.n_rows() == 0 {
        return Ok(Vec::new());
    }
    // Far from the origin the GEMM distances cancel; translate data and means together.
    let nearest = match centred_on_means(x, means) {
        Some((xc, mc)) => nearest_rows(
            xc.view(),
            &row_sq_norms(xc.view()),
            &mc,
            &row_sq_norms(mc.view()),
        ),
        None => nearest_rows(x, &row_sq_norms(x), means, &row_sq_norms(means.view())),
    };
    Ok(nearest.into_iter().map(|nr| nr.label).collect())
}

/// Squared Euclidean distance of each row of `x` to each of `means` (`N × K`), as
/// [`Clustering::transform`].
///
/// Fails when `x` does not have D columns or holds a non-finite value.
pub fn squared_distances(x: MatrixView<'_>, means: &RowMatrix) -> Result<RowMatrix, FitError> {
    check_new_rows(x, means.n_cols())?;
    let k = means.n_rows();
    let mut out = RowMatrix::zeros(x.n_rows(), k);
    for n in 0..x.n_rows() {
        for j in 0..k {
            out.row_mut(n)[j] = sq_dist(x.row(n), means.row(j));
        }
    }
    Ok(out)
}
