//! Gaussian clusters: K centers drawn uniformly in a box, each row a center plus isotropic
//! Gaussian noise.

use crate::RowMatrix;
use crate::restarts::{run_rng, shuffle};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// A generated clustering problem and its truth.
#[derive(Clone, Debug)]
pub struct Blobs {
    /// The data, `n × d`.
    pub x: RowMatrix,
    /// The true cluster of each row.
    pub labels: Vec<usize>,
    /// The true centers, `k × d`.
    pub centers: RowMatrix,
}

/// One standard normal draw (Box–Muller on two uniforms of the stream; portable).
pub fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    // 1 − u lies in (0, 1], so the logarithm is finite.
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `n` rows in `d` dimensions around `k` centers drawn uniformly in `[−box_half, box_half]^d`,
/// with noise standard deviation `sd`; row n belongs to cluster `n % k` before a seeded
/// shuffle, so cluster sizes differ by at most one.
pub fn gaussian_blobs(n: usize, d: usize, k: usize, box_half: f64, sd: f64, seed: u64) -> Blobs {
    let mut rng = run_rng(seed, 0);
    let mut centers = RowMatrix::zeros(k, d);
    for v in centers.as_mut_slice() {
        *v = box_half * (2.0 * rng.random::<f64>() - 1.0);
    }
    let mut labels: Vec<usize> = (0..n).map(|i| i % k.max(1)).collect();
    shuffle(&mut labels, &mut rng);
    let mut x = RowMatrix::zeros(n, d);
    for (i, &c) in labels.iter().enumerate() {
        for j in 0..d {
            x.row_mut(i)[j] = centers.row(c)[j] + sd * standard_normal(&mut rng);
        }
    }
    Blobs { x, labels, centers }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_has_the_requested_spread_and_seed_fixes_everything() {
        let b = gaussian_blobs(20_000, 2, 4, 10.0, 0.5, 3);
        let mut s2 = 0.0;
        for (i, &c) in b.labels.iter().enumerate() {
            for j in 0..2 {
                s2 += (b.x.row(i)[j] - b.centers.row(c)[j]).powi(2);
            }
        }
        let sd = (s2 / 40_000.0).sqrt();
        assert!((sd - 0.5).abs() < 0.01, "empirical sd {sd}");
        let sizes: Vec<usize> = (0..4)
            .map(|c| b.labels.iter().filter(|&&l| l == c).count())
            .collect();
        assert_eq!(sizes, vec![5000; 4]);
        let again = gaussian_blobs(20_000, 2, 4, 10.0, 0.5, 3);
        assert_eq!(again.x, b.x);
        assert_ne!(gaussian_blobs(20_000, 2, 4, 10.0, 0.5, 4).x, b.x);
    }
}
