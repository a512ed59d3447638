//! Feature-family benchmarks of madbayes (see `docs/results.md`,
//! `docs/history/benchmarks-notebook.md` and `bench/run_features.sh`).
//!
//! ```text
//! cargo run --release --example bench_features -- <command> [--key value]...
//!
//! sweep-vs-gemm --n N --d D --k K --prob P --sigma S --penalty L --iters M --threads T --reps R
//!          MEIBP synthetic data (K factors with ceil(D/3) ones each, Z ~ Bernoulli(P),
//!          noise S), capped BP-means (cap K) for 1 and for M sweeps, and the X Aᵀ product of
//!          the same shape, all on T threads; best of R each.
//! restarts --x FILE.npy --algo bp-means|collapsed-bp-means|k-features|stepwise-k-features
//!          --penalty L [--k K] --restarts R --threads 1,2 [--seed S] [--refine true]
//!          R restarts of one algorithm on every thread count listed; time per run and the
//!          parallel efficiency t(1) / (T · t(T)).
//! ```
//!
//! Every command prints one JSON object per line on stdout.

mod support;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
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
        Ok(BpMeans::params(penalty)
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
    let checked = params(a, algo, penalty)?
        .restarts(restarts)
        .seed(seed)
        .refine(refine)
        .check()?;
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

fn main() -> Res<()> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = raw.split_first() else {
        return Err("usage: bench_features <sweep-vs-gemm|restarts> [--key value]...".into());
    };
    let args = Args::parse(rest)?;
    match cmd.as_str() {
        "sweep-vs-gemm" => cmd_sweep_vs_gemm(&args),
        "restarts" => cmd_restarts(&args),
        other => Err(format!("unknown command {other}").into()),
    }
}
