//! Helpers shared by the feature tests (included with `#[path]`, not a test of its own).
#![allow(dead_code)]

use madbayes::features::least_squares_means;
use madbayes::features::objective::sum_of_squares;
use madbayes::{BinaryMatrix, RowMatrix};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};

/// The first `n` rows of `../shared/data/block-images` with the file's global centring undone,
/// and the four true shapes (`None`, after the skip line, when absent). The file holds
/// features · trueWeights + noise − c, with c the grand mean of features · trueWeights over
/// its 1000 rows (the data set's README); adding c back gives the linear-Gaussian model.
pub fn uncentred_block_images(n: usize) -> Option<(RowMatrix, RowMatrix)> {
    let dir = shared("data/block-images")?;
    let full = read_csv(&dir.join("data.csv"));
    let truth = read_csv(&dir.join("true_weights.csv"));
    let feats = read_csv(&dir.join("features.csv"));
    let (rows_all, d) = (full.n_rows(), full.n_cols());
    let mut c = 0.0;
    for i in 0..rows_all {
        for t in 0..4 {
            if feats.row(i)[t] != 0.0 {
                c += truth.row(t).iter().sum::<f64>();
            }
        }
    }
    c /= (rows_all * d) as f64;
    let x = RowMatrix::new(n, d, full.rows_slice(0, n).iter().map(|v| v + c).collect());
    Some((x, truth))
}

/// `../shared/<rel>`, or `None` (after printing the skip line) when the folder is absent.
pub fn shared(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel);
    if p.exists() {
        Some(p)
    } else {
        println!("skipped: ../shared not found");
        None
    }
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
