//! The fitted Mahalanobis clustering: a [`Clustering`] plus one covariance per cluster.

use super::chol::Cholesky;
use super::run::mahalanobis_distances;
use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::model::{ClusterRun, Clustering};
use crate::error::FitError;
use crate::features::BinaryMatrix;
use crate::model::{Model, Stop, check_new_rows};
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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(
        try_from = "crate::serde_forms::MahalanobisForm",
        into = "crate::serde_forms::MahalanobisForm"
    )
)]
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
        let clustering = Clustering::from_best(Best {
            best: run,
            best_run,
            run_objectives,
        });
        Self::from_parts(clustering, covariances, penalty, phi).ok()
    }

    /// Rebuilds a model from its parts, factoring each covariance; fails when the shapes
    /// disagree or a covariance is not positive definite.
    pub(crate) fn from_parts(
        clustering: Clustering,
        covariances: Vec<RowMatrix>,
        penalty: f64,
        phi: f64,
    ) -> Result<Self, String> {
        let (k, d) = (clustering.means().n_rows(), clustering.means().n_cols());
        if covariances.len() != k
            || covariances
                .iter()
                .any(|c| (c.n_rows(), c.n_cols()) != (d, d))
        {
            return Err(format!(
                "a Mahalanobis model of {k} clusters in {d} dimensions needs {k} covariances of {d} × {d}"
            ));
        }
        let chols = covariances
            .iter()
            .map(|s| Cholesky::factor(s.as_slice(), d))
            .collect::<Option<Vec<_>>>()
            .ok_or("a covariance of the Mahalanobis model is not positive definite")?;
        Ok(Self {
            clustering,
            covariances,
            chols,
            penalty,
            phi,
        })
    }

    /// The parts [`from_parts`](Self::from_parts) takes.
    #[cfg(feature = "serde")]
    pub(crate) fn into_parts(self) -> (Clustering, Vec<RowMatrix>, f64, f64) {
        (self.clustering, self.covariances, self.penalty, self.phi)
    }

    /// Labels, means, objective, trace and restart record as a [`Clustering`].
    pub fn clustering(&self) -> &Clustering {
        &self.clustering
    }

    /// Label of each training row, in `0..k()`.
    pub fn labels(&self) -> &[usize] {
        self.clustering.labels()
    }

    /// Covariances Σ_k = (S_k + Φ)/P, one `D × D` matrix per cluster.
    pub fn covariances(&self) -> &[RowMatrix] {
        &self.covariances
    }

    /// The penalty P = λ².
    pub fn penalty(&self) -> f64 {
        self.penalty
    }

    /// φ of the scale matrix Φ = φ·I that was used (`reg` × mean column variance).
    pub fn phi(&self) -> f64 {
        self.phi
    }

    /// Final objective of every restart, in restart order (+∞ for a run whose seed was
    /// singular, possible only with `reg = 0`).
    pub fn run_objectives(&self) -> &[f64] {
        self.clustering.run_objectives()
    }

    /// The cluster of smallest squared Mahalanobis distance (x − a_k)ᵀ Σ_k⁻¹ (x − a_k) for
    /// each row of `x` (ties to the lowest index), as in the assignment step.
    ///
    /// Fails when `x` does not have the model's number of columns or holds a non-finite value.
    pub fn predict(&self, x: MatrixView<'_>) -> Result<Vec<usize>, FitError> {
        let t = self.transform(x)?;
        Ok(t.rows()
            .map(|r| {
                let mut best = 0;
                for (j, &v) in r.iter().enumerate() {
                    if v < r[best] {
                        best = j;
                    }
                }
                best
            })
            .collect())
    }

    /// Squared Mahalanobis distance of each row of `x` to each cluster (`N × K`).
    ///
    /// Fails when `x` does not have the model's number of columns or holds a non-finite value.
    pub fn transform(&self, x: MatrixView<'_>) -> Result<RowMatrix, FitError> {
        check_new_rows(x, self.means().n_cols())?;
        let dist = mahalanobis_distances(x, self.means(), &self.chols);
        Ok(RowMatrix::new(x.n_rows(), self.k(), dist))
    }
}

impl Model for MahalanobisClustering {
    fn z(&self) -> BinaryMatrix {
        self.clustering.z()
    }

    /// Cluster means a_k, one row per cluster.
    fn means(&self) -> &RowMatrix {
        self.clustering.means()
    }

    /// The objective J of the returned labels, means and covariances
    /// ([`mahalanobis_objective`](super::mahalanobis_objective)).
    fn objective(&self) -> f64 {
        self.clustering.objective()
    }

    /// Profile objective after each iteration of the winning run (non-increasing).
    fn trace(&self) -> &[f64] {
        self.clustering.trace()
    }

    fn n_iter(&self) -> usize {
        self.clustering.n_iter()
    }

    fn stop(&self) -> Stop {
        self.clustering.stop()
    }

    /// One-hot [`predict`](MahalanobisClustering::predict).
    fn predict_z(&self, x: MatrixView<'_>) -> Result<BinaryMatrix, FitError> {
        Ok(BinaryMatrix::one_hot(&self.predict(x)?, self.k()))
    }
}

/// Squared Mahalanobis distance (x − a_k)ᵀ Σ_k⁻¹ (x − a_k) of each row of `x` to each cluster
/// (`N × K`), from the means (`K × D`) and covariances (K matrices `D × D`) alone: what
/// [`MahalanobisClustering::transform`] does, for a model kept as arrays.
///
/// Fails when the shapes disagree, a covariance is not positive definite, or `x` does not
/// have D columns or holds a non-finite value.
pub fn mahalanobis_distances_to(
    x: MatrixView<'_>,
    means: &RowMatrix,
    covariances: &[RowMatrix],
) -> Result<RowMatrix, FitError> {
    let (k, d) = (means.n_rows(), means.n_cols());
    if covariances.len() != k
        || covariances
            .iter()
            .any(|c| (c.n_rows(), c.n_cols()) != (d, d))
    {
        return Err(FitError::Shape(format!(
            "{k} means of {d} columns need {k} covariances of {d} × {d}; got {}",
            covariances.len()
        )));
    }
    check_new_rows(x, d)?;
    let chols = covariances
        .iter()
        .map(|s| Cholesky::factor(s.as_slice(), d))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            FitError::Degenerate(
                "a covariance is not positive definite; give symmetric positive definite matrices"
                    .into(),
            )
        })?;
    let dist = mahalanobis_distances(x, means, &chols);
    Ok(RowMatrix::new(x.n_rows(), k, dist))
}
