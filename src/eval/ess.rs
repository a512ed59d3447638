//! Effective sample size of a scalar chain (K, or the log joint, per sweep), by Geyer's
//! initial positive sequence: with ρ_t the lag-t autocorrelation, sum the pairs
//! Γ_m = ρ_{2m} + ρ_{2m+1} while they stay positive, and ESS = S / (−1 + 2 Σ_m Γ_m)
//! (Geyer 1992, "Practical Markov chain Monte Carlo", §3.3). A constant chain has no
//! variance to estimate: its ESS is reported as S.

/// The effective number of independent samples in `chain`.
pub fn effective_sample_size(chain: &[f64]) -> f64 {
    let s = chain.len();
    if s < 4 {
        return s as f64;
    }
    let mean = chain.iter().sum::<f64>() / s as f64;
    let centred: Vec<f64> = chain.iter().map(|v| v - mean).collect();
    let var = centred.iter().map(|v| v * v).sum::<f64>() / s as f64;
    if var <= 0.0 || !var.is_finite() {
        return s as f64;
    }
    let rho = |t: usize| -> f64 {
        centred[..s - t]
            .iter()
            .zip(&centred[t..])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / (s as f64 * var)
    };
    let mut sum = 0.0;
    let mut m = 0;
    while 2 * m + 1 < s {
        let pair = rho(2 * m) + rho(2 * m + 1);
        if pair <= 0.0 {
            break;
        }
        sum += pair;
        m += 1;
    }
    let tau = (-1.0 + 2.0 * sum).max(1.0 / s as f64);
    (s as f64 / tau).min(s as f64 * 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restarts::run_rng;
    use rand::RngExt;

    /// An AR(1) chain x_t = φ x_{t−1} + e_t has integrated autocorrelation time
    /// (1 + φ)/(1 − φ): ESS ≈ S (1 − φ)/(1 + φ).
    #[test]
    fn ar1_chains_have_the_textbook_ess() {
        let mut rng = run_rng(11, 0);
        for phi in [0.0, 0.5, 0.9] {
            let s = 200_000;
            let mut x = 0.0;
            let chain: Vec<f64> = (0..s)
                .map(|_| {
                    let u1: f64 = 1.0 - rng.random::<f64>();
                    let u2: f64 = rng.random::<f64>();
                    let e = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                    x = phi * x + e;
                    x
                })
                .collect();
            let want = s as f64 * (1.0 - phi) / (1.0 + phi);
            let got = effective_sample_size(&chain);
            assert!(
                (got / want - 1.0).abs() < 0.1,
                "φ = {phi}: ESS {got}, expected {want}"
            );
        }
    }

    #[test]
    fn short_and_constant_chains() {
        assert_eq!(effective_sample_size(&[1.0, 2.0]), 2.0);
        assert_eq!(effective_sample_size(&[3.0; 50]), 50.0);
    }
}
