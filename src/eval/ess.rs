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

/// The effective number of independent samples in `m` chains of `n` samples each, by the
/// between-chain estimate of Gelman, Carlin, Stern & Rubin (*Bayesian Data Analysis*, 2nd
/// ed., 2003, §11.6), the statistic D-V&G (2009, §6) report as "effective N" over 5 chains:
/// with chain means ψ̄_j, their mean ψ̄, and chain variances s_j²,
///
///   B = n/(m − 1) Σ_j (ψ̄_j − ψ̄)²,  W = (1/m) Σ_j s_j²,  var⁺ = (n − 1)/n · W + B/n,
///   n_eff = m n · var⁺ / B, at most m n.
///
/// With few chains B is itself a noisy estimate, so n_eff is a rough figure. Chains of
/// unequal length are cut to the shortest; fewer than 2 chains or 2 samples, or B = 0,
/// give m n.
pub fn gelman_effective_sample_size(chains: &[Vec<f64>]) -> f64 {
    let m = chains.len();
    let n = chains.iter().map(Vec::len).min().unwrap_or(0);
    let total = (m * n) as f64;
    if m < 2 || n < 2 {
        return total;
    }
    let (mf, nf) = (m as f64, n as f64);
    let means: Vec<f64> = chains
        .iter()
        .map(|c| c[..n].iter().sum::<f64>() / nf)
        .collect();
    let grand = means.iter().sum::<f64>() / mf;
    let b = nf / (mf - 1.0) * means.iter().map(|v| (v - grand).powi(2)).sum::<f64>();
    let w = chains
        .iter()
        .zip(&means)
        .map(|(c, mu)| c[..n].iter().map(|v| (v - mu).powi(2)).sum::<f64>() / (nf - 1.0))
        .sum::<f64>()
        / mf;
    if b <= 0.0 || !b.is_finite() {
        return total;
    }
    let var_plus = (nf - 1.0) / nf * w + b / nf;
    (total * var_plus / b).min(total)
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

    /// Many AR(1) chains started at equilibrium: the between-chain estimate is close to
    /// the same m n (1 − φ)/(1 + φ); independent chains are capped at m n.
    #[test]
    fn gelman_ess_of_ar1_chains() {
        let mut rng = run_rng(12, 0);
        let (m, s) = (400, 2000);
        for phi in [0.0f64, 0.8] {
            let chains: Vec<Vec<f64>> = (0..m)
                .map(|_| {
                    let mut normal = || {
                        let u1: f64 = 1.0 - rng.random::<f64>();
                        let u2: f64 = rng.random::<f64>();
                        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
                    };
                    let mut x = normal() / (1.0 - phi * phi).sqrt();
                    (0..s)
                        .map(|_| {
                            x = phi * x + normal();
                            x
                        })
                        .collect()
                })
                .collect();
            let total = (m * s) as f64;
            let got = gelman_effective_sample_size(&chains);
            if phi == 0.0 {
                assert!(got > 0.8 * total, "independent: {got} of {total}");
            } else {
                let want = total * (1.0 - phi) / (1.0 + phi);
                assert!(
                    (got / want - 1.0).abs() < 0.25,
                    "φ = {phi}: {got}, expected {want}"
                );
            }
        }
        assert_eq!(gelman_effective_sample_size(&[vec![1.0, 2.0]]), 2.0);
        assert_eq!(
            gelman_effective_sample_size(&[vec![1.0; 5], vec![1.0; 5]]),
            10.0
        );
    }

    #[test]
    fn short_and_constant_chains() {
        assert_eq!(effective_sample_size(&[1.0, 2.0]), 2.0);
        assert_eq!(effective_sample_size(&[3.0; 50]), 50.0);
    }
}
