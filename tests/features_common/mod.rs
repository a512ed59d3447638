//! Helpers shared by the feature tests (included with `#[path]`, not a test of its own).
#![allow(dead_code)]

use madbayes::features::least_squares_means;
use madbayes::features::objective::sum_of_squares;
use madbayes::generate::{FeatureData, block_images};
use madbayes::{BinaryMatrix, RowMatrix};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};

/// `n` block images in Doshi-Velez & Ghahramani's setting (§5: the four 6 × 6 shapes,
/// Z_nk ~ Bernoulli(1/3), X = Z A + 0.2 E, not centred), generated from `seed`, with their
/// true Z and A. The copy in `../shared/data/block-images` is one draw of the same model,
/// globally mean-centred.
pub fn dvg_block_images(n: usize, seed: u64) -> FeatureData {
    block_images(n, 1.0 / 3.0, 0.2, seed).expect("valid generator parameters")
}

/// The noise level of generated data: sqrt(‖X − Z A‖² / (N D)) with the true Z and A.
pub fn noise_sd(data: &FeatureData) -> f64 {
    let (n, d) = (data.x.n_rows(), data.x.n_cols());
    let z = BinaryMatrix::from_row_matrix(&data.z);
    (sum_of_squares(&data.x, &z, &data.a) / (n * d) as f64).sqrt()
}

/// `../shared/<rel>`. Tests that read it are compiled `#[ignore]` when `../shared/data` is
/// absent (`build.rs` sets the cfg `shared_data`), so they show as ignored, not passed.
pub fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel)
}

pub fn read_csv(path: &Path) -> RowMatrix {
    let text = std::fs::read_to_string(path).expect("readable csv");
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .map(|v| v.trim().parse::<f64>().unwrap())
                .collect()
        })
        .collect();
    RowMatrix::from_rows(&rows)
}

/// A random `n × d` matrix with entries uniform in [−2, 2).
pub fn random_data(n: usize, d: usize, seed: u64) -> RowMatrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let data = (0..n * d)
        .map(|_| rng.random::<f64>() * 4.0 - 2.0)
        .collect();
    RowMatrix::new(n, d, data)
}

/// Least-squares residual ‖X − Z Â‖² of the Z whose columns are the given 0/1 bit masks.
pub fn rss_of_columns(x: &RowMatrix, cols: &[u32]) -> f64 {
    let n = x.n_rows();
    let mut z = BinaryMatrix::zeros(n, cols.len());
    for (k, &mask) in cols.iter().enumerate() {
        for i in 0..n {
            z.set(i, k, (mask >> i) & 1 == 1);
        }
    }
    let a = least_squares_means(x, &z).a;
    sum_of_squares(x, &z, &a)
}

/// For tiny N (≤ 5): the least residual over all Z with exactly `k` distinct non-zero
/// columns, for k = 0..=k_max (index k). Every Z with K ≤ k columns is covered, since empty or
/// duplicate columns never lower the residual.
pub fn best_rss_by_k(x: &RowMatrix, k_max: usize) -> Vec<f64> {
    let n = x.n_rows();
    assert!(n <= 5);
    let masks: Vec<u32> = (1..(1u32 << n)).collect();
    let mut best = vec![f64::INFINITY; k_max + 1];
    let mut chosen = Vec::new();
    fn rec(
        x: &RowMatrix,
        masks: &[u32],
        start: usize,
        chosen: &mut Vec<u32>,
        k_max: usize,
        best: &mut [f64],
    ) {
        let k = chosen.len();
        let rss = rss_of_columns(x, chosen);
        if rss < best[k] {
            best[k] = rss;
        }
        if k == k_max {
            return;
        }
        for i in start..masks.len() {
            chosen.push(masks[i]);
            rec(x, masks, i + 1, chosen, k_max, best);
            chosen.pop();
        }
    }
    rec(x, &masks, 0, &mut chosen, k_max, &mut best);
    best
}

/// Columns of `z` as bit masks over rows (N ≤ 32).
pub fn column_masks(z: &BinaryMatrix) -> Vec<u32> {
    (0..z.n_cols())
        .map(|k| {
            (0..z.n_rows())
                .filter(|&i| z.get(i, k))
                .fold(0u32, |m, i| m | (1 << i))
        })
        .collect()
}

/// Asserts `a` solves the normal equations for `z` (it is a least-squares A for Z).
pub fn assert_least_squares(x: &RowMatrix, z: &BinaryMatrix, a: &RowMatrix) {
    let z = z.to_row_matrix();
    let (n, k, d) = (x.n_rows(), z.n_cols(), x.n_cols());
    let scale = 1.0 + x.as_slice().iter().map(|v| v * v).sum::<f64>();
    for j in 0..k {
        for c in 0..d {
            let mut g = 0.0;
            for i in 0..n {
                let fit: f64 = (0..k).map(|p| z.row(i)[p] * a.row(p)[c]).sum();
                g += z.row(i)[j] * (x.row(i)[c] - fit);
            }
            assert!(
                g.abs() <= 1e-8 * scale,
                "normal equation ({j}, {c}) off by {g}"
            );
        }
    }
}

/// Asserts the trace never increases (up to rounding) and ends at `last`.
pub fn assert_monotone(trace: &[f64], last: f64) {
    assert!(!trace.is_empty());
    for w in trace.windows(2) {
        assert!(
            w[1] <= w[0] + 1e-9 * (1.0 + w[0].abs()),
            "trace rose: {trace:?}"
        );
    }
    let t = *trace.last().unwrap();
    assert!(
        (t - last).abs() <= 1e-9 * (1.0 + last.abs()),
        "trace ends at {t}, objective {last}"
    );
}
