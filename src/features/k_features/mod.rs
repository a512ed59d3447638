//! K-features (MAD-Bayes Alg. 4, Eq. 14: minimise ‖X − Z A‖²_F with K fixed) and stepwise
//! K-features (§5: for K = 1, 2, … take the best K-features run and its BP-means objective
//! E(K) = ‖X − Z A‖²_F + K·P; stop at the first K with E(K) > E(K − 1)).
//!
//! ```
//! use madbayes::{Fit, Model, RowMatrix, features::{FeatureSeeding, KFeatures}};
//! let x = RowMatrix::from_rows(&[
//!     [1.0, 0.0, 0.0], [0.0, 0.0, 4.0], [1.0, 0.0, 4.0], [1.0, 0.0, 0.0], [0.0, 0.0, 4.0],
//! ]);
//! let fit = KFeatures::params(2)
//!     .restarts(8)
//!     .seeding(FeatureSeeding::Residual)
//!     .seed(1)
//!     .check()?
//!     .fit(&x)?;
//! assert_eq!(fit.k(), 2);
//! assert!(fit.objective().abs() < 1e-9);
//! # Ok::<(), madbayes::FitError>(())
//! ```

mod run;

pub(crate) use run::{k_features_run, k_features_run_until};
