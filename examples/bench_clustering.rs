//! Clustering benchmarks of madbayes (see `docs/results.md`, `docs/history/benchmarks-notebook.md`
//! and `bench/run_clustering.sh`).
//!
//! ```text
//! cargo run --release --example bench_clustering -- <command> [--key value]...
//!
//! lloyd    --x FILE --init FILE --n N --d D --k K --max-iter M --threads T --reps R
//!          Lloyd from the given initial means on data read from raw little-endian f64
//!          files (numpy `.tofile()`); best of R fits.
//! dp-vs-km --n N --d D --k-true K --std S --penalty P --threads T --reps R [--seed S]
//!          DP-means (one restart) on blobs generated here, then K-means with the K that
//!          DP-means found, from K random rows; best of R fits each.
//! seed     --x FILE --n N --d D --k K --threads T --reps R [--seed S] [--seeds M]
//!          Greedy k-means++ seeding alone (row norms included) on data read as for
//!          `lloyd`; M seeds (default 1) from `--seed` on, R timed fits of each; the
//!          potential Σ_n min_j ‖x_n − c_j‖² of every seed.
//! dp       --x FILE --n N --d D --penalty P --threads T [--restarts R] [--plain B] [--seed S]
//!          One DP-means fit of R restarts (without `--restarts`, the library's number for
//!          data of this size; the defaults, or the paper's algorithm with `--plain true`) on
//!          data read as for `lloyd`; wall and CPU time, the runs made, K, the objective
//!          Σ‖x − μ‖² + P·K and the sweeps of the best run.
//! memory   --algo kmeans|dpmeans --n N --d D --k K --std S --penalty P --max-iter M
//!          Blobs generated here, one fit, then peak RSS (VmHWM) against the data's size.
//! ```
//!
//! Every command prints one JSON object per line on stdout. Time per iteration is the
//! wall-clock fit time divided by `Clustering::n_iter()`.

mod support;

use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::clustering::kmeans::kmeans_plus_plus;
use madbayes::clustering::{Clustering, DpMeans, KMeans};
use madbayes::linalg::{nearest_rows, row_sq_norms};
use madbayes::restarts::run_rng;
use rand::RngExt;
use std::time::Instant;
use support::{Args, Res, cpu_seconds, fmt_times, normal, pool, read_f64};

/// `n` rows around `k` centers drawn uniformly in [-10, 10]^d, each row's center uniform,
/// isotropic Gaussian noise of standard deviation `std`. Written straight into the one
/// buffer the matrix keeps (no second copy).
fn blobs(n: usize, d: usize, k: usize, std: f64, seed: u64) -> RowMatrix {
    let mut rng = run_rng(seed, 0);
    let centers: Vec<f64> = (0..k * d).map(|_| rng.random_range(-10.0..10.0)).collect();
    let mut data = Vec::with_capacity(n * d);
    for _ in 0..n {
        let c = rng.random_range(0..k);
        for j in 0..d {
            data.push(centers[c * d + j] + std * normal(&mut rng));
        }
    }
    RowMatrix::new(n, d, data)
}

/// `k` distinct rows of `x` chosen at random (partial Fisher–Yates on a fixed stream).
fn random_rows(x: &RowMatrix, k: usize, seed: u64) -> RowMatrix {
    let mut rng = run_rng(seed, 1);
    let mut idx: Vec<usize> = (0..x.n_rows()).collect();
    for i in 0..k {
        let j = rng.random_range(i..idx.len());
        idx.swap(i, j);
    }
    RowMatrix::from_rows(&idx[..k].iter().map(|&i| x.row(i)).collect::<Vec<_>>())
}

/// Wall-clock and CPU seconds of each of `reps` fits, and the last fit.
struct Timed {
    wall: Vec<f64>,
    cpu: Vec<f64>,
    fit: Clustering,
}

impl Timed {
    fn best_wall(&self) -> f64 {
        self.wall.iter().cloned().fold(f64::INFINITY, f64::min)
    }
    fn best_cpu(&self) -> f64 {
        self.cpu.iter().cloned().fold(f64::INFINITY, f64::min)
    }
}

/// Runs `fit` `reps` times (at least once), timing each.
fn best_of<F: FnMut() -> Res<Clustering>>(reps: usize, mut fit: F) -> Res<Timed> {
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..reps.max(1) {
        let c0 = cpu_seconds();
        let t = Instant::now();
        let c = fit()?;
        wall.push(t.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - c0);
        last = Some(c);
    }
    Ok(Timed {
        wall,
        cpu,
        fit: last.expect("at least one rep"),
    })
}

fn cmd_lloyd(a: &Args) -> Res<()> {
    let (n, d, k): (usize, usize, usize) = (a.get("n")?, a.get("d")?, a.get("k")?);
    let (max_iter, threads, reps): (usize, usize, usize) =
        (a.get("max-iter")?, a.get("threads")?, a.get("reps")?);
    let x = read_f64(a.str("x")?, n, d)?;
    let init = read_f64(a.str("init")?, k, d)?;
    let params = KMeans::params(k).max_iter(max_iter).check()?;
    let t =
        pool(threads)?.install(|| best_of(reps, || Ok(params.fit_from_means(x.view(), &init)?)))?;
    let it = t.fit.n_iter() as f64;
    println!(
        "{{\"cmd\":\"lloyd\",\"n\":{n},\"d\":{d},\"k\":{k},\"threads\":{threads},\"n_iter\":{},\"best_s\":{:.6},\"per_iter_s\":{:.6},\"cpu_per_iter_s\":{:.6},\"objective\":{:.17e},\"times\":{},\"cpu_times\":{}}}",
        t.fit.n_iter(),
        t.best_wall(),
        t.best_wall() / it,
        t.best_cpu() / it,
        t.fit.objective(),
        fmt_times(&t.wall),
        fmt_times(&t.cpu)
    );
    Ok(())
}

fn cmd_seed(a: &Args) -> Res<()> {
    let (n, d, k): (usize, usize, usize) = (a.get("n")?, a.get("d")?, a.get("k")?);
    let (threads, reps, seed, seeds): (usize, usize, u64, u64) = (
        a.get("threads")?,
        a.get("reps")?,
        a.get_or("seed", 0)?,
        a.get_or("seeds", 1)?,
    );
    let x = read_f64(a.str("x")?, n, d)?;
    let pool = pool(threads)?;
    for s in seed..seed + seeds {
        let (mut wall, mut cpu, mut centers) = (Vec::new(), Vec::new(), None);
        for _ in 0..reps.max(1) {
            let c0 = cpu_seconds();
            let t = Instant::now();
            let c = pool.install(|| {
                let norms = row_sq_norms(x.view());
                kmeans_plus_plus(x.view(), &norms, k, &mut run_rng(s, 0))
            });
            wall.push(t.elapsed().as_secs_f64());
            cpu.push(cpu_seconds() - c0);
            centers = Some(c);
        }
        let c = centers.expect("at least one rep");
        let potential: f64 = pool.install(|| {
            nearest_rows(
                x.view(),
                &row_sq_norms(x.view()),
                &c,
                &row_sq_norms(c.view()),
            )
            .iter()
            .map(|nr| nr.dist)
            .sum()
        });
        let best = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
        println!(
            "{{\"cmd\":\"seed\",\"n\":{n},\"d\":{d},\"k\":{k},\"threads\":{threads},\"seed\":{s},\"best_s\":{:.6},\"best_cpu_s\":{:.6},\"potential\":{potential:.17e},\"times\":{},\"cpu_times\":{}}}",
            best(&wall),
            best(&cpu),
            fmt_times(&wall),
            fmt_times(&cpu)
        );
    }
    Ok(())
}

fn cmd_dp(a: &Args) -> Res<()> {
    let (n, d): (usize, usize) = (a.get("n")?, a.get("d")?);
    let penalty: f64 = a.get("penalty")?;
    let (threads, seed): (usize, u64) = (a.get("threads")?, a.get_or("seed", 0)?);
    let plain: bool = a.get_or("plain", false)?;
    let x = read_f64(a.str("x")?, n, d)?;
    let mut p = DpMeans::params(penalty).seed(seed);
    if a.has("restarts") {
        p = p.restarts(a.get("restarts")?);
    }
    if plain {
        p = p.plain();
    }
    let p = p.check()?;
    let pool = pool(threads)?;
    let c0 = cpu_seconds();
    let t = Instant::now();
    let fit = pool.install(|| p.fit(&x))?;
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c0;
    let restarts = fit.run_objectives().len();
    println!(
        "{{\"cmd\":\"dp\",\"n\":{n},\"d\":{d},\"penalty\":{penalty},\"restarts\":{restarts},\"plain\":{plain},\"threads\":{threads},\"wall_s\":{wall:.4},\"cpu_s\":{cpu:.4},\"k\":{},\"objective\":{:e},\"n_iter\":{}}}",
        fit.k(),
        fit.objective(),
        fit.n_iter()
    );
    Ok(())
}

fn cmd_dp_vs_km(a: &Args) -> Res<()> {
    let (n, d, k_true): (usize, usize, usize) = (a.get("n")?, a.get("d")?, a.get("k-true")?);
    let (std, penalty): (f64, f64) = (a.get("std")?, a.get("penalty")?);
    let (threads, reps, seed): (usize, usize, u64) =
        (a.get("threads")?, a.get("reps")?, a.get_or("seed", 0)?);
    let max_iter: usize = a.get_or("max-iter", 300)?;
    let x = blobs(n, d, k_true, std, seed);
    let pool = pool(threads)?;
    let dp = DpMeans::params(penalty)
        .restarts(1)
        .max_iter(max_iter)
        .seed(seed)
        .check()?;
    let dp_t = pool.install(|| best_of(reps, || Ok(dp.fit(&x)?)))?;
    let k = dp_t.fit.k();
    let init = random_rows(&x, k, seed);
    let km = KMeans::params(k).max_iter(max_iter).check()?;
    let km_t = pool.install(|| best_of(reps, || Ok(km.fit_from_means(x.view(), &init)?)))?;
    let (dp_n, km_n) = (dp_t.fit.n_iter() as f64, km_t.fit.n_iter() as f64);
    let (dp_it, km_it) = (dp_t.best_wall() / dp_n, km_t.best_wall() / km_n);
    let (dp_cpu, km_cpu) = (dp_t.best_cpu() / dp_n, km_t.best_cpu() / km_n);
    println!(
        "{{\"cmd\":\"dp-vs-km\",\"n\":{n},\"d\":{d},\"threads\":{threads},\"penalty\":{penalty},\"k\":{k},\
\"dp_n_iter\":{},\"dp_per_iter_s\":{dp_it:.6},\"dp_cpu_per_iter_s\":{dp_cpu:.6},\"dp_times\":{},\"dp_cpu_times\":{},\
\"km_n_iter\":{},\"km_per_iter_s\":{km_it:.6},\"km_cpu_per_iter_s\":{km_cpu:.6},\"km_times\":{},\"km_cpu_times\":{},\
\"ratio_dp_over_km\":{:.4},\"cpu_ratio_dp_over_km\":{:.4},\"dp_per_iter_per_row_ns\":{:.3},\"km_per_iter_per_row_ns\":{:.3},\
\"dp_cpu_per_iter_per_row_ns\":{:.3},\"km_cpu_per_iter_per_row_ns\":{:.3}}}",
        dp_t.fit.n_iter(),
        fmt_times(&dp_t.wall),
        fmt_times(&dp_t.cpu),
        km_t.fit.n_iter(),
        fmt_times(&km_t.wall),
        fmt_times(&km_t.cpu),
        dp_it / km_it,
        dp_cpu / km_cpu,
        dp_it / n as f64 * 1e9,
        km_it / n as f64 * 1e9,
        dp_cpu / n as f64 * 1e9,
        km_cpu / n as f64 * 1e9,
    );
    Ok(())
}

/// A line of `/proc/self/status` (e.g. `VmHWM`) in bytes.
fn proc_status_bytes(field: &str) -> Res<u64> {
    let s = std::fs::read_to_string("/proc/self/status")?;
    let line = s
        .lines()
        .find(|l| l.starts_with(field))
        .ok_or(format!("{field} not in /proc/self/status"))?;
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .ok_or("bad status line")?
        .parse()?;
    Ok(kb * 1024)
}

fn cmd_memory(a: &Args) -> Res<()> {
    let (n, d, k): (usize, usize, usize) = (a.get("n")?, a.get("d")?, a.get("k")?);
    let (std, max_iter): (f64, usize) = (a.get("std")?, a.get("max-iter")?);
    let algo = a.str("algo")?;
    let threads: usize = a.get_or("threads", 2)?;
    let x = blobs(n, d, k, std, 0);
    let data_bytes = (n * d * 8) as u64;
    let after_data = proc_status_bytes("VmHWM")?;
    let t = Instant::now();
    let fit = pool(threads)?.install(|| -> Res<Clustering> {
        Ok(match algo {
            "kmeans" => {
                let init = random_rows(&x, k, 0);
                KMeans::params(k)
                    .max_iter(max_iter)
                    .check()?
                    .fit_from_means(x.view(), &init)?
            }
            "dpmeans" => {
                let p: f64 = a.get("penalty")?;
                DpMeans::params(p)
                    .restarts(1)
                    .max_iter(max_iter)
                    .k_max(Some(k))
                    .check()?
                    .fit(&x)?
            }
            other => return Err(format!("--algo {other}: expected kmeans or dpmeans").into()),
        })
    })?;
    let secs = t.elapsed().as_secs_f64();
    let peak = proc_status_bytes("VmHWM")?;
    println!(
        "{{\"cmd\":\"memory\",\"algo\":\"{algo}\",\"n\":{n},\"d\":{d},\"k_found\":{},\"n_iter\":{},\"fit_s\":{secs:.3},\
\"data_mb\":{:.1},\"hwm_after_data_mb\":{:.1},\"peak_rss_mb\":{:.1},\"peak_over_data\":{:.3}}}",
        fit.k(),
        fit.n_iter(),
        data_bytes as f64 / 1e6,
        after_data as f64 / 1e6,
        peak as f64 / 1e6,
        peak as f64 / data_bytes as f64
    );
    Ok(())
}

fn main() -> Res<()> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = raw.split_first() else {
        return Err(
            "usage: bench_clustering <lloyd|seed|dp|dp-vs-km|memory> [--key value]...".into(),
        );
    };
    let args = Args::parse(rest)?;
    match cmd.as_str() {
        "lloyd" => cmd_lloyd(&args),
        "seed" => cmd_seed(&args),
        "dp" => cmd_dp(&args),
        "dp-vs-km" => cmd_dp_vs_km(&args),
        "memory" => cmd_memory(&args),
        other => Err(format!("unknown command {other}").into()),
    }
}
