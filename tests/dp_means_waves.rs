//! DP-means sweeps run in waves (GEMM against the clusters that exist when a wave begins,
//! row-by-row checks for clusters opened during it). These tests pin down that this is the
//! plain sequential algorithm of MAD-Bayes §3.1 (objective Eq. 3) and that the result does
//! not depend on the number of threads; the nearest-center search used by K-means is checked
//! the same way.

use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::clustering::dp_means::{dp_means_run, random_order};
use madbayes::clustering::objective::{cluster_means, dp_means_objective};
use madbayes::clustering::{DpMeans, KMeans};
use madbayes::linalg::{mean_row, sq_dist};
use madbayes::restarts::run_rng;
use rand::RngExt;

/// `n` rows in `d` dimensions around `k` centers uniform in [-50, 50]^d, uniform noise of
/// half-width 1.
fn blobs(n: usize, d: usize, k: usize, seed: u64) -> RowMatrix {
    let mut rng = run_rng(seed, 0);
    let centers: Vec<f64> = (0..k * d).map(|_| rng.random_range(-50.0..50.0)).collect();
    let mut data = Vec::with_capacity(n * d);
    for _ in 0..n {
        let c = rng.random_range(0..k);
        for j in 0..d {
            data.push(centers[c * d + j] + rng.random_range(-1.0..1.0));
        }
    }
    RowMatrix::new(n, d, data)
}

/// DP-means written out directly: every row against every mean by `sq_dist`, in order.
fn naive_dp_means(
    x: &RowMatrix,
    penalty: f64,
    k_max: usize,
    max_iter: usize,
    order: &[usize],
) -> (Vec<usize>, RowMatrix, usize) {
    let n = x.n_rows();
    let mut means = RowMatrix::from_rows(&[mean_row(x.view())]);
    let mut labels = vec![0usize; n];
    let mut iters = 0;
    while iters < max_iter {
        iters += 1;
        let mut changed = false;
        for &r in order {
            let (mut best, mut best_d) = (0, sq_dist(x.row(r), means.row(0)));
            for j in 1..means.n_rows() {
                let dist = sq_dist(x.row(r), means.row(j));
                if dist < best_d {
                    (best, best_d) = (j, dist);
                }
            }
            if best_d > penalty && means.n_rows() < k_max {
                best = means.n_rows();
                means.push_row(x.row(r));
            }
            changed |= labels[r] != best;
            labels[r] = best;
        }
        if !changed {
            break;
        }
        let k = means.n_rows();
        means = cluster_means(x.view(), &labels, k);
        // Drop empty clusters, keeping the others in order.
        let mut used = vec![false; k];
        labels.iter().for_each(|&c| used[c] = true);
        let mut new_index = vec![usize::MAX; k];
        let mut next = 0;
        for j in 0..k {
            if used[j] {
                new_index[j] = next;
                next += 1;
            }
        }
        labels.iter_mut().for_each(|c| *c = new_index[*c]);
        means.retain_rows(&used);
    }
    (labels, means, iters)
}

#[test]
fn waves_give_the_sequential_algorithm() {
    // 40 000 rows span every wave size (256, 512, … up to the largest), and clusters keep
    // being opened well into the first sweep. The first sweep's delayed base pass comes with
    // clusters opened on both sides of it (checked by hand: at P = 400 it comes at row 768
    // with 50 clusters and the sweep ends with 51; with 400 centers at row 3 840).
    // At P = 0.5 and 1 (eight columns) the first sweep opens more than 8 192 clusters; past
    // that many its waves, and the second sweep's base pass, measure each row against the
    // means within reach of P alone (four or two sweeps, the naive sweeps being slow at that
    // many clusters; on 40 000 rows three waves of the first sweep go by anchors).
    for (x, penalty, k_max, sweeps) in [
        (blobs(40_000, 4, 60, 3), 30.0, usize::MAX, 50),
        (blobs(40_000, 4, 60, 3), 30.0, 25, 50),
        (blobs(40_000, 4, 60, 3), 400.0, usize::MAX, 50),
        (blobs(40_000, 4, 400, 5), 30.0, usize::MAX, 50),
        (blobs(20_000, 8, 60, 3), 0.5, usize::MAX, 4),
        (blobs(20_000, 8, 60, 3), 1.0, usize::MAX, 4),
        (blobs(40_000, 8, 60, 4), 0.5, usize::MAX, 2),
    ] {
        let order = random_order(x.n_rows(), &mut run_rng(9, 0));
        let start = mean_row(x.view());
        if sweeps < 50 {
            let first = dp_means_run(x.view(), &start, penalty, k_max, 1, &order);
            assert!(
                first.means.n_rows() > 8192,
                "{} clusters",
                first.means.n_rows()
            );
        }
        let run = dp_means_run(x.view(), &start, penalty, k_max, sweeps, &order);
        let (labels, means, iters) = naive_dp_means(&x, penalty, k_max, sweeps, &order);
        assert_eq!(run.n_iter, iters, "P = {penalty}, k_max = {k_max}");
        assert_eq!(run.labels, labels, "P = {penalty}, k_max = {k_max}");
        assert_eq!(run.means.n_rows(), means.n_rows());
        let want = dp_means_objective(x.view(), &labels, &means, penalty);
        assert!(
            (run.objective - want).abs() <= 1e-12 * want,
            "{} vs {want}",
            run.objective
        );
        assert!(run.means.n_rows() > 20, "the test must open many clusters");
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let x = blobs(50_000, 5, 40, 4);
    let fit = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            // The paper's sweeps (`plain`), whose waves are what this test is about.
            let dp = DpMeans::params(20.0)
                .plain()
                .restarts(2)
                .seed(5)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            let init = RowMatrix::from_rows(&(0..40).map(|i| x.row(i * 1000)).collect::<Vec<_>>());
            let km = KMeans::params(40)
                .max_iter(15)
                .check()
                .unwrap()
                .fit_from_means(x.view(), &init)
                .unwrap();
            (
                dp.labels().to_vec(),
                dp.objective().to_bits(),
                km.labels().to_vec(),
                km.objective().to_bits(),
                km.means().clone(),
            )
        })
    };
    let one = fit(1);
    assert_eq!(one, fit(2));
    assert_eq!(one, fit(3));
}
