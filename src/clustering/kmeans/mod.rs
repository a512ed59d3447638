//! K-means: minimise Σ_n ‖x_n − a_{c_n}‖² over labels and K fixed means (MAD-Bayes §4.2, the
//! small-variance limit of a finite Gaussian mixture). Greedy k-means++ seeding, then Lloyd
//! iterations; the best of R restarts is returned.
//!
//! ```
//! use madbayes::{Fit, Model, RowMatrix, clustering::KMeans};
//! let x = RowMatrix::from_rows(&[[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]]);
//! let fit = KMeans::params(2).restarts(4).seed(7).check()?.fit(&x)?;
//! assert_eq!(fit.k(), 2);
//! assert_eq!(fit.labels()[0], fit.labels()[1]);
//! assert_ne!(fit.labels()[0], fit.labels()[2]);
//! assert!((fit.objective() - 0.01).abs() < 1e-12);
//! # Ok::<(), madbayes::FitError>(())
//! ```

mod bounds;
mod lloyd;
mod params;
mod seeding;

pub use lloyd::lloyd;
pub use params::{DEFAULT_MAX_ITER, DEFAULT_RESTARTS, KMeans, KMeansParams, KMeansValidParams};
pub use seeding::kmeans_plus_plus;
