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

use super::CliError;
use super::fit::{Algo, FitArgs, Fitted, Init};
use super::saved::AnyModel;
use madbayes::eval::{FeaturePredictor, Holdout, PredictiveAverage, effective_sample_size};
use madbayes::features::{BpMeans, FeatureValidParams};
use madbayes::ibp::{
    IbpKind, IbpSampler, IbpValidParams, Meibp, MeibpValidParams, a_posterior, collapsed_log_lik,
    log_ibp_prior,
};
use madbayes::{Model, RowMatrix};
use serde_json::json;
use std::fmt::Write as _;

/// Sampler parameters checked before any data is read.
pub(super) enum SamplerChecked {
    /// The chain's parameters, and BP-means' when it gives the starting Z (`--init bp-means`).
    Ibp(IbpValidParams, Option<FeatureValidParams>),
    Meibp(MeibpValidParams),
}

/// Whether `algo` is one of the IBP methods.
pub(super) fn is_sampler(algo: Algo) -> bool {
    matches!(
        algo,
        Algo::IbpGibbs | Algo::IbpSemicollapsed | Algo::IbpAccelerated | Algo::Meibp
    )
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
    let alpha = args
        .alpha
        .unwrap_or(if args.algo == Algo::Meibp { 3.0 } else { 2.0 });
    let err = |e: madbayes::ParamError| CliError(format!("{name}: {e}"));
    if args.algo == Algo::Meibp {
        refuse("window", args.window.is_some())?;
        refuse("init", args.init.is_some())?;
        let k = args
            .k
            .ok_or_else(|| CliError("meibp needs --k K, the largest number of features".into()))?;
        let mut p = Meibp::params(k)
            .alpha(alpha)
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
    let mut p = IbpSampler::params(kind)
        .alpha(alpha)
        .iterations(args.iterations.unwrap_or(1000))
        .seed(args.seed)
        .resample_hyper(args.resample);
    if let Some(s) = args.sigma_x {
        p = p.sigma_x(s);
    }
    if let Some(s) = args.sigma_a {
        p = p.sigma_a(s);
    }
    if let Some(w) = args.window {
        p = p.window(w);
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
        Some(Init::Empty) | None => None,
    };
    Ok(SamplerChecked::Ibp(p.check().map_err(err)?, bp))
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
    let (z, a, iterations, stop, trace_lj, model) = match checked {
        SamplerChecked::Ibp(p, bp) => {
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
            let mut lj = Vec::new();
            let fit = p.fit_with(train, &mut |rec, z| {
                let held = split.map(|h| {
                    let post = a_posterior(train, z, rec.sigma_x, rec.sigma_a);
                    let fp = FeaturePredictor::new(&post.mean);
                    let predict = |row: &[f64], hid: &[usize]| fp.predict(row, hid);
                    let avg = average.as_mut().expect("made with the split");
                    let s = if 2 * rec.iteration > total {
                        avg.add(rec.sigma_x, predict)
                    } else {
                        h.score(x, rec.sigma_x, predict)
                    };
                    (s.loglik, s.l2)
                });
                trace_line(
                    &mut csv,
                    rec.iteration,
                    rec.seconds,
                    rec.k,
                    rec.log_joint,
                    held,
                );
                lj.push(rec.log_joint);
            })?;
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
            let (z, a, n, stop) = (fit.z(), fit.means().clone(), fit.n_iter(), fit.stop());
            (z, a, n, stop, lj, AnyModel::Ibp(fit))
        }
        SamplerChecked::Meibp(p) => {
            let alpha = p.alpha();
            let (sx, sa) = p.sigmas(train);
            let mut lj = Vec::new();
            let mut last = None;
            let fit = p.fit_with(train, &mut |rec, z, a| {
                let log_joint = collapsed_log_lik(train, z, sx, sa) + log_ibp_prior(z, alpha);
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
        labels: None,
        means: a,
        z,
        extra_files: vec![("trace.csv", csv)],
        extra_json,
        model,
    })
}
