//! The clustering family of MAD-Bayes: K-means, DP-means (capped or not), collapsed
//! DP-means and Mahalanobis clustering. Every algorithm returns a [`Clustering`]; every
//! objective is a public function in [`objective`], so any labelling can be scored.

mod center;
pub mod collapsed_dp_means;
pub mod dp_means;
pub mod kmeans;
pub mod mahalanobis;
mod mean_shifts;
pub mod model;
pub mod objective;

pub use dp_means::{CollapsedDpMeans, DpMeans, DpMeansParams, DpMeansValidParams, DpVariant};
pub use kmeans::{KMeans, KMeansParams, KMeansValidParams};
pub use mahalanobis::{
    Mahalanobis, MahalanobisClustering, MahalanobisParams, MahalanobisValidParams,
    mahalanobis_distances_to, mahalanobis_objective, mahalanobis_profile_objective,
};
pub use model::{ClusterRun, Clustering, nearest_means, squared_distances};
