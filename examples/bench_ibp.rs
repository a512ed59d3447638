//! Benchmarks of the IBP samplers (see `docs/results.md`, `docs/history/benchmarks-notebook.md`,
//! "IBP samplers", and `bench/run_ibp.sh`).
//!
//! ```text
//! cargo run --release --example bench_ibp -- <command> [--key value]...
//!
//! scaling --data prior|blocks --ns 50,100,250 --sweeps S --burn B [--kinds collapsed,semi,accelerated]
//!         [--seed SEED] [--max-seconds T]
//!         Per-sweep wall time of each sampler against N with the hyperparameters fixed:
//!         `prior` draws X from the IBP linear-Gaussian prior of Doshi-Velez & Ghahramani
//!         (2009, Table 2: α = 2, σ_A = 2, σ_X = 0.2, D = 10) and fits at those values;
//!         `blocks` generates block images (p = 1/3, σ_X = 0.2) and fits at α = 1, σ_A = 1,
//!         σ_X = 0.2. Each chain runs B + S sweeps on one thread; the time per sweep is the
//!         sampling time of the last S sweeps (trace seconds, which leave out the trace's own
//!         log-joint evaluation) over S. A sampler whose chain took more than T seconds
//!         (default 60) is not run at larger N. Ends with the least-squares slope of
//!         log(time per sweep) against log N per sampler.
//! heldout-report --runs NAME=DIR,NAME=DIR,... --out FILE.png --title TEXT
//!         Reads `summary.json` (and `trace.csv` for the samplers) of `madbayes fit --holdout`
//!         runs, prints one JSON line per run (K, held-out log-likelihood and L2 per hidden
//!         entry, seconds) and draws held-out log-likelihood against wall time: one line per
//!         sampler (each sweep's own score) ending in a square at the summary's score (the
//!         predictive averaged over the retained sweeps), and one square per hard-assignment
//!         run.
//! meibp-local-search [--ks 2,3,…,12] [--datasets 10] [--per-k 1000] [--n 500] [--d 50]
//!         [--p 0.5] [--sigma-x 1] [--sigma-a 1] [--alpha 3] [--data tn|factors] [--seed 1]
//!         Reed & Ghahramani (2013) Figure 1: for each K, `datasets` data sets from the
//!         nonnegative linear-Gaussian model (`tn`: A ~ TN(0, σ_A²), Z ~ Bernoulli(p),
//!         X = ZA + σ_X E; `factors`: their §5 binary factors), seeds seed, seed + 1, …; on each,
//!         MEIBP fits with k_max = K (seeds 1, 2, …, random initial Z) until per-k · K row
//!         optimizations (Eq. 19 under the fit's current q(A)) have been scored against brute
//!         force over all 2^K rows: the fraction where the §3.6 local search finds the optimum
//!         F*, where it is within 95% (F − F_n0 ≥ 0.95 (F* − F_n0), F_n0 the minimum, Eq. 22),
//!         the same for a uniformly random row, as mean and standard deviation over the data
//!         sets, the smallest (F − F_n0)/(F* − F_n0) the local search reached, and the
//!         optimum / within-95% fractions of MEIBP's row step (the better of the search's
//!         row and the current one).
//! meibp-large [--n 100000] [--d 1000] [--k 50] [--p 0.4] [--iterations 10] [--threads 1]
//!         [--seed 1]
//!         MEIBP on Reed & Ghahramani's large synthetic set (`meibp_factors`, σ_X = 1 in the
//!         data; the fit at their σ_X = σ_A = 0.75σ, α = 3, k_max = K), one JSON line per
//!         iteration (inference seconds, K₊, evidence, rows changed), without the CLI's
//!         per-iteration log p(X, Z).
//! ```
//!
//! Every command prints one JSON object per line on stdout.

#[path = "bench_ibp/local_search.rs"]
mod local_search;
#[path = "bench_ibp/meibp_large.rs"]
mod meibp_large;
mod support;

use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::generate::{block_images, ibp_linear_gaussian};
use madbayes::ibp::IbpSampler;
use madbayes::plot::canvas::{BLACK, Canvas, GREY, Rgb};
use madbayes::plot::chart::tick_label;
use madbayes::plot::font::text_width;
use std::path::Path;
use support::{Args, Res, cpu_seconds, ibp_kind, list};

/// Least-squares slope of log y against log x.
fn log_log_slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let lx: Vec<f64> = points.iter().map(|p| p.0.ln()).collect();
    let ly: Vec<f64> = points.iter().map(|p| p.1.ln()).collect();
    let mx = lx.iter().sum::<f64>() / n;
    let my = ly.iter().sum::<f64>() / n;
    let sxy: f64 = lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = lx.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// The data set of `scaling` and its fixed hyperparameters (α, σ_A, σ_X).
fn scaling_data(data: &str, n: usize, seed: u64) -> Res<(RowMatrix, usize, (f64, f64, f64))> {
    Ok(match data {
        "prior" => {
            let g = ibp_linear_gaussian(n, 10, 2.0, 2.0, 0.2, seed)?;
            let k = g.z.n_cols();
            (g.x, k, (2.0, 2.0, 0.2))
        }
        "blocks" => (block_images(n, 1.0 / 3.0, 0.2, seed)?.x, 4, (1.0, 1.0, 0.2)),
        other => return Err(format!("unknown --data {other} (prior | blocks)").into()),
    })
}

fn cmd_scaling(a: &Args) -> Res<()> {
    let data = a.str("data")?;
    let ns: Vec<usize> = list(a.str("ns")?)?;
    let sweeps: usize = a.get("sweeps")?;
    let burn: usize = a.get("burn")?;
    let seed: u64 = a.get_or("seed", 1)?;
    let max_seconds: f64 = a.get_or("max-seconds", 60.0)?;
    let kinds: Vec<String> = list(&a.get_or("kinds", "collapsed,semi,accelerated".to_string())?)?;
    if sweeps == 0 {
        return Err("--sweeps must be at least 1".into());
    }
    let pool = support::pool(1)?;
    let mut per_kind: Vec<Vec<(f64, f64)>> = vec![Vec::new(); kinds.len()];
    let mut stopped = vec![false; kinds.len()];
    for &n in &ns {
        let (x, k_true, (alpha, sigma_a, sigma_x)) = scaling_data(data, n, seed)?;
        for (ki, name) in kinds.iter().enumerate() {
            if stopped[ki] {
                continue;
            }
            let params = IbpSampler::params(ibp_kind(name)?)
                .alpha(alpha)
                .sigma_a(sigma_a)
                .sigma_x(sigma_x)
                .iterations(burn + sweeps)
                .seed(seed)
                .check()?;
            let c0 = cpu_seconds();
            let fit = pool.install(|| params.fit(&x))?;
            let cpu = cpu_seconds() - c0;
            let tr = fit.records();
            let before = if burn == 0 { 0.0 } else { tr[burn - 1].seconds };
            let timed = &tr[burn..];
            let per_sweep = (tr[tr.len() - 1].seconds - before) / sweeps as f64;
            let mean_k = timed.iter().map(|r| r.k as f64).sum::<f64>() / timed.len() as f64;
            let total = tr[tr.len() - 1].seconds;
            per_kind[ki].push((n as f64, per_sweep));
            println!(
                "{{\"cmd\":\"scaling\",\"data\":\"{data}\",\"sampler\":\"{name}\",\"n\":{n},\"d\":{},\
\"k_true\":{k_true},\"alpha\":{alpha},\"sigma_a\":{sigma_a},\"sigma_x\":{sigma_x},\"burn\":{burn},\
\"sweeps\":{sweeps},\"per_sweep_s\":{per_sweep:.6e},\"mean_k\":{mean_k:.2},\"final_k\":{},\
\"sampling_s\":{total:.3},\"process_cpu_s\":{cpu:.3},\"final_log_joint\":{:.4}}}",
                x.n_cols(),
                fit.k(),
                tr[tr.len() - 1].log_joint
            );
            if total > max_seconds {
                stopped[ki] = true;
            }
        }
    }
    for (ki, name) in kinds.iter().enumerate() {
        let pts = &per_kind[ki];
        let slope = if pts.len() >= 2 {
            log_log_slope(pts)
        } else {
            f64::NAN
        };
        let ns_done: Vec<String> = pts.iter().map(|p| format!("{}", p.0)).collect();
        println!(
            "{{\"cmd\":\"scaling-slope\",\"data\":\"{data}\",\"sampler\":\"{name}\",\"ns\":[{}],\
\"log_log_slope\":{}}}",
            ns_done.join(","),
            if slope.is_finite() {
                format!("{slope:.3}")
            } else {
                "null".into()
            }
        );
    }
    Ok(())
}

/// One `madbayes fit --holdout` run as read back from its output folder.
struct Run {
    name: String,
    algo: String,
    k: u64,
    seconds: f64,
    loglik: f64,
    l2: f64,
    /// (sampling seconds, held-out log-likelihood) per sweep; empty for hard assignments.
    trace: Vec<(f64, f64)>,
}

fn read_run(name: &str, dir: &Path) -> Res<Run> {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json"))?)?;
    let num = |v: &serde_json::Value, what: &str| -> Res<f64> {
        v.as_f64()
            .ok_or_else(|| format!("{}: summary.json has no number {what}", dir.display()).into())
    };
    let held = &summary["heldout"];
    let mut trace = Vec::new();
    let trace_path = dir.join("trace.csv");
    if trace_path.exists() {
        for line in std::fs::read_to_string(trace_path)?.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            if f.len() >= 5
                && let (Ok(s), Ok(ll)) = (f[1].parse::<f64>(), f[4].parse::<f64>())
            {
                trace.push((s, ll));
            }
        }
    }
    // For the samplers the wall time is the sampling time of the trace (the CLI's `seconds`
    // also counts scoring the held-out entries after every sweep).
    let seconds = match trace.last() {
        Some(&(s, _)) => s,
        None => num(&summary["seconds"], "seconds")?,
    };
    Ok(Run {
        name: name.to_string(),
        algo: summary["algo"].as_str().unwrap_or("?").to_string(),
        k: summary["k"].as_u64().unwrap_or(0),
        seconds,
        loglik: num(&held["loglik"], "heldout.loglik")?,
        l2: num(&held["l2"], "heldout.l2")?,
        trace,
    })
}

const COLOURS: [Rgb; 8] = [
    [31, 90, 180],
    [200, 60, 40],
    [40, 150, 60],
    [150, 60, 170],
    [230, 140, 20],
    [20, 160, 170],
    [120, 90, 40],
    [90, 90, 90],
];

/// Held-out log-likelihood against wall time (log axis): a line per sampler, a marker per
/// hard-assignment run, a legend on the right.
fn heldout_png(runs: &[Run], title: &str) -> Vec<u8> {
    let (w, h) = (960usize, 560usize);
    let (left, right, top, bottom) = (110i64, 640i64, 50i64, 480i64);
    let mut c = Canvas::new(w, h, [255; 3]);
    // x: every positive time; y: the final scores and markers set the range, with room below
    // for the start of the chains (points outside are clamped to the frame).
    let xs: Vec<f64> = runs
        .iter()
        .flat_map(|r| {
            r.trace
                .iter()
                .map(|p| p.0)
                .chain(std::iter::once(r.seconds))
        })
        .filter(|t| *t > 0.0 && t.is_finite())
        .collect();
    let (mut xlo, mut xhi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &t| {
            (a.min(t.log10()), b.max(t.log10()))
        });
    if xhi.partial_cmp(&xlo) != Some(std::cmp::Ordering::Greater) {
        xlo -= 1.0;
        xhi += 1.0;
    }
    let xpad = 0.05 * (xhi - xlo);
    (xlo, xhi) = (xlo - xpad, xhi + xpad);
    let finals: Vec<f64> = runs
        .iter()
        .map(|r| r.loglik)
        .filter(|v| v.is_finite())
        .collect();
    let (mut ylo, mut yhi) = finals
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let spread = (yhi - ylo).max(0.1);
    (ylo, yhi) = (ylo - 0.6 * spread, yhi + 0.15 * spread);
    let px = |t: f64| left + ((t.log10() - xlo) / (xhi - xlo) * (right - left) as f64) as i64;
    let py = |v: f64| {
        let f = ((v - ylo) / (yhi - ylo)).clamp(0.0, 1.0);
        bottom - (f * (bottom - top) as f64) as i64
    };
    c.text(left, 15, title, 2, BLACK);
    // Axes, ticks, labels.
    c.frame(
        left,
        top,
        (right - left) as usize,
        (bottom - top) as usize,
        BLACK,
    );
    for e in (xlo.ceil() as i64)..=(xhi.floor() as i64) {
        let t = 10f64.powi(e as i32);
        let x = px(t);
        c.line(x, top, x, bottom, GREY);
        let lab = tick_label(t);
        c.text(
            x - text_width(&lab, 1) as i64 / 2,
            bottom + 8,
            &lab,
            1,
            BLACK,
        );
    }
    let raw = (yhi - ylo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = (ylo / step).ceil() * step;
    while v <= yhi {
        let y = py(v);
        c.line(left, y, right, y, GREY);
        let lab = tick_label(v);
        c.text(left - 8 - text_width(&lab, 1) as i64, y - 3, &lab, 1, BLACK);
        v += step;
    }
    c.frame(
        left,
        top,
        (right - left) as usize,
        (bottom - top) as usize,
        BLACK,
    );
    let xl = "wall time (s, log scale)";
    c.text(
        (left + right) / 2 - text_width(xl, 2) as i64 / 2,
        bottom + 30,
        xl,
        2,
        BLACK,
    );
    let yl = "held-out log-lik per entry";
    c.text_up(
        20,
        (top + bottom) / 2 + text_width(yl, 2) as i64 / 2,
        yl,
        2,
        BLACK,
    );
    // Series and legend.
    for (i, r) in runs.iter().enumerate() {
        let col = COLOURS[i % COLOURS.len()];
        let mut prev: Option<(i64, i64)> = None;
        for &(t, ll) in &r.trace {
            if t <= 0.0 || !ll.is_finite() {
                continue;
            }
            let p = (px(t), py(ll));
            if let Some(q) = prev {
                c.line(q.0, q.1, p.0, p.1, col);
            }
            prev = Some(p);
        }
        if r.seconds > 0.0 && r.loglik.is_finite() {
            let (x, y) = (px(r.seconds), py(r.loglik));
            let size = if r.trace.is_empty() { 9 } else { 5 };
            c.fill_rect(x - size as i64 / 2, y - size as i64 / 2, size, size, col);
        }
        let ly = top + 10 + 22 * i as i64;
        c.fill_rect(right + 20, ly, 12, 12, col);
        let lab = if r.trace.is_empty() {
            format!("{} (final)", r.name)
        } else {
            format!("{} (sweeps, square: avg)", r.name)
        };
        c.text(right + 40, ly + 2, &lab, 1, BLACK);
    }
    c.to_png()
}

fn cmd_heldout_report(a: &Args) -> Res<()> {
    let mut runs = Vec::new();
    for item in a.str("runs")?.split(',') {
        let (name, dir) = item
            .split_once('=')
            .ok_or(format!("--runs: expected NAME=DIR, got {item}"))?;
        runs.push(read_run(name, Path::new(dir))?);
    }
    for r in &runs {
        println!(
            "{{\"cmd\":\"heldout\",\"name\":\"{}\",\"algo\":\"{}\",\"k\":{},\"seconds\":{:.4},\
\"heldout_loglik\":{:.5},\"heldout_l2\":{:.5},\"sweeps\":{}}}",
            r.name,
            r.algo,
            r.k,
            r.seconds,
            r.loglik,
            r.l2,
            r.trace.len()
        );
    }
    let png = heldout_png(&runs, a.get_or("title", String::new())?.as_str());
    std::fs::write(a.str("out")?, png)?;
    Ok(())
}

fn main() -> Res<()> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = argv.split_first().ok_or(
        "usage: bench_ibp scaling|heldout-report|meibp-local-search|meibp-large [--key value]...",
    )?;
    let a = Args::parse(rest)?;
    match cmd.as_str() {
        "scaling" => cmd_scaling(&a),
        "heldout-report" => cmd_heldout_report(&a),
        "meibp-local-search" => local_search::cmd_local_search(&a),
        "meibp-large" => meibp_large::cmd_meibp_large(&a),
        other => Err(format!("unknown command {other}").into()),
    }
}
