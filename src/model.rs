//! The contract every algorithm keeps, whatever its family: checked parameters that [`Fit`]
//! data, and a fitted [`Model`] with the same questions answered the same way.
//!
//! ```
//! use madbayes::{Fit, Model, RowMatrix, Stop};
//! use madbayes::clustering::DpMeans;
//! use madbayes::features::BpMeans;
//!
//! /// Works for every algorithm: clusterings, feature allocations and the IBP methods.
//! fn describe(model: &impl Model) -> String {
//!     format!("K = {}, objective = {:.3}, {} iterations", model.k(), model.objective(), model.n_iter())
//! }
//!
//! let x = RowMatrix::from_rows(&[[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.1]]);
//! let clusters = DpMeans::params(1.0).check()?.fit(&x)?;
//! let features = BpMeans::params(1.0).check()?.fit(&x)?;
//! assert_eq!(clusters.k(), 2);
//! assert_eq!(clusters.stop(), Stop::Converged);
//! println!("{}\n{}", describe(&clusters), describe(&features));
//! // Z of new rows: one-hot for a clustering, any number of ones for features.
//! let z = clusters.predict_z(RowMatrix::from_rows(&[[4.9, 5.0]]).view())?;
//! assert_eq!(z.row(0), &[0, 1]);
//! # Ok::<(), madbayes::FitError>(())
//! ```

use crate::error::FitError;
use crate::features::BinaryMatrix;
use crate::linalg::axpy;
use crate::restarts::Observer;
use crate::{MatrixView, RowMatrix};

/// Why the returned run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Stop {
    /// The algorithm's own test passed: a sweep changed nothing, so the run sits at a fixed
    /// point of its moves (a local minimum of its objective for the hard-assignment methods).
    Converged,
    /// The iteration cap (`max_iter`) was reached before the run converged.
    IterationCap,
    /// A Markov chain ran the number of sweeps it was asked for. A chain has no fixed point:
    /// whether it has mixed is a question for diagnostics across chains, not a stopping rule.
    Sweeps,
}

impl Stop {
    /// The name written in result files: `converged`, `iteration_cap` or `sweeps`.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Converged => "converged",
            Stop::IterationCap => "iteration_cap",
            Stop::Sweeps => "sweeps",
        }
    }
}

/// Checked parameters of an algorithm, ready to fit data.
///
/// Every algorithm's `…::params(..)` builder returns its parameters after `.check()` as a
/// type implementing this trait; the rules that depend on the data are checked by `fit`.
pub trait Fit {
    /// The fitted model.
    type Model: Model;

    /// Fits on `x` (one row per data point), on the current rayon pool. The result depends
    /// only on the data and the parameters (the seed among them), never on the number of
    /// threads. `x` is a `&RowMatrix` or a borrowed [`MatrixView`] of data held elsewhere
    /// (a NumPy array, a memory map): it is read in place, never copied.
    fn fit<'a>(&self, x: impl Into<MatrixView<'a>>) -> Result<Self::Model, FitError>
    where
        Self: Sized,
    {
        self.fit_observed(x.into(), &crate::restarts::Silent)
    }

    /// [`fit`](Fit::fit), reporting progress to `observer`: one unit per restart for the
    /// hard-assignment methods, one per sweep or iteration for the IBP methods.
    fn fit_observed(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<Self::Model, FitError>;
}

/// A fitted model: the answers every algorithm gives the same way.
///
/// * [`z`](Model::z) and [`means`](Model::means): X ≈ Z A for the training rows (for a
///   clustering, Z is one-hot and A holds the cluster means);
/// * [`objective`](Model::objective), [`trace`](Model::trace), [`n_iter`](Model::n_iter) and
///   [`stop`](Model::stop): what was reached and how;
/// * [`predict_z`](Model::predict_z) and [`reconstruct`](Model::reconstruct): new rows.
pub trait Model {
    /// Number of clusters or features K.
    fn k(&self) -> usize {
        self.means().n_rows()
    }

    /// Number of columns D of the data the model was fitted on.
    fn n_cols(&self) -> usize {
        self.means().n_cols()
    }

    /// The `N × K` assignment of the training rows (built on demand).
    fn z(&self) -> BinaryMatrix;

    /// The `K × D` means: cluster means, feature means A, or for the IBP methods the posterior
    /// mean of A given the final Z (MEIBP: the mean of q(A)).
    fn means(&self) -> &RowMatrix;

    /// The value the algorithm drives down, at the returned state (lower is better):
    /// the algorithm's MAD-Bayes objective as documented for it; for the IBP samplers
    /// −log p(X, Z) with A integrated out, and for MEIBP minus its evidence lower bound.
    fn objective(&self) -> f64;

    /// [`objective`](Model::objective) after each iteration the returned run kept. One entry
    /// per iteration, except in a refined run, whose trial descents that ended higher are
    /// counted in [`n_iter`](Model::n_iter) but left out here (the trace records accepted
    /// states only, so it never rises).
    fn trace(&self) -> &[f64];

    /// Iterations (sweeps) of the returned run, including a refinement's trial descents.
    fn n_iter(&self) -> usize;

    /// Why the returned run stopped.
    fn stop(&self) -> Stop;

    /// Whether the returned run converged ([`Stop::Converged`]); never true for a sampler.
    fn converged(&self) -> bool {
        self.stop() == Stop::Converged
    }

    /// The assignment of each row of `x` given the model's means: the nearest cluster (one-hot)
    /// for a clustering, the best z for a feature model. Fails when `x` does not have the
    /// model's number of columns or holds a non-finite value.
    fn predict_z(&self, x: MatrixView<'_>) -> Result<BinaryMatrix, FitError>;

    /// The model's reconstruction Z A of each row of `x`, with Z from
    /// [`predict_z`](Model::predict_z).
    fn reconstruct(&self, x: MatrixView<'_>) -> Result<RowMatrix, FitError> {
        let z = self.predict_z(x)?;
        Ok(z_times_means(&z, self.means()))
    }
}

/// Z A for a binary Z: the sum of the means each row holds.
pub(crate) fn z_times_means(z: &BinaryMatrix, means: &RowMatrix) -> RowMatrix {
    let mut out = RowMatrix::zeros(z.n_rows(), means.n_cols());
    for n in 0..z.n_rows() {
        for (k, &on) in z.row(n).iter().enumerate() {
            if on != 0 {
                axpy(1.0, means.row(k), out.row_mut(n));
            }
        }
    }
    out
}

/// Checks that new rows fit a model with `d` columns: the same width, finite values. (Empty
/// `x` is allowed: it has no rows to assign.)
pub(crate) fn check_new_rows(x: MatrixView<'_>, d: usize) -> Result<(), FitError> {
    if x.n_cols() != d {
        return Err(FitError::Shape(format!(
            "the new rows have {} columns but the model was fitted on {d}; give rows of {d} values",
            x.n_cols()
        )));
    }
    if x.n_rows() > 0 {
        crate::error::check_data(x)?;
    }
    Ok(())
}
