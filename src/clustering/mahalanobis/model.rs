//! The fitted Mahalanobis clustering: a [`Clustering`] plus one covariance per cluster.

use super::chol::Cholesky;
use super::run::mahalanobis_distances;
use crate::RowMatrix;
use crate::clustering::model::{ClusterRun, Clustering};
use crate::restarts::{Best, RunOutcome};

/// What one run returns: labels, means, objective and trace, and the K covariances.
#[derive(Clone, Debug)]
pub struct MahalanobisRun {
    /// Labels, means, objective J (recomputed from the state), iterations and trace.
    pub run: ClusterRun,
    /// Σ_k = (S_k + Φ)/P of each cluster, `D × D`.
    pub covariances: Vec<RowMatrix>,
}

impl RunOutcome for MahalanobisRun {
    fn objective(&self) -> f64 {
        self.run.objective
    }
}

/// A fitted Mahalanobis clustering: the best of the restarts.
#[derive(Clone, Debug)]
pub struct MahalanobisClustering {
    clustering: Clustering,
    covariances: Vec<RowMatrix>,
    chols: Vec<Cholesky>,
    penalty: f64,
    phi: f64,
}

impl MahalanobisClustering {
    /// Wraps the winner of [`best_of_runs`](crate::restarts::best_of_runs); `None` when its
    /// covariances are not positive definite (no valid run).
    pub(crate) fn from_best(best: Best<MahalanobisRun>, penalty: f64, phi: f64) -> Option<Self> {
        let Best {
            best: MahalanobisRun { run, covariances },
            best_run,
            run_objectives,
        } = best;
        if !run.objective.is_finite() {
            return None;
        }
        let d = run.means.n_cols();
        let chols = covariances
            .iter()
            .map(|s| Cholesky::factor(s.as_slice(), d))
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            clustering: Clustering::from_best(Best {
                best: run,
                best_run,
                run_objectives,
            }),
            covariances,
            chols,
            penalty,
            phi,
        })
    }

    /// Labels, means, objective, trace and restart record as a [`Clustering`].
    pub fn clustering(&self) -> &Clustering {
        &self.clustering
    }

    /// Label of each training row, in `0..k()`.
    pub fn labels(&self) -> &[usize] {
        self.clustering.labels()
    }

    /// Cluster means a_k, one row per cluster.
    pub fn means(&self) -> &RowMatrix {
        self.clustering.means()
    }

    /// Covariances Σ_k = (S_k + Φ)/P, one `D × D` matrix per cluster.
    pub fn covariances(&self) -> &[RowMatrix] {
        &self.covariances
    }

    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.clustering.k()
    }

    /// The objective J of the returned labels, means and covariances
    /// ([`mahalanobis_objective`](super::mahalanobis_objective)).
    pub fn objective(&self) -> f64 {
        self.clustering.objective()
    }

    /// The penalty P = λ².
    pub fn penalty(&self) -> f64 {
        self.penalty
    }

    /// φ of the scale matrix Φ = φ·I that was used (`reg` × mean column variance).
    pub fn phi(&self) -> f64 {
        self.phi
    }

    /// Iterations of the winning run.
    pub fn n_iter(&self) -> usize {
        self.clustering.n_iter()
    }

    /// Whether the winning run stopped because nothing could move.
    pub fn converged(&self) -> bool {
        self.clustering.converged()
    }

    /// Profile objective after each iteration of the winning run (non-increasing).
    pub fn trace(&self) -> &[f64] {
        self.clustering.trace()
    }

    /// Final objective of every restart, in restart order (+∞ for a run whose seed was
    /// singular, possible only with `reg = 0`).
    pub fn run_objectives(&self) -> &[f64] {
        self.clustering.run_objectives()
    }

    /// The cluster of smallest squared Mahalanobis distance (x − a_k)ᵀ Σ_k⁻¹ (x − a_k) for
    /// each row of `x` (ties to the lowest index), as in the assignment step.
    ///
    /// # Panics
    /// When `x` has a different number of columns than the training data.
    #[track_caller]
    pub fn predict(&self, x: &RowMatrix) -> Vec<usize> {
        let t = self.transform(x);
        t.rows()
            .map(|r| {
                let mut best = 0;
                for (j, &v) in r.iter().enumerate() {
                    if v < r[best] {
                        best = j;
                    }
                }
                best
            })
            .collect()
    }

    /// Squared Mahalanobis distance of each row of `x` to each cluster (`N × K`).
    ///
    /// # Panics
    /// When `x` has a different number of columns than the training data.
    #[track_caller]
    pub fn transform(&self, x: &RowMatrix) -> RowMatrix {
        assert_eq!(x.n_cols(), self.means().n_cols(), "wrong number of columns");
        let dist = mahalanobis_distances(x, self.means(), &self.chols);
        RowMatrix::new(x.n_rows(), self.k(), dist)
    }
}
