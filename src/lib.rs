//! # madbayes
//!
//! Hard-assignment Bayesian nonparametrics after MAD-Bayes (Broderick, Kulis & Jordan, ICML
//! 2013): small-variance asymptotics turn Dirichlet- and beta-process models into
//! K-means-like objectives, fast to optimise. This crate implements the clustering family —
//! K-means, DP-means, capped DP-means, collapsed DP-means, Mahalanobis clustering — on a
//! dense row-major `f64` matrix ([`RowMatrix`]), with random restarts in parallel whose
//! result does not depend on the number of threads.
//!
//! Every algorithm follows the same flow: `Algo::params(..)` (a builder with documented
//! defaults) → `.check()` (rules that hold for any data) → `.fit(&x)` (rules that depend on
//! the data, then the runs) → a model with getters.

pub mod clustering;
pub mod error;
pub mod eval;
pub mod experiments;
pub mod features;
pub mod from_arrays;
pub mod generate;
pub mod ibp;
pub mod io;
pub mod linalg;
pub mod matrix;
pub mod metrics;
pub mod model;
pub mod occ;
#[cfg(test)]
mod params_readback;
pub mod pca;
pub mod penalty;
#[cfg(feature = "images")]
pub mod plot;
pub mod restarts;
#[cfg(feature = "serde")]
mod serde_forms;

pub use error::{FitError, ParamError};
pub use features::BinaryMatrix;
pub use matrix::{MatrixView, RowMatrix};
pub use model::{Fit, Model, Stop};

/// The README's code examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
