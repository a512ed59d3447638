//! Argument parsing and dispatch. Every failure prints one line, `madbayes: error: …`, on
//! stderr and exits with status 2.

mod algos;
mod demo;
mod experiment;
mod fit;
mod generate;
mod groups;
mod output;
mod path;
mod pictures;
mod predict;
mod progress;
mod render;
mod sampler;
mod saved;

use clap::{Parser, Subcommand};

/// Hard-assignment Bayesian nonparametrics (MAD-Bayes): clusters and latent features whose
/// number is learned.
#[derive(Parser, Debug)]
#[command(name = "madbayes", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Fit an algorithm to a data matrix (.csv, .npy, a folder of images or an IDX file) and
    /// write the result to a folder.
    Fit(fit::FitArgs),
    /// Generate a clustering problem, fit it, and print what was found.
    Demo(demo::DemoArgs),
    /// Generate synthetic data with known truth (block images, MEIBP factors, IBP prior
    /// draws, Gaussian clusters) into a folder.
    #[command(name = "gen")]
    Gen(generate::GenArgs),
    /// Reproduce an experiment of the MAD-Bayes paper.
    #[command(subcommand)]
    Experiment(experiment::Experiment),
    /// Redraw the pictures of a result folder written by `fit` (features/, overview.png for
    /// images; trace.png otherwise).
    Render(render::RenderArgs),
    /// Run a penalty algorithm over a grid of penalties and report K, the objective and the
    /// ranges of penalties with the same K.
    Path(path::PathArgs),
    /// Apply a fitted model (the model.json of a `fit` result folder) to new rows: their Z,
    /// cluster labels and reconstruction Z A.
    Predict(predict::PredictArgs),
}

/// A failure to report: one line, exit status 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// Runs the command line and returns the process exit status.
pub fn main() -> i32 {
    output::install_signal_handler();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors exit 2.
            let _ = e.print();
            return e.exit_code();
        }
    };
    let result = match cli.command {
        Command::Fit(args) => fit::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Gen(args) => generate::run(args),
        Command::Experiment(e) => experiment::run(e),
        Command::Render(args) => render::run(args),
        Command::Path(args) => path::run(args),
        Command::Predict(args) => predict::run(args),
    };
    match result {
        Ok(()) => 0,
        Err(CliError(msg)) => {
            let one_line = msg.replace('\n', " ");
            eprintln!("madbayes: error: {one_line}");
            2
        }
    }
}

/// The cores of this machine (1 when the system does not say).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most worker threads `--threads` may ask for: 4 per core. More only slow a run down
/// (each thread has its own scratch memory and they take turns on the cores), and a typo
/// such as `--threads 10000` would otherwise start ten thousand threads.
pub(crate) fn max_threads() -> usize {
    4 * cores()
}

/// Checks `--threads` (0: one per core) against [`max_threads`].
pub(crate) fn check_threads(threads: usize) -> Result<(), CliError> {
    let max = max_threads();
    if threads > max {
        let c = cores();
        return Err(CliError(format!(
            "--threads {threads}: this machine has {c} core{}, so at most {max} threads (4 per core) are allowed; give --threads {c}, or 0 for one per core",
            if c == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

/// Refuses a request of `bytes` bytes that the memory available cannot hold; `what` says
/// what asked for them (e.g. `--n 100000000000 rows of 36 values`).
pub(crate) fn check_memory(what: &str, bytes: u128) -> Result<(), CliError> {
    use madbayes::io::{fits_in_memory, human_bytes};
    fits_in_memory(bytes).map_err(|available| {
        CliError(format!(
            "{what} would need about {} of memory, more than the {} available; ask for less",
            human_bytes(bytes),
            human_bytes(u128::from(available))
        ))
    })
}

/// Runs `f` on a rayon pool of `threads` threads (0: one per core).
pub(crate) fn with_threads<T: Send>(
    threads: usize,
    f: impl FnOnce() -> T + Send,
) -> Result<T, CliError> {
    check_threads(threads)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError(format!("cannot start {threads} threads: {e}")))?;
    Ok(pool.install(f))
}
