//! Mahalanobis clustering (MAD-Bayes, Broderick, Kulis & Jordan 2013, Supplementary
//! Material E): K-means with a covariance per cluster, the small-variance limit of a Gaussian
//! mixture with inverse-Wishart priors on the covariances.
//!
//! # Objective
//!
//! The paper's limit (the last display of Sup. Mat. E) is
//! Σ_k [ Σ_{n: c_n = k} (x_n − a_k)ᵀ Σ_k⁻¹ (x_n − a_k) + P log det Σ_k ] with P = λ².
//! For fixed labels its minimiser is Σ_k = S_k/P (S_k the cluster's scatter), where the
//! cluster costs P·D + P log det(S_k/P): the objective is **unbounded below** as soon as a
//! cluster's scatter is singular (D or fewer points, duplicates, or points on a hyperplane).
//! This module therefore minimises, with K fixed,
//!
//! J(c, a, Σ) = Σ_k [ Σ_{n: c_n = k} (x_n − a_k)ᵀ Σ_k⁻¹ (x_n − a_k) + tr(Φ Σ_k⁻¹) + P log det Σ_k ]
//!
//! under two guards:
//!
//! 1. **The inverse-Wishart scale term** tr(ΦΣ_k⁻¹) of the prior (dropped by the paper's
//!    limit) is kept, with Φ = φ·I and φ = `reg` × (mean column variance of X) (default
//!    `reg` = 1e-3; [`mahalanobis_phi`]). Then Σ_k = (S_k + Φ)/P is the exact minimiser for
//!    fixed labels, the profile objective is J*(c) = Σ_k [P·D + P log det((S_k + Φ)/P)]
//!    ([`mahalanobis_profile_objective`]), and J is bounded below by K·P·(D + D log(φ/P)).
//! 2. **A minimum cluster size**: every cluster keeps more than D rows, so N ≥ K·(D + 1) is
//!    required ([`FitError::TooFewRows`](crate::FitError::TooFewRows) otherwise), and an
//!    assignment moves a row only if its cluster keeps more than D rows. With `reg` = 0 this
//!    is the only guard left; a run that would reach a singular Σ_k stops before it, and a run
//!    seeded on one is discarded (objective +∞).
//!
//! # Algorithm
//!
//! Seeding: k-means++ and a few Lloyd iterations ([`SEED_LLOYD_STEPS`]), then clusters with D
//! or fewer rows are filled with the nearest rows of larger clusters. Then alternate (i) a
//! constrained assignment pass, in row order, to the nearest cluster in Mahalanobis distance
//! against fixed a, Σ (the other terms of J do not depend on the labels) and (ii) exact
//! re-estimation a_k = x̄_k, Σ_k = (S_k + Φ)/P (Cholesky; log det from its diagonal). When
//! (i) moves nothing, the single row move, or else the exchange of a row of a cluster at the
//! minimum size with a row of another cluster, that lowers J* most is made, its change
//! computed exactly by the matrix determinant lemma from Mahalanobis distances and whitened
//! residuals (the alternation alone is myopic for small clusters, whose Σ_k moves a lot with
//! one row). Every step lowers J, so the trace is non-increasing; a run stops when no step
//! finds a move ([`mahalanobis_run`]). Cost per iteration O(N·K·D² + K·D³), plus O(N·D²) per
//! cluster at the minimum size when the exchange step runs. The best of R restarts
//! ([`best_of_runs`]) is returned, with a result independent of the thread count.
//!
//! # Units and the penalty
//!
//! Because φ scales with the data, rescaling X by c multiplies every S_k + Φ by c², so
//! J* gains exactly 2·D·P·log c per cluster (2·K·D·P·log c in all) and the minimising labels
//! do not change. Likewise J*(c) = P·[K·D·(1 − log P) + Σ_k log det(S_k + Φ)]: for fixed K
//! the penalty only scales and shifts the objective and does not change which labelling is
//! best.
//!
//! # Caveat: the objective favours small clusters
//!
//! The log det term is charged once per cluster on the scatter S_k, which grows with the
//! cluster's size, so J* rewards K − 1 tight clusters of the minimum D + 1 rows next to one
//! large cluster. On 20 000 rows from 8 well-separated Gaussian groups (D = 5) every `reg` in
//! {1e-3, 0.1, 1} gives exactly that, with J* far below that of the true groups (test
//! `timing_and_recovery_on_synthetic_groups`, ignored by default). This is the objective's
//! behaviour, not a search failure; do not expect Mahalanobis clustering to recover groups.
//!
//! ```
//! use madbayes::{Fit, Model, RowMatrix, clustering::Mahalanobis};
//! // A round blob and an elongated one.
//! let mut rows = Vec::new();
//! for i in 0..12 {
//!     let t = i as f64;
//!     rows.push([(t * 1.7).sin(), (t * 2.3).cos()]);
//!     rows.push([10.0 + 4.0 * (t * 0.9).sin(), 0.1 * (t * 1.3).cos()]);
//! }
//! let x = RowMatrix::from_rows(&rows);
//! let fit = Mahalanobis::params(2, 1.0).restarts(4).check()?.fit(&x)?;
//! assert_eq!(fit.k(), 2);
//! for n in (0..24).step_by(2) {
//!     assert_eq!(fit.labels()[n], fit.labels()[0]);
//!     assert_ne!(fit.labels()[n + 1], fit.labels()[0]);
//! }
//! assert_eq!(fit.predict(x.view())?, fit.labels());
//! # Ok::<(), madbayes::FitError>(())
//! ```
//!
//! [`best_of_runs`]: crate::restarts::best_of_runs

mod chol;
mod model;
mod objective;
mod params;
mod run;

pub use model::{MahalanobisClustering, MahalanobisRun, mahalanobis_distances_to};
pub use objective::{
    mahalanobis_objective, mahalanobis_phi, mahalanobis_profile_objective, optimal_covariances,
    scatter_matrices,
};
pub use params::{
    DEFAULT_MAX_ITER, DEFAULT_RESTARTS, Mahalanobis, MahalanobisParams, MahalanobisValidParams,
};
pub use run::{SEED_LLOYD_STEPS, mahalanobis_run, seed_labels};
