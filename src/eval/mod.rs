//! Evaluation shared by every algorithm: held-out rows with hidden entries, predicted from
//! what a fitted model learned, scored by squared error and Gaussian log-likelihood.

mod holdout;

pub use holdout::{
    HeldOutScore, Holdout, HoldoutError, PredictiveAverage, predict_hidden_cluster,
    predict_hidden_features,
};
