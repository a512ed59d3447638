//! Independent reference code for the clustering tests: data generators, an exhaustive
//! enumeration of set partitions, and the objectives and local-minimum conditions written
//! from their definitions (docs/algorithms.md; MAD-Bayes Eqs. 3, 9 and 12), without calling the
//! crate's own kernels.
#![allow(dead_code)]

use madbayes::RowMatrix;
use madbayes::clustering::Clustering;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A seeded generator for test data (independent of the crate's restart streams).
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(0x5eed_0000 ^ seed)
}

/// `n × d` values uniform on `[0, 1)`.
pub fn uniform(n: usize, d: usize, rng: &mut ChaCha8Rng) -> RowMatrix {
    RowMatrix::new(n, d, (0..n * d).map(|_| rng.random::<f64>()).collect())
}

/// `n × d` points around 2–3 random clump centers in `[0, 4)^d`, each point the center plus a
/// uniform offset in `[-0.6, 0.6)^d`, so clumps may touch and the optimum is not obvious.
pub fn clumps(n: usize, d: usize, rng: &mut ChaCha8Rng) -> RowMatrix {
    let c = rng.random_range(2..=3usize);
    let centers: Vec<Vec<f64>> = (0..c)
        .map(|_| (0..d).map(|_| 4.0 * rng.random::<f64>()).collect())
        .collect();
    let mut data = Vec::with_capacity(n * d);
    for _ in 0..n {
        let k = rng.random_range(0..c);
        for j in 0..d {
            data.push(centers[k][j] + 1.2 * (rng.random::<f64>() - 0.5));
        }
    }
    RowMatrix::new(n, d, data)
}

/// A standard normal draw (Box–Muller).
pub fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `per` points from each of the given centers with unit-variance Gaussian noise; returns
/// the data and the true group of each row. Rows of different groups are interleaved.
pub fn blobs(centers: &[Vec<f64>], per: usize, rng: &mut ChaCha8Rng) -> (RowMatrix, Vec<usize>) {
    let d = centers[0].len();
    let mut data = Vec::new();
    let mut truth = Vec::new();
    for _ in 0..per {
        for (g, c) in centers.iter().enumerate() {
            for &cj in c {
                data.push(cj + normal(rng));
            }
            truth.push(g);
        }
    }
    (RowMatrix::new(truth.len(), d, data), truth)
}

/// Σ_n ‖x_n‖², the scale used for tolerances.
pub fn data_scale(x: &RowMatrix) -> f64 {
    x.rows().map(|r| r.iter().map(|v| v * v).sum::<f64>()).sum()
}

fn sq(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum()
}

/// Blocks of a labelling: each block's member rows, in order of first appearance.
pub fn blocks(labels: &[usize]) -> Vec<Vec<usize>> {
    let mut ids: Vec<usize> = Vec::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (n, &c) in labels.iter().enumerate() {
        match ids.iter().position(|&i| i == c) {
            Some(p) => out[p].push(n),
            None => {
                ids.push(c);
                out.push(vec![n]);
            }
        }
    }
    out
}

/// The empirical mean of rows `members` of `x`.
pub fn centroid(x: &RowMatrix, members: &[usize]) -> Vec<f64> {
    let mut m = vec![0.0; x.n_cols()];
    for &n in members {
        for (mj, xj) in m.iter_mut().zip(x.row(n)) {
            *mj += xj;
        }
    }
    m.iter_mut().for_each(|v| *v /= members.len() as f64);
    m
}

/// Σ over members of ‖x_n − x̄‖² for one block.
pub fn block_ss(x: &RowMatrix, members: &[usize]) -> f64 {
    let m = centroid(x, members);
    members.iter().map(|&n| sq(x.row(n), &m)).sum()
}

/// Eq. 9: Σ_k Σ_{n∈k} ‖x_n − x̄_k‖² + (K − 1)·P over the partition `labels` defines.
pub fn collapsed_objective(x: &RowMatrix, labels: &[usize], penalty: f64) -> f64 {
    let b = blocks(labels);
    b.iter().map(|m| block_ss(x, m)).sum::<f64>() + (b.len() as f64 - 1.0) * penalty
}

/// Σ_n ‖x_n − a_{c_n}‖² against given means.
pub fn ss_against(x: &RowMatrix, labels: &[usize], means: &RowMatrix) -> f64 {
    (0..x.n_rows())
        .map(|n| sq(x.row(n), means.row(labels[n])))
        .sum()
}

/// For every K = 1..=N, the smallest within-cluster sum of squares over all partitions of
/// the rows into exactly K blocks (`best[K]`; `best[0]` is +∞), by enumerating restricted
/// growth strings.
pub fn best_ss_by_k(x: &RowMatrix) -> Vec<f64> {
    let n = x.n_rows();
    assert!(
        (1..=10).contains(&n),
        "exhaustive enumeration is for tiny data"
    );
    let mut best = vec![f64::INFINITY; n + 1];
    let mut rgs = vec![0usize; n];
    enumerate(x, &mut rgs, 1, 1, &mut best);
    best
}

fn enumerate(x: &RowMatrix, rgs: &mut Vec<usize>, i: usize, k: usize, best: &mut [f64]) {
    if i == rgs.len() {
        let ss: f64 = blocks(rgs).iter().map(|m| block_ss(x, m)).sum();
        if ss < best[k] {
            best[k] = ss;
        }
        return;
    }
    for c in 0..=k {
        rgs[i] = c;
        enumerate(x, rgs, i + 1, k.max(c + 1), best);
    }
}

/// Global optimum of the (capped) DP-means objective: min over K ≤ `k_max` of
/// best[K] + (K − 1)·P. Returns (value, K at the optimum).
pub fn dp_optimum(best: &[f64], penalty: f64, k_max: usize) -> (f64, usize) {
    let mut opt = (f64::INFINITY, 0);
    for (k, &ss) in best.iter().enumerate().skip(1).take(k_max) {
        let v = ss + (k as f64 - 1.0) * penalty;
        if v < opt.0 {
            opt = (v, k);
        }
    }
    opt
}

/// A penalty under which the DP-means optimum has a unique K in 2..=4 (drawn at random among
/// those possible, log-uniformly inside that K's interval of penalties), or `None`.
pub fn pick_penalty(best: &[f64], rng: &mut ChaCha8Rng) -> Option<f64> {
    let n = best.len() - 1;
    let mut options = Vec::new();
    for k in 2..=4usize.min(n) {
        // K is optimal for P in (lo, hi): below every larger K, below every smaller K.
        let lo = (k + 1..=n)
            .map(|j| (best[k] - best[j]) / (j - k) as f64)
            .fold(0.0, f64::max);
        let hi = (1..k)
            .map(|j| (best[j] - best[k]) / (k - j) as f64)
            .fold(f64::INFINITY, f64::min);
        if lo > 0.0 && hi > lo * 1.05 {
            options.push((lo, hi));
        }
    }
    if options.is_empty() {
        return None;
    }
    let (lo, hi) = options[rng.random_range(0..options.len())];
    // Stay clear of the interval's ends so the optimal K is unambiguous.
    let t = 0.1 + 0.8 * rng.random::<f64>();
    Some((lo.ln() + t * (hi.ln() - lo.ln())).exp())
}

/// `reported` is not below `optimum` (relative tolerance 1e-9).
#[track_caller]
pub fn assert_not_below(reported: f64, optimum: f64, what: &str) {
    assert!(
        reported >= optimum - 1e-9 * optimum.abs().max(1e-12),
        "{what}: reported {reported} is below the exhaustive optimum {optimum}"
    );
}

/// Local minimum of Lloyd's algorithm: every row's own mean is a nearest mean (ties allowed)
/// and every non-empty cluster's mean is its members' centroid. Returns the number of
/// non-empty clusters.
#[track_caller]
pub fn check_lloyd_fixed_point(
    x: &RowMatrix,
    labels: &[usize],
    means: &RowMatrix,
    tol: f64,
) -> usize {
    let k = means.n_rows();
    assert_eq!(labels.len(), x.n_rows());
    assert!(labels.iter().all(|&c| c < k), "label out of range");
    for n in 0..x.n_rows() {
        let own = sq(x.row(n), means.row(labels[n]));
        for j in 0..k {
            let other = sq(x.row(n), means.row(j));
            assert!(
                own <= other + tol,
                "row {n}: mean {j} at {other} is nearer than its own mean {} at {own}",
                labels[n]
            );
        }
    }
    let mut used = 0;
    for j in 0..k {
        let members: Vec<usize> = (0..labels.len()).filter(|&n| labels[n] == j).collect();
        if members.is_empty() {
            continue;
        }
        used += 1;
        let c = centroid(x, &members);
        assert!(
            sq(&c, means.row(j)) <= tol,
            "mean {j} {:?} is not its members' centroid {c:?}",
            means.row(j)
        );
    }
    used
}

/// Local minimum of DP-means (capped at `k_max`): the Lloyd conditions, no empty cluster,
/// and every row within P of its mean unless the cap is reached (else it would open one).
#[track_caller]
pub fn check_dp_fixed_point(
    x: &RowMatrix,
    labels: &[usize],
    means: &RowMatrix,
    penalty: f64,
    k_max: usize,
    tol: f64,
) {
    let used = check_lloyd_fixed_point(x, labels, means, tol);
    assert_eq!(used, means.n_rows(), "an empty cluster was returned");
    assert!(used <= k_max, "K = {used} exceeds the cap {k_max}");
    if used < k_max {
        for n in 0..x.n_rows() {
            let d = sq(x.row(n), means.row(labels[n]));
            assert!(
                d <= penalty + tol,
                "row {n} is {d} > P = {penalty} from its mean: it should open a cluster"
            );
        }
    }
}

/// Local minimum of Eq. 9 for exact coordinate descent: no single row moved to another
/// block, or to a new singleton block (while K < `k_max`), lowers the objective; with
/// `merges`, no union of two blocks lowers it either. All computed from scratch.
#[track_caller]
pub fn check_collapsed_local_min(
    x: &RowMatrix,
    labels: &[usize],
    penalty: f64,
    k_max: usize,
    merges: bool,
    tol: f64,
) {
    let j0 = collapsed_objective(x, labels, penalty);
    let b = blocks(labels);
    assert!(b.len() <= k_max, "K = {} exceeds the cap {k_max}", b.len());
    let fresh = labels.iter().max().map_or(0, |m| m + 1);
    for n in 0..labels.len() {
        let alone = b.iter().any(|m| m == &vec![n]);
        let mut targets: Vec<usize> = b
            .iter()
            .map(|m| labels[m[0]])
            .filter(|&c| c != labels[n])
            .collect();
        if !alone && b.len() < k_max {
            targets.push(fresh);
        }
        for t in targets {
            let mut moved = labels.to_vec();
            moved[n] = t;
            let j1 = collapsed_objective(x, &moved, penalty);
            assert!(
                j1 >= j0 - tol,
                "moving row {n} to block {t} lowers Eq. 9 from {j0} to {j1}"
            );
        }
    }
    if merges {
        for (i, bi) in b.iter().enumerate() {
            for bj in &b[i + 1..] {
                let mut merged = labels.to_vec();
                for &n in bj {
                    merged[n] = labels[bi[0]];
                }
                let j1 = collapsed_objective(x, &merged, penalty);
                assert!(
                    j1 >= j0 - tol,
                    "merging blocks {bi:?} and {bj:?} lowers Eq. 9 from {j0} to {j1}"
                );
            }
        }
    }
}

/// Whether two labellings define the same partition (equal up to relabelling).
pub fn same_partition(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && blocks(a) == blocks(b)
}

/// A named way to fit data.
pub type Fitter = (String, Box<dyn Fn(&RowMatrix) -> Clustering>);
