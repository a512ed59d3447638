//! Optional resampling of the hyperparameters once per sweep, by conjugate Gibbs steps given
//! the current Z (G&G 2006 §5; D-V&G §5 "hyperparameters … sampled"):
//!
//! * α | Z ~ Gamma(1 + K, 1 + H_N) (shape, rate): the prior Gamma(1, 1) times the
//!   α-dependent part α^K e^{−α H_N} of P(\[Z\]) (Eq. 1);
//! * A | Z, X is drawn from its posterior (Eq. 6), then, with inverse-gamma IG(1, v) priors
//!   on the variances, v the variance of all entries of X (so the priors move with the data's
//!   scale: multiplying X by c multiplies every draw of σ_X and σ_A by c),
//!   σ_X² | X, Z, A ~ IG(1 + ND/2, v + ‖X − ZA‖²_F / 2) and
//!   σ_A² | A ~ IG(1 + KD/2, v + ‖A‖²_F / 2).
//!
//! Gamma draws use Marsaglia & Tsang (2000); an inverse-gamma draw is 1/Gamma(shape, rate).

use super::dense::std_normal;
use super::model::{a_posterior, harmonic};
use crate::RowMatrix;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// One draw from Gamma(shape, rate) (Marsaglia & Tsang 2000; shape < 1 by the boost
/// Gamma(a) = Gamma(a + 1) · U^{1/a}).
pub(crate) fn gamma(shape: f64, rate: f64, rng: &mut ChaCha8Rng) -> f64 {
    assert!(
        shape > 0.0 && rate > 0.0,
        "gamma parameters must be positive"
    );
    if shape < 1.0 {
        let u: f64 = 1.0 - rng.random::<f64>();
        return gamma(shape + 1.0, rate, rng) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let z = std_normal(rng);
        let v = 1.0 + c * z;
        if v <= 0.0 {
            continue;
        }
        let v3 = v * v * v;
        let u: f64 = 1.0 - rng.random::<f64>();
        if u.ln() < 0.5 * z * z + d - d * v3 + d * v3.ln() {
            return d * v3 / rate;
        }
    }
}

/// A new α drawn given Z: Gamma(1 + K, 1 + H_N) (module documentation). Columns of zeros
/// do not count in K.
pub(crate) fn resample_alpha(z: &RowMatrix, rng: &mut ChaCha8Rng) -> f64 {
    let n = z.n_rows();
    let k = (0..z.n_cols())
        .filter(|&c| (0..n).any(|i| z.row(i)[c] != 0.0))
        .count();
    gamma(1.0 + k as f64, 1.0 + harmonic(n), rng)
}

/// New (σ_X, σ_A) drawn given X and Z through a draw of A (module documentation); `scale`
/// is v, the prior scale of both variances.
pub(crate) fn resample_sigmas(
    x: &RowMatrix,
    z: &RowMatrix,
    sigma_x: f64,
    sigma_a: f64,
    scale: f64,
    rng: &mut ChaCha8Rng,
) -> (f64, f64) {
    let (n, d, k) = (x.n_rows(), x.n_cols(), z.n_cols());
    let a = a_posterior(x.view(), z, sigma_x, sigma_a).draw(rng);
    let mut rss = 0.0;
    let mut r = vec![0.0; d];
    for i in 0..n {
        r.copy_from_slice(x.row(i));
        for (c, _) in z.row(i).iter().enumerate().filter(|(_, v)| **v != 0.0) {
            r.iter_mut().zip(a.row(c)).for_each(|(v, w)| *v -= w);
        }
        rss += r.iter().map(|v| v * v).sum::<f64>();
    }
    let aa: f64 = a.as_slice().iter().map(|v| v * v).sum();
    let sx2 = 1.0 / gamma(1.0 + (n * d) as f64 / 2.0, scale + rss / 2.0, rng);
    let sa2 = 1.0 / gamma(1.0 + (k * d) as f64 / 2.0, scale + aa / 2.0, rng);
    (sx2.sqrt(), sa2.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restarts::run_rng;

    #[test]
    fn gamma_draws_have_the_right_moments() {
        let mut rng = run_rng(21, 0);
        for (shape, rate) in [(0.5, 1.0), (1.0, 2.0), (3.0, 0.5), (200.0, 10.0)] {
            let n = 100_000;
            let xs: Vec<f64> = (0..n).map(|_| gamma(shape, rate, &mut rng)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
            let (m0, v0) = (shape / rate, shape / (rate * rate));
            // standard error of the mean: sqrt(v0 / n); of the variance about sqrt(v0² (2 + 6/shape) / n)
            assert!(
                (mean - m0).abs() < 5.0 * (v0 / n as f64).sqrt(),
                "{shape} {rate}: mean {mean}"
            );
            let se_v = (v0 * v0 * (2.0 + 6.0 / shape) / n as f64).sqrt();
            assert!(
                (var - v0).abs() < 5.0 * se_v,
                "{shape} {rate}: var {var} vs {v0}"
            );
        }
    }
}
