//! `madbayes fit INPUT --algo ALGO --out DIR …`

use super::output::{Staging, binary_csv, labels_csv, matrix_csv};
use super::progress::RestartBar;
use super::{CliError, with_threads};
use madbayes::RowMatrix;
use madbayes::clustering::{Clustering, CollapsedDpMeans, DpMeans, KMeans};
use madbayes::error::check_data;
use madbayes::io::read_matrix;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Instant;

/// The algorithms `fit` can run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// K-means (k-means++ seeding, Lloyd); needs --k.
    Kmeans,
    /// DP-means; needs --penalty, --k caps the number of clusters.
    DpMeans,
    /// Collapsed DP-means (exact coordinate descent); needs --penalty, --k caps K.
    CollapsedDpMeans,
}

impl Algo {
    fn name(self) -> &'static str {
        match self {
            Algo::Kmeans => "kmeans",
            Algo::DpMeans => "dp-means",
            Algo::CollapsedDpMeans => "collapsed-dp-means",
        }
    }
}

/// Options of `madbayes fit`.
#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// Data: .csv (comma-separated numbers; a first line that is not numeric is a header) or
    /// .npy (2-D, f32 or f64, C or Fortran order). One row per data point.
    pub input: PathBuf,
    /// Algorithm to run.
    #[arg(long, value_enum)]
    pub algo: Algo,
    /// Folder to write summary.json, labels.csv, means.csv and z.csv into.
    #[arg(long)]
    pub out: PathBuf,
    /// The penalty P = λ²: the objective cost of one more cluster.
    #[arg(long, allow_negative_numbers = true)]
    pub penalty: Option<f64>,
    /// Number of clusters (kmeans), or the most clusters allowed (dp-means variants).
    #[arg(long)]
    pub k: Option<usize>,
    /// Independent runs; the lowest objective wins.
    #[arg(long, default_value_t = 10)]
    pub restarts: usize,
    /// Seed of all randomness (run i uses stream i of it).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (0: one per core). The result does not depend on it.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Iteration (sweep) cap of each run.
    #[arg(long, default_value_t = 300)]
    pub max_iter: usize,
    /// dp-means variants: after convergence, also try exact single-point moves and merges of
    /// two clusters, keeping only what lowers the objective.
    #[arg(long)]
    pub refine: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: FitArgs) -> Result<(), CliError> {
    let algo = args.algo;
    let need = |what: &str, v: Option<f64>| {
        v.ok_or_else(|| CliError(format!("{} needs --{what}", algo.name())))
    };
    let refuse = |what: &str, given: bool| {
        if given {
            Err(CliError(format!(
                "--{what} does not apply to {}",
                algo.name()
            )))
        } else {
            Ok(())
        }
    };
    // Parameters are checked before the data are read.
    enum Checked {
        KMeans(madbayes::clustering::KMeansValidParams),
        Dp(madbayes::clustering::DpMeansValidParams),
    }
    let checked = match algo {
        Algo::Kmeans => {
            refuse("penalty", args.penalty.is_some())?;
            refuse("refine", args.refine)?;
            let k = args.k.ok_or_else(|| CliError("kmeans needs --k".into()))?;
            Checked::KMeans(
                KMeans::params(k)
                    .restarts(args.restarts)
                    .max_iter(args.max_iter)
                    .seed(args.seed)
                    .check()?,
            )
        }
        Algo::DpMeans | Algo::CollapsedDpMeans => {
            let p = need("penalty", args.penalty)?;
            let builder = if algo == Algo::DpMeans {
                DpMeans::params(p)
            } else {
                CollapsedDpMeans::params(p)
            };
            Checked::Dp(
                builder
                    .k_max(args.k)
                    .restarts(args.restarts)
                    .max_iter(args.max_iter)
                    .seed(args.seed)
                    .refine(args.refine)
                    .check()?,
            )
        }
    };

    let x = read_matrix(&args.input)?;
    check_data(&x).map_err(|e| CliError(format!("{}: {e}", args.input.display())))?;
    if let Some(k) = args.k
        && k > x.n_rows()
    {
        return Err(CliError(format!(
            "--k {k} is larger than the number of rows N = {}; choose k ≤ {}",
            x.n_rows(),
            x.n_rows()
        )));
    }
    let staging = Staging::open(&args.out)?;

    let bar = RestartBar::new(algo.name(), args.quiet);
    let ticker = bar.reveal_later();
    let started = Instant::now();
    let fitted = with_threads(args.threads, || match &checked {
        Checked::KMeans(p) => p.fit_with(&x, &bar),
        Checked::Dp(p) => p.fit_with(&x, &bar),
    })?;
    let seconds = started.elapsed().as_secs_f64();
    bar.finish();
    if let Some(t) = ticker {
        let _ = t.join();
    }
    let model = fitted?;
    write_clustering(staging, &args, &x, &model, seconds)
}

fn write_clustering(
    mut staging: Staging,
    args: &FitArgs,
    x: &RowMatrix,
    model: &Clustering,
    seconds: f64,
) -> Result<(), CliError> {
    staging.write("labels.csv", labels_csv(model.labels()).as_bytes())?;
    staging.write("means.csv", matrix_csv(model.means()).as_bytes())?;
    staging.write("z.csv", binary_csv(&model.z()).as_bytes())?;
    let summary = summary_json(args, x, model, seconds);
    let text = serde_json::to_string_pretty(&summary)
        .map_err(|e| CliError(format!("cannot encode summary.json: {e}")))?;
    staging.write("summary.json", (text + "\n").as_bytes())?;
    staging.commit()?;
    println!(
        "{}: N = {}, D = {}, K = {}, objective = {}, {} iterations (converged: {}), {:.3} s; results in {}",
        args.algo.name(),
        x.n_rows(),
        x.n_cols(),
        model.k(),
        model.objective(),
        model.n_iter(),
        model.converged(),
        seconds,
        args.out.display()
    );
    Ok(())
}

fn summary_json(args: &FitArgs, x: &RowMatrix, model: &Clustering, seconds: f64) -> Value {
    let runs = model.run_objectives();
    let mut sorted = runs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let k_max = match args.algo {
        Algo::Kmeans => Value::Null,
        _ => json!(args.k),
    };
    json!({
        "algo": args.algo.name(),
        "input": args.input.display().to_string(),
        "n": x.n_rows(),
        "d": x.n_cols(),
        "k": model.k(),
        "objective": model.objective(),
        "penalty": args.penalty,
        "k_max": k_max,
        "refine": args.refine,
        "restarts": args.restarts,
        "seed": args.seed,
        "threads": args.threads,
        "max_iter": args.max_iter,
        "iterations": model.n_iter(),
        "converged": model.converged(),
        "seconds": seconds,
        "best_run": model.best_run(),
        "restart_objectives": {
            "min": sorted.first(),
            "median": sorted[sorted.len() / 2],
            "max": sorted.last(),
            "all": runs,
        },
        "trace": model.trace(),
        "version": env!("CARGO_PKG_VERSION"),
    })
}
