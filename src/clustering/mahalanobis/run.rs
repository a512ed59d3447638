//! One run of Mahalanobis clustering: seeding, then alternate constrained assignment and exact
//! re-estimation of means and covariances until nothing moves.

use super::chol::Cholesky;
use super::model::MahalanobisRun;
use super::objective::{mahalanobis_objective, optimal_covariances};
use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::kmeans::{kmeans_plus_plus, lloyd};
use crate::clustering::model::ClusterRun;
use crate::clustering::objective::cluster_means;
use crate::linalg::{BLOCK_ROWS, sq_dist};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Lloyd iterations run after k-means++ when seeding.
pub const SEED_LLOYD_STEPS: usize = 3;

/// Means, covariances Σ_k = (S_k + Φ)/P, their factors, and the profile objective of a labelling.
pub(crate) struct Estimate {
    pub means: RowMatrix,
    pub covariances: Vec<RowMatrix>,
    pub chols: Vec<Cholesky>,
    /// Σ_k [P·D + P log det Σ_k].
    pub objective: f64,
}

/// The optimal means and covariances for `labels` (clusters `0..k`), or `None` when some
/// Σ_k is not numerically positive definite (possible only for φ = 0).
pub(crate) fn estimate(
    x: MatrixView<'_>,
    labels: &[usize],
    k: usize,
    penalty: f64,
    phi: f64,
) -> Option<Estimate> {
    let d = x.n_cols();
    let means = cluster_means(x, labels, k);
    let covariances = optimal_covariances(x, labels, &means, penalty, phi);
    let chols = covariances
        .iter()
        .map(|s| Cholesky::factor(s.as_slice(), d))
        .collect::<Option<Vec<_>>>()?;
    let objective = chols
        .iter()
        .map(|c| penalty * (d as f64 + c.log_det()))
        .sum();
    Some(Estimate {
        means,
        covariances,
        chols,
        objective,
    })
}

/// Squared Mahalanobis distance of every row to every cluster, `N × K` row-major, computed
/// per row (so independent of the thread count).
pub(crate) fn mahalanobis_distances(
    x: MatrixView<'_>,
    means: &RowMatrix,
    chols: &[Cholesky],
) -> Vec<f64> {
    let (n, d, k) = (x.n_rows(), x.n_cols(), means.n_rows());
    let mut out = vec![0.0; n * k];
    out.par_chunks_mut(BLOCK_ROWS * k)
        .enumerate()
        .for_each(|(b, chunk)| {
            let mut buf = vec![0.0; d];
            for (i, row) in chunk.chunks_exact_mut(k).enumerate() {
                let xn = x.row(b * BLOCK_ROWS + i);
                for (j, v) in row.iter_mut().enumerate() {
                    *v = chols[j].quad_form(xn, means.row(j), &mut buf);
                }
            }
        });
    out
}

/// Index of the smallest value, ties to the lowest index.
fn argmin(v: &[f64]) -> usize {
    let mut best = 0;
    for (j, &d) in v.iter().enumerate().skip(1) {
        if d < v[best] {
            best = j;
        }
    }
    best
}

/// One assignment pass against fixed means and covariances: in row order, each row moves to
/// its nearest cluster (Mahalanobis; ties to the lowest index) if that is strictly nearer than
/// its own and its own cluster keeps at least `min_size` rows. Returns the number of moves.
fn constrained_moves(
    dist: &[f64],
    k: usize,
    labels: &mut [usize],
    counts: &mut [usize],
    min_size: usize,
) -> usize {
    let mut moved = 0;
    for (n, c) in labels.iter_mut().enumerate() {
        let row = &dist[n * k..(n + 1) * k];
        let best = argmin(row);
        if best != *c && row[best] < row[*c] && counts[*c] > min_size {
            counts[*c] -= 1;
            counts[best] += 1;
            *c = best;
            moved += 1;
        }
    }
    moved
}

/// The exact change of the profile objective J* when a row with squared Mahalanobis
/// distances `row` (under Σ_j = (S_j + Φ)/P of the current labels) moves from cluster `c` to
/// `j`. Both S_c + Φ and S_j + Φ change by rank-one terms, so by the matrix determinant
/// lemma
///
/// ΔJ* = P ln(1 + n_j/(n_j + 1) · d_j(x)/P) + P ln(1 − n_c/(n_c − 1) · d_c(x)/P).
///
/// `None` when the move would leave cluster c numerically singular (or empty).
fn exact_move_delta(
    row: &[f64],
    c: usize,
    j: usize,
    counts: &[usize],
    penalty: f64,
) -> Option<f64> {
    let (nc, nj) = (counts[c] as f64, counts[j] as f64);
    if counts[c] < 2 {
        return None;
    }
    let shrink = -nc / (nc - 1.0) * row[c] / penalty;
    if shrink.is_nan() || shrink <= -1.0 + 1e-12 {
        return None;
    }
    Some(penalty * shrink.ln_1p() + penalty * (nj / (nj + 1.0) * row[j] / penalty).ln_1p())
}

/// The single move (by [`exact_move_delta`]) that lowers J* the most, among rows whose
/// cluster keeps at least `min_size` rows; `(row, to)` when its ΔJ* is below `−tol`, ties to
/// the lowest row and cluster.
fn best_exact_move(
    dist: &[f64],
    k: usize,
    labels: &[usize],
    counts: &[usize],
    min_size: usize,
    penalty: f64,
    tol: f64,
) -> Option<(usize, usize)> {
    let mut best = None;
    let mut best_delta = -tol;
    for (n, &c) in labels.iter().enumerate() {
        if counts[c] <= min_size {
            continue;
        }
        let row = &dist[n * k..(n + 1) * k];
        for j in (0..k).filter(|&j| j != c) {
            match exact_move_delta(row, c, j, counts, penalty) {
                Some(delta) if delta < best_delta => {
                    best_delta = delta;
                    best = Some((n, j));
                }
                _ => {}
            }
        }
    }
    best
}

/// The exact change of J* when, in a cluster of `size` rows, row x leaves and row y joins,
/// from their whitened residuals w_x = L⁻¹(x − a), w_y = L⁻¹(y − a) under that cluster's
/// Σ = L Lᵀ. With u = y − a, v = x − a the scatter becomes
/// S + (1 − 1/n) u uᵀ − (1 + 1/n) v vᵀ + (1/n)(u vᵀ + v uᵀ) = S + U C Uᵀ, U = [u v], so by the
/// matrix determinant lemma det(S' + Φ)/det(S + Φ) = det(I₂ + C Uᵀ(S + Φ)⁻¹U), and
/// (S + Φ)⁻¹ = Σ⁻¹/P. `None` when the new S' + Φ would be numerically singular.
fn exchange_delta(size: usize, w_x: &[f64], w_y: &[f64], penalty: f64) -> Option<f64> {
    let inv_n = 1.0 / size as f64;
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
    let (guu, gvv, guv) = (
        dot(w_y, w_y) / penalty,
        dot(w_x, w_x) / penalty,
        dot(w_x, w_y) / penalty,
    );
    // M = I + C G with C = [[1 − 1/n, 1/n], [1/n, −1 − 1/n]], G = [[guu, guv], [guv, gvv]].
    let (c11, c12, c22) = (1.0 - inv_n, inv_n, -1.0 - inv_n);
    let m11 = 1.0 + c11 * guu + c12 * guv;
    let m12 = c11 * guv + c12 * gvv;
    let m21 = c12 * guu + c22 * guv;
    let m22 = 1.0 + c12 * guv + c22 * gvv;
    let det = m11 * m22 - m12 * m21;
    (det > 1e-12).then(|| penalty * det.ln())
}

/// The best exact exchange x ↔ y for rows x of clusters at the minimum size (which no single
/// move may shrink) and rows y of any other cluster: ΔJ* is the sum of [`exchange_delta`] for
/// both clusters. Returns `(x, y)` when the best ΔJ* is below `−tol`, ties to the lowest rows.
/// Cost O(N·D²) per cluster at the minimum size.
fn best_exact_exchange(
    x: MatrixView<'_>,
    est: &Estimate,
    labels: &[usize],
    counts: &[usize],
    min_size: usize,
    penalty: f64,
    tol: f64,
) -> Option<(usize, usize)> {
    let (n, d, k) = (x.n_rows(), x.n_cols(), counts.len());
    // Whitened residuals of every row under its own cluster (`N × D`, row-major).
    let own = whiten_rows(x, est, |r| labels[r]);
    let mut best = None;
    let mut best_delta = -tol;
    // Whitened residuals of one member under every cluster (`K × D`).
    let mut member_w = vec![0.0; k * d];
    for c in (0..k).filter(|&c| counts[c] == min_size) {
        let under_c = whiten_rows(x, est, |_| c);
        for xr in (0..n).filter(|&r| labels[r] == c) {
            for (j, w) in member_w.chunks_exact_mut(d).enumerate() {
                est.chols[j].quad_form(x.row(xr), est.means.row(j), w);
            }
            for y in (0..n).filter(|&y| labels[y] != c) {
                let j = labels[y];
                let (Some(dc), Some(dj)) = (
                    exchange_delta(counts[c], row(&own, xr, d), row(&under_c, y, d), penalty),
                    exchange_delta(counts[j], row(&own, y, d), row(&member_w, j, d), penalty),
                ) else {
                    continue;
                };
                if dc + dj < best_delta {
                    best_delta = dc + dj;
                    best = Some((xr, y));
                }
            }
        }
    }
    best
}

/// Row `r` of a row-major matrix with `d` columns.
fn row(m: &[f64], r: usize, d: usize) -> &[f64] {
    &m[r * d..(r + 1) * d]
}

/// L_c⁻¹(x_r − a_c) for every row r with c = `cluster(r)`, `N × D` row-major, rows in
/// parallel (each computed alone, so independent of the thread count).
fn whiten_rows(
    x: MatrixView<'_>,
    est: &Estimate,
    cluster: impl Fn(usize) -> usize + Sync,
) -> Vec<f64> {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut out = vec![0.0; n * d];
    out.par_chunks_mut(BLOCK_ROWS * d)
        .enumerate()
        .for_each(|(b, chunk)| {
            for (i, w) in chunk.chunks_exact_mut(d).enumerate() {
                let r = b * BLOCK_ROWS + i;
                let c = cluster(r);
                est.chols[c].quad_form(x.row(r), est.means.row(c), w);
            }
        });
    out
}

/// Initial labels: k-means++ and [`SEED_LLOYD_STEPS`] Lloyd iterations, then every cluster
/// with fewer than D + 1 rows is filled, lowest cluster index first, with the rows nearest
/// (Euclidean) to its Lloyd mean taken from clusters that have more than D + 1 rows.
///
/// # Panics
/// When N < K·(D + 1) (checked before any run).
pub fn seed_labels(
    x: MatrixView<'_>,
    x_norms: &[f64],
    k: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<usize> {
    let min_size = x.n_cols() + 1;
    assert!(x.n_rows() >= k * min_size, "N < K·(D + 1)");
    let init = kmeans_plus_plus(x, x_norms, k, rng);
    let ClusterRun { labels, means, .. } = lloyd(x, init, SEED_LLOYD_STEPS);
    repair_small_clusters(x, labels, &means, min_size)
}

/// Moves rows into clusters with fewer than `min_size` rows until none is left (see
/// [`seed_labels`]). Donor clusters never drop below `min_size`, so this ends after at most
/// K·`min_size` moves whenever N ≥ K·`min_size`.
pub(crate) fn repair_small_clusters(
    x: MatrixView<'_>,
    mut labels: Vec<usize>,
    centers: &RowMatrix,
    min_size: usize,
) -> Vec<usize> {
    let k = centers.n_rows();
    let mut counts = vec![0usize; k];
    labels.iter().for_each(|&c| counts[c] += 1);
    while let Some(j) = (0..k).find(|&j| counts[j] < min_size) {
        let donor = (0..x.n_rows())
            .filter(|&n| labels[n] != j && counts[labels[n]] > min_size)
            .min_by(|&a, &b| {
                sq_dist(x.row(a), centers.row(j))
                    .total_cmp(&sq_dist(x.row(b), centers.row(j)))
                    .then(a.cmp(&b))
            })
            .expect("N ≥ K·min_size leaves a donor");
        counts[labels[donor]] -= 1;
        counts[j] += 1;
        labels[donor] = j;
    }
    labels
}

/// One run of Mahalanobis clustering from `init` labels (clusters `0..k`, each with at least
/// D + 1 rows), penalty P and Φ = `phi`·I.
///
/// Each iteration changes the labels by one of, in this order of preference:
/// 1. a constrained assignment pass (Sup. Mat. E's alternation): against the current means
///    and covariances each row goes to its nearest cluster in Mahalanobis distance, if its
///    own cluster keeps more than D rows;
/// 2. when that moves nothing, the single move that lowers the profile objective J* most,
///    evaluated exactly by the matrix determinant lemma (`exact_move_delta`);
/// 3. when there is none, the exact exchange of a row of a cluster at the minimum size with
///    a row of another cluster that lowers J* most (`exchange_delta`);
///
/// and then re-estimates a_k = x̄_k, Σ_k = (S_k + Φ)/P exactly. Every step lowers J, so
/// `trace` (J* after each iteration) is non-increasing: an iteration whose re-estimated
/// objective is not strictly lower (rounding), or is singular (φ = 0), is undone and the run
/// stops as converged. The run also stops when none of the three finds a move, or after
/// `max_iter` iterations. The reported objective is [`mahalanobis_objective`] of the
/// returned labels, means and covariances.
///
/// If the initial labels already give a singular Σ_k (only possible when φ = 0) the run
/// returns them with objective +∞, which loses to any valid run.
///
/// # Panics
/// When a label is not below `k` or a cluster has fewer than D + 1 rows.
#[track_caller]
pub fn mahalanobis_run(
    x: MatrixView<'_>,
    init: Vec<usize>,
    k: usize,
    penalty: f64,
    phi: f64,
    max_iter: usize,
) -> MahalanobisRun {
    let min_size = x.n_cols() + 1;
    assert_eq!(init.len(), x.n_rows(), "one label per row");
    let mut counts = vec![0usize; k];
    for &c in &init {
        assert!(c < k, "a label is not below K = {k}");
        counts[c] += 1;
    }
    assert!(
        counts.iter().all(|&c| c >= min_size),
        "every cluster needs at least D + 1 = {min_size} rows, got sizes {counts:?}"
    );
    let mut labels = init;
    let Some(mut est) = estimate(x, &labels, k, penalty, phi) else {
        let means = cluster_means(x, &labels, k);
        let covariances = optimal_covariances(x, &labels, &means, penalty, phi);
        return MahalanobisRun {
            run: ClusterRun {
                labels,
                means,
                objective: f64::INFINITY,
                n_iter: 0,
                converged: false,
                trace: Vec::new(),
            },
            covariances,
        };
    };
    let mut trace = Vec::new();
    let mut converged = false;
    let mut n_iter = 0;
    while n_iter < max_iter {
        n_iter += 1;
        let dist = mahalanobis_distances(x, &est.means, &est.chols);
        let mut next = labels.clone();
        let mut next_counts = counts.clone();
        if constrained_moves(&dist, k, &mut next, &mut next_counts, min_size) == 0 {
            let tol = 1e-12 * (1.0 + est.objective.abs());
            if let Some((n, to)) =
                best_exact_move(&dist, k, &labels, &counts, min_size, penalty, tol)
            {
                next_counts[labels[n]] -= 1;
                next_counts[to] += 1;
                next[n] = to;
            } else if let Some((a, b)) =
                best_exact_exchange(x, &est, &labels, &counts, min_size, penalty, tol)
            {
                next.swap(a, b);
            } else {
                converged = true;
                trace.push(est.objective);
                break;
            }
        }
        match estimate(x, &next, k, penalty, phi) {
            Some(e) if e.objective < est.objective => {
                est = e;
                labels = next;
                counts = next_counts;
                trace.push(est.objective);
            }
            _ => {
                converged = true;
                trace.push(est.objective);
                break;
            }
        }
    }
    let objective = mahalanobis_objective(x, &labels, &est.means, &est.covariances, penalty, phi);
    MahalanobisRun {
        run: ClusterRun {
            labels,
            means: est.means,
            objective,
            n_iter,
            converged,
            trace,
        },
        covariances: est.covariances,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_respect_the_minimum_size() {
        // Two clusters of 2 (min size 2): row 0 prefers cluster 1 but may not leave.
        let dist = [5.0, 1.0, 1.0, 5.0, 9.0, 1.0, 9.0, 1.0, 1.0, 9.0];
        let mut labels = vec![0, 0, 1, 1, 1];
        let mut counts = vec![2, 3];
        let moved = constrained_moves(&dist, 2, &mut labels, &mut counts, 2);
        // Row 0 is stuck (cluster 0 has only 2); row 4 moves 1 → 0 (cluster 1 had 3).
        assert_eq!(moved, 1);
        assert_eq!(labels, vec![0, 0, 1, 1, 0]);
        assert_eq!(counts, vec![3, 2]);
    }

    #[test]
    fn exact_move_delta_matches_the_recomputed_profile() {
        let x = RowMatrix::from_rows(&[
            [0.0, 0.1],
            [1.0, -0.3],
            [0.4, 1.2],
            [2.0, 0.9],
            [5.0, 5.5],
            [6.0, 4.0],
            [5.5, 6.1],
            [3.0, 2.0],
        ]);
        let (k, p, phi) = (2, 1.7, 0.05);
        let labels = vec![0, 0, 0, 0, 1, 1, 1, 1];
        let counts = vec![4, 4];
        let est = estimate(x.view(), &labels, k, p, phi).unwrap();
        let dist = mahalanobis_distances(x.view(), &est.means, &est.chols);
        for n in 0..8 {
            let to = 1 - labels[n];
            let delta =
                exact_move_delta(&dist[n * k..(n + 1) * k], labels[n], to, &counts, p).unwrap();
            let mut moved = labels.clone();
            moved[n] = to;
            let after = estimate(x.view(), &moved, k, p, phi).unwrap().objective;
            let want = after - est.objective;
            assert!(
                (delta - want).abs() < 1e-10 * (1.0 + want.abs()),
                "row {n}: {delta} vs {want}"
            );
        }
        // Exchanges of every pair across the two clusters.
        for a in 0..4 {
            for b in 4..8 {
                let w = |r: usize, c: usize| {
                    let mut v = vec![0.0; 2];
                    est.chols[c].quad_form(x.row(r), est.means.row(c), &mut v);
                    v
                };
                let delta = exchange_delta(4, &w(a, 0), &w(b, 0), p).unwrap()
                    + exchange_delta(4, &w(b, 1), &w(a, 1), p).unwrap();
                let mut swapped = labels.clone();
                swapped.swap(a, b);
                let want =
                    estimate(x.view(), &swapped, k, p, phi).unwrap().objective - est.objective;
                assert!(
                    (delta - want).abs() < 1e-10 * (1.0 + want.abs()),
                    "{a}↔{b}: {delta} vs {want}"
                );
            }
        }
        // Without Φ, taking a row out of a 3-point cluster in 2-D leaves it singular.
        let small = vec![0, 0, 0, 1, 1, 1, 1, 1];
        let est = estimate(x.view(), &small, k, p, 0.0).unwrap();
        let dist = mahalanobis_distances(x.view(), &est.means, &est.chols);
        assert!(exact_move_delta(&dist[0..2], 0, 1, &[3, 5], p).is_none());
    }

    #[test]
    fn repair_fills_every_small_cluster_from_large_ones() {
        let x = RowMatrix::from_rows(&[[0.0], [0.1], [0.2], [0.3], [0.4], [5.0]]);
        let centers = RowMatrix::from_rows(&[[0.2], [5.0]]);
        let labels = repair_small_clusters(x.view(), vec![0, 0, 0, 0, 0, 1], &centers, 2);
        // Cluster 1 takes the row of cluster 0 nearest to 5.0, i.e. row 4.
        assert_eq!(labels, vec![0, 0, 0, 0, 1, 1]);
        // An empty cluster is filled too.
        let labels = repair_small_clusters(x.view(), vec![0; 6], &centers, 3);
        assert_eq!(labels, vec![0, 0, 0, 1, 1, 1]);
    }
}
