//! `madbayes experiment tabletop`: the MAD-Bayes paper's tabletop comparison (its Figure 1
//! table), reproduced on the photos: per-run time, total time and number of features of
//! BP-means, collapsed BP-means and stepwise K-features with the paper's numbers of
//! restarts, and of one run of the collapsed Gibbs sampler, set beside the paper's values.
//!
//! Preparation ([`madbayes::experiments::paper_matrix`]): each photo is one row of
//! pixels/255, scaled by 1/√(N − 1), projected on its top 100 principal components without
//! removing the mean (so a base feature held by every photo carries the mean image). The
//! authors' code scales the same way but projects the centred rows. The penalty is in the
//! units of that scaling; the default P = 12 lies inside the range (about 6 to 44) where
//! stepwise K-features settles on a base feature plus one feature per object: the fifth
//! feature lowers the residual by about 44, the sixth by 6.

use super::output::{Staging, binary_csv, check_out, matrix_csv};
use super::{CliError, check_threads, with_threads};
use madbayes::Fit;
use madbayes::features::{BpMeans, CollapsedBpMeans, FeatureModel, StepwiseKFeatures};
use madbayes::ibp::{IbpKind, IbpSampler};
use madbayes::io::read_image_folder;
use madbayes::{Model, RowMatrix};
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// The experiments.
#[derive(clap::Subcommand, Debug)]
pub enum Experiment {
    /// The tabletop photos: BP-means, collapsed BP-means, stepwise K-features and Gibbs
    /// sampling side by side (the paper's Figure 1).
    Tabletop(TabletopArgs),
    /// Groups of rows found by stepwise K-features against K-means at K = 3 and 4 (the
    /// paper's faces comparison, Figure 3) on a folder of images such as the FEI faces, the
    /// scikit-learn digits or a (Fashion-)MNIST IDX file.
    Groups(super::groups::GroupsArgs),
}

/// Options of `madbayes experiment tabletop`.
#[derive(clap::Args, Debug)]
pub struct TabletopArgs {
    /// Folder of the tabletop photos (Picture_1.jpg … Picture_100.jpg).
    #[arg(long)]
    pub images: PathBuf,
    /// Folder to write table.md, results.json and the stepwise K-features result into.
    #[arg(long)]
    pub out: PathBuf,
    /// Penalty P, in the units of the authors' scaling (see above).
    #[arg(long, default_value_t = 12.0, allow_negative_numbers = true)]
    pub penalty: f64,
    /// Principal components kept.
    #[arg(long, default_value_t = 100)]
    pub dims: usize,
    /// Restarts of BP-means (paper: 1000).
    #[arg(long, default_value_t = 1000)]
    pub bp_restarts: usize,
    /// Restarts of collapsed BP-means (paper: 1000).
    #[arg(long, default_value_t = 1000)]
    pub collapsed_restarts: usize,
    /// Restarts of K-features at every K of stepwise K-features (paper: 300).
    #[arg(long, default_value_t = 300)]
    pub stepwise_restarts: usize,
    /// Sweeps of the collapsed Gibbs sampler (paper: 1000); 0 skips it.
    #[arg(long, default_value_t = 1000)]
    pub gibbs_sweeps: usize,
    /// Seed of all randomness.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

/// One row of the table: ours and the paper's.
struct Row {
    method: &'static str,
    runs: usize,
    per_run: f64,
    total: f64,
    k: usize,
    paper: (&'static str, &'static str, usize),
}

pub fn run(e: Experiment) -> Result<(), CliError> {
    match e {
        Experiment::Tabletop(a) => tabletop(a),
        Experiment::Groups(a) => super::groups::run(a),
    }
}

/// The photos as the experiment prepares them (see the module documentation).
fn tabletop_matrix(images: &std::path::Path, dims: usize) -> Result<RowMatrix, CliError> {
    let set = read_image_folder(images, false)?;
    if set.x.n_rows() < 2 {
        return Err(CliError(format!(
            "{}: the experiment needs at least 2 photos, found {}",
            images.display(),
            set.x.n_rows()
        )));
    }
    madbayes::experiments::tabletop_matrix(set.x, dims)
        .map_err(|e| CliError(format!("--dims {dims}: {e}")))
}

fn tabletop(a: TabletopArgs) -> Result<(), CliError> {
    if !(a.penalty.is_finite() && a.penalty > 0.0) {
        return Err(CliError(format!(
            "penalty must be a positive finite number, got {}; pass e.g. --penalty 12",
            a.penalty
        )));
    }
    if a.bp_restarts == 0 || a.collapsed_restarts == 0 || a.stepwise_restarts == 0 {
        return Err(CliError("restarts must be at least 1".into()));
    }
    check_threads(a.threads)?;
    for restarts in [a.bp_restarts, a.collapsed_restarts, a.stepwise_restarts] {
        super::fit::check_run_lengths(restarts, 0, a.gibbs_sweeps)?;
    }
    check_out(&a.out, &[&a.images])?;
    // The paper's algorithms as published (`plain`), as the paper's table reports them.
    let bp = BpMeans::params(a.penalty)
        .plain()
        .restarts(a.bp_restarts)
        .seed(a.seed)
        .check()?;
    let col = CollapsedBpMeans::params(a.penalty)
        .plain()
        .restarts(a.collapsed_restarts)
        .seed(a.seed)
        .check()?;
    let step = StepwiseKFeatures::params(a.penalty)
        .plain()
        .restarts(a.stepwise_restarts)
        .seed(a.seed)
        .check()?;
    let started = Instant::now();
    let y = tabletop_matrix(&a.images, a.dims)?;
    eprintln!(
        "tabletop: {} photos → {} × {} in {:.2} s",
        y.n_rows(),
        y.n_rows(),
        y.n_cols(),
        started.elapsed().as_secs_f64()
    );
    let staging = Staging::open(&a.out, "experiment tabletop")?;
    let timed = |f: &(dyn Fn() -> Result<FeatureModel, madbayes::FitError> + Sync)| {
        let t = Instant::now();
        let m = with_threads(a.threads, f)??;
        Ok::<_, CliError>((m, t.elapsed().as_secs_f64()))
    };
    let mut rows = Vec::new();
    let (m, secs) = timed(&|| col.fit(&y))?;
    eprintln!("collapsed BP-means: K = {}, {secs:.2} s", m.k());
    rows.push(Row {
        method: "collapsed BP-means",
        runs: a.collapsed_restarts,
        per_run: secs / a.collapsed_restarts as f64,
        total: secs,
        k: m.k(),
        paper: ("11", "1.1·10⁴", 5),
    });
    let (m, secs) = timed(&|| bp.fit(&y))?;
    eprintln!("BP-means: K = {}, {secs:.2} s", m.k());
    rows.push(Row {
        method: "BP-means",
        runs: a.bp_restarts,
        per_run: secs / a.bp_restarts as f64,
        total: secs,
        k: m.k(),
        paper: ("0.36", "3.6·10²", 6),
    });
    let (stepwise, secs) = timed(&|| step.fit(&y))?;
    let tried = stepwise.objective_by_k().len();
    let runs = a.stepwise_restarts * tried;
    eprintln!("stepwise K-features: K = {}, {secs:.2} s", stepwise.k());
    rows.push(Row {
        method: "stepwise K-features",
        runs,
        per_run: secs / runs as f64,
        total: secs,
        k: stepwise.k(),
        paper: ("0.10", "1.55·10²", 5),
    });
    let mut gibbs_json = serde_json::Value::Null;
    if a.gibbs_sweeps > 0 {
        // The paper's run of the Griffiths–Ghahramani sampler: mass α = 1, feature-mean
        // variance σ_A² = 0.5; σ_X is this crate's default (0.25 × the data's spread).
        let p = IbpSampler::params(IbpKind::Collapsed)
            .alpha(1.0)
            .sigma_a(0.5f64.sqrt())
            .iterations(a.gibbs_sweeps)
            .seed(a.seed)
            .check()
            .map_err(|e| CliError(e.to_string()))?;
        let t = Instant::now();
        let fit = with_threads(a.threads, || p.fit(&y))??;
        let secs = t.elapsed().as_secs_f64();
        eprintln!("collapsed Gibbs: K = {}, {secs:.2} s", fit.k());
        gibbs_json = json!({"sweeps": a.gibbs_sweeps, "seconds": secs, "k": fit.k(),
            "sigma_x": fit.sigma_x(), "sigma_a": fit.sigma_a(), "alpha": fit.alpha()});
        rows.insert(
            0,
            Row {
                method: "Gibbs (collapsed, one chain)",
                runs: 1,
                per_run: secs,
                total: secs,
                k: fit.k(),
                paper: ("8.5·10³", "8.5·10³", 10),
            },
        );
    }
    let mut md = String::from(
        "| method | runs | per run (s) | total (s) | features | paper: per run (s) | paper: total (s) | paper: features |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {} | {:.3e} | {:.3e} | {} | {} | {} | {} |",
            r.method, r.runs, r.per_run, r.total, r.k, r.paper.0, r.paper.1, r.paper.2
        );
    }
    let results = json!({
        "penalty": a.penalty,
        "dims": a.dims,
        "seed": a.seed,
        "threads": a.threads,
        "rows": rows.iter().map(|r| json!({"method": r.method, "runs": r.runs,
            "per_run_s": r.per_run, "total_s": r.total, "k": r.k})).collect::<Vec<_>>(),
        "gibbs": gibbs_json,
        "stepwise_objective_by_k": stepwise.objective_by_k(),
    });
    let mut staging = staging;
    staging.write("table.md", md.as_bytes())?;
    staging.write("stepwise_z.csv", binary_csv(&stepwise.z()).as_bytes())?;
    staging.write(
        "stepwise_means.csv",
        matrix_csv(stepwise.means()).as_bytes(),
    )?;
    let text = serde_json::to_string_pretty(&results)
        .map_err(|e| CliError(format!("cannot encode results.json: {e}")))?;
    staging.write("results.json", (text + "\n").as_bytes())?;
    staging.commit()?;
    print!("{md}");
    Ok(())
}
