//! Binary latent features with fixed loadings: the four block images and the MEIBP
//! synthetic factors, X = Z A + σ_X E with Z_nk ~ Bernoulli(p).

use super::{GenError, check, check_memory, check_prob, check_sd, standard_normal};
use crate::RowMatrix;
use crate::restarts::run_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Generated latent feature data and its truth.
#[derive(Clone, Debug)]
pub struct FeatureData {
    /// The data, `n × d`.
    pub x: RowMatrix,
    /// The true binary features, `n × k` (0/1).
    pub z: RowMatrix,
    /// The true feature means (loadings), `k × d`.
    pub a: RowMatrix,
}

/// The four 6 × 6 block-image shapes, each read row-major as a 36-vector: plus sign
/// (top-left), hollow 3 × 3 square (top-right), staircase triangle (bottom-left) and "T"
/// (bottom-right). Copied from `shared/data/block-images/true_weights.csv` (the `trueWeights`
/// of Doshi-Velez's `block_image_set.mat`, the same shapes as Griffiths & Ghahramani and the
/// defaults of Reed's MEIBP code).
#[rustfmt::skip]
pub const BLOCK_SHAPES: [[u8; 36]; 4] = [
    [0,1,0,0,0,0, 1,1,1,0,0,0, 0,1,0,0,0,0, 0,0,0,0,0,0, 0,0,0,0,0,0, 0,0,0,0,0,0],
    [0,0,0,1,1,1, 0,0,0,1,0,1, 0,0,0,1,1,1, 0,0,0,0,0,0, 0,0,0,0,0,0, 0,0,0,0,0,0],
    [0,0,0,0,0,0, 0,0,0,0,0,0, 0,0,0,0,0,0, 1,0,0,0,0,0, 1,1,0,0,0,0, 1,1,1,0,0,0],
    [0,0,0,0,0,0, 0,0,0,0,0,0, 0,0,0,0,0,0, 0,0,0,1,1,1, 0,0,0,0,1,0, 0,0,0,0,1,0],
];

/// `n` block images (D = 36, K = 4): A = [`BLOCK_SHAPES`], Z_nk ~ Bernoulli(`p`),
/// X = Z A + `sigma_x` E. Griffiths & Ghahramani used n = 100, p = 0.5, σ_X = 0.5.
pub fn block_images(n: usize, p: f64, sigma_x: f64, seed: u64) -> Result<FeatureData, GenError> {
    check(n >= 1, "n", "at least 1", n)?;
    check_prob(p)?;
    check_sd("sigma-x", sigma_x)?;
    check_memory(n, 36, 4)?;
    let rows: Vec<Vec<f64>> = BLOCK_SHAPES
        .iter()
        .map(|s| s.iter().map(|&v| f64::from(v)).collect())
        .collect();
    let a = RowMatrix::from_rows(&rows);
    let mut rng = run_rng(seed, 0);
    let z = bernoulli(n, 4, p, &mut rng);
    let x = linear_gaussian(&z, &a, sigma_x, &mut rng);
    Ok(FeatureData { x, z, a })
}

/// The synthetic data of Reed & Ghahramani (2013, §5): `k` binary factors in `d` dimensions,
/// each with exactly ceil(d / 3) ones at a uniformly random subset of the positions, drawn
/// independently per factor (so factors may overlap); Z_nk ~ Bernoulli(`p`);
/// X = Z A + `sigma_x` E. The paper uses σ_X = 1, p = 0.4 (0.5 in its code).
pub fn meibp_factors(
    n: usize,
    d: usize,
    k: usize,
    p: f64,
    sigma_x: f64,
    seed: u64,
) -> Result<FeatureData, GenError> {
    check_sizes(n, d, k, p, sigma_x)?;
    let mut rng = run_rng(seed, 0);
    let ones = d.div_ceil(3);
    let mut a = RowMatrix::zeros(k, d);
    let mut positions: Vec<usize> = (0..d).collect();
    for f in 0..k {
        // A partial Fisher–Yates shuffle: the first `ones` slots are a uniform subset.
        for i in 0..ones {
            let j = rng.random_range(i..d);
            positions.swap(i, j);
        }
        for &j in &positions[..ones] {
            a.row_mut(f)[j] = 1.0;
        }
    }
    let z = bernoulli(n, k, p, &mut rng);
    let x = linear_gaussian(&z, &a, sigma_x, &mut rng);
    Ok(FeatureData { x, z, a })
}

/// The nonnegative linear-Gaussian model of Reed & Ghahramani (2013, Eqs. 5–7) with `k`
/// features: A_kd ~ TN(0, σ_A²) on \[0, ∞) (σ_A |N(0, 1)|), Z_nk ~ Bernoulli(`p`),
/// X = Z A + `sigma_x` E — the data of their Figure 1 (N = 500, D = 50, σ_X = 1).
pub fn nonnegative_linear_gaussian(
    n: usize,
    d: usize,
    k: usize,
    p: f64,
    sigma_a: f64,
    sigma_x: f64,
    seed: u64,
) -> Result<FeatureData, GenError> {
    check_sizes(n, d, k, p, sigma_x)?;
    check_sd("sigma-a", sigma_a)?;
    let mut rng = run_rng(seed, 0);
    let data = (0..k * d)
        .map(|_| sigma_a * standard_normal(&mut rng).abs())
        .collect();
    let a = RowMatrix::new(k, d, data);
    let z = bernoulli(n, k, p, &mut rng);
    let x = linear_gaussian(&z, &a, sigma_x, &mut rng);
    Ok(FeatureData { x, z, a })
}

/// The checks the K-feature generators share: n, d, k ≥ 1, p a probability, σ_X a standard
/// deviation (in this order).
fn check_sizes(n: usize, d: usize, k: usize, p: f64, sigma_x: f64) -> Result<(), GenError> {
    check(n >= 1, "n", "at least 1", n)?;
    check(d >= 1, "d", "at least 1", d)?;
    check(k >= 1, "k", "at least 1", k)?;
    check_prob(p)?;
    check_sd("sigma-x", sigma_x)?;
    check_memory(n, d, k)
}

/// An `n × k` matrix of independent Bernoulli(`p`) entries.
fn bernoulli(n: usize, k: usize, p: f64, rng: &mut ChaCha8Rng) -> RowMatrix {
    let data = (0..n * k)
        .map(|_| if rng.random::<f64>() < p { 1.0 } else { 0.0 })
        .collect();
    RowMatrix::new(n, k, data)
}

/// X = Z A + σ E, E_nd ~ N(0, 1) drawn row by row.
pub(super) fn linear_gaussian(
    z: &RowMatrix,
    a: &RowMatrix,
    sigma: f64,
    rng: &mut ChaCha8Rng,
) -> RowMatrix {
    let (n, d) = (z.n_rows(), a.n_cols());
    let mut x = RowMatrix::zeros(n, d);
    for i in 0..n {
        let row = x.row_mut(i);
        for (k, &zk) in z.row(i).iter().enumerate() {
            if zk != 0.0 {
                crate::linalg::axpy(zk, a.row(k), row);
            }
        }
        for v in row.iter_mut() {
            *v += sigma * standard_normal(rng);
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Residual standard deviation of X − Z A.
    fn noise_sd(g: &FeatureData) -> f64 {
        let (n, d) = (g.x.n_rows(), g.x.n_cols());
        let mut s2 = 0.0;
        for i in 0..n {
            for j in 0..d {
                let mean: f64 = (0..g.a.n_rows())
                    .map(|k| g.z.row(i)[k] * g.a.row(k)[j])
                    .sum();
                s2 += (g.x.row(i)[j] - mean).powi(2);
            }
        }
        (s2 / (n * d) as f64).sqrt()
    }

    #[test]
    fn block_shapes_match_the_shared_true_weights() {
        // The 1-based positions of the ones listed in shared/data/block-images/README.md.
        let ones: [&[usize]; 4] = [
            &[2, 7, 8, 9, 14],
            &[4, 5, 6, 10, 12, 16, 17, 18],
            &[19, 25, 26, 31, 32, 33],
            &[22, 23, 24, 29, 35],
        ];
        for (shape, want) in BLOCK_SHAPES.iter().zip(ones) {
            let got: Vec<usize> = (0..36).filter(|&j| shape[j] == 1).map(|j| j + 1).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn block_images_have_the_asked_frequency_and_noise() {
        // 20 000 × 4 Bernoulli(1/3) draws: the frequency's sd is √(p(1−p)/80 000) ≈ 0.0017;
        // allow 5 sd. The noise sd estimate from m = 720 000 values has sd ≈ σ/√(2m) ≈ 1.7e-4;
        // allow 5 sd (0.001).
        let (n, p, sigma) = (20_000, 1.0 / 3.0, 0.2);
        let g = block_images(n, p, sigma, 9).unwrap();
        assert_eq!((g.x.n_rows(), g.x.n_cols(), g.z.n_cols()), (n, 36, 4));
        let freq = g.z.as_slice().iter().sum::<f64>() / (4 * n) as f64;
        assert!(
            (freq - p).abs() < 5.0 * (p * (1.0 - p) / (4 * n) as f64).sqrt(),
            "{freq}"
        );
        let sd = noise_sd(&g);
        assert!(
            (sd - sigma).abs() < 5.0 * sigma / (2.0 * (36 * n) as f64).sqrt(),
            "{sd}"
        );
        assert_eq!(block_images(n, p, sigma, 9).unwrap().x, g.x);
        assert!(block_images(5, 1.5, 0.1, 0).is_err());
        assert!(
            block_images(5, 0.5, -1.0, 0)
                .unwrap_err()
                .to_string()
                .contains("sigma-x")
        );
    }

    #[test]
    fn meibp_factors_have_ceil_d_over_3_ones_and_the_asked_noise() {
        let (n, d, k, p, sigma) = (2_000, 100, 20, 0.4, 1.0);
        let g = meibp_factors(n, d, k, p, sigma, 5).unwrap();
        for f in 0..k {
            let ones = g.a.row(f).iter().filter(|&&v| v == 1.0).count();
            assert_eq!(ones, 34);
            assert!(g.a.row(f).iter().all(|&v| v == 0.0 || v == 1.0));
        }
        assert_ne!(g.a.row(0), g.a.row(1));
        // Position frequencies over the k factors: each is 1/3-ish; over all 2000 factor
        // positions the mean is exactly 34/100.
        let freq = g.z.as_slice().iter().sum::<f64>() / (n * k) as f64;
        assert!(
            (freq - p).abs() < 5.0 * (p * (1.0 - p) / (n * k) as f64).sqrt(),
            "{freq}"
        );
        let sd = noise_sd(&g);
        assert!(
            (sd - sigma).abs() < 5.0 * sigma / (2.0 * (n * d) as f64).sqrt(),
            "{sd}"
        );
    }

    #[test]
    fn meibp_positions_are_uniform() {
        // 3000 factors of ceil(30/3) = 10 ones in 30 positions: each position is set with
        // probability 1/3, so its count is Binomial(3000, 1/3), sd ≈ 25.8; allow 5 sd.
        let g = meibp_factors(1, 30, 3_000, 0.5, 0.0, 2).unwrap();
        for j in 0..30 {
            let c: f64 = (0..3_000).map(|f| g.a.row(f)[j]).sum();
            assert!((c - 1_000.0).abs() < 5.0 * 25.82, "position {j}: {c}");
        }
    }
}
