//! `madbayes path INPUT --algo ALGO --penalties P1,P2,… | --penalty-range LO:HI:COUNT --out DIR`:
//! one algorithm over a grid of penalties.
//!
//! The grid is sorted increasing (given values must be positive, finite and distinct; a
//! range is COUNT log-spaced values from LO to HI, both included). For each penalty the
//! algorithm runs as `fit` would with the same options (all restarts, the same seed), and
//! `DIR/path.csv` (`penalty,k,objective,iterations,seconds`), `DIR/path.json` (the rows and
//! the stable ranges) and `DIR/path.png` (K, and the objective, against the penalty on a log
//! axis) are written through the staging folder, so a failure leaves nothing half-written.
//!
//! **Stable ranges** are the maximal runs of consecutive grid values with the same K.
//!
//! **What is reused between penalties:** reading and checking the data and the PCA of
//! `--pca` are done once; the thread pool is made once. **Not reused:** each penalty is
//! fitted from scratch with all its restarts — no warm start from the neighbouring
//! penalty's solution, so every row is what `fit --penalty P` with the same options gives.

use super::algos::{ALGOS, Family};
use super::fit::{
    Algo, FitArgs, RunOptions, check_params, check_run_lengths, fit_checked, read_input,
};
use super::output::{Staging, check_out};
use super::progress::RestartBar;
use super::{CliError, check_threads, with_threads};
use madbayes::error::check_data;
use madbayes::pca::Pca;
use madbayes::plot::chart::{Chart, charts_png};
use serde_json::json;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `madbayes path`.
#[derive(clap::Args, Debug)]
pub struct PathArgs {
    /// Data, as for `fit`.
    pub input: PathBuf,
    /// An algorithm with a penalty: dp-means, collapsed-dp-means, mahalanobis, bp-means,
    /// collapsed-bp-means or stepwise-k-features.
    #[arg(long, value_enum)]
    pub algo: Algo,
    /// The penalties, comma-separated (sorted increasing before the runs). Give this or
    /// --penalty-range.
    #[arg(long, value_name = "P1,P2,…", allow_hyphen_values = true)]
    pub penalties: Option<String>,
    /// LO:HI:COUNT: COUNT penalties log-spaced from LO to HI (0 < LO < HI, COUNT ≥ 2).
    #[arg(long, value_name = "LO:HI:COUNT", allow_hyphen_values = true)]
    pub penalty_range: Option<String>,
    /// Folder to write path.csv, path.json and path.png into.
    #[arg(long)]
    pub out: PathBuf,
    /// The options `path` shares with `fit` (every penalty is fitted as `fit` would).
    #[command(flatten)]
    pub run: RunOptions,
}

/// `args.k`, `args.seed`, … read the shared options.
impl std::ops::Deref for PathArgs {
    type Target = RunOptions;
    fn deref(&self) -> &RunOptions {
        &self.run
    }
}

/// One grid point's result.
struct Row {
    penalty: f64,
    k: usize,
    objective: f64,
    iterations: usize,
    seconds: f64,
}

/// A maximal run of consecutive grid values with the same K: rows `first..=last`.
#[derive(Debug, PartialEq)]
pub struct Stable {
    pub k: usize,
    pub first: usize,
    pub last: usize,
}

/// The most penalties a path may have. Each is a full fit with all its restarts, so even
/// 10 000 is hours of work on most data; more is a typo (`1:10:100000000`).
pub const MAX_PENALTIES: usize = 10_000;

/// The penalty grid, sorted increasing; errors say what is wrong with it. Nothing is
/// allocated for a range before its COUNT is checked against [`MAX_PENALTIES`].
pub fn grid(penalties: Option<&str>, range: Option<&str>) -> Result<Vec<f64>, String> {
    let mut g = match (penalties, range) {
        (Some(list), None) => {
            if list.trim().is_empty() {
                return Err("--penalties is empty; give P1,P2,… (positive numbers)".into());
            }
            let p = list
                .split(',')
                .map(|v| {
                    v.trim().parse::<f64>().map_err(|_| {
                        format!(
                            "--penalties: {v:?} is not a number; give P1,P2,… (positive numbers)"
                        )
                    })
                })
                .collect::<Result<Vec<f64>, String>>()?;
            if p.len() > MAX_PENALTIES {
                return Err(format!(
                    "--penalties: {} values, more than the {MAX_PENALTIES} a path may have (each is a full fit)",
                    p.len()
                ));
            }
            if let Some(bad) = p.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
                return Err(format!(
                    "--penalties: {bad} is not a positive number; every penalty must be > 0"
                ));
            }
            p
        }
        (None, Some(r)) => {
            let parts: Vec<&str> = r.split(':').collect();
            let usage = || format!("--penalty-range {r:?}: expected LO:HI:COUNT, e.g. 0.1:100:10");
            if parts.len() != 3 {
                return Err(usage());
            }
            let lo: f64 = parts[0].trim().parse().map_err(|_| usage())?;
            let hi: f64 = parts[1].trim().parse().map_err(|_| usage())?;
            let count: usize = parts[2].trim().parse().map_err(|_| usage())?;
            if !(lo.is_finite() && lo > 0.0) {
                return Err(format!("--penalty-range: LO = {lo} must be > 0"));
            }
            if !(hi.is_finite() && hi > lo) {
                return Err(format!(
                    "--penalty-range: HI = {hi} must be larger than LO = {lo}"
                ));
            }
            if count < 2 {
                return Err(format!(
                    "--penalty-range: COUNT = {count} must be at least 2"
                ));
            }
            if count > MAX_PENALTIES {
                return Err(format!(
                    "--penalty-range: COUNT = {count} is more than the {MAX_PENALTIES} penalties a path may have (each is a full fit); give at most {MAX_PENALTIES}"
                ));
            }
            let (a, b) = (lo.ln(), hi.ln());
            (0..count)
                .map(|i| match i {
                    0 => lo,
                    i if i == count - 1 => hi,
                    i => (a + (b - a) * i as f64 / (count - 1) as f64).exp(),
                })
                .collect()
        }
        _ => {
            return Err(
                "give exactly one of --penalties P1,P2,… and --penalty-range LO:HI:COUNT".into(),
            );
        }
    };
    g.sort_by(f64::total_cmp);
    if let Some(w) = g.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("--penalties: {} is given twice", w[0]));
    }
    Ok(g)
}

/// The maximal runs of equal K, in grid order.
pub fn stable_ranges(ks: &[usize]) -> Vec<Stable> {
    let mut out: Vec<Stable> = Vec::new();
    for (i, &k) in ks.iter().enumerate() {
        match out.last_mut() {
            Some(s) if s.k == k => s.last = i,
            _ => out.push(Stable {
                k,
                first: i,
                last: i,
            }),
        }
    }
    out
}

pub fn run(args: PathArgs) -> Result<(), CliError> {
    let info = args.algo.info();
    if !info.penalty || info.family == Family::Ibp {
        let names: Vec<&str> = ALGOS
            .iter()
            .filter(|a| a.penalty && a.family != Family::Ibp)
            .map(|a| a.name)
            .collect();
        return Err(CliError(format!(
            "path needs an algorithm with a penalty ({}), not {}",
            names.join(", "),
            args.algo.name()
        )));
    }
    let penalties =
        grid(args.penalties.as_deref(), args.penalty_range.as_deref()).map_err(CliError)?;
    check_threads(args.threads)?;
    check_run_lengths(args.restarts.unwrap_or(0), args.max_iter.unwrap_or(0), 0)?;
    check_out(&args.out, &[&args.input])?;
    // Every penalty's parameters are checked before any data is read.
    let checked = penalties
        .iter()
        .map(|&p| check_params(&fit_args(&args, p)))
        .collect::<Result<Vec<_>, _>>()?;
    let (x, _) = read_input(&args.input, args.grey)?;
    check_data(&x).map_err(|e| CliError(format!("{}: {e}", args.input.display())))?;
    let x = match args.pca {
        None => x,
        Some(dims) => {
            let pca = Pca::params(dims)
                .seed(args.seed)
                .fit(&x)
                .map_err(|e| CliError(format!("--pca {dims}: {e}")))?;
            pca.transform(&x)
        }
    };
    if let Some(k) = args.k
        && k > x.n_rows()
    {
        return Err(CliError(format!(
            "--k {k} is larger than the number of rows N = {}; choose k ≤ {}",
            x.n_rows(),
            x.n_rows()
        )));
    }
    let mut staging = Staging::open(&args.out, "path")?;
    let progress = !args.quiet && std::io::stderr().is_terminal();
    let silent = RestartBar::new(args.algo.name(), true);
    let n = penalties.len();
    let rows = with_threads(args.threads, || -> Result<Vec<Row>, CliError> {
        let mut rows = Vec::with_capacity(n);
        for (i, (&penalty, c)) in penalties.iter().zip(&checked).enumerate() {
            if progress {
                eprint!("\r\x1b[Kpath: penalty {}/{n} = {penalty}", i + 1);
            }
            let started = Instant::now();
            let f = fit_checked(c, &x, &silent)
                .map_err(|e| CliError(format!("penalty {penalty}: {e}")))?;
            rows.push(Row {
                penalty,
                k: f.k,
                objective: f.objective,
                iterations: f.n_iter,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        if progress {
            eprint!("\r\x1b[K");
        }
        Ok(rows)
    })??;
    let ks: Vec<usize> = rows.iter().map(|r| r.k).collect();
    let stable = stable_ranges(&ks);

    let mut csv = String::from("penalty,k,objective,iterations,seconds\n");
    for r in &rows {
        let _ = writeln!(
            csv,
            "{:?},{},{:?},{},{:?}",
            r.penalty, r.k, r.objective, r.iterations, r.seconds
        );
    }
    staging.write("path.csv", csv.as_bytes())?;
    staging.write("path.png", &path_png(args.algo.name(), &rows))?;
    let fit0 = fit_args(&args, penalties[0]);
    let json = json!({
        "algo": args.algo.name(),
        "input": args.input.display().to_string(),
        "n": x.n_rows(),
        "d": x.n_cols(),
        "pca": args.pca,
        "restarts": fit0.restarts_for(x.n_rows(), x.n_cols()),
        "seed": args.seed,
        "k_max": args.k,
        "refine": fit0.refines(),
        "plain": args.plain,
        "max_iter": fit0.max_iter(),
        "rows": rows.iter().map(|r| json!({
            "penalty": r.penalty, "k": r.k, "objective": r.objective,
            "iterations": r.iterations, "seconds": r.seconds,
        })).collect::<Vec<_>>(),
        "stable_ranges": stable.iter().map(|s| json!({
            "k": s.k,
            "penalty_from": penalties[s.first],
            "penalty_to": penalties[s.last],
            "grid_values": s.last - s.first + 1,
        })).collect::<Vec<_>>(),
        "reused": "data reading, checks and PCA done once for all penalties; every penalty fitted from scratch with all restarts and the same seed (no warm start)",
        "version": env!("CARGO_PKG_VERSION"),
    });
    let text = serde_json::to_string_pretty(&json)
        .map_err(|e| CliError(format!("cannot encode path.json: {e}")))?;
    staging.write("path.json", (text + "\n").as_bytes())?;
    staging.commit()?;

    println!(
        "{:>12}  {:>5}  {:>16}  {:>10}  {:>9}",
        "penalty", "K", "objective", "iterations", "seconds"
    );
    for r in &rows {
        println!(
            "{:>12.6}  {:>5}  {:>16.6}  {:>10}  {:>9.3}",
            r.penalty, r.k, r.objective, r.iterations, r.seconds
        );
    }
    println!("stable ranges (consecutive grid values with the same K):");
    for s in &stable {
        println!(
            "  K = {:>4}: penalty {} .. {} ({} grid value{})",
            s.k,
            short(penalties[s.first]),
            short(penalties[s.last]),
            s.last - s.first + 1,
            if s.last == s.first { "" } else { "s" }
        );
    }
    println!("results in {}", args.out.display());
    Ok(())
}

/// A penalty with six significant digits, trailing zeros dropped (path.csv and path.json
/// keep every digit).
fn short(v: f64) -> String {
    let digits = (5 - v.abs().log10().floor() as i64).clamp(0, 12) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The options of one `fit` at `penalty`.
fn fit_args(args: &PathArgs, penalty: f64) -> FitArgs {
    FitArgs {
        input: args.input.clone(),
        algo: args.algo,
        run: RunOptions {
            quiet: true,
            ..args.run.clone()
        },
        out: args.out.clone(),
        penalty: Some(penalty),
        holdout: None,
        iterations: None,
        alpha: None,
        sigma_x: None,
        sigma_a: None,
        window: None,
        resample: false,
        init: None,
        init_z: None,
        chains: None,
        draws: None,
        split_merge: None,
        block: None,
        anneal: None,
    }
}

/// `path.png`: K against the penalty, and the objective against the penalty, log x axes.
fn path_png(algo: &str, rows: &[Row]) -> Vec<u8> {
    let k = Chart {
        title: format!("{algo}: NUMBER K AGAINST THE PENALTY"),
        x_label: "PENALTY (LOG SCALE)".into(),
        y_label: "K".into(),
        x_log: true,
        points: rows.iter().map(|r| (r.penalty, r.k as f64)).collect(),
        integer: (false, true),
    };
    let objective = Chart {
        title: format!("{algo}: OBJECTIVE AGAINST THE PENALTY"),
        x_label: "PENALTY (LOG SCALE)".into(),
        y_label: "OBJECTIVE".into(),
        x_log: true,
        points: rows.iter().map(|r| (r.penalty, r.objective)).collect(),
        integer: (false, false),
    };
    charts_png(&[k, objective], 800, 420)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_sorted_log_spaced_and_checked() {
        let g = grid(None, Some("1:100:3")).unwrap();
        assert_eq!(g[0], 1.0);
        assert!((g[1] - 10.0).abs() < 1e-12);
        assert_eq!(g[2], 100.0);
        assert_eq!(grid(Some("3, 1"), None).unwrap(), vec![1.0, 3.0]);
        for bad in ["0:1:3", "2:1:3", "1:1:3", "1:2:1", "1:2", "a:2:3", "-1:2:3"] {
            assert!(grid(None, Some(bad)).is_err(), "{bad}");
        }
        for bad in ["", "1,0", "1,1", "1,x", "1,,2", "inf"] {
            assert!(grid(Some(bad), None).is_err(), "{bad}");
        }
        assert!(grid(None, None).is_err());
        assert!(grid(Some("1"), Some("1:2:3")).is_err());
    }

    #[test]
    fn penalties_print_with_six_significant_digits() {
        assert_eq!(short(0.8773066621237415), "0.877307");
        assert_eq!(short(200.0), "200");
        assert_eq!(short(22.79704562095194), "22.797");
    }

    #[test]
    fn stable_ranges_are_maximal_runs() {
        let s = stable_ranges(&[5, 5, 3, 3, 3, 1]);
        assert_eq!(
            s,
            vec![
                Stable {
                    k: 5,
                    first: 0,
                    last: 1
                },
                Stable {
                    k: 3,
                    first: 2,
                    last: 4
                },
                Stable {
                    k: 1,
                    first: 5,
                    last: 5
                },
            ]
        );
    }
}
