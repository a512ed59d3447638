//! Evaluation shared by every algorithm: held-out rows with hidden entries, predicted from
//! what a fitted model learned, scored by squared error and Gaussian log-likelihood; and the
//! effective sample size of a sampler's chains.

mod diagnostics;
mod ess;
mod holdout;
mod missing;

pub use diagnostics::{Diagnostics, RHAT_THRESHOLD, diagnostics, normal_cdf, normal_quantile};
pub use ess::{effective_sample_size, gelman_effective_sample_size};
pub use missing::{HiddenEntries, MissingError};

pub use holdout::{
    FeaturePredictor, HeldOutScore, Holdout, HoldoutError, PredictiveAverage,
    predict_hidden_cluster, predict_hidden_features,
};
