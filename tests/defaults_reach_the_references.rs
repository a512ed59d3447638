//! The library's defaults (no tuning: default restarts, seeding and refinement) reach the
//! reference values of issue 10 (measurements and commands: `docs/defaults.md`):
//!
//! * BP-means on the tabletop photos as `experiments::tabletop_matrix` prepares them, P = 20:
//!   the best value the issue knew (261.24 on the authors' matrix, which has the mean
//!   removed; 261.2804 on this one, which keeps it);
//! * K-features on the noise-free dice pictures: the published 768.5, 518.1, 252.0 and 0 at
//!   K = 1..4;
//! * BP-means on generated noisy block images (N = 100, 500, 1000; σ_X = 0.3, 0.5;
//!   P = 4σ_X²N): the four shapes, K = 4, at an objective no higher than the true Z's (with
//!   its least-squares A) — where the paper's Algorithm 1 ends at K = 1 on each of them;
//! * DP-means on `madbayes demo`'s data: all six clusters.
//!
//! The tests on `../shared/data` are compiled `#[ignore]` when it is absent (see `build.rs`),
//! so `cargo test` lists them as `ignored, needs …`; the others need nothing.

use madbayes::Fit;
use madbayes::clustering::{CollapsedDpMeans, DpMeans};
use madbayes::experiments::tabletop_matrix;
use madbayes::features::objective::{bp_means_objective, sum_of_squares};
use madbayes::features::{BpMeans, KFeatures, least_squares_means};
use madbayes::generate::{block_images, gaussian_blobs};
use madbayes::io::{read_image_folder, read_matrix};
use madbayes::metrics::adjusted_rand_index;
use madbayes::{BinaryMatrix, Model, RowMatrix};
use std::path::{Path, PathBuf};

/// `../shared/data/<rel>`.
fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(rel)
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/tabletop (not in this checkout)"
)]
fn tabletop_bp_means_defaults_reach_the_best_known_value() {
    let dir = shared("tabletop/images");
    let set = read_image_folder(&dir, false).unwrap();
    let y = tabletop_matrix(set.x, 100).unwrap();
    let fit = BpMeans::params(20.0).check().unwrap().fit(&y).unwrap();
    println!(
        "tabletop, P = 20, defaults: K = {}, objective {:.4}",
        fit.k(),
        fit.objective()
    );
    // 261.2804 is where the best (261.24 on its preparation of the photos) lies on
    // this one; the paper's Algorithm 1 ends at 277.55 with 1000 restarts.
    assert!(fit.objective() <= 261.2805, "{}", fit.objective());
    let recomputed = bp_means_objective(&y, &fit.z(), fit.means(), 20.0);
    assert!((recomputed - fit.objective()).abs() < 1e-9 * recomputed);
    let plain = BpMeans::params(20.0)
        .plain()
        .check()
        .unwrap()
        .fit(&y)
        .unwrap();
    assert!(plain.objective() > 270.0, "{}", plain.objective());
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/bp-means-dice (not in this checkout)"
)]
fn dice_k_features_defaults_reach_the_published_values() {
    let dir = shared("bp-means-dice");
    let mut x = read_matrix(&dir.join("X_rowmajor.csv")).unwrap();
    x.as_mut_slice().iter_mut().for_each(|v| *v /= 255.0);
    // Published to 0.1 (the authors' best of 1000 restarts); 513.8616 at K = 2 is lower.
    for (k, published) in [(1, 768.5), (2, 518.1), (3, 252.0), (4, 0.0)] {
        let fit = KFeatures::params(k).check().unwrap().fit(&x).unwrap();
        println!(
            "dice K = {k}: defaults {:.4} (published {published})",
            fit.objective()
        );
        assert!(
            fit.objective() <= published + 0.05,
            "K = {k}: {}",
            fit.objective()
        );
        let z = fit.z();
        assert!((sum_of_squares(&x, &z, fit.means()) - fit.objective()).abs() < 1e-9);
    }
}

/// Greedily matches every true shape to a learned feature by squared distance of the means:
/// (largest |a_learned − a_true| entry, fraction of entries of Z that agree).
fn match_shapes(
    z: &RowMatrix,
    a: &RowMatrix,
    z_true: &RowMatrix,
    a_true: &RowMatrix,
) -> (f64, f64) {
    let mut used = vec![false; a.n_rows()];
    let (mut worst, mut agree) = (0.0f64, 0usize);
    for t in 0..a_true.n_rows() {
        let dist = |j: usize| -> f64 {
            a.row(j)
                .iter()
                .zip(a_true.row(t))
                .map(|(p, q)| (p - q) * (p - q))
                .sum()
        };
        let j = (0..a.n_rows())
            .filter(|&j| !used[j])
            .min_by(|&p, &q| dist(p).total_cmp(&dist(q)))
            .expect("as many features as shapes");
        used[j] = true;
        for (p, q) in a.row(j).iter().zip(a_true.row(t)) {
            worst = worst.max((p - q).abs());
        }
        agree += (0..z.n_rows())
            .filter(|&i| z.row(i)[j] == z_true.row(i)[t])
            .count();
    }
    (worst, agree as f64 / (z.n_rows() * a_true.n_rows()) as f64)
}

#[test]
fn bp_means_defaults_recover_the_four_block_shapes_from_noisy_images() {
    for (n, sigma, seed) in [
        (100, 0.5, 0),
        (100, 0.3, 1),
        (500, 0.5, 2),
        (500, 0.3, 3),
        (1000, 0.5, 4),
        (1000, 0.3, 0),
    ] {
        let data = block_images(n, 0.5, sigma, seed).unwrap();
        // A true feature lowers the residual by about N p ‖a‖² ≥ 2.5 N; a feature fitted to
        // noise by well under σ² N: P = 4σ²N lies between.
        let penalty = 4.0 * sigma * sigma * n as f64;
        let true_z = BinaryMatrix::from_row_matrix(&data.z);
        let truth_a = least_squares_means(&data.x, &true_z).a;
        let truth = bp_means_objective(&data.x, &true_z, &truth_a, penalty);
        let fit = BpMeans::params(penalty)
            .check()
            .unwrap()
            .fit(&data.x)
            .unwrap();
        let plain = BpMeans::params(penalty)
            .plain()
            .check()
            .unwrap()
            .fit(&data.x)
            .unwrap();
        let (worst, agree) = match_shapes(&fit.z().to_row_matrix(), fit.means(), &data.z, &data.a);
        println!(
            "N = {n}, σ = {sigma}, P = {penalty}: defaults K = {}, {:.3}; true Z {truth:.3}; \
             the paper's Alg. 1 K = {}, {:.3}; largest error of a mean {worst:.3}, Z agreement \
             {agree:.4}",
            fit.k(),
            fit.objective(),
            plain.k(),
            plain.objective()
        );
        assert_eq!(fit.k(), 4, "N = {n}, σ = {sigma}");
        assert!(
            fit.objective() <= truth + 1e-9 * truth,
            "N = {n}, σ = {sigma}"
        );
        assert!(
            worst < 4.0 * sigma / (0.5 * n as f64).sqrt() + 0.1,
            "{worst}"
        );
        assert!(agree > 0.97, "{agree}");
    }
}

#[test]
fn dp_means_defaults_find_every_cluster_of_the_demo() {
    // `madbayes demo`'s data and penalty: 600 points, 6 clusters, seed 0, P = 50.
    let blobs = gaussian_blobs(600, 2, 6, 12.0, 0.5, 0);
    for (name, p) in [
        ("dp-means", DpMeans::params(50.0)),
        ("collapsed dp-means", CollapsedDpMeans::params(50.0)),
    ] {
        let fit = p.check().unwrap().fit(&blobs.x).unwrap();
        let ari = adjusted_rand_index(fit.labels(), &blobs.labels);
        println!("{name}: K = {}, ARI {ari:.4}", fit.k());
        assert_eq!(fit.k(), 6, "{name}");
        assert!(ari > 0.999, "{name}: ARI {ari}");
    }
}
