//! The clustering objectives of MAD-Bayes as plain functions, so any labelling can be scored.
//!
//! Notation (`docs/algorithms.md`, "Notation"): `x` is `N × D`, `labels[n] = c_n ∈ 0..K`, `means` is `K × D`
//! (row k is a_k), P = λ² the penalty. Sums are taken over fixed row blocks and added in
//! block order, so a value is bit-identical for any thread count.

use crate::MatrixView;
use crate::RowMatrix;
use crate::linalg::{BLOCK_ROWS, axpy, ordered_block_reduce, sq_dist};

/// Σ_n ‖x_n − a_{c_n}‖².
///
/// # Panics
/// When shapes disagree or a label is not below `means.n_rows()`.
#[track_caller]
pub fn sum_of_squares(x: MatrixView<'_>, labels: &[usize], means: &RowMatrix) -> f64 {
    assert_eq!(labels.len(), x.n_rows(), "one label per row");
    assert_eq!(means.n_cols(), x.n_cols(), "means and data differ in D");
    assert!(
        labels.iter().all(|&c| c < means.n_rows()),
        "a label is not below K = {}",
        means.n_rows()
    );
    let mut total = 0.0;
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| {
            (s..e)
                .map(|n| sq_dist(x.row(n), means.row(labels[n])))
                .sum::<f64>()
        },
        |p| total += p,
    );
    total
}

/// K-means objective (fixed K): Σ_n ‖x_n − a_{c_n}‖².
#[track_caller]
pub fn kmeans_objective(x: &RowMatrix, labels: &[usize], means: &RowMatrix) -> f64 {
    sum_of_squares(x.view(), labels, means)
}

/// DP-means objective (Broderick et al. 2013, Eq. 3): Σ_n ‖x_n − a_{c_n}‖² + (K − 1)·P, with
/// K = `means.n_rows()` (every mean counts, used or not).
#[track_caller]
pub fn dp_means_objective(
    x: MatrixView<'_>,
    labels: &[usize],
    means: &RowMatrix,
    penalty: f64,
) -> f64 {
    sum_of_squares(x, labels, means) + (means.n_rows() as f64 - 1.0) * penalty
}

/// Collapsed DP-means objective (Eq. 9): Σ_k Σ_{n: c_n = k} ‖x_n − x̄_k‖² + (K − 1)·P, where
/// x̄_k is the empirical mean of cluster k and K the number of non-empty clusters. Labels may
/// be any integers; only the partition they define matters.
#[track_caller]
pub fn collapsed_dp_means_objective(x: MatrixView<'_>, labels: &[usize], penalty: f64) -> f64 {
    let (compact, k) = compact_labels(labels);
    let means = cluster_means(x, &compact, k);
    sum_of_squares(x, &compact, &means) + (k as f64 - 1.0) * penalty
}

/// Relabels a partition as `0..K` in order of first appearance; returns the labels and K.
pub fn compact_labels(labels: &[usize]) -> (Vec<usize>, usize) {
    let mut map = std::collections::HashMap::new();
    let out = labels
        .iter()
        .map(|&c| {
            let next = map.len();
            *map.entry(c).or_insert(next)
        })
        .collect();
    (out, map.len())
}

/// Empirical mean of each cluster `0..k` (an empty cluster gets a zero row). Each sum runs
/// over the rows in index order, so it is the same for any thread count.
#[track_caller]
pub fn cluster_means(x: MatrixView<'_>, labels: &[usize], k: usize) -> RowMatrix {
    assert_eq!(labels.len(), x.n_rows(), "one label per row");
    let d = x.n_cols();
    let mut sums = RowMatrix::zeros(k, d);
    let mut counts = vec![0usize; k];
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| {
            let mut part = BlockSums::new(k, d);
            for n in s..e {
                part.add(x.row(n), labels[n]);
            }
            part
        },
        |part| {
            for (j, sum, count) in part.slots() {
                axpy(1.0, sum, sums.row_mut(j));
                counts[j] += count;
            }
        },
    );
    for j in 0..k {
        if counts[j] > 0 {
            let inv = 1.0 / counts[j] as f64;
            sums.row_mut(j).iter_mut().for_each(|v| *v *= inv);
        }
    }
    sums
}

/// The sums of one block's rows by cluster (clusters `0..k`), kept for the clusters the block
/// touches only, each in a slot in order of first appearance: a block touches at most as many
/// clusters as it has rows, where a zeroed K × D sum per block cost more than its rows once
/// K ran into the tens of thousands (61 MB a block at 152 163 clusters of 50 values). Each
/// cluster's sum runs over the block's rows in order from zero, as a full K × D sum's does,
/// so the sums a caller adds up block by block have the same bits.
pub(crate) struct BlockSums {
    /// Each cluster's slot, `u32::MAX` for none.
    slot: Vec<u32>,
    /// Each slot's cluster, sum (`d` values) and count.
    labels: Vec<usize>,
    sums: Vec<f64>,
    counts: Vec<usize>,
    d: usize,
}

impl BlockSums {
    pub(crate) fn new(k: usize, d: usize) -> Self {
        Self {
            slot: vec![u32::MAX; k],
            labels: Vec::new(),
            sums: Vec::new(),
            counts: Vec::new(),
            d,
        }
    }

    pub(crate) fn add(&mut self, row: &[f64], label: usize) {
        if label >= self.slot.len() {
            self.slot.resize(label + 1, u32::MAX);
        }
        if self.slot[label] == u32::MAX {
            self.slot[label] = self.labels.len() as u32;
            self.labels.push(label);
            self.sums.resize(self.sums.len() + self.d, 0.0);
            self.counts.push(0);
        }
        let i = self.slot[label] as usize;
        axpy(1.0, row, &mut self.sums[i * self.d..(i + 1) * self.d]);
        self.counts[i] += 1;
    }

    /// How many clusters the block's labels range over (at least the `k` it was made for).
    pub(crate) fn k(&self) -> usize {
        self.slot.len()
    }

    /// Each touched cluster's label, sum and count, in order of first appearance.
    pub(crate) fn slots(&self) -> impl Iterator<Item = (usize, &[f64], usize)> {
        let d = self.d;
        self.labels
            .iter()
            .zip(&self.counts)
            .enumerate()
            .map(move |(i, (&j, &c))| (j, &self.sums[i * d..(i + 1) * d], c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy() -> RowMatrix {
        RowMatrix::from_rows(&[
            [0.0, 0.0],
            [2.0, 0.0],
            [10.0, 10.0],
            [10.0, 12.0],
            [11.0, 11.0],
        ])
    }

    #[test]
    fn hand_computed_values() {
        let x = toy();
        let labels = [0, 0, 1, 1, 1];
        let means = cluster_means(x.view(), &labels, 2);
        assert_eq!(means.row(0), &[1.0, 0.0]);
        assert!((means.row(1)[0] - 31.0 / 3.0).abs() < 1e-12 && means.row(1)[1] == 11.0);
        // Cluster 0: 1 + 1 = 2. Cluster 1: x-deviations (-1/3, -1/3, 2/3), y (-1, 1, 0).
        let ss = 2.0 + (1.0 / 9.0 + 1.0 / 9.0 + 4.0 / 9.0) + 2.0;
        assert!((kmeans_objective(&x, &labels, &means) - ss).abs() < 1e-12);
        assert!((dp_means_objective(x.view(), &labels, &means, 5.0) - (ss + 5.0)).abs() < 1e-12);
        // Only the partition matters for the collapsed objective.
        let relabelled = [7, 7, 3, 3, 3];
        assert!(
            (collapsed_dp_means_objective(x.view(), &relabelled, 5.0) - (ss + 5.0)).abs() < 1e-12
        );
        // One cluster pays no penalty.
        let one = [0; 5];
        let m = cluster_means(x.view(), &one, 1);
        assert_eq!(
            dp_means_objective(x.view(), &one, &m, 100.0),
            sum_of_squares(x.view(), &one, &m)
        );
    }

    /// The means have the bits of per-block sums over all K clusters added in block order
    /// (the form before the block's sums kept its clusters only), on rows over several
    /// blocks, with empty clusters and clusters met in any order. Fails if a block's sums
    /// are added to the wrong cluster or a block's first row is dropped.
    #[test]
    fn means_are_the_block_sums_of_every_cluster() {
        let (n, d, k) = (2 * BLOCK_ROWS + 333, 3, 40);
        let v: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919) % 1013) as f64 / 97.0 - 5.0)
            .collect();
        let x = RowMatrix::new(n, d, v);
        // Clusters 0, 17 and 39 empty; the others met in a scrambled order.
        let labels: Vec<usize> = (0..n)
            .map(|i| 1 + (i * 31 + i / 5) % 16 + 20 * (i % 2))
            .collect();
        let mut sums = RowMatrix::zeros(k, d);
        let mut counts = vec![0usize; k];
        for s in (0..n).step_by(BLOCK_ROWS) {
            let mut part = RowMatrix::zeros(k, d);
            let mut cnt = vec![0usize; k];
            for i in s..(s + BLOCK_ROWS).min(n) {
                axpy(1.0, x.row(i), part.row_mut(labels[i]));
                cnt[labels[i]] += 1;
            }
            for j in (0..k).filter(|&j| cnt[j] > 0) {
                axpy(1.0, part.row(j), sums.row_mut(j));
                counts[j] += cnt[j];
            }
        }
        let means = cluster_means(x.view(), &labels, k);
        for j in 0..k {
            let want: Vec<u64> = if counts[j] == 0 {
                vec![0; d]
            } else {
                let inv = 1.0 / counts[j] as f64;
                sums.row(j).iter().map(|v| (v * inv).to_bits()).collect()
            };
            let got: Vec<u64> = means.row(j).iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "cluster {j}");
        }
        assert!([0, 17, 39].iter().all(|&j| counts[j] == 0));
        assert_eq!(counts.iter().filter(|&&c| c > 0).count(), 20);
    }

    #[test]
    fn compact_labels_keeps_first_appearance_order() {
        assert_eq!(compact_labels(&[5, 2, 5, 9]), (vec![0, 1, 0, 2], 3));
    }
}
