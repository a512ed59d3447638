//! DP-means and capped DP-means: minimise Σ_n ‖x_n − a_{c_n}‖² + (K − 1)·P over labels,
//! means and K (MAD-Bayes Eq. 3, the small-variance limit of a Dirichlet-process mixture;
//! Eq. 12 with a cap on K). Also the shared parameters of collapsed DP-means.
//!
//! ```
//! use madbayes::{Fit, Model, RowMatrix, clustering::DpMeans};
//! let x = RowMatrix::from_rows(&[[0.0], [0.2], [10.0], [10.2], [20.0]]);
//! let fit = DpMeans::params(4.0).seed(1).check()?.fit(&x)?;
//! assert_eq!(fit.k(), 3);
//! assert!((fit.objective() - (0.02 + 0.02 + 2.0 * 4.0)).abs() < 1e-12);
//! # Ok::<(), madbayes::FitError>(())
//! ```

mod bounds;
mod params;
mod reach;
mod sweep;

pub use params::{
    CollapsedDpMeans, DEFAULT_MAX_ITER, DEFAULT_RESTARTS, DpMeans, DpMeansParams,
    DpMeansValidParams, DpVariant, LARGE_DATA_REFINED, LARGE_DATA_RESTARTS, LARGE_DATA_TRIES,
    REFINE_EVERY_RUN_MAX_VALUES, default_restarts, random_order, refine_tries,
};
pub use sweep::{
    LARGE_DATA_START_SHARE, REFINE_START_SHARE, dp_means_refinement_start, dp_means_run,
    refine_start_share,
};
