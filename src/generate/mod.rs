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
    pub rule: String,
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
            rule: rule.to_string(),
            value: value.to_string(),
        })
    }
}

/// Refuses sizes whose X (n × d), Z (n × k) and A (k × d), as `f64`, need more memory than
/// is available ([`crate::io::available_memory`]) — checked before anything is allocated, in
/// `u128`, so no product can overflow.
pub fn check_memory(n: usize, d: usize, k: usize) -> Result<(), GenError> {
    let (n, d, k) = (n as u128, d as u128, k as u128);
    let bytes = (n * d)
        .saturating_add(n.saturating_mul(k))
        .saturating_add(k.saturating_mul(d))
        .saturating_mul(8);
    crate::io::fits_in_memory(bytes).map_err(|available| GenError {
        name: "n, d and k",
        rule: format!(
            "small enough for X (n × d), Z (n × k) and A (k × d) to fit in the {} of memory available",
            crate::io::human_bytes(u128::from(available))
        ),
        value: format!(
            "n = {n}, d = {d}, k = {k}, which need {}",
            crate::io::human_bytes(bytes)
        ),
    })
}

/// A number of features the IBP(α) prior on `n` rows exceeds with negligible probability:
/// K ~ Poisson(α Hₙ), so its mean plus ten standard deviations (and 10).
pub fn ibp_k_bound(n: usize, alpha: f64) -> usize {
    // Hₙ, exactly for small n, else ln n + γ + 1/(2n) (error below 1/(12n²)).
    let h = if n <= 1000 {
        (1..=n).map(|i| 1.0 / i as f64).sum::<f64>()
    } else {
        (n as f64).ln() + 0.577_215_664_901_532_9 + 0.5 / n as f64
    };
    let mean = alpha * h;
    let bound = mean + 10.0 * mean.sqrt() + 10.0;
    if bound.is_finite() && bound < usize::MAX as f64 {
        bound.ceil() as usize
    } else {
        usize::MAX
    }
}

pub(crate) fn check_prob(p: f64) -> Result<(), GenError> {
    check((0.0..=1.0).contains(&p), "p", "a probability in [0, 1]", p)
}

pub(crate) fn check_sd(name: &'static str, v: f64) -> Result<(), GenError> {
    check(v.is_finite() && v >= 0.0, name, "a finite number ≥ 0", v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_memory_are_refused_before_allocating() {
        assert_eq!(check_memory(100, 36, 4), Ok(()));
        let e = check_memory(100_000_000_000, 36, 4).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("n = 100000000000, d = 36, k = 4"), "{msg}");
        assert!(msg.contains("memory available"), "{msg}");
        // Products beyond any integer type still give an answer.
        assert!(check_memory(usize::MAX, usize::MAX, usize::MAX).is_err());
        assert!(block_images(100_000_000_000, 0.5, 0.5, 0).is_err());
        assert!(meibp_factors(1 << 40, 1 << 40, 2, 0.5, 1.0, 0).is_err());
        // The IBP's K grows with α: α = 10⁹ on 100 rows asks for billions of features.
        assert!(ibp_k_bound(100, 1e9) > 5_000_000_000);
        assert!(ibp_linear_gaussian(100, 36, 1e9, 1.0, 0.5, 0).is_err());
        assert!(ibp_linear_gaussian(100, 36, f64::MAX, 1.0, 0.5, 0).is_err());
    }

    #[test]
    fn the_ibp_bound_holds_the_prior_mean() {
        // E[K] = α Hₙ: H₁₀₀ = 5.187…, H₁₀₀₀₀ = 9.787…
        assert!(ibp_k_bound(100, 3.0) >= 16);
        assert!(ibp_k_bound(10_000, 3.0) >= 30);
        assert!(ibp_k_bound(10_000, 3.0) < 100);
    }
}
