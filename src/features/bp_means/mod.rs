//! BP-means and capped BP-means: minimise ‖X − Z A‖²_F + K·P over Z, A and K (MAD-Bayes
//! Eq. 6, the small-variance limit of the beta-process / IBP linear-Gaussian model; Eq. 15
//! with a cap on K). Runs are seeded by feature k-means++ ([`FeatureSeeding`]).
//!
//! ```
//! use madbayes::{Fit, Model, RowMatrix, features::{BpMeans, FeatureSeeding}};
//! // Rows are sums of two patterns: (1, 0, 0) and (0, 0, 4).
//! let x = RowMatrix::from_rows(&[
//!     [1.0, 0.0, 0.0], [0.0, 0.0, 4.0], [1.0, 0.0, 4.0], [1.0, 0.0, 0.0], [0.0, 0.0, 4.0],
//! ]);
//! let fit = BpMeans::params(0.5)
//!     .refine(true)
//!     .restarts(8)
//!     .seeding(FeatureSeeding::Residual)
//!     .seed(1)
//!     .check()?
//!     .fit(&x)?;
//! assert_eq!(fit.k(), 2);
//! assert!((fit.objective() - 2.0 * 0.5).abs() < 1e-9);
//! # Ok::<(), madbayes::FitError>(())
//! ```
//!
//! [`FeatureSeeding`]: crate::features::FeatureSeeding

mod rows;
mod sweep;

pub(crate) use sweep::{BpMeansRun, clean_columns, clean_columns_mask_from_gram};
