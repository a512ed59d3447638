//! Collapsed BP-means (MAD-Bayes Alg. 3): minimise tr(Xᵀ(I − Z(ZᵀZ)⁻¹Zᵀ)X) + K·P (Eq. 10)
//! over Z and K, A integrated out (it is always the least-squares Â = (ZᵀZ)⁻¹ZᵀX).
//!
//! ```
//! use madbayes::{Fit, Model, RowMatrix, features::{CollapsedBpMeans, FeatureSeeding}};
//! let x = RowMatrix::from_rows(&[
//!     [1.0, 0.0, 0.0], [0.0, 0.0, 4.0], [1.0, 0.0, 4.0], [1.0, 0.0, 0.0], [0.0, 0.0, 4.0],
//! ]);
//! let fit = CollapsedBpMeans::params(0.5)
//!     .restarts(8)
//!     .seeding(FeatureSeeding::Residual)
//!     .seed(1)
//!     .check()?
//!     .fit(&x)?;
//! assert!(fit.objective() <= 1.0 + 1e-9);
//! # Ok::<(), madbayes::FitError>(())
//! ```

mod inverse;
mod row;
mod run;

pub(crate) use run::collapsed_bp_means_run;
