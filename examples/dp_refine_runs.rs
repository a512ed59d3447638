//! Which DP-means runs the refinement should take: every restart refined (the best kept), or
//! only the best of the paper's runs. For each restart of a fit it prints the paper's
//! algorithm's objective, K and time, then the refined run's, and at the end the refined
//! objective of the best plain run against the best refined one — the measurements behind
//! `REFINE_EVERY_RUN_MAX_VALUES` (docs/defaults.md, "DP-means: which runs are refined").
//!
//! ```text
//! dp_refine_runs blobs N D K HALF SD SEED  --penalty P --restarts R [--seed S] [--tries T] [--full-paper-runs]
//! dp_refine_runs file.f64 N D              --penalty P --restarts R [--seed S] [--tries T] [--full-paper-runs]
//! ```
//! `--tries`: the row orders each group of clusters is descended from, 0 for one descent over
//! all rows (default: a fit's, `refine_tries`).
//! Each paper run stops where a fit that refines every run stops it
//! ([`dp_means_refinement_start`]); `--full-paper-runs` runs each to convergence, as a fit
//! did before 2026-11-27 and still does where it refines only the best runs.
//! `blobs`: `madbayes::generate::gaussian_blobs(N, D, K, HALF, SD, SEED)`; a file holds N × D
//! little-endian f64, row after row (as `bench/compare_dp_pdc.py` writes them). Run r uses
//! stream r of the seed and its own row order, as a fit does; restarts run in parallel.

use madbayes::RowMatrix;
use madbayes::clustering::collapsed_dp_means::refine;
use madbayes::clustering::dp_means::{
    dp_means_refinement_start, dp_means_run, random_order, refine_tries,
};
use madbayes::linalg::mean_row;
use madbayes::restarts::run_rng;
use rayon::prelude::*;
use std::time::Instant;

/// One restart: the paper's run (objective, K, seconds), then the refined one.
type Restart = (f64, usize, f64, f64, usize, f64);

fn flag<T: std::str::FromStr>(args: &[String], name: &str, default: Option<T>) -> T {
    match args.iter().position(|a| a == name) {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} needs a value")),
        None => default.unwrap_or_else(|| panic!("{name} is required")),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let num = |i: usize| -> f64 { args[i].parse().expect("a number") };
    let x: RowMatrix = if args[1] == "blobs" {
        let (n, d, k) = (num(2) as usize, num(3) as usize, num(4) as usize);
        madbayes::generate::gaussian_blobs(n, d, k, num(5), num(6), num(7) as u64).x
    } else {
        let (n, d) = (num(2) as usize, num(3) as usize);
        let bytes = std::fs::read(&args[1]).expect("a readable file");
        assert!(
            bytes.len() >= 8 * n * d,
            "the file holds fewer than N × D values"
        );
        let v = bytes
            .chunks_exact(8)
            .take(n * d)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        RowMatrix::new(n, d, v)
    };
    let penalty: f64 = flag(&args, "--penalty", None);
    let restarts: usize = flag(&args, "--restarts", None);
    let seed: u64 = flag(&args, "--seed", Some(0));
    let full = args.iter().any(|a| a == "--full-paper-runs");
    let n = x.n_rows();
    let tries: usize = flag(&args, "--tries", Some(refine_tries(n, x.n_cols())));
    let mean = mean_row(x.view());
    let runs: Vec<Restart> = (0..restarts)
        .into_par_iter()
        .map(|r| {
            let order = random_order(n, &mut run_rng(seed, r as u64));
            let t = Instant::now();
            let plain = if full {
                dp_means_run(x.view(), &mean, penalty, usize::MAX, 300, &order)
            } else {
                dp_means_refinement_start(x.view(), &mean, penalty, usize::MAX, 300, &order)
            };
            let plain_s = t.elapsed().as_secs_f64();
            let (plain_obj, plain_k) = (plain.objective, plain.means.n_rows());
            let t = Instant::now();
            let refined = refine(x.view(), plain, penalty, usize::MAX, &order, 300, tries);
            let refined_s = t.elapsed().as_secs_f64();
            let refined_k = refined.means.n_rows();
            (
                plain_obj,
                plain_k,
                plain_s,
                refined.objective,
                refined_k,
                refined_s,
            )
        })
        .collect();
    println!("run\tplain\tK\tseconds\trefined\tK\tseconds");
    for (r, (po, pk, ps, ro, rk, rs)) in runs.iter().enumerate() {
        println!("{r}\t{po:.9e}\t{pk}\t{ps:.3}\t{ro:.9e}\t{rk}\t{rs:.3}");
    }
    // Ties to the lowest run, as a fit breaks them.
    let lowest = |key: fn(&Restart) -> f64| {
        (0..runs.len()).fold(0, |b, r| if key(&runs[r]) < key(&runs[b]) { r } else { b })
    };
    let (bp, br) = (lowest(|r| r.0), lowest(|r| r.3));
    let (best_only, every) = (runs[bp].3, runs[br].3);
    println!(
        "best plain run {bp} refined: {best_only:.9e}; best of every run refined: {every:.9e} \
         (run {br}); difference {:.4} %",
        100.0 * (best_only - every) / every
    );
}

/// The allocator of the command line and the Python module (src/main.rs), so that the times
/// printed are those of what they run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
