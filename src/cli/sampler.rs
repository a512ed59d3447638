//! `madbayes fit --algo ibp-gibbs | ibp-semicollapsed | ibp-accelerated | meibp`: the
//! Indian-buffet-process methods MAD-Bayes is measured against, written like every other
//! algorithm (z.csv, means.csv, summary.json) plus `trace.csv`, one row per iteration:
//! `iteration,seconds,k,log_joint,heldout_loglik,heldout_l2`.
//!
//! `log_joint` is log p(X, Z) = log p(X | Z) + log P([Z]) of the linear-Gaussian IBP with A
//! integrated out, under the iteration's hyperparameters (for MEIBP, whose own model has a
//! nonnegative prior on A, the same linear-Gaussian yardstick at its σ's, so that all methods
//! are scored alike; its own bound is the `evidence` column). With `--holdout`, each row's
//! held-out columns score the current sample: A is the posterior mean given Z (samplers) or
//! the mean of q(A) (MEIBP), and each test row takes the z that best fits its visible
//! entries. The summary's `heldout` averages the predictive density over the retained
//! samples: every sweep of the second half of the chain (MEIBP: its final state), and
//! `retained` gives the effective sample size of K and of the log joint over that half.
//!
//! The samplers run `--chains C` chains (default 4) in parallel, chain c on stream c of the
//! seed (`IbpValidParams::fit_chains_observed`), so every file is the same on any number of
//! threads. z.csv, means.csv, trace.csv and the held-out scores are the chain of highest
//! final log joint; summary.json adds each chain's summary, the pooled one, R̂ and ESS, and
//! `converged` / `diagnostics_warning`; draws.jsonl holds the thinned draws (README).

use super::CliError;
use super::fit::{Algo, Assignment, FitArgs, Fitted, Init};
use super::saved::AnyModel;
use madbayes::Fit;
use madbayes::eval::{FeaturePredictor, Holdout, PredictiveAverage, effective_sample_size};
use madbayes::features::{BpMeans, FeatureValidParams};
use madbayes::ibp::{
    IbpKind, IbpPosterior, IbpSampler, IbpStart, IbpValidParams, Meibp, MeibpValidParams,
    a_posterior, collapsed_log_lik, log_ibp_prior,
};
use madbayes::{Model, RowMatrix};
use serde_json::json;
use std::fmt::Write as _;
use std::sync::Mutex;

/// Sampler parameters checked before any data is read.
pub(super) enum SamplerChecked {
    /// The chain's parameters, and BP-means' when it gives the starting Z (`--init bp-means`).
    Ibp(Box<IbpValidParams>, Option<FeatureValidParams>, ChainsArgs),
    Meibp(MeibpValidParams),
}

/// How many chains, and how many thinned draws of each to keep.
#[derive(Clone, Copy)]
pub(super) struct ChainsArgs {
    chains: usize,
    draws: usize,
}

/// Whether `algo` is one of the IBP methods.
pub(super) fn is_sampler(algo: Algo) -> bool {
    algo.family() == super::algos::Family::Ibp
}

/// Checks the sampler options of `args` (for a sampler `algo`).
pub(super) fn check(args: &FitArgs) -> Result<SamplerChecked, CliError> {
    let name = args.algo.name();
    let refuse = |what: &str, given: bool| {
        if given {
            Err(CliError(format!("--{what} does not apply to {name}")))
        } else {
            Ok(())
        }
    };
    let bp_init = args.init == Some(Init::BpMeans);
    refuse("penalty", args.penalty.is_some() && !bp_init)?;
    refuse("refine", args.refine && !bp_init)?;
    refuse("reg", args.reg.is_some())?;
    refuse("restarts", args.restarts.is_some() && !bp_init)?;
    let err = |e: madbayes::ParamError| CliError(format!("{name}: {e}"));
    if args.algo == Algo::Meibp {
        refuse("window", args.window.is_some())?;
        refuse("init", args.init.is_some())?;
        refuse("init-z", args.init_z.is_some())?;
        refuse("split-merge", args.split_merge.is_some())?;
        refuse("block", args.block.is_some())?;
        refuse("anneal", args.anneal.is_some())?;
        refuse("plain", args.plain)?;
        refuse("chains", args.chains.is_some())?;
        refuse("draws", args.draws.is_some())?;
        let k = args
            .k
            .ok_or_else(|| CliError("meibp needs --k K, the largest number of features".into()))?;
        let mut p = Meibp::params(k)
            .alpha(args.alpha.unwrap_or(3.0))
            .max_iter(args.iterations.unwrap_or(args.max_iter()))
            .seed(args.seed);
        if let Some(s) = args.sigma_x {
            p = p.sigma_x(s);
        }
        if let Some(s) = args.sigma_a {
            p = p.sigma_a(s);
        }
        return Ok(SamplerChecked::Meibp(p.check().map_err(err)?));
    }
    refuse("k", args.k.is_some())?;
    let kind = match args.algo {
        Algo::IbpGibbs => IbpKind::Collapsed,
        Algo::IbpSemicollapsed => IbpKind::SemiCollapsed,
        _ => IbpKind::Accelerated,
    };
    if kind != IbpKind::Accelerated {
        refuse("window", args.window.is_some())?;
    }
    let mut p = IbpSampler::params(kind).seed(args.seed);
    if args.plain {
        p = p.plain();
    }
    if let Some(a) = args.alpha {
        p = p.alpha(a);
    }
    if let Some(n) = args.iterations {
        p = p.iterations(n);
    }
    if args.resample {
        p = p.resample_hyper(true);
    }
    if let Some(s) = args.sigma_x {
        p = p.sigma_x(s);
    }
    if let Some(s) = args.sigma_a {
        p = p.sigma_a(s);
    }
    if let Some(w) = args.window {
        p = p.window(w);
    }
    if let Some(a) = args.split_merge {
        p = p.split_merge(a);
    }
    if let Some(b) = args.block {
        p = p.block(b);
    }
    if let Some(f) = args.anneal {
        p = p.anneal(f);
    }
    if let Some(path) = &args.init_z {
        if args.init.is_some() {
            return Err(CliError(
                "--init and --init-z both say where the chain starts; give one".into(),
            ));
        }
        let z = madbayes::io::read_matrix(path)
            .map_err(|e| CliError(format!("--init-z {}: {e}", path.display())))?;
        p = p.start_from(z);
    }
    let bp = match args.init {
        Some(Init::Prior) => {
            p = p.start_from_prior(true);
            None
        }
        Some(Init::BpMeans) => {
            let penalty = args.penalty.ok_or_else(|| {
                CliError(format!(
                    "{name} --init bp-means needs --penalty P, BP-means' cost per feature"
                ))
            })?;
            // The paper's BP-means (as before the defaults changed), refined with --refine.
            let bp = BpMeans::params(penalty)
                .plain()
                .restarts(args.restarts())
                .max_iter(args.max_iter())
                .refine(args.refine)
                .seed(args.seed)
                .check()
                .map_err(|e| CliError(format!("--init bp-means: {e}")))?;
            Some(bp)
        }
        Some(Init::Empty) => {
            p = p.start_from_prior(false);
            None
        }
        Some(Init::Mixed) => {
            p = p.start(IbpStart::Mixed);
            None
        }
        None => None,
    };
    let runs = ChainsArgs {
        chains: args.chains.unwrap_or(madbayes::ibp::DEFAULT_CHAINS),
        draws: args.draws.unwrap_or(madbayes::ibp::DEFAULT_DRAWS),
    };
    if runs.chains == 0 {
        return Err(CliError(
            "--chains must be at least 1 (the number of independent chains)".into(),
        ));
    }
    if runs.draws == 0 {
        return Err(CliError(
            "--draws must be at least 1 (the draws kept per chain in draws.jsonl)".into(),
        ));
    }
    Ok(SamplerChecked::Ibp(
        Box::new(p.check().map_err(err)?),
        bp,
        runs,
    ))
}

/// One line of trace.csv (the held-out fields empty without a holdout).
fn trace_line(out: &mut String, it: usize, secs: f64, k: usize, lj: f64, held: Option<(f64, f64)>) {
    let _ = write!(out, "{it},{secs},{k},{lj},");
    if let Some((ll, l2)) = held {
        let _ = write!(out, "{ll},{l2}");
    } else {
        out.push(',');
    }
    out.push('\n');
}

/// Runs the sampler on `train` (the training rows of `x`, or all of it), scoring the
/// held-out entries of `x` under `split` when given.
pub(super) fn fit(
    checked: &SamplerChecked,
    train: &RowMatrix,
    x: &RowMatrix,
    split: Option<&Holdout>,
) -> Result<Fitted, madbayes::FitError> {
    let mut csv = String::from("iteration,seconds,k,log_joint,heldout_loglik,heldout_l2\n");
    let mut average = split.map(|h| PredictiveAverage::new(h, x));
    let mut extra_json = Vec::new();
    let mut extra_files = Vec::new();
    let (z, a, iterations, stop, trace_lj, model) = match checked {
        SamplerChecked::Ibp(p, bp, runs) => {
            let total = p.iterations();
            let started;
            let p = match bp {
                Some(bp) => {
                    let t = std::time::Instant::now();
                    let start = bp.fit(train)?;
                    extra_json.push((
                        "init",
                        json!({
                            "algo": "bp-means",
                            "k": start.k(),
                            "objective": start.objective(),
                            "seconds": t.elapsed().as_secs_f64(),
                        }),
                    ));
                    started = p.clone().with_start(start.z().to_row_matrix());
                    &started
                }
                None => p,
            };
            // Each chain's trace.csv, held-out average and log joints, filled from its own
            // thread in sweep order.
            let states: Vec<Mutex<ChainOutput>> = (0..runs.chains)
                .map(|_| {
                    Mutex::new(ChainOutput {
                        csv: csv.clone(),
                        average: split.map(|h| PredictiveAverage::new(h, x)),
                        lj: Vec::new(),
                    })
                })
                .collect();
            let posterior =
                p.fit_chains_observed(train.view(), runs.chains, runs.draws, &|c, rec, z| {
                    let mut guard = states[c].lock().expect("no chain panicked");
                    let out = &mut *guard;
                    let held = split.map(|h| {
                        let post = a_posterior(train.view(), z, rec.sigma_x, rec.sigma_a);
                        let fp = FeaturePredictor::new(&post.mean);
                        let predict = |row: &[f64], hid: &[usize]| fp.predict(row, hid);
                        let avg = out.average.as_mut().expect("made with the split");
                        let s = if 2 * rec.iteration > total {
                            avg.add(rec.sigma_x, predict)
                        } else {
                            h.score(x, rec.sigma_x, predict)
                        };
                        (s.loglik, s.l2)
                    });
                    trace_line(
                        &mut out.csv,
                        rec.iteration,
                        rec.seconds,
                        rec.k,
                        rec.log_joint,
                        held,
                    );
                    out.lj.push(rec.log_joint);
                })?;
            let best = posterior.best_chain();
            let mut outputs: Vec<ChainOutput> = states
                .into_iter()
                .map(|m| m.into_inner().expect("no chain panicked"))
                .collect();
            let chosen = outputs.swap_remove(best);
            csv = chosen.csv;
            average = chosen.average;
            let fit = posterior.chains()[best].clone();
            extra_json.push(("alpha", json!(fit.alpha())));
            extra_json.push(("sigma_x", json!(fit.sigma_x())));
            extra_json.push(("sigma_a", json!(fit.sigma_a())));
            let kept = &fit.records()[total / 2..];
            let ks: Vec<f64> = kept.iter().map(|r| r.k as f64).collect();
            let ljs: Vec<f64> = kept.iter().map(|r| r.log_joint).collect();
            extra_json.push((
                "retained",
                json!({
                    "samples": kept.len(),
                    "ess_k": effective_sample_size(&ks),
                    "ess_log_joint": effective_sample_size(&ljs),
                    "mean_k": ks.iter().sum::<f64>() / ks.len().max(1) as f64,
                }),
            ));
            chains_json(&posterior, total / 2, &mut extra_json);
            extra_files.push(("draws.jsonl", draws_jsonl(&posterior)));
            let (z, a, n, stop) = (fit.z(), fit.means().clone(), fit.n_iter(), fit.stop());
            (z, a, n, stop, chosen.lj, AnyModel::Ibp(fit))
        }
        SamplerChecked::Meibp(p) => {
            let alpha = p.alpha();
            let (sx, sa) = p.sigmas(train.view());
            let mut lj = Vec::new();
            let mut last = None;
            let fit = p.fit_with(train.view(), &mut |rec, z, a| {
                let log_joint =
                    collapsed_log_lik(train.view(), z, sx, sa) + log_ibp_prior(z, alpha);
                let held = split.map(|h| {
                    let fp = FeaturePredictor::new(a);
                    let s = h.score(x, sx, |row, hid| fp.predict(row, hid));
                    (s.loglik, s.l2)
                });
                trace_line(&mut csv, rec.iteration, rec.seconds, rec.k, log_joint, held);
                lj.push(log_joint);
                last = Some(a.clone());
            })?;
            if let (Some(avg), Some(a)) = (average.as_mut(), &last) {
                let fp = FeaturePredictor::new(a);
                avg.add(sx, |row, hid| fp.predict(row, hid));
            }
            extra_json.push(("alpha", json!(alpha)));
            extra_json.push(("sigma_x", json!(sx)));
            extra_json.push(("sigma_a", json!(sa)));
            extra_json.push((
                "evidence",
                json!(fit.records().iter().map(|r| r.evidence).collect::<Vec<_>>()),
            ));
            let (z, a, n, stop) = (fit.z(), fit.means().clone(), fit.n_iter(), fit.stop());
            (z, a, n, stop, lj, AnyModel::Meibp(fit))
        }
    };
    if let (Some(avg), Some(h)) = (&average, split) {
        let s = avg.score();
        extra_json.push((
            "heldout",
            json!({
                "test_rows": h.test_rows.len(),
                "hidden_entries": s.entries,
                "loglik": s.loglik,
                "l2": s.l2,
                "samples": avg.samples(),
                "sigma_x": "each sample's own",
            }),
        ));
    }
    let log_joint = trace_lj.last().copied().unwrap_or(f64::NAN);
    extra_json.push(("log_joint", json!(log_joint)));
    Ok(Fitted {
        k: z.n_cols(),
        objective: f64::NAN,
        n_iter: iterations,
        stop,
        trace: trace_lj,
        run_objectives: vec![f64::NAN],
        best_run: 0,
        assignment: Assignment::Features(z),
        means: a,
        extra_files: {
            extra_files.insert(0, ("trace.csv", csv));
            extra_files
        },
        extra_json,
        model,
    })
}

/// What one chain writes while it runs.
struct ChainOutput<'a> {
    csv: String,
    average: Option<PredictiveAverage<'a>>,
    lj: Vec<f64>,
}

/// summary.json's `chains`, `pooled`, `diagnostics`, `converged` and (when R̂ says the chains
/// disagree) `diagnostics_warning`, which is also printed on stderr. `burn`: the sweeps of
/// each chain left out of the per-chain means.
fn chains_json(
    post: &IbpPosterior,
    burn: usize,
    extra: &mut Vec<(&'static str, serde_json::Value)>,
) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let per_chain: Vec<serde_json::Value> = post
        .chains()
        .iter()
        .enumerate()
        .map(|(c, f)| {
            let kept = &f.records()[burn.min(f.records().len())..];
            let of = |g: fn(&madbayes::ibp::IbpTraceRecord) -> f64| {
                mean(&kept.iter().map(g).collect::<Vec<_>>())
            };
            let mut ks = std::collections::BTreeMap::new();
            for r in kept {
                *ks.entry(r.k).or_insert(0usize) += 1;
            }
            json!({
                "chain": c,
                "final": {
                    "k": f.k(),
                    "log_joint": f.log_joint(),
                    "alpha": f.alpha(),
                    "sigma_x": f.sigma_x(),
                    "sigma_a": f.sigma_a(),
                },
                "retained_mean": {
                    "k": of(|r| r.k as f64),
                    "log_joint": of(|r| r.log_joint),
                    "alpha": of(|r| r.alpha),
                    "sigma_x": of(|r| r.sigma_x),
                    "sigma_a": of(|r| r.sigma_a),
                },
                "k_distribution": ks
                    .iter()
                    .map(|(k, n)| json!({"k": k, "p": *n as f64 / kept.len().max(1) as f64}))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let draws = post.draws();
    let pooled_mean = |g: fn(&madbayes::ibp::IbpTraceRecord) -> f64| {
        mean(&draws.iter().map(|d| g(&d.record)).collect::<Vec<_>>())
    };
    let f = post.features();
    let rows =
        |m: &RowMatrix| -> Vec<Vec<f64>> { (0..m.n_rows()).map(|i| m.row(i).to_vec()).collect() };
    let reference = post.reference_draw();
    let diagnostics: serde_json::Map<String, serde_json::Value> = post
        .diagnostics()
        .named()
        .iter()
        .map(|(name, d)| {
            (
                name.to_string(),
                json!({"rhat": d.rhat, "ess_bulk": d.ess_bulk, "ess_tail": d.ess_tail}),
            )
        })
        .collect();
    extra.push(("chains", json!(per_chain)));
    extra.push((
        "pooled",
        json!({
            "draws": draws.len(),
            "k_distribution": post
                .k_distribution()
                .iter()
                .map(|(k, p)| json!({"k": k, "p": p}))
                .collect::<Vec<_>>(),
            "mean": {
                "k": pooled_mean(|r| r.k as f64),
                "log_joint": pooled_mean(|r| r.log_joint),
                "alpha": pooled_mean(|r| r.alpha),
                "sigma_x": pooled_mean(|r| r.sigma_x),
                "sigma_a": pooled_mean(|r| r.sigma_a),
            },
            "features": {
                "reference": {"chain": reference.chain, "sweep": reference.sweep},
                "means": rows(&f.means),
                "row_probability": rows(&f.row_probability),
                "match_rate": f.match_rate,
            },
        }),
    ));
    extra.push(("diagnostics", serde_json::Value::Object(diagnostics)));
    let agree = post.agree();
    extra.push(("converged", json!(agree)));
    if !agree {
        let bad: Vec<String> = post
            .diagnostics()
            .named()
            .iter()
            .filter(|(_, d)| d.rhat.is_nan() || d.rhat >= madbayes::eval::RHAT_THRESHOLD)
            .map(|(name, d)| rhat_text(name, d.rhat))
            .collect();
        let warning = format!(
            "the chains disagree: R̂ above {} for {} — run longer (--iterations) or read the \
             chains' summaries before trusting the pooled one",
            madbayes::eval::RHAT_THRESHOLD,
            bad.join(", ")
        );
        eprintln!("warning: {warning}");
        extra.push(("diagnostics_warning", json!(warning)));
    }
}

/// One scalar's R̂ in the disagreement warning. An infinite R̂ (written `null` in
/// summary.json) means that no chain moved over the retained draws but they differ.
fn rhat_text(name: &str, rhat: f64) -> String {
    if rhat == f64::INFINITY {
        format!("{name} ∞ (each chain stuck at its own value)")
    } else {
        format!("{name} {rhat:.3}")
    }
}

/// draws.jsonl: one JSON object per retained draw (chain by chain, in sweep order) —
/// `chain`, `sweep`, `k`, `log_joint`, `alpha`, `sigma_x`, `sigma_a`, and `z`, one string of
/// K characters 0/1 per row.
fn draws_jsonl(post: &IbpPosterior) -> String {
    let mut out = String::new();
    for d in post.draws() {
        let z: Vec<String> = (0..d.z.n_rows())
            .map(|i| {
                (0..d.z.n_cols())
                    .map(|k| if d.z.get(i, k) { '1' } else { '0' })
                    .collect()
            })
            .collect();
        let line = json!({
            "chain": d.chain,
            "sweep": d.sweep,
            "k": d.record.k,
            "log_joint": d.record.log_joint,
            "alpha": d.record.alpha,
            "sigma_x": d.record.sigma_x,
            "sigma_a": d.record.sigma_a,
            "z": z,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::rhat_text;

    #[test]
    fn an_infinite_rhat_is_named_in_words() {
        assert_eq!(rhat_text("k", 1.23456), "k 1.235");
        assert_eq!(
            rhat_text("k", f64::INFINITY),
            "k ∞ (each chain stuck at its own value)"
        );
        // summary.json cannot hold ∞: serde_json writes it as null.
        assert_eq!(serde_json::json!(f64::INFINITY), serde_json::Value::Null);
    }
}
