//! Data generators shared by the Mahalanobis clustering tests.
#![allow(dead_code)]

use madbayes::RowMatrix;
use madbayes::restarts::run_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// A standard normal draw (Box–Muller).
pub fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random::<f64>();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// `n` rows in `d` dimensions from `k` Gaussian groups, each with its own random centre and
/// random linear shape (so covariances differ between groups).
pub fn gaussian_groups(seed: u64, n: usize, d: usize, k: usize, spread: f64) -> RowMatrix {
    let mut rng = run_rng(seed, 999);
    let centres: Vec<Vec<f64>> = (0..k)
        .map(|_| (0..d).map(|_| spread * normal(&mut rng)).collect())
        .collect();
    let shapes: Vec<Vec<f64>> = (0..k)
        .map(|_| (0..d * d).map(|_| normal(&mut rng)).collect())
        .collect();
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let g = i % k;
        let z: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
        let row: Vec<f64> = (0..d)
            .map(|a| centres[g][a] + (0..d).map(|b| shapes[g][a * d + b] * z[b]).sum::<f64>())
            .collect();
        rows.push(row);
    }
    RowMatrix::from_rows(&rows)
}

/// Random labels in `0..k` with every cluster holding at least `min_size` rows.
pub fn random_valid_labels(seed: u64, n: usize, k: usize, min_size: usize) -> Vec<usize> {
    let mut rng = run_rng(seed, 777);
    loop {
        let labels: Vec<usize> = (0..n).map(|_| rng.random_range(0..k)).collect();
        let mut counts = vec![0; k];
        labels.iter().for_each(|&c| counts[c] += 1);
        if counts.iter().all(|&c| c >= min_size) {
            return labels;
        }
    }
}

/// Cluster sizes of a labelling.
pub fn sizes(labels: &[usize], k: usize) -> Vec<usize> {
    let mut counts = vec![0; k];
    labels.iter().for_each(|&c| counts[c] += 1);
    counts
}

/// |a − b| ≤ tol·(1 + |a| + |b|).
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs() + b.abs())
}
