//! Draws from the Indian buffet process prior and its linear Gaussian model.

use super::features::{FeatureData, linear_gaussian};
use super::{GenError, check, check_memory, check_sd, ibp_k_bound, standard_normal};
use crate::RowMatrix;
use crate::restarts::run_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// A Poisson(`lambda`) draw: Knuth's product of uniforms, on pieces of mean at most 30 whose
/// counts are added (a sum of independent Poissons is Poisson), so e^{−λ} never underflows.
pub fn poisson(lambda: f64, rng: &mut ChaCha8Rng) -> usize {
    let mut rest = lambda.max(0.0);
    let mut count = 0;
    while rest > 0.0 {
        let piece = rest.min(30.0);
        rest -= piece;
        let limit = (-piece).exp();
        let mut prod = rng.random::<f64>();
        while prod > limit {
            count += 1;
            prod *= rng.random::<f64>();
        }
    }
    count
}

/// Z ~ IBP(`alpha`) for `n` customers by the restaurant construction: customer i (1-based)
/// takes each dish already taken by m_k earlier customers with probability m_k / i, then
/// Poisson(α / i) new dishes. Columns are dishes in order of first appearance; K is random,
/// with E\[K\] = α H_n (H_n = 1 + 1/2 + … + 1/n), and every row sum is Poisson(α).
pub fn ibp_restaurant(n: usize, alpha: f64, rng: &mut ChaCha8Rng) -> RowMatrix {
    // Dish lists per customer, then the matrix once K is known.
    let mut counts: Vec<usize> = Vec::new();
    let mut taken: Vec<Vec<usize>> = Vec::with_capacity(n);
    for i in 1..=n {
        let mut mine = Vec::new();
        for (k, m) in counts.iter_mut().enumerate() {
            if rng.random::<f64>() * (i as f64) < *m as f64 {
                *m += 1;
                mine.push(k);
            }
        }
        let new = poisson(alpha / i as f64, rng);
        for _ in 0..new {
            mine.push(counts.len());
            counts.push(1);
        }
        taken.push(mine);
    }
    let k = counts.len();
    let mut z = RowMatrix::zeros(n, k);
    for (i, dishes) in taken.iter().enumerate() {
        for &d in dishes {
            z.row_mut(i)[d] = 1.0;
        }
    }
    z
}

/// A draw from the IBP linear Gaussian model: Z ~ IBP(`alpha`) ([`ibp_restaurant`]),
/// A_kd ~ N(0, `sigma_a`²), X = Z A + `sigma_x` E. Z may have no columns (then A is 0 × d
/// and X is pure noise).
pub fn ibp_linear_gaussian(
    n: usize,
    d: usize,
    alpha: f64,
    sigma_a: f64,
    sigma_x: f64,
    seed: u64,
) -> Result<FeatureData, GenError> {
    check(n >= 1, "n", "at least 1", n)?;
    check(d >= 1, "d", "at least 1", d)?;
    check(
        alpha.is_finite() && alpha > 0.0,
        "alpha",
        "a finite number > 0",
        alpha,
    )?;
    check_sd("sigma-a", sigma_a)?;
    check_sd("sigma-x", sigma_x)?;
    check_memory(n, d, ibp_k_bound(n, alpha))?;
    let mut rng = run_rng(seed, 0);
    let z = ibp_restaurant(n, alpha, &mut rng);
    let k = z.n_cols();
    let a_data = (0..k * d)
        .map(|_| sigma_a * standard_normal(&mut rng))
        .collect();
    let a = RowMatrix::new(k, d, a_data);
    let x = linear_gaussian(&z, &a, sigma_x, &mut rng);
    Ok(FeatureData { x, z, a })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_mean_and_variance() {
        // 20 000 draws: the mean's sd is √(λ/20 000); allow 5 sd. Also one λ above 30.
        let mut rng = run_rng(1, 0);
        for lambda in [0.7, 4.0, 75.0] {
            let draws: Vec<f64> = (0..20_000)
                .map(|_| poisson(lambda, &mut rng) as f64)
                .collect();
            let mean = draws.iter().sum::<f64>() / 20_000.0;
            let var = draws.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 19_999.0;
            assert!(
                (mean - lambda).abs() < 5.0 * (lambda / 20_000.0).sqrt(),
                "{lambda}: {mean}"
            );
            // Var of the sample variance ≈ (μ4 − σ⁴)/m = (λ + 2λ²)/m for a Poisson.
            let sd_var = ((lambda + 2.0 * lambda * lambda) / 20_000.0).sqrt();
            assert!((var - lambda).abs() < 5.0 * sd_var, "{lambda}: var {var}");
        }
        assert_eq!(poisson(0.0, &mut rng), 0);
    }

    #[test]
    fn ibp_feature_count_and_row_sums_match_the_prior() {
        // R = 400 draws of N = 50 customers with α = 3. K ~ Poisson(α H_N), so the mean of
        // R draws has sd √(α H_N / R) ≈ 0.18. Each row sum is Poisson(α); a draw's mean row
        // sum has variance ≤ α (rows are dependent, but the variance of a mean never exceeds
        // the largest variance), so the grand mean has sd ≤ √(α / R) ≈ 0.087. Allow 5 sd.
        let (n, alpha, r) = (50usize, 3.0, 400usize);
        let h: f64 = (1..=n).map(|i| 1.0 / i as f64).sum();
        let mut rng = run_rng(17, 0);
        let (mut k_sum, mut row_sum) = (0.0, 0.0);
        for _ in 0..r {
            let z = ibp_restaurant(n, alpha, &mut rng);
            k_sum += z.n_cols() as f64;
            row_sum += z.as_slice().iter().sum::<f64>() / n as f64;
            // Every column is used by someone; columns appear in order of first use.
            let first: Vec<usize> = (0..z.n_cols())
                .map(|k| (0..n).find(|&i| z.row(i)[k] == 1.0).unwrap())
                .collect();
            assert!(first.windows(2).all(|w| w[0] <= w[1]));
        }
        let mean_k = k_sum / r as f64;
        let mean_row = row_sum / r as f64;
        assert!(
            (mean_k - alpha * h).abs() < 5.0 * (alpha * h / r as f64).sqrt(),
            "E K: {mean_k} vs {}",
            alpha * h
        );
        assert!(
            (mean_row - alpha).abs() < 5.0 * (alpha / r as f64).sqrt(),
            "row sums: {mean_row}"
        );
    }

    #[test]
    fn ibp_linear_gaussian_loadings_and_noise() {
        // α = 20, N = 500: about 20 H_500 ≈ 136 features, so A has ≈ 136 × 200 ≈ 27 000
        // N(0, 4) entries; the sd estimate has sd ≈ σ_A/√(2m) ≈ 0.009: allow 5 of them.
        // The noise: 100 000 values, sd of the estimate ≈ 0.3/√(2e5) ≈ 7e-4: allow 5.
        let (n, d, sa, sx) = (500, 200, 2.0, 0.3);
        let g = ibp_linear_gaussian(n, d, 20.0, sa, sx, 8).unwrap();
        let m = g.a.as_slice().len() as f64;
        assert!(m > 10_000.0);
        let sd_a = (g.a.as_slice().iter().map(|v| v * v).sum::<f64>() / m).sqrt();
        assert!((sd_a - sa).abs() < 5.0 * sa / (2.0 * m).sqrt(), "{sd_a}");
        let mut s2 = 0.0;
        for i in 0..n {
            for j in 0..d {
                let mean: f64 = (0..g.a.n_rows())
                    .map(|k| g.z.row(i)[k] * g.a.row(k)[j])
                    .sum();
                s2 += (g.x.row(i)[j] - mean).powi(2);
            }
        }
        let sd_x = (s2 / (n * d) as f64).sqrt();
        assert!(
            (sd_x - sx).abs() < 5.0 * sx / (2.0 * (n * d) as f64).sqrt(),
            "{sd_x}"
        );
        assert!(
            ibp_linear_gaussian(5, 3, 0.0, 1.0, 1.0, 0)
                .unwrap_err()
                .to_string()
                .contains("alpha")
        );
    }
}
