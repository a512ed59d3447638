//! Greedy k-means++ seeding (Arthur & Vassilvitskii 2007): each new center is drawn with
//! probability ∝ D(x)², the squared distance to the nearest center chosen so far; of
//! `2 + ⌊ln K⌋` such draws the one that lowers the potential Σ D(x)² most is kept.

use crate::RowMatrix;
use crate::linalg::{BLOCK_ROWS, gemm_xat, ordered_block_reduce, sq_dist, sq_norm};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Draws an index with probability ∝ `weights` (uniformly when they sum to zero).
pub(crate) fn draw_weighted(weights: &[f64], rng: &mut ChaCha8Rng) -> usize {
    let total: f64 = weights.iter().sum();
    if total.is_nan() || total <= 0.0 || total.is_infinite() {
        return rng.random_range(0..weights.len());
    }
    let target = rng.random::<f64>() * total;
    let mut acc = 0.0;
    for (i, &w) in weights.iter().enumerate() {
        acc += w;
        if acc > target && w > 0.0 {
            return i;
        }
    }
    // Rounding left `target` beyond the last partial sum: take the last positive weight.
    weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)
}

/// Chooses `k` initial means among the rows of `x` (`x_norms[n] = ‖x_n‖²`).
pub fn kmeans_plus_plus(
    x: &RowMatrix,
    x_norms: &[f64],
    k: usize,
    rng: &mut ChaCha8Rng,
) -> RowMatrix {
    let (n, d) = (x.n_rows(), x.n_cols());
    let trials = 2 + (k as f64).ln().floor() as usize;
    let mut centers = RowMatrix::zeros(0, d);
    let first = rng.random_range(0..n);
    centers.push_row(x.row(first));
    let mut closest: Vec<f64> = (0..n).map(|i| sq_dist(x.row(i), x.row(first))).collect();
    for _ in 1..k {
        let cand_idx: Vec<usize> = (0..trials).map(|_| draw_weighted(&closest, rng)).collect();
        let cand = RowMatrix::from_rows(&cand_idx.iter().map(|&i| x.row(i)).collect::<Vec<_>>());
        let cand_norms: Vec<f64> = cand.rows().map(sq_norm).collect();
        // New D(x)² under each candidate, and each candidate's potential.
        let mut potentials = vec![0.0; trials];
        let mut updated: Vec<Vec<f64>> = vec![Vec::with_capacity(n); trials];
        ordered_block_reduce(
            n,
            BLOCK_ROWS,
            |_, s, e| {
                let b = e - s;
                let mut g = vec![0.0; b * trials];
                gemm_xat(&mut g, x.rows_slice(s, e), b, &cand);
                let mut out = vec![vec![0.0; b]; trials];
                for i in 0..b {
                    for t in 0..trials {
                        let dist =
                            (x_norms[s + i] + cand_norms[t] - 2.0 * g[i * trials + t]).max(0.0);
                        out[t][i] = dist.min(closest[s + i]);
                    }
                }
                out
            },
            |out| {
                for (t, v) in out.into_iter().enumerate() {
                    potentials[t] += v.iter().sum::<f64>();
                    updated[t].extend_from_slice(&v);
                }
            },
        );
        let best = crate::restarts::best_index(&potentials);
        centers.push_row(cand.row(best));
        closest = std::mem::take(&mut updated[best]);
    }
    centers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::row_sq_norms;
    use crate::restarts::run_rng;

    #[test]
    fn picks_distinct_rows_from_well_separated_groups() {
        // Three tight groups far apart: k-means++ must take one center from each.
        let mut rows = Vec::new();
        for g in 0..3 {
            for i in 0..5 {
                rows.push([100.0 * g as f64 + 0.01 * i as f64, 0.0]);
            }
        }
        let x = RowMatrix::from_rows(&rows);
        for seed in 0..20 {
            let c = kmeans_plus_plus(&x, &row_sq_norms(&x), 3, &mut run_rng(seed, 0));
            let mut groups: Vec<usize> =
                c.rows().map(|r| (r[0] / 100.0).round() as usize).collect();
            groups.sort();
            assert_eq!(groups, vec![0, 1, 2], "seed {seed}");
        }
    }

    #[test]
    fn weighted_draw_never_takes_a_zero_weight() {
        let mut rng = run_rng(1, 2);
        for _ in 0..1000 {
            let i = draw_weighted(&[0.0, 1.0, 0.0, 3.0], &mut rng);
            assert!(i == 1 || i == 3);
        }
        // All zero: any index.
        assert!(draw_weighted(&[0.0, 0.0], &mut rng) < 2);
    }
}
