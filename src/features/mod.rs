//! The feature-allocation family of MAD-Bayes: BP-means (capped or not), collapsed BP-means,
//! K-features and stepwise K-features — by default with grown seeds and refined beyond the
//! paper (`seeding`, `refine`), or as the paper states them with `FeatureParams::plain`. Each data point may hold any number of latent features: X ≈ Z A with
//! Z ∈ {0,1}^{N×K} and feature means A ∈ ℝ^{K×D}. Every algorithm returns a
//! [`FeatureModel`]; every objective is a public function in [`objective`], and the
//! least-squares means that survive singular ZᵀZ are [`least_squares_means`].

pub mod bp_means;
pub mod collapsed;
mod dense;
pub mod k_features;
pub(crate) mod kernels;
pub mod lstsq;
mod memo;
pub mod model;
pub mod objective;
mod params;
mod refine;
mod residual;
pub mod seeding;
mod stepwise;
mod zmat;

pub use lstsq::{LeastSquares, least_squares_means};
pub use model::{EXACT_ROW_MAX_K, FeatureModel};
pub use params::{
    BpMeans, CollapsedBpMeans, DEFAULT_MAX_ITER, DEFAULT_RESTARTS, FeatureAlgo, FeatureParams,
    FeatureValidParams, KFeatures, StepwiseKFeatures,
};
pub use seeding::FeatureSeeding;
pub use zmat::BinaryMatrix;
