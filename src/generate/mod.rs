//! Seeded synthetic data with known structure, for demos, tests and benchmarks.
//!
//! Every generator draws from one ChaCha8 stream, [`crate::restarts::run_rng`]`(seed, 0)`, so
//! a seed fixes the data on every platform. The latent feature generators follow the linear
//! Gaussian model of the IBP literature, X = Z A + σ_X E with E_nd ~ N(0, 1) independent
//! (the distributions of `shared/data/generators/gen_synthetic.py`, not its random stream).

mod blobs;
mod features;
mod ibp;

pub use blobs::{Blobs, gaussian_blobs, standard_normal};
pub use features::{
    BLOCK_SHAPES, FeatureData, block_images, meibp_factors, nonnegative_linear_gaussian,
};
pub use ibp::{ibp_linear_gaussian, ibp_restaurant, poisson};

use thiserror::Error;

/// A generator parameter out of its range. The message is one line naming the parameter.
#[derive(Clone, Debug, Error, PartialEq)]
#[error("{name} must be {rule}, got {value}")]
pub struct GenError {
    /// The parameter, as spelled on the command line.
    pub name: &'static str,
    /// Its allowed range.
    pub rule: &'static str,
    /// The value given.
    pub value: String,
}

pub(crate) fn check(
    ok: bool,
    name: &'static str,
    rule: &'static str,
    value: impl ToString,
) -> Result<(), GenError> {
    if ok {
        Ok(())
    } else {
        Err(GenError {
            name,
            rule,
            value: value.to_string(),
        })
    }
}

pub(crate) fn check_prob(p: f64) -> Result<(), GenError> {
    check((0.0..=1.0).contains(&p), "p", "a probability in [0, 1]", p)
}

pub(crate) fn check_sd(name: &'static str, v: f64) -> Result<(), GenError> {
    check(v.is_finite() && v >= 0.0, name, "a finite number ≥ 0", v)
}
