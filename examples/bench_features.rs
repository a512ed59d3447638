//! Feature-family benchmarks of madbayes (see `docs/results.md`,
//! `docs/history/benchmarks-notebook.md` and `bench/run_features.sh`).
//!
//! ```text
//! cargo run --release --example bench_features -- <command> [--key value]...
//!
//! sweep-vs-gemm --n N --d D --k K --prob P --sigma S --penalty L --iters M --threads T --reps R
//!          MEIBP synthetic data (K factors with ceil(D/3) ones each, Z ~ Bernoulli(P),
//!          noise S), capped BP-means (cap K) for 1 and for M sweeps, and the X Aᵀ product of
//!          the same shape, all on T threads; best of R each. A sweep is the difference of
//!          the two fits: run it with MIMALLOC_PURGE_DELAY=-1 (as bench/run_features.sh
//!          does), else the fits differ by how long the kernel takes to fault in the
//!          seeding's copy of X afresh (docs/speed.md §3).
//! restarts --x FILE.npy --algo bp-means|collapsed-bp-means|k-features|stepwise-k-features
//!          --penalty L [--k K] --restarts R --threads 1,2 [--seed S] [--refine true]
//!          [--plain false]
//!          R restarts of one algorithm (the paper's form unless --plain false) on every
//!          thread count listed; time per run and the parallel efficiency t(1) / (T · t(T)).
//! quality --data tabletop|dice|blocks|FILE.npy --algo ALGO [--penalty L] [--k K]
//!          [--restarts R] [--seed S] [--threads T] [--refine true|false]
//!          [--seeding base|residual] [--grow-seeds true|false] [--plain true]
//!          [--max-iter M] [--target V] [--hist true] [--show true] [--z-out FILE]
//!          [--objs-out FILE]
//!          [--n N --sigma S --p P --gen-seed G]   (blocks only)
//!          [--truth DIR]   (FILE: DIR/z.csv and DIR/a.csv, the truth `madbayes gen` wrote)
//!          One fit with the library's defaults except what is given: best objective, K,
//!          how many restarts end at the best value (within 10⁻⁶ relative) and at or below
//!          `--target`, time per restart, and the load average. `tabletop` is
//!          ../shared/data/tabletop/images prepared by `experiments::tabletop_matrix` (PCA
//!          100 of the rows scaled by 1/√(N − 1), mean kept; the authors' code removes it),
//!          `dice` the noise-free dice pictures / 255,
//!          `blocks` `madbayes gen blocks` data (with the true Z's objective, at the true A
//!          and at the least-squares A). `--plain true` starts from the paper's settings
//!          (`FeatureParams::plain`) before the other options; `--hist` prints the distinct
//!          run objectives with their counts on stderr, `--show` the learned means,
//!          `--z-out` the winning Z, `--objs-out` every restart's objective as the hex
//!          bits of its f64, one a line (to compare runs bit for bit).
//! quality-dp --algo dp-means|collapsed-dp-means --penalty L [--n N --d D --k K --sd S
//!          --box B --gen-seed G] [--restarts R] [--refine true|false] [--seed S]
//!          [--target V]
//!          DP-means on Gaussian blobs (`madbayes demo`'s generator: N points, K centers
//!          uniform in [−B, B]^D, noise S): best objective, K, ARI against the truth, runs
//!          at or below `--target` (default: the best), CPU time per restart.
//! ```
//!
//! Every command prints one JSON object per line on stdout.

mod support;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::features::{
    BpMeans, CollapsedBpMeans, FeatureModel, FeatureParams, KFeatures, StepwiseKFeatures,
};
use madbayes::linalg::{BLOCK_ROWS, for_each_block, gemm_xat};
use madbayes::restarts::run_rng;
use rand::RngExt;
use std::time::Instant;
use support::{Args, Res, cpu_seconds, normal, pool};

/// The MEIBP synthetic data of Reed & Ghahramani (2013, §5): `k` factors, each with
/// ceil(d/3) ones at uniformly random positions (drawn per factor), Z_nk ~ Bernoulli(`prob`),
/// X = Z A + `sigma`·E with E standard normal. Generated on a fixed ChaCha8 stream.
fn meibp_synthetic(n: usize, d: usize, k: usize, prob: f64, sigma: f64, seed: u64) -> RowMatrix {
    let mut rng = run_rng(seed, 0);
    let ones = d.div_ceil(3);
    let mut a = vec![0.0; k * d];
    for f in 0..k {
        // Partial Fisher–Yates: the first `ones` positions of a random permutation.
        let mut pos: Vec<usize> = (0..d).collect();
        for i in 0..ones {
            let j = rng.random_range(i..d);
            pos.swap(i, j);
            a[f * d + pos[i]] = 1.0;
        }
    }
    let mut data = Vec::with_capacity(n * d);
    let mut z = vec![false; k];
    for _ in 0..n {
        z.iter_mut().for_each(|v| *v = rng.random::<f64>() < prob);
        for j in 0..d {
            let signal: f64 = (0..k).filter(|&f| z[f]).map(|f| a[f * d + j]).sum();
            data.push(signal + sigma * normal(&mut rng));
        }
    }
    RowMatrix::new(n, d, data)
}

/// Best wall-clock and CPU seconds of `reps` calls of `f`, and its last value.
fn timed<T>(reps: usize, mut f: impl FnMut() -> Res<T>) -> Res<(f64, f64, T)> {
    let (mut wall, mut cpu, mut last) = (f64::INFINITY, f64::INFINITY, None);
    for _ in 0..reps.max(1) {
        let c0 = cpu_seconds();
        let t = Instant::now();
        last = Some(f()?);
        wall = wall.min(t.elapsed().as_secs_f64());
        cpu = cpu.min(cpu_seconds() - c0);
    }
    Ok((wall, cpu, last.expect("at least one rep")))
}

/// X Aᵀ the way BP-means computes it: fixed row blocks in parallel, one single-threaded GEMM
/// each, written into one N × K buffer.
fn blocked_xat(x: &RowMatrix, a: &RowMatrix, out: &mut [f64]) {
    let (d, k) = (x.n_cols(), a.n_rows());
    let out_ptr = out.as_mut_ptr() as usize;
    for_each_block(x.n_rows(), BLOCK_ROWS, |_, s, e| {
        // SAFETY: blocks are disjoint row ranges of `out`, which outlives the call.
        let dst = unsafe {
            std::slice::from_raw_parts_mut((out_ptr as *mut f64).add(s * k), (e - s) * k)
        };
        gemm_xat(dst, &x.as_slice()[s * d..e * d], e - s, a);
    });
}

/// X Aᵀ as one faer GEMM call over the whole matrix, on `threads` threads.
fn whole_xat(x: &RowMatrix, a: &RowMatrix, out: &mut [f64], threads: usize) {
    let (n, d, k) = (x.n_rows(), x.n_cols(), a.n_rows());
    let lhs = MatRef::from_row_major_slice(x.as_slice(), n, d);
    let rhs = MatRef::from_row_major_slice(a.as_slice(), k, d).transpose();
    let dst = MatMut::from_row_major_slice_mut(out, n, k);
    let par = if threads > 1 {
        Par::rayon(threads)
    } else {
        Par::Seq
    };
    matmul(dst, Accum::Replace, lhs, rhs, 1.0, par);
}

fn cmd_sweep_vs_gemm(a: &Args) -> Res<()> {
    let (n, d, k): (usize, usize, usize) = (a.get("n")?, a.get("d")?, a.get("k")?);
    let (prob, sigma, penalty): (f64, f64, f64) =
        (a.get("prob")?, a.get("sigma")?, a.get("penalty")?);
    let (iters, threads, reps): (usize, usize, usize) =
        (a.get("iters")?, a.get("threads")?, a.get("reps")?);
    let x = meibp_synthetic(n, d, k, prob, sigma, a.get_or("seed", 7)?);
    let fit = |m: usize| -> Res<FeatureModel> {
        // The paper's algorithm: with the defaults' refinement, `max_iter` would also bound
        // refinement rounds and the difference of the two fits would not be sweeps.
        Ok(BpMeans::params(penalty)
            .plain()
            .k(Some(k))
            .restarts(1)
            .max_iter(m)
            .check()?
            .fit(&x)?)
    };
    let pool = pool(threads)?;
    let (w1, c1, one) = pool.install(|| timed(reps, || fit(1)))?;
    let (wm, cm, many) = pool.install(|| timed(reps, || fit(iters)))?;
    let sweeps = many.n_iter() - one.n_iter();
    if sweeps == 0 {
        return Err("the run converged after one sweep: nothing to measure".into());
    }
    let means = many.means().clone();
    let kf = means.n_rows();
    let mut out = vec![0.0; n * kf];
    let (gb_w, gb_c, ()) = pool.install(|| {
        timed(reps, || {
            blocked_xat(&x, &means, &mut out);
            Ok(())
        })
    })?;
    let (gw_w, gw_c, ()) = pool.install(|| {
        timed(reps, || {
            whole_xat(&x, &means, &mut out, threads);
            Ok(())
        })
    })?;
    let gemm_w = gb_w.min(gw_w);
    let gemm_c = gb_c.min(gw_c);
    let sweep_w = (wm - w1) / sweeps as f64;
    let sweep_c = (cm - c1) / sweeps as f64;
    println!(
        "{{\"cmd\":\"sweep-vs-gemm\",\"n\":{n},\"d\":{d},\"k_true\":{k},\"k_final\":{kf},\"threads\":{threads},\
\"penalty\":{penalty},\"n_iter_one\":{},\"n_iter_many\":{},\"fit1_s\":{w1:.4},\"fitm_s\":{wm:.4},\
\"per_sweep_s\":{sweep_w:.4},\"per_sweep_cpu_s\":{sweep_c:.4},\"per_iter_incl_seeding_s\":{:.4},\
\"gemm_blocked_s\":{gb_w:.4},\"gemm_whole_s\":{gw_w:.4},\"gemm_blocked_cpu_s\":{gb_c:.4},\"gemm_whole_cpu_s\":{gw_c:.4},\
\"ratio_sweep_over_gemm\":{:.3},\"cpu_ratio_sweep_over_gemm\":{:.3},\"objective\":{:.6e}}}",
        one.n_iter(),
        many.n_iter(),
        wm / many.n_iter() as f64,
        sweep_w / gemm_w,
        sweep_c / gemm_c,
        many.objective()
    );
    Ok(())
}

fn params(a: &Args, algo: &str, penalty: f64) -> Res<FeatureParams> {
    let k: Option<usize> = if a.has("k") { Some(a.get("k")?) } else { None };
    Ok(match algo {
        "bp-means" => BpMeans::params(penalty).k(k),
        "collapsed-bp-means" => CollapsedBpMeans::params(penalty).k(k),
        "k-features" => KFeatures::params(k.ok_or("k-features needs --k")?),
        "stepwise-k-features" => StepwiseKFeatures::params(penalty).k(k),
        other => return Err(format!("unknown --algo {other}").into()),
    })
}

fn cmd_restarts(a: &Args) -> Res<()> {
    let path = a.str("x")?;
    let x = madbayes::io::read_matrix(std::path::Path::new(path))?;
    let algo = a.str("algo")?;
    let penalty: f64 = a.get("penalty")?;
    let restarts: usize = a.get("restarts")?;
    let seed: u64 = a.get_or("seed", 0)?;
    let threads: Vec<usize> = a
        .str("threads")?
        .split(',')
        .map(|t| t.parse())
        .collect::<Result<_, _>>()?;
    let refine: bool = a.get_or("refine", false)?;
    // The paper's algorithms (as BENCHMARKS.md's tables were measured), unless --plain false.
    let base = params(a, algo, penalty)?;
    let base = if a.get_or("plain", true)? {
        base.plain()
    } else {
        base
    };
    let checked = base.restarts(restarts).seed(seed).refine(refine).check()?;
    let mut base: Option<(f64, f64)> = None;
    for &t in &threads {
        let c0 = cpu_seconds();
        let t0 = Instant::now();
        let fit = pool(t)?.install(|| checked.fit(&x))?;
        let wall = t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - c0;
        let (w1, _) = *base.get_or_insert((wall * t as f64, cpu));
        let mut objs = fit.run_objectives().to_vec();
        objs.sort_by(f64::total_cmp);
        let best = objs[0];
        let within_1pc = objs
            .iter()
            .filter(|&&o| o <= best + 0.01 * best.abs())
            .count();
        println!(
            "{{\"cmd\":\"restarts\",\"algo\":\"{algo}\",\"refine\":{refine},\"n\":{},\"d\":{},\"penalty\":{penalty},\"restarts\":{restarts},\
\"threads\":{t},\"wall_s\":{wall:.4},\"cpu_s\":{cpu:.4},\"per_run_s\":{:.6},\"per_run_cpu_s\":{:.6},\
\"efficiency\":{:.3},\"k\":{},\"objective\":{:.6},\"median_objective\":{:.6},\"max_objective\":{:.6},\
\"runs_within_1pc_of_best\":{within_1pc},\"iterations\":{},\"k_tried\":{}}}",
            x.n_rows(),
            x.n_cols(),
            wall / restarts as f64,
            cpu / restarts as f64,
            w1 / (t as f64 * wall),
            fit.k(),
            fit.objective(),
            objs[objs.len() / 2],
            objs[objs.len() - 1],
            fit.n_iter(),
            fit.objective_by_k().len()
        );
    }
    Ok(())
}

/// The data of `quality`, and the true (Z, A) when known.
fn quality_data(a: &Args) -> Res<(RowMatrix, Option<(RowMatrix, RowMatrix)>)> {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    let data = a.str("data")?;
    Ok(match data {
        "tabletop" => {
            let set = madbayes::io::read_image_folder(&shared.join("tabletop/images"), false)?;
            (madbayes::experiments::tabletop_matrix(set.x, 100)?, None)
        }
        "dice" => {
            let path = shared.join("bp-means-dice/X_rowmajor.csv");
            let mut x = madbayes::io::read_matrix(&path)?;
            x.as_mut_slice().iter_mut().for_each(|v| *v /= 255.0);
            (x, None)
        }
        "blocks" => {
            let g = madbayes::generate::block_images(
                a.get("n")?,
                a.get_or("p", 0.5)?,
                a.get_or("sigma", 0.5)?,
                a.get_or("gen-seed", 0)?,
            )?;
            (g.x, Some((g.z, g.a)))
        }
        file => {
            let x = madbayes::io::read_matrix(std::path::Path::new(file))?;
            // `--truth DIR`: the z.csv and a.csv `madbayes gen` wrote beside the data.
            let truth = match a.str("truth") {
                Ok(dir) => {
                    let dir = std::path::Path::new(dir);
                    let z = madbayes::io::read_matrix(&dir.join("z.csv"))?;
                    let at = madbayes::io::read_matrix(&dir.join("a.csv"))?;
                    Some((z, at))
                }
                Err(_) => None,
            };
            (x, truth)
        }
    })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn cmd_quality(a: &Args) -> Res<()> {
    use madbayes::features::FeatureSeeding;
    use madbayes::features::objective::sum_of_squares;
    let (x, truth) = quality_data(a)?;
    let algo = a.str("algo")?;
    let penalty: f64 = a.get_or("penalty", 1.0)?;
    let mut p = params(a, algo, penalty)?;
    if a.get_or("plain", false)? {
        p = p.plain();
    }
    if a.has("restarts") {
        p = p.restarts(a.get("restarts")?);
    }
    if a.has("max-iter") {
        p = p.max_iter(a.get("max-iter")?);
    }
    if a.has("refine") {
        p = p.refine(a.get("refine")?);
    }
    if a.has("seeding") {
        p = p.seeding(match a.str("seeding")? {
            "base" => FeatureSeeding::BaseFeature,
            "residual" => FeatureSeeding::Residual,
            other => return Err(format!("unknown --seeding {other}").into()),
        });
    }
    if a.has("grow-seeds") {
        p = p.grow_seeds(a.get("grow-seeds")?);
    }
    let checked = p.seed(a.get_or("seed", 0)?).check()?;
    let threads: usize = a.get_or("threads", 2)?;
    let load_before = load_average();
    let pool = pool(threads)?;
    let c0 = cpu_seconds();
    let t0 = Instant::now();
    let fit = pool.install(|| checked.fit(&x))?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c0;
    let objs = fit.run_objectives();
    let best = fit.objective();
    let at_best = objs
        .iter()
        .filter(|&&o| o <= best + 1e-6 * best.abs().max(1.0))
        .count();
    let target: f64 = a.get_or("target", f64::NAN)?;
    let at_target = objs
        .iter()
        .filter(|&&o| o <= target + 1e-6 * target.abs().max(1.0))
        .count();
    if a.get_or("hist", false)? {
        let mut sorted = objs.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut groups: Vec<(f64, usize)> = Vec::new();
        for v in sorted {
            match groups.last_mut() {
                Some((g, c)) if (v - *g).abs() <= 1e-6 * g.abs().max(1.0) => *c += 1,
                _ => groups.push((v, 1)),
            }
        }
        let text: Vec<String> = groups
            .iter()
            .take(a.get_or("hist-max", 12)?)
            .map(|(g, c)| format!("{g:.4}×{c}"))
            .collect();
        eprintln!(
            "objectives: {} ({} distinct)",
            text.join(", "),
            groups.len()
        );
    }
    if a.has("objs-out") {
        // Every restart's objective as the bits of its f64, one a line: equal files mean
        // bit-identical runs (e.g. on 1 and 2 threads).
        let text: String = objs
            .iter()
            .map(|v| format!("{:016x}\n", v.to_bits()))
            .collect();
        std::fs::write(a.str("objs-out")?, text)?;
    }
    if a.has("z-out") {
        let z = fit.z();
        let text: String = (0..z.n_rows())
            .map(|i| {
                z.row(i)
                    .iter()
                    .map(|&v| if v != 0 { '1' } else { '0' })
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        std::fs::write(a.str("z-out")?, text)?;
    }
    if a.get_or("show", false)? {
        let z = fit.z();
        for (j, row) in fit.means().rows().enumerate() {
            let held = (0..z.n_rows()).filter(|&i| z.get(i, j)).count();
            let cells: Vec<String> = row.iter().map(|v| format!("{v:4.1}")).collect();
            eprintln!("feature {j} held by {held}:");
            for line in cells.chunks(a.get_or("show-width", 6)?) {
                eprintln!("  {}", line.join(" "));
            }
        }
    }
    let truth_json = match &truth {
        Some((z, at)) => {
            let k = z.n_cols() as f64;
            let z = &madbayes::BinaryMatrix::from_row_matrix(z);
            let ls = madbayes::features::least_squares_means(&x, z).a;
            format!(
                ",\"true_z_objective_true_a\":{:.4},\"true_z_objective_ls_a\":{:.4}",
                sum_of_squares(&x, z, at) + k * penalty,
                sum_of_squares(&x, z, &ls) + k * penalty
            )
        }
        None => String::new(),
    };
    println!(
        "{{\"cmd\":\"quality\",\"label\":\"{}\",\"data\":\"{}\",\"algo\":\"{algo}\",\"n\":{},\"penalty\":{penalty},\
\"restarts\":{},\"threads\":{threads},\"k\":{},\"objective\":{best:.4},\"runs_at_best\":{at_best},\
\"runs_at_target\":{at_target},\"cpu_ms_per_run\":{:.4},\"wall_s\":{wall:.3},\"load\":\"{load_before} / {}\"{truth_json}}}",
        a.str("label").unwrap_or(""),
        a.str("data")?,
        x.n_rows(),
        objs.len(),
        fit.k(),
        1e3 * cpu / objs.len() as f64,
        load_average()
    );
    Ok(())
}

/// `quality-dp`: DP-means or collapsed DP-means on Gaussian blobs (the demo's generator).
fn cmd_quality_dp(a: &Args) -> Res<()> {
    use madbayes::clustering::{CollapsedDpMeans, DpMeans};
    let (n, d, k): (usize, usize, usize) =
        (a.get_or("n", 600)?, a.get_or("d", 2)?, a.get_or("k", 6)?);
    let sd: f64 = a.get_or("sd", 0.5)?;
    let blobs = madbayes::generate::gaussian_blobs(
        n,
        d,
        k,
        a.get_or("box", 12.0)?,
        sd,
        a.get_or("gen-seed", 0)?,
    );
    let penalty: f64 = a.get("penalty")?;
    let algo = a.str("algo")?;
    let mut p = match algo {
        "dp-means" => DpMeans::params(penalty),
        "collapsed-dp-means" => CollapsedDpMeans::params(penalty),
        other => return Err(format!("unknown --algo {other}").into()),
    };
    if a.has("restarts") {
        p = p.restarts(a.get("restarts")?);
    }
    if a.has("refine") {
        p = p.refine(a.get("refine")?);
    }
    let checked = p.seed(a.get_or("seed", 0)?).check()?;
    let threads: usize = a.get_or("threads", 2)?;
    let pool = pool(threads)?;
    let c0 = cpu_seconds();
    let fit = pool.install(|| checked.fit(&blobs.x))?;
    let cpu = cpu_seconds() - c0;
    let objs = fit.run_objectives();
    let best = fit.objective();
    let target: f64 = a.get_or("target", best)?;
    let at_target = objs
        .iter()
        .filter(|&&o| o <= target + 1e-6 * target.abs().max(1.0))
        .count();
    let ari = madbayes::metrics::adjusted_rand_index(fit.labels(), &blobs.labels);
    println!(
        "{{\"cmd\":\"quality-dp\",\"label\":\"{}\",\"algo\":\"{algo}\",\"n\":{n},\"d\":{d},\"k_true\":{k},\"sd\":{sd},\"penalty\":{penalty},\
\"restarts\":{},\"k\":{},\"objective\":{best:.4},\"ari\":{ari:.4},\"runs_at_target\":{at_target},\
\"cpu_ms_per_run\":{:.4},\"load\":\"{}\"}}",
        a.str("label").unwrap_or(""),
        objs.len(),
        fit.k(),
        1e3 * cpu / objs.len() as f64,
        load_average()
    );
    Ok(())
}

fn main() -> Res<()> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = raw.split_first() else {
        return Err("usage: bench_features <sweep-vs-gemm|restarts> [--key value]...".into());
    };
    let args = Args::parse(rest)?;
    match cmd.as_str() {
        "sweep-vs-gemm" => cmd_sweep_vs_gemm(&args),
        "restarts" => cmd_restarts(&args),
        "quality" => cmd_quality(&args),
        "quality-dp" => cmd_quality_dp(&args),
        other => Err(format!("unknown command {other}").into()),
    }
}
