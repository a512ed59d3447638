//! The measurements behind the IBP samplers' defaults (docs/ibp.md).
//!
//! ```text
//! cargo run --release --example ibp_defaults -- --kinds collapsed,semi,accelerated
//!     --ns 100,500,2000 --noises 0.1,0.3,0.5 --seeds 1,2 --sweeps 300
//!     [--split-merge 0,10] [--recode R] [--block 0,3] [--sx-frac 0.25,1] [--plain]
//!     [--start empty|prior] [--chain-seed-offset 1000] [--chains 1] [--fixed none|sx|all]
//!     [--anneal F]
//! ```
//!
//! For every combination, generates block images (`madbayes gen blocks`: p = 0.5, data seed
//! s) and fits one chain with seed s + 1000 (`--chain-seed-offset`) with the library defaults
//! (`IbpSampler::params(kind)`: hyperparameters resampled, data as given) except the
//! split–merge attempts, the recoding attempts (`--recode`; default as many as the
//! split–merge attempts) and the block size given. It prints one line: K, whether the four
//! shapes are recovered (each true shape matched one-to-one by a learned feature's posterior
//! mean within 0.35 in every pixel — a feature that is the sum of two shapes is 1 away
//! somewhere, so it is a miss), the final log joint, the log joint of the true Z at the
//! chain's final hyperparameters, σ_X, α and the sampling seconds. `--plain` starts from
//! `IbpDefaults::PLAIN` instead; `--sx-frac f` (f > 0) starts σ_X at f × the data's standard
//! deviation instead of the default's (still resampled; 0: the default). `--fixed sx` gives
//! σ_X as the generating noise level, so it is fixed while α and σ_A are resampled; `--fixed
//! all` fixes α = 1, σ_X = the noise, σ_A = 1 (PyIBP's setting). `--anneal F` sets the
//! annealed fraction of the sweeps (default: the library's). `--chains C` (C > 1)
//! runs C chains in parallel as `madbayes fit` does (streams 0..C of the chain seed) and scores
//! the chain of highest final log joint, the one `madbayes fit` writes out; the seconds are
//! then that chain's.
//!
//! Why the offset: the generator and a chain both draw from `run_rng(seed, 0)`, so a chain
//! seeded like its data reuses the numbers that drew Z and the noise, and how many chains
//! recover the shapes then depends on how its draws line up with those (docs/ibp.md, "Chain
//! seeds apart from data seeds").

use madbayes::Fit;
use madbayes::Model;
use madbayes::generate::block_images;
use madbayes::ibp::{IbpKind, IbpSampler, collapsed_log_lik, log_ibp_prior};
use std::collections::HashMap;

fn list<T: std::str::FromStr>(args: &HashMap<String, String>, key: &str, default: &str) -> Vec<T>
where
    T::Err: std::fmt::Debug,
{
    args.get(key)
        .map(String::as_str)
        .unwrap_or(default)
        .split(',')
        .map(|v| v.parse().expect("a number"))
        .collect()
}

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut args = HashMap::new();
    let mut plain = false;
    let mut it = raw.iter();
    while let Some(k) = it.next() {
        if k == "--plain" {
            plain = true;
            continue;
        }
        let v = it.next().expect("a value after each --key");
        args.insert(k.trim_start_matches("--").to_string(), v.clone());
    }
    let kinds: Vec<IbpKind> = args
        .get("kinds")
        .map(String::as_str)
        .unwrap_or("collapsed,semi,accelerated")
        .split(',')
        .map(|k| match k {
            "collapsed" => IbpKind::Collapsed,
            "semi" => IbpKind::SemiCollapsed,
            "accelerated" => IbpKind::Accelerated,
            other => panic!("unknown kind {other}"),
        })
        .collect();
    let ns: Vec<usize> = list(&args, "ns", "100,500,2000");
    let noises: Vec<f64> = list(&args, "noises", "0.1,0.3,0.5");
    let seeds: Vec<u64> = list(&args, "seeds", "1");
    let sms: Vec<usize> = list(&args, "split-merge", "10");
    let blocks: Vec<usize> = list(&args, "block", "3");
    let sweeps: usize = list(&args, "sweeps", "300")[0];
    // Chain seed = data seed + offset, so that the chain does not reuse the generator's draws.
    let offset: u64 = list(&args, "chain-seed-offset", "1000")[0];
    // Chains per fit; with more than one, the chain of highest final log joint is scored.
    let chains: usize = list(&args, "chains", "1")[0];
    let fracs: Vec<f64> = list(&args, "sx-frac", "0");
    // Recoding attempts per sweep (default: as many as the split–merge attempts).
    let recode: Option<usize> = args.get("recode").map(|v| v.parse().expect("a number"));
    // Where the chain starts: `empty` or `prior` (default: the defaults' start).
    let start: Option<bool> = args.get("start").map(|v| match v.as_str() {
        "empty" => false,
        "prior" => true,
        other => panic!("unknown start {other}"),
    });
    // The annealed fraction of the sweeps (default: the library's).
    let anneal: Option<f64> = args.get("anneal").map(|v| v.parse().expect("a number"));
    // Hyperparameters the user gives (fixed): none, σ_X alone, or all three.
    let fixed = args.get("fixed").map_or("none", String::as_str).to_string();
    assert!(
        ["none", "sx", "all"].contains(&fixed.as_str()),
        "--fixed is none, sx or all"
    );
    for &n in &ns {
        for &noise in &noises {
            for &seed in &seeds {
                let data = block_images(n, 0.5, noise, seed).expect("valid generator parameters");
                for &kind in &kinds {
                    for &sm in &sms {
                        for (&b, &frac) in blocks
                            .iter()
                            .flat_map(|b| fracs.iter().map(move |f| (b, f)))
                        {
                            let mut p = IbpSampler::params(kind);
                            if plain {
                                p = p.plain();
                            }
                            if frac > 0.0 {
                                // σ_X starts at frac × the data's sd and is resampled.
                                p = p
                                    .sigma_x(frac * madbayes::ibp::data_std(data.x.view()))
                                    .resample_hyper(true);
                            }
                            if fixed != "none" {
                                p = p.sigma_x(noise);
                            }
                            if fixed == "all" {
                                p = p.alpha(1.0).sigma_a(1.0);
                            }
                            if let Some(f) = anneal {
                                p = p.anneal(f);
                            }
                            if let Some(r) = recode {
                                p = p.recode(r);
                            }
                            if let Some(prior) = start {
                                p = p.start_from_prior(prior);
                            }
                            let p = p
                                .split_merge(sm)
                                .block(b)
                                .iterations(sweeps)
                                .seed(seed + offset)
                                .check()
                                .expect("valid parameters");
                            let fit = if chains > 1 {
                                // As `madbayes fit` reports: the chain of highest log joint.
                                let post = p.fit_chains(&data.x, chains, 10).expect("a fit");
                                post.chains()[post.best_chain()].clone()
                            } else {
                                p.fit(&data.x).expect("a fit")
                            };
                            let a = fit.means();
                            let err = |k: usize, t: usize| -> f64 {
                                a.row(k)
                                    .iter()
                                    .zip(data.a.row(t))
                                    .map(|(p, q)| (p - q).abs())
                                    .fold(0.0, f64::max)
                            };
                            let mut used = vec![false; fit.k()];
                            let mut worst: f64 = 0.0;
                            for t in 0..4 {
                                match (0..fit.k())
                                    .filter(|&k| !used[k])
                                    .min_by(|&p, &q| err(p, t).total_cmp(&err(q, t)))
                                {
                                    Some(best) => {
                                        used[best] = true;
                                        worst = worst.max(err(best, t));
                                    }
                                    None => worst = f64::INFINITY,
                                }
                            }
                            let truth = collapsed_log_lik(
                                data.x.view(),
                                &data.z,
                                fit.sigma_x(),
                                fit.sigma_a(),
                            ) + log_ibp_prior(&data.z, fit.alpha());
                            let rec = fit.records();
                            let seconds = rec.last().map_or(0.0, |r| r.seconds);
                            // First sweep at which the four shapes' K was reached and kept.
                            println!(
                                "{kind:?} n={n} noise={noise} seed={seed} sm={sm} block={b} sx_frac={frac} fixed={fixed} \
                                 K={} recovered={} worst={worst:.3} log_joint={:.1} \
                                 truth_at_final_hyper={truth:.1} sigma_x={:.4} alpha={:.2} \
                                 seconds={seconds:.3}",
                                fit.k(),
                                worst < 0.35,
                                fit.log_joint(),
                                fit.sigma_x(),
                                fit.alpha(),
                            );
                        }
                    }
                }
            }
        }
    }
}
