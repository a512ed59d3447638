//! Doshi-Velez & Ghahramani (2009, "D-V&G") Tables 2 and 4 under their protocol: several
//! chains per sampler from different starting points, a set of single entries hidden during
//! inference and imputed by the sampler, the hidden entries scored at the final five samples,
//! and the effective number of samples per sample between chains (see
//! `docs/history/benchmarks-notebook.md`, "IBP samplers under D-V&G's protocol", and
//! `bench/run_ibp.sh dvg`).
//!
//! ```text
//! cargo run --release --example bench_dvg -- --data prior|images [--ns 50,100,250,500]
//!     [--images PATH] [--chains 5] [--iterations 1000] [--kinds collapsed,semi,accelerated]
//!     [--seed 1] [--threads 2] [--start prior|bp-means]
//! ```
//!
//! * `prior`: X drawn from the IBP linear-Gaussian prior of D-V&G Table 2 (α = 2, σ_A = 2,
//!   σ_X = 0.2, D = 10) for each N, fitted at those values.
//! * `images`: the block images of `../shared/data/block-images/data.csv` (N = 1000, D = 36,
//!   already centred), fitted as in D-V&G Table 4: α = 2, σ_A = 0.75σ, σ_X = 0.25σ with σ the
//!   standard deviation of the visible entries.
//!
//! Hidden entries: min(100 D, N D / 5), scattered (`HiddenEntries::scattered`, the same set
//! for every sampler and chain); D-V&G hide "approximately 100D", which exceeds the data at
//! their smallest N, hence the cap at a fifth. Each chain starts from its own draw of Z from
//! the IBP prior (`start_from_prior`) with seed `seed + 1 + chain` (never the data's seed, whose
//! stream drew the true Z), and the chains run in
//! parallel, each on one thread.
//!
//! `--start bp-means` starts each chain instead from the Z of BP-means (20 restarts, refine
//! on, the chain's seed) fitted to X with its hidden entries set to their column's visible
//! mean, at the penalty P = σ_X²(√N + √D)² (the noise-only bound of the held-out section of
//! `docs/history/benchmarks-notebook.md`) — MAD-Bayes as the sampler's initialisation. BP-means' time is reported
//! separately (`start_s`), not in `iteration_s`.
//!
//! Per (data, N, sampler), one JSON line with:
//! * `iteration_s`: sampling seconds per iteration, mean over chains (imputation included);
//! * `eff_n_k`, `eff_n_loglik`: Gelman et al.'s between-chain effective sample size
//!   (`gelman_effective_sample_size`) over the second halves of the chains, divided by the
//!   number of samples in them — D-V&G's "effective N" per sample; the statistics are K and
//!   the training log-likelihood log p(X_O | Z) of the visible entries;
//! * `ess_per_s_loglik`: the mean over chains of Geyer's single-chain ESS of the training
//!   log-likelihood over the second half, divided by that half's sampling seconds;
//! * `test_l2`, `test_loglik`: per hidden entry, the squared error of the predictive mean
//!   and the predictive log-density (`ColumnPosteriors::score`), averaged over the final five
//!   samples of each chain and then over chains (D-V&G: "averaged from the final five
//!   samples");
//! * `burn_in`: per chain, the first iteration whose training log-likelihood reaches the
//!   second half's mean minus two of its standard deviations; mean over chains (our reading:
//!   D-V&G do not define their "burn-in count");
//! * `k_final5`: mean K over the final five samples.

mod support;

use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::eval::{HiddenEntries, effective_sample_size, gelman_effective_sample_size};
use madbayes::features::BpMeans;
use madbayes::generate::ibp_linear_gaussian;
use madbayes::ibp::{ColumnPosteriors, IbpKind, IbpSampler, log_ibp_prior};
use madbayes::io::read_csv;
use rayon::prelude::*;
use std::path::Path;
use support::{Args, Res, ibp_kind, list};

/// What one chain leaves behind.
struct ChainResult {
    /// Seconds spent finding the starting Z (0 for a prior draw).
    start_s: f64,
    seconds: Vec<f64>,
    k: Vec<f64>,
    loglik: Vec<f64>,
    /// (L2, log-density) per hidden entry at each of the final five samples.
    final_scores: Vec<(f64, f64)>,
}

fn run_chain(
    x: &RowMatrix,
    hidden: &HiddenEntries,
    kind: IbpKind,
    sigmas: (f64, f64),
    iterations: usize,
    seed: u64,
    start_bp: bool,
) -> Res<ChainResult> {
    let (sx, sa) = sigmas;
    let mut p = IbpSampler::params(kind)
        .alpha(2.0)
        .sigma_x(sx)
        .sigma_a(sa)
        .iterations(iterations)
        .seed(seed);
    let mut start_s = 0.0;
    if start_bp {
        let t = std::time::Instant::now();
        let (n, d) = (x.n_rows() as f64, x.n_cols() as f64);
        let penalty = sx * sx * (n.sqrt() + d.sqrt()).powi(2);
        let bp = BpMeans::params(penalty)
            .restarts(20)
            .refine(true)
            .seed(seed)
            .check()?
            .fit(&hidden.fill_column_means(x.view()))?;
        start_s = t.elapsed().as_secs_f64();
        p = p.start_from(bp.z().to_row_matrix());
    } else {
        p = p.start_from_prior(true);
    }
    let p = p.check()?;
    let mut r = ChainResult {
        start_s,
        seconds: Vec::with_capacity(iterations),
        k: Vec::with_capacity(iterations),
        loglik: Vec::with_capacity(iterations),
        final_scores: Vec::new(),
    };
    p.fit_imputing(x, hidden, &mut |rec, z| {
        r.seconds.push(rec.seconds);
        r.k.push(rec.k as f64);
        r.loglik.push(rec.log_joint - log_ibp_prior(z, rec.alpha));
        if rec.iteration + 5 > iterations {
            let post = ColumnPosteriors::new(x.view(), hidden, z, rec.sigma_x, rec.sigma_a);
            let s = post.score(x, hidden, z);
            r.final_scores
                .push((s.l2_per_entry(), s.loglik_per_entry()));
        }
    })?;
    Ok(r)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn sd(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / v.len() as f64).sqrt()
}

/// First iteration (from 1) whose value reaches mean − 2 sd of the second half.
fn burn_in(loglik: &[f64]) -> usize {
    let half = &loglik[loglik.len() / 2..];
    let bar = mean(half) - 2.0 * sd(half);
    loglik
        .iter()
        .position(|&v| v >= bar)
        .unwrap_or(loglik.len())
        + 1
}

fn report(
    data: &str,
    start: &str,
    x: &RowMatrix,
    hidden: &HiddenEntries,
    name: &str,
    chains: &[ChainResult],
) {
    let it = chains[0].k.len();
    let half = it / 2;
    let second = |f: &dyn Fn(&ChainResult) -> &Vec<f64>| -> Vec<Vec<f64>> {
        chains.iter().map(|c| f(c)[half..].to_vec()).collect()
    };
    let samples = (chains.len() * (it - half)) as f64;
    let eff_k = gelman_effective_sample_size(&second(&|c| &c.k)) / samples;
    let eff_ll = gelman_effective_sample_size(&second(&|c| &c.loglik)) / samples;
    let iteration_s = mean(
        &chains
            .iter()
            .map(|c| c.seconds[it - 1] / it as f64)
            .collect::<Vec<_>>(),
    );
    let ess_per_s = mean(
        &chains
            .iter()
            .map(|c| {
                let secs = c.seconds[it - 1] - c.seconds[half - 1];
                effective_sample_size(&c.loglik[half..]) / secs
            })
            .collect::<Vec<_>>(),
    );
    let l2 = mean(
        &chains
            .iter()
            .map(|c| mean(&c.final_scores.iter().map(|s| s.0).collect::<Vec<_>>()))
            .collect::<Vec<_>>(),
    );
    let ll = mean(
        &chains
            .iter()
            .map(|c| mean(&c.final_scores.iter().map(|s| s.1).collect::<Vec<_>>()))
            .collect::<Vec<_>>(),
    );
    let burn = mean(
        &chains
            .iter()
            .map(|c| burn_in(&c.loglik) as f64)
            .collect::<Vec<_>>(),
    );
    let start_s = mean(&chains.iter().map(|c| c.start_s).collect::<Vec<_>>());
    let k5 = mean(
        &chains
            .iter()
            .map(|c| mean(&c.k[it - 5..]))
            .collect::<Vec<_>>(),
    );
    let per_chain_loglik: Vec<String> = chains
        .iter()
        .map(|c| format!("{:.2}", mean(&c.loglik[half..])))
        .collect();
    println!(
        "{{\"cmd\":\"dvg\",\"data\":\"{data}\",\"start\":\"{start}\",\"sampler\":\"{name}\",\"n\":{},\"d\":{},\
\"hidden\":{},\"chains\":{},\"iterations\":{it},\"iteration_s\":{iteration_s:.6e},\
\"eff_n_k\":{eff_k:.4},\"eff_n_loglik\":{eff_ll:.4},\"ess_per_s_loglik\":{ess_per_s:.3},\
\"test_l2\":{l2:.5},\"test_loglik\":{ll:.5},\"burn_in\":{burn:.1},\"k_final5\":{k5:.2},\"start_s\":{start_s:.4},\
\"train_loglik_second_half_by_chain\":[{}]}}",
        x.n_rows(),
        x.n_cols(),
        hidden.len(),
        chains.len(),
        per_chain_loglik.join(",")
    );
}

fn main() -> Res<()> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let a = Args::parse(&argv)?;
    let data = a.str("data")?.to_string();
    let chains: usize = a.get_or("chains", 5)?;
    let iterations: usize = a.get_or("iterations", 1000)?;
    let seed: u64 = a.get_or("seed", 1)?;
    let threads: usize = a.get_or("threads", 2)?;
    let kinds: Vec<String> = list(&a.get_or("kinds", "collapsed,semi,accelerated".to_string())?)?;
    let start = a.get_or("start", "prior".to_string())?;
    if start != "prior" && start != "bp-means" {
        return Err(format!("unknown --start {start} (prior | bp-means)").into());
    }
    if chains < 2 || iterations < 10 {
        return Err("need --chains ≥ 2 and --iterations ≥ 10".into());
    }
    // (X, its true Z when known, (σ_X, σ_A) when fixed)
    type Set = (RowMatrix, Option<RowMatrix>, Option<(f64, f64)>);
    let sets: Vec<Set> = match data.as_str() {
        "prior" => list::<usize>(&a.get_or("ns", "50,100,250,500".to_string())?)?
            .into_iter()
            .map(|n| {
                let g = ibp_linear_gaussian(n, 10, 2.0, 2.0, 0.2, seed)?;
                Ok((g.x, Some(g.z), Some((0.2, 2.0))))
            })
            .collect::<Res<_>>()?,
        "images" => {
            let path = a.get_or("images", "../shared/data/block-images/data.csv".to_string())?;
            let truth = Path::new(&path).with_file_name("features.csv");
            let x = read_csv(Path::new(&path))?;
            // features.csv holds 1025 rows; only the first 1000 belong to data.csv.
            let z = if truth.exists() {
                let z = read_csv(&truth)?;
                let rows = z.rows_slice(0, x.n_rows()).to_vec();
                Some(RowMatrix::new(x.n_rows(), z.n_cols(), rows))
            } else {
                None
            };
            vec![(x, z, None)]
        }
        other => return Err(format!("unknown --data {other} (prior | images)").into()),
    };
    let pool = support::pool(threads)?;
    for (x, z_true, sigmas) in &sets {
        let (n, d) = (x.n_rows(), x.n_cols());
        let hidden = HiddenEntries::scattered(n, d, (100 * d).min(n * d / 5), seed)?;
        let sigmas = sigmas.unwrap_or_else(|| {
            let s = sd(&hidden.visible_values(x.view()));
            (0.25 * s, 0.75 * s)
        });
        if let Some(z) = z_true {
            // The true Z scored like a sample: where the chains would sit if they found it.
            let post = ColumnPosteriors::new(x.view(), &hidden, z, sigmas.0, sigmas.1);
            let s = post.score(x, &hidden, z);
            println!(
                "{{\"cmd\":\"dvg-truth\",\"data\":\"{data}\",\"n\":{n},\"d\":{d},\"k_true\":{},\
\"sigma_x\":{:.5},\"sigma_a\":{:.5},\"train_loglik\":{:.2},\"test_l2\":{:.5},\"test_loglik\":{:.5}}}",
                z.n_cols(),
                sigmas.0,
                sigmas.1,
                post.log_lik(),
                s.l2_per_entry(),
                s.loglik_per_entry()
            );
        }
        for name in &kinds {
            let kind = ibp_kind(name)?;
            let results: Vec<ChainResult> = pool.install(|| {
                (0..chains)
                    .into_par_iter()
                    .map(|c| {
                        // Never the data's seed: the generator draws Z from the same
                        // restaurant on that stream, so a chain seeded alike would start
                        // at the true Z.
                        let chain_seed = seed + 1 + c as u64;
                        let bp = start == "bp-means";
                        run_chain(x, &hidden, kind, sigmas, iterations, chain_seed, bp)
                    })
                    .collect::<Res<_>>()
            })?;
            report(&data, &start, x, &hidden, name, &results);
        }
    }
    Ok(())
}
