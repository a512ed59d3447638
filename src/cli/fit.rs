//! `madbayes fit INPUT --algo ALGO --out DIR …`

pub use super::algos::Algo;
use super::algos::{Family, KRole};
use super::output::{Staging, binary_csv_to, check_out, labels_csv, matrix_csv, one_hot_csv_to};
use super::pictures::{
    PixelResult, image_files, image_json, is_clustering, read_examples, trace_png,
};
use super::progress::RestartBar;
use super::sampler::{self, SamplerChecked};
use super::saved::{self, AnyModel, SavedLayout};
use super::{CliError, check_memory, check_threads, with_threads};
use madbayes::clustering::dp_means::DpVariant;
use madbayes::clustering::{
    Clustering, CollapsedDpMeans, DpMeans, DpMeansValidParams, KMeans, KMeansValidParams,
    Mahalanobis, MahalanobisClustering, MahalanobisValidParams, dp_means,
};
use madbayes::error::check_data;
use madbayes::eval::{FeaturePredictor, Holdout, predict_hidden_cluster};
use madbayes::features::{
    BpMeans, CollapsedBpMeans, FeatureModel, FeatureSeeding, FeatureValidParams, KFeatures,
    StepwiseKFeatures,
};
use madbayes::io::{ReadOptions, read_image_folder, read_matrix_with, write_npy_to};
use madbayes::pca::Pca;
use madbayes::plot::pictures::{ImageLayout, Kind};
use madbayes::{BinaryMatrix, Model, RowMatrix, Stop};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Where an IBP sampler's chain starts (`--init`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// Z with no feature.
    Empty,
    /// Z drawn from the IBP(α) prior.
    Prior,
    /// Empty, but chains 1, 3, … from a prior draw when σ_X is fixed at or above σ (the
    /// default).
    Mixed,
    /// The Z of BP-means at --penalty.
    BpMeans,
}

/// How the feature algorithms seed each run (`--seeding`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seeding {
    /// The paper's: a base feature held by every row at the mean of the data, then residual
    /// draws.
    Base,
    /// The authors' code: no base feature; even the first feature is a drawn row.
    Residual,
}

impl Seeding {
    pub(super) fn library(self) -> FeatureSeeding {
        match self {
            Seeding::Base => FeatureSeeding::BaseFeature,
            Seeding::Residual => FeatureSeeding::Residual,
        }
    }
}

/// Options of `madbayes fit`.
#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// Data: .csv (comma-separated numbers; a first line without numbers is a header),
    /// .npy (2-D; float64, float32, integers of 1 to 8 bytes or booleans, read as f64; C or
    /// Fortran order), a folder of .png/.jpg images of one size
    /// (one row per image, pixels in [0, 1], files in natural order), or an MNIST IDX file
    /// (*-ubyte, *-ubyte.gz, .idx). One row per data point.
    pub input: PathBuf,
    /// Algorithm to run.
    #[arg(long, value_enum)]
    pub algo: Algo,
    /// The options `fit` shares with `path`.
    #[command(flatten)]
    pub run: RunOptions,
    /// Folder to write summary.json, labels.csv, means.csv and z.csv into, with pictures:
    /// for a folder of images features/ (one PNG per cluster or feature mean, and base.png)
    /// and overview.png; for other inputs trace.png (objective per iteration).
    #[arg(long)]
    pub out: PathBuf,
    /// The penalty P = λ²: the objective cost of one more cluster.
    #[arg(long, allow_negative_numbers = true)]
    pub penalty: Option<f64>,
    /// Hold out this fraction of the rows, hide a random fifth of each held-out row's
    /// entries, and score their prediction (summary.json `heldout`: mean squared error and
    /// Gaussian log-likelihood per hidden entry). The fit sees only the other rows.
    #[arg(long, allow_negative_numbers = true)]
    pub holdout: Option<f64>,
    /// IBP methods: sweeps of the chain (default 1000; meibp: the iteration cap, default
    /// --max-iter).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// IBP methods: the concentration α; given, it is fixed (samplers: default resampled
    /// from 1, or 2 fixed with --plain; meibp 3).
    #[arg(long, allow_negative_numbers = true)]
    pub alpha: Option<f64>,
    /// IBP methods: noise standard deviation σ_X; given, it is fixed (samplers: default
    /// resampled from 1 × the data's standard deviation, 0.25 × fixed with --plain; meibp
    /// 0.75 ×).
    #[arg(long, allow_negative_numbers = true)]
    pub sigma_x: Option<f64>,
    /// IBP methods: feature standard deviation σ_A; given, it is fixed (samplers: default
    /// resampled from 0.75 × the data's standard deviation, fixed there with --plain).
    #[arg(long, allow_negative_numbers = true)]
    pub sigma_a: Option<f64>,
    /// ibp-accelerated: rows per window W (default 1).
    #[arg(long)]
    pub window: Option<usize>,
    /// IBP samplers: resample α (conjugate Gamma) and σ_X, σ_A (inverse-gamma) every sweep
    /// even when given (the given values are then the starting point). Without it the
    /// hyperparameters that are not given are resampled, and the given ones fixed.
    #[arg(long)]
    pub resample: bool,
    /// IBP samplers: where the chains start — `mixed` (the default: with no feature, except
    /// that when --sigma-x fixes σ_X at or above the data's sd, which the annealing then cannot
    /// lower, chains 1, 3, … start from a draw of the IBP prior: from an empty Z such a chain
    /// may never open a feature), `empty` (no feature), `prior` (Z drawn from the IBP prior)
    /// or `bp-means` (the Z of BP-means at --penalty, with --restarts runs, default 10).
    #[arg(long, value_enum)]
    pub init: Option<Init>,
    /// IBP samplers: start the chain from this Z (a CSV or .npy file of N rows of 0/1, one
    /// column per feature), e.g. the final z.csv of another chain; replaces --init.
    #[arg(long, value_name = "Z")]
    pub init_z: Option<PathBuf>,
    /// IBP samplers: independent chains run in parallel (default 4; chain c draws from
    /// stream c of --seed, so the result does not depend on --threads). z.csv, means.csv and
    /// trace.csv are the chain of highest final log joint; summary.json adds each chain's
    /// summary, the pooled one (K's distribution, aligned features) and R̂/ESS.
    #[arg(long, value_name = "C")]
    pub chains: Option<usize>,
    /// IBP samplers: retained draws kept per chain in draws.jsonl, evenly thinned from the
    /// second half of each chain (default 100).
    #[arg(long, value_name = "M")]
    pub draws: Option<usize>,
    /// IBP samplers: split–merge Metropolis–Hastings attempts after every sweep (default
    /// 10; 0: none).
    #[arg(long, value_name = "N")]
    pub split_merge: Option<usize>,
    /// IBP samplers: after its single-entry updates each row draws its entries on a random
    /// block of this many features jointly (default 3; 0: none).
    #[arg(long, value_name = "B")]
    pub block: Option<usize>,
    /// IBP samplers: the first fraction of the sweeps in which a resampled σ_X is held above
    /// a floor falling from its start to 1/20 of it, and a fixed --sigma-x is resampled above
    /// itself and a floor falling from the data's sd, then fixed (a fixed --sigma-a beside it
    /// is resampled over those sweeps, then fixed) (default 0.25, or 0 with --init-z or
    /// --init bp-means; 0: none; at most 0.5).
    #[arg(long, value_name = "F")]
    pub anneal: Option<f64>,
}

/// The options `fit` and `path` share (flattened into both).
#[derive(clap::Args, Clone, Debug)]
pub struct RunOptions {
    /// Image folders: convert every image to grey (0.299 R + 0.587 G + 0.114 B).
    #[arg(long)]
    pub grey: bool,
    /// Number of clusters or features (kmeans, mahalanobis, k-features), or the most allowed
    /// (dp-means, bp-means and stepwise variants).
    #[arg(long)]
    pub k: Option<usize>,
    /// Independent runs; the lowest objective wins (default: the library's for the
    /// algorithm, 10 for every one except dp-means and collapsed-dp-means on data of more
    /// than 200 000 values, rows × columns, where it is 1 (refined by groups of clusters, two
    /// row orders each) and 2 (both refined); the IBP methods run
    /// one chain, and --init bp-means takes this many BP-means runs).
    #[arg(long)]
    pub restarts: Option<usize>,
    /// Seed of all randomness (run i uses stream i of it).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (0: one per core). The result does not depend on it.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Iteration (sweep) cap of each run, and of the rounds of the refinement (default: the
    /// library's for the algorithm: 300, mahalanobis and meibp 100).
    #[arg(long)]
    pub max_iter: Option<usize>,
    /// Refine after convergence (on by default for dp-means, collapsed-dp-means, bp-means,
    /// k-features and stepwise-k-features; with --plain, turns it back on): dp-means variants
    /// try exact single-point moves, merges and splits of clusters; bp-means removing,
    /// merging and growing features, deep moves and a collapsed polish; k-features replacing
    /// a feature. Only what lowers the objective is kept.
    #[arg(long)]
    pub refine: bool,
    /// The paper's algorithms exactly as published (dp-means variants and the feature
    /// family): no refinement, and for the feature family the paper's seeding (base feature,
    /// the drawn residual tested as it is); for the IBP samplers Doshi-Velez & Ghahramani's
    /// sampler: α = 2, σ_X = 0.25σ, σ_A = 0.75σ fixed, an empty start, no split–merge, no
    /// block update (options given beside it still apply). Faster, and usually worse.
    #[arg(long)]
    pub plain: bool,
    /// Feature family: how each run is seeded — `base` (the paper's, the default) or
    /// `residual` (the authors' code).
    #[arg(long, value_enum)]
    pub seeding: Option<Seeding>,
    /// mahalanobis: Φ = reg × (mean column variance) · I, the inverse-Wishart scale kept in
    /// the objective so that it stays bounded below.
    #[arg(long)]
    pub reg: Option<f64>,
    /// Fit on the data projected onto its top D' principal components (see madbayes::pca).
    /// means.csv then stays in that space; means_original.csv holds the means mapped back
    /// (cluster means: m + μ V; feature means: A V, to which m is added once per row), and
    /// pca_components.npy (D' × D) and pca_mean.npy (1 × D) hold V and m.
    #[arg(long, value_name = "D'")]
    pub pca: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// `args.k`, `args.seed`, … read the shared options.
impl std::ops::Deref for FitArgs {
    type Target = RunOptions;
    fn deref(&self) -> &RunOptions {
        &self.run
    }
}

impl FitArgs {
    /// The runs a fit of N × D data makes: `--restarts`, or the library's default for the
    /// algorithm on such data (DP-means' depends on the data's size).
    pub fn restarts_for(&self, n: usize, d: usize) -> usize {
        match (self.restarts, self.algo) {
            (None, Algo::DpMeans) => dp_means::default_restarts(DpVariant::Sweeps, n, d),
            (None, Algo::CollapsedDpMeans) => {
                dp_means::default_restarts(DpVariant::Collapsed, n, d)
            }
            _ => self.restarts(),
        }
    }

    /// `--restarts`, or the library's default for the algorithm (the IBP methods: that of
    /// the feature family, for `--init bp-means`; DP-means: its default on small data, the
    /// most it makes, which [`Self::restarts_for`] refines).
    pub fn restarts(&self) -> usize {
        self.restarts.unwrap_or(
            self.algo
                .info()
                .restarts
                .unwrap_or(madbayes::features::DEFAULT_RESTARTS),
        )
    }

    /// `--max-iter`, or the library's default for the algorithm.
    pub fn max_iter(&self) -> usize {
        self.max_iter.unwrap_or(self.algo.info().max_iter)
    }

    /// Whether the refinement runs (for the algorithms that have one).
    pub fn refines(&self) -> bool {
        refine_applies(self.algo) && (self.refine || !self.plain)
    }
}

/// The algorithms with a refinement (and a `--plain` form).
fn refine_applies(algo: Algo) -> bool {
    algo.info().refine
}

/// What is kept of an image-folder input to draw the pictures.
pub struct ImageInput {
    pub layout: ImageLayout,
    pub files: Vec<PathBuf>,
}

/// True when `read_matrix_with` reads `path` as a folder of images.
pub fn is_image_folder(path: &std::path::Path) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    !matches!(ext.as_str(), "csv" | "npy") && path.is_dir()
}

/// Reads the data matrix as `read_matrix_with` does, keeping the images' layout and files
/// when the input is a folder of images.
pub fn read_input(
    input: &std::path::Path,
    grey: bool,
) -> Result<(RowMatrix, Option<ImageInput>), CliError> {
    if is_image_folder(input) {
        let set = read_image_folder(input, grey)?;
        let layout = ImageLayout {
            height: set.height,
            width: set.width,
            channels: set.channels,
            grey,
        };
        Ok((
            set.x,
            Some(ImageInput {
                layout,
                files: set.files,
            }),
        ))
    } else {
        Ok((read_matrix_with(input, ReadOptions { grey })?, None))
    }
}

/// A PCA fitted by `--pca`, and how long it took.
struct Projection {
    pca: Pca,
    seconds: f64,
    original_d: usize,
}

/// Parameters checked before any data is read.
pub(super) enum Checked {
    KMeans(KMeansValidParams),
    Dp(DpMeansValidParams),
    Maha(MahalanobisValidParams),
    Features(FeatureValidParams),
    Sampler(SamplerChecked),
}

/// What every algorithm's result is written as.
pub(super) struct Fitted {
    pub k: usize,
    pub objective: f64,
    pub n_iter: usize,
    pub stop: Stop,
    pub trace: Vec<f64>,
    pub run_objectives: Vec<f64>,
    pub best_run: usize,
    /// Cluster labels or the feature allocation Z.
    pub assignment: Assignment,
    /// Cluster means, or the feature means A.
    pub means: RowMatrix,
    /// Further files, and further summary fields, of one family.
    pub extra_files: Vec<(&'static str, String)>,
    pub extra_json: Vec<(&'static str, Value)>,
    /// The fitted model itself, saved as model.json.
    pub model: AnyModel,
}

/// What a fit assigns to the rows.
pub(super) enum Assignment {
    /// A clustering's labels. Its Z is the one-hot N × K matrix of these, written to z.csv
    /// row by row and never held whole: at K near N it would take N·K bytes.
    Labels(Vec<usize>),
    /// A feature allocation's Z.
    Features(BinaryMatrix),
}

impl Assignment {
    /// The cluster labels of a clustering.
    pub fn labels(&self) -> Option<&[usize]> {
        match self {
            Assignment::Labels(l) => Some(l),
            Assignment::Features(_) => None,
        }
    }

    /// Z as a matrix of 0.0 and 1.0 (`k` columns for a clustering), for the pictures.
    fn z_values(&self, k: usize) -> RowMatrix {
        match self {
            Assignment::Labels(l) => BinaryMatrix::one_hot(l, k).to_row_matrix(),
            Assignment::Features(z) => z.to_row_matrix(),
        }
    }

    /// Writes Z as z.csv's CSV of 0 and 1 (`k` columns for a clustering).
    fn write_z_csv(&self, w: &mut dyn std::io::Write, k: usize) -> std::io::Result<()> {
        match self {
            Assignment::Labels(l) => one_hot_csv_to(w, l, k),
            Assignment::Features(z) => binary_csv_to(w, z),
        }
    }
}

impl Fitted {
    fn from_clustering(m: Clustering) -> Self {
        Self {
            k: m.k(),
            objective: m.objective(),
            n_iter: m.n_iter(),
            stop: m.stop(),
            trace: m.trace().to_vec(),
            run_objectives: m.run_objectives().to_vec(),
            best_run: m.best_run(),
            assignment: Assignment::Labels(m.labels().to_vec()),
            means: m.means().clone(),
            extra_files: Vec::new(),
            extra_json: Vec::new(),
            model: AnyModel::Clustering(m),
        }
    }

    fn from_mahalanobis(m: MahalanobisClustering) -> Self {
        let mut f = Self::from_clustering(m.clustering().clone());
        let mut cov = String::new();
        for c in m.covariances() {
            cov.push_str(&matrix_csv(c));
        }
        f.extra_files.push(("covariances.csv", cov));
        f.extra_json.push(("phi", json!(m.phi())));
        f.model = AnyModel::Mahalanobis(m);
        f
    }

    fn from_features(m: FeatureModel) -> Self {
        Self {
            k: m.k(),
            objective: m.objective(),
            n_iter: m.n_iter(),
            stop: m.stop(),
            trace: m.trace().to_vec(),
            run_objectives: m.run_objectives().to_vec(),
            best_run: m.best_run(),
            assignment: Assignment::Features(m.z()),
            means: m.means().clone(),
            extra_files: Vec::new(),
            extra_json: vec![("objective_by_k", json!(m.objective_by_k()))],
            model: AnyModel::Features(m),
        }
    }
}

/// Checks the options of one fit before any data is read.
pub(super) fn check_params(args: &FitArgs) -> Result<Checked, CliError> {
    let algo = args.algo;

    let penalty = || {
        args.penalty
            .ok_or_else(|| CliError(format!("{} needs --penalty P", algo.name())))
    };
    let k = || {
        args.k
            .ok_or_else(|| CliError(format!("{} needs --k K", algo.name())))
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
    if !sampler::is_sampler(algo) {
        refuse("iterations", args.iterations.is_some())?;
        refuse("alpha", args.alpha.is_some())?;
        refuse("sigma-x", args.sigma_x.is_some())?;
        refuse("sigma-a", args.sigma_a.is_some())?;
        refuse("window", args.window.is_some())?;
        refuse("resample", args.resample)?;
        refuse("init", args.init.is_some())?;
        refuse("init-z", args.init_z.is_some())?;
        refuse("split-merge", args.split_merge.is_some())?;
        refuse("block", args.block.is_some())?;
        refuse("anneal", args.anneal.is_some())?;
        refuse("chains", args.chains.is_some())?;
        refuse("draws", args.draws.is_some())?;
    }
    let info = algo.info();
    refuse("refine", args.refine && !info.refine)?;
    refuse("plain", args.plain && !info.plain)?;
    refuse(
        "seeding",
        args.seeding.is_some() && info.family != Family::Features,
    )?;
    if info.family != Family::Ibp {
        // The samplers check --k and --penalty themselves (--init bp-means takes a penalty).
        refuse("penalty", args.penalty.is_some() && !info.penalty)?;
        refuse("k", args.k.is_some() && info.k == KRole::None)?;
    }
    refuse("reg", args.reg.is_some() && algo != Algo::Mahalanobis)?;
    let checked = match algo {
        Algo::Kmeans => Checked::KMeans(
            KMeans::params(k()?)
                .restarts(args.restarts())
                .max_iter(args.max_iter())
                .seed(args.seed)
                .check()?,
        ),
        Algo::DpMeans | Algo::CollapsedDpMeans => {
            let builder = if algo == Algo::DpMeans {
                DpMeans::params(penalty()?)
            } else {
                CollapsedDpMeans::params(penalty()?)
            };
            // Without --restarts the library chooses by the data's size.
            let builder = match args.restarts {
                Some(r) => builder.restarts(r),
                None => builder,
            };
            Checked::Dp(
                builder
                    .k_max(args.k)
                    .max_iter(args.max_iter())
                    .seed(args.seed)
                    .refine(args.refines())
                    .check()?,
            )
        }
        Algo::Mahalanobis => {
            let mut builder = Mahalanobis::params(k()?, penalty()?)
                .restarts(args.restarts())
                .max_iter(args.max_iter())
                .seed(args.seed);
            if let Some(r) = args.reg {
                builder = builder.reg(r);
            }
            Checked::Maha(builder.check()?)
        }
        Algo::IbpGibbs | Algo::IbpSemicollapsed | Algo::IbpAccelerated | Algo::Meibp => {
            Checked::Sampler(sampler::check(args)?)
        }
        Algo::BpMeans | Algo::CollapsedBpMeans | Algo::KFeatures | Algo::StepwiseKFeatures => {
            let mut builder = match algo {
                Algo::BpMeans => BpMeans::params(penalty()?).k(args.k),
                Algo::CollapsedBpMeans => CollapsedBpMeans::params(penalty()?).k(args.k),
                Algo::StepwiseKFeatures => StepwiseKFeatures::params(penalty()?).k(args.k),
                _ => KFeatures::params(k()?),
            };
            if args.plain {
                builder = builder.plain();
            }
            if let Some(s) = args.seeding {
                builder = builder.seeding(s.library());
            }
            Checked::Features(
                builder
                    .restarts(args.restarts())
                    .max_iter(args.max_iter())
                    .seed(args.seed)
                    .refine(args.refines())
                    .check()?,
            )
        }
    };
    Ok(checked)
}

/// The memory the run-length options ask for before any data is read: each restart's
/// objective (kept, and written to summary.json), and each iteration's trace record (the
/// samplers' trace.csv line and held-out scores).
pub(super) fn check_run_lengths(
    restarts: usize,
    max_iter: usize,
    iterations: usize,
) -> Result<(), CliError> {
    check_memory(
        &format!("--restarts {restarts}"),
        restarts as u128 * RESTART_BYTES,
    )?;
    check_memory(
        &format!("--max-iter {max_iter}"),
        max_iter as u128 * ITERATION_BYTES,
    )?;
    check_memory(
        &format!("--iterations {iterations}"),
        iterations as u128 * ITERATION_BYTES,
    )
}

/// Bytes kept per restart: its objective, and its text in summary.json, with room to spare.
const RESTART_BYTES: u128 = 64;
/// Bytes kept per iteration: the trace record, its line of trace.csv and summary.json, and
/// the held-out scores, with room to spare.
const ITERATION_BYTES: u128 = 256;

/// The memory a fixed number of clusters or features K asks for on N × D data: Z (N × K,
/// also as z.csv), the means (K × D), and Mahalanobis' K covariances (D × D each), MEIBP's
/// K × K and K × D statistics. (The accelerated sampler's `--window` needs W × (K + D)
/// values with W at most N, no more than the data, so it needs no check.)
fn check_model_size(args: &FitArgs, n: usize, d: usize) -> Result<(), CliError> {
    let (n, d) = (n as u128, d as u128);
    if let Some(k) = args.k {
        let k = k as u128;
        let bytes = match args.algo {
            Algo::Kmeans | Algo::KFeatures => 8 * (2 * n * k + k * d),
            Algo::Mahalanobis => 8 * (2 * n * k + k * d + 2 * k * d * d),
            Algo::Meibp => 8 * (2 * n * k + k * k + 4 * k * d),
            // A cap: only the K found is allocated.
            _ => 0,
        };
        check_memory(&format!("--k {k} on {n} rows of {d} values"), bytes)?;
    }
    Ok(())
}

pub fn run(args: FitArgs) -> Result<(), CliError> {
    let checked = check_params(&args)?;
    check_threads(args.threads)?;
    check_run_lengths(
        args.restarts(),
        args.max_iter(),
        args.iterations.unwrap_or(0),
    )?;
    check_out(&args.out, &[&args.input])?;
    let (x, images) = read_input(&args.input, args.grey)?;
    check_data(&x).map_err(|e| CliError(format!("{}: {e}", args.input.display())))?;
    let (x, projection) = match args.pca {
        None => (x, None),
        Some(dims) => {
            let started = Instant::now();
            let pca = Pca::params(dims)
                .seed(args.seed)
                .fit(&x)
                .map_err(|e| CliError(format!("--pca {dims}: {e}")))?;
            let y = pca.transform(&x);
            let projection = Projection {
                pca,
                seconds: started.elapsed().as_secs_f64(),
                original_d: x.n_cols(),
            };
            (y, Some(projection))
        }
    };
    let split = match args.holdout {
        Some(f) => Some(
            Holdout::new(x.n_rows(), x.n_cols(), f, args.seed)
                .map_err(|e| CliError(format!("--holdout {f}: {e}")))?,
        ),
        None => None,
    };
    let train_rows = split.as_ref().map(|h| h.train(&x));
    let train = train_rows.as_ref().unwrap_or(&x);
    if let Some(k) = args.k
        && k > train.n_rows()
        && args.algo != Algo::Meibp
    {
        return Err(CliError(format!(
            "--k {k} is larger than the number of rows N = {}; choose k ≤ {}",
            train.n_rows(),
            train.n_rows()
        )));
    }
    check_model_size(&args, train.n_rows(), train.n_cols())?;
    let staging = Staging::open(&args.out, "fit")?;

    let bar = RestartBar::new(args.algo.name(), args.quiet);
    let ticker = bar.reveal_later();
    let started = Instant::now();
    let fitted = with_threads(args.threads, || -> Result<Fitted, madbayes::FitError> {
        if let Checked::Sampler(p) = &checked {
            return sampler::fit(p, train, &x, split.as_ref());
        }
        let mut fitted = fit_checked(&checked, train, &bar)?;
        if let Some(h) = &split {
            fitted
                .extra_json
                .push(("heldout", heldout_json(h, train, &x, &fitted)));
        }
        Ok(fitted)
    })?;
    let seconds = started.elapsed().as_secs_f64();
    bar.finish();
    if let Some(t) = ticker {
        let _ = t.join();
    }
    let out = Output {
        args: &args,
        x: train,
        fitted: &fitted?,
        seconds,
        projection: projection.as_ref(),
        images: images.as_ref(),
        split: split.as_ref(),
    };
    write_result(staging, &out)
}

/// The held-out score of a hard-assignment fit: each test row takes the nearest mean
/// (clusters) or best z (features) on its visible entries; σ_X² is the training residual per
/// entry, ‖X_train − Z A‖²_F / (N_train · D), floored at 10⁻⁶ × the data's variance per entry.
fn heldout_json(h: &Holdout, train: &RowMatrix, x: &RowMatrix, f: &Fitted) -> Value {
    let rss = match &f.assignment {
        Assignment::Labels(labels) => {
            madbayes::clustering::objective::sum_of_squares(train.view(), labels, &f.means)
        }
        Assignment::Features(z) => {
            madbayes::features::objective::sum_of_squares(train, z, &f.means)
        }
    };
    let entries = (train.n_rows() * train.n_cols()) as f64;
    // A fit that reproduces every training row (σ_X = 0) would give held-out entries zero
    // density: the variance is floored at 10⁻⁶ of the data's variance per entry.
    let mean = madbayes::linalg::mean_row(train.view());
    let spread: f64 = train
        .rows()
        .map(|r| madbayes::linalg::sq_dist(r, &mean))
        .sum::<f64>()
        / entries;
    let sigma_x = (rss / entries).max(1e-6 * spread).sqrt();
    let s = match f.assignment.labels() {
        Some(_) => h.score(x, sigma_x, |row, hid| {
            predict_hidden_cluster(&f.means, row, hid)
        }),
        None => {
            let fp = FeaturePredictor::new(&f.means);
            h.score(x, sigma_x, |row, hid| fp.predict(row, hid))
        }
    };
    json!({
        "test_rows": h.test_rows.len(),
        "hidden_entries": s.entries,
        "loglik": s.loglik,
        "l2": s.l2,
        "sigma_x": sigma_x,
        "sigma_x_rule": "training residual per entry (floored at 1e-6 of the data variance)",
    })
}

/// Runs checked parameters on the data (on the current rayon pool).
pub(super) fn fit_checked(
    checked: &Checked,
    x: &RowMatrix,
    bar: &RestartBar,
) -> Result<Fitted, madbayes::FitError> {
    Ok(match checked {
        Checked::KMeans(p) => Fitted::from_clustering(p.fit_with(x.view(), bar)?),
        Checked::Dp(p) => Fitted::from_clustering(p.fit_with(x.view(), bar)?),
        Checked::Maha(p) => Fitted::from_mahalanobis(p.fit_with(x.view(), bar)?),
        Checked::Features(p) => Fitted::from_features(p.fit_with(x.view(), bar)?),
        Checked::Sampler(p) => sampler::fit(p, x, x, None)?,
    })
}

/// Everything `write_result` writes.
struct Output<'a> {
    args: &'a FitArgs,
    x: &'a RowMatrix,
    fitted: &'a Fitted,
    seconds: f64,
    projection: Option<&'a Projection>,
    images: Option<&'a ImageInput>,
    split: Option<&'a Holdout>,
}

/// `--holdout`'s split: `heldout_rows.csv`, the 0-based indices of the test rows (ascending,
/// one per line), and `heldout_entries.csv`, the hidden entries as `row,col` lines (0-based,
/// under a `row,col` header), so that the scores can be reproduced outside madbayes.
fn holdout_files(h: &Holdout) -> (String, String) {
    let rows = labels_csv(&h.test_rows);
    let mut entries = String::from("row,col\n");
    for (&row, cols) in h.test_rows.iter().zip(&h.hidden) {
        for c in cols {
            let _ = writeln!(entries, "{row},{c}");
        }
    }
    (rows, entries)
}

fn write_result(mut staging: Staging, out: &Output) -> Result<(), CliError> {
    let (args, x, fitted, seconds) = (out.args, out.x, out.fitted, out.seconds);
    let projection = out.projection;
    if let Some(labels) = fitted.assignment.labels() {
        staging.write("labels.csv", labels_csv(labels).as_bytes())?;
    }
    staging.write("means.csv", matrix_csv(&fitted.means).as_bytes())?;
    staging.write_with("z.csv", |w| fitted.assignment.write_z_csv(w, fitted.k))?;
    for (name, body) in &fitted.extra_files {
        staging.write(name, body.as_bytes())?;
    }
    if let Some(h) = out.split {
        let (rows, entries) = holdout_files(h);
        staging.write("heldout_rows.csv", rows.as_bytes())?;
        staging.write("heldout_entries.csv", entries.as_bytes())?;
    }
    let mut summary = summary_json(args, x, fitted, seconds);
    let means_original = match projection {
        Some(p) => {
            let original = write_projection(&mut staging, p, fitted)?;
            if let Value::Object(map) = &mut summary {
                map.insert("pca".to_string(), projection_json(p, fitted));
            }
            Some(original)
        }
        None => None,
    };
    match out.images {
        Some(images) => {
            let kind = if is_clustering(args.algo.name()) {
                Kind::Clusters
            } else {
                Kind::Features
            };
            let offset = match (kind, projection) {
                (Kind::Features, Some(p)) => Some(p.pca.mean().to_vec()),
                _ => None,
            };
            let result = PixelResult {
                kind,
                layout: images.layout,
                means: means_original.unwrap_or_else(|| fitted.means.clone()),
                offset,
                z: fitted.assignment.z_values(fitted.k),
            };
            let examples = read_examples(&images.files, &result.z, &images.layout)
                .map_err(|e| CliError(format!("cannot read the example images: {e}")))?;
            for (name, bytes) in image_files(&result, Some(&examples)) {
                staging.write(&name, &bytes)?;
            }
            staging.replace_pictures_in("features");
            if let Value::Object(map) = &mut summary {
                map.insert("image".to_string(), image_json(&images.layout, &args.input));
            }
        }
        None => staging.write("trace.png", &trace_png(args.algo.name(), &fitted.trace))?,
    }
    let model = model_json(out)?;
    staging.write(saved::FILE_NAME, model.as_bytes())?;
    let text = serde_json::to_string_pretty(&summary)
        .map_err(|e| CliError(format!("cannot encode summary.json: {e}")))?;
    staging.write("summary.json", (text + "\n").as_bytes())?;
    staging.commit()?;
    let score = if sampler::is_sampler(args.algo) {
        let lj = fitted.trace.last().copied().unwrap_or(f64::NAN);
        format!("log p(X, Z) = {lj}")
    } else {
        format!("objective = {}", fitted.objective)
    };
    println!(
        "{}: N = {}, D = {}, K = {}, {score}, {} iterations ({}), {:.3} s; results in {}",
        args.algo.name(),
        x.n_rows(),
        x.n_cols(),
        fitted.k,
        fitted.n_iter,
        stop_text(fitted.stop),
        seconds,
        args.out.display()
    );
    Ok(())
}

/// The text of model.json: the model, the PCA that maps input rows into its space, and the
/// input's width and image layout (see [`saved::ModelFile`]).
fn model_json(out: &Output) -> Result<String, CliError> {
    let input_columns = out.projection.map_or(out.x.n_cols(), |p| p.original_d);
    let file = json!({
        "format": saved::FORMAT,
        "format_version": saved::FORMAT_VERSION,
        "written_by": format!("madbayes {}", env!("CARGO_PKG_VERSION")),
        "algo": out.args.algo.name(),
        "input_columns": input_columns,
        "image": out.images.map(|i| SavedLayout::from(i.layout)),
        "pca": out.projection.map(|p| &p.pca),
        "model": &out.fitted.model,
    });
    serde_json::to_string(&file)
        .map(|s| s + "\n")
        .map_err(|e| CliError(format!("cannot encode {}: {e}", saved::FILE_NAME)))
}

/// How the printed summary says why the run stopped.
fn stop_text(stop: Stop) -> &'static str {
    match stop {
        Stop::Converged => "converged",
        Stop::IterationCap => "stopped at the iteration cap before converging",
        Stop::Sweeps => "the chain's sweeps",
    }
}

fn summary_json(args: &FitArgs, x: &RowMatrix, fitted: &Fitted, seconds: f64) -> Value {
    let runs = &fitted.run_objectives;
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let k_max = match args.algo {
        Algo::DpMeans
        | Algo::CollapsedDpMeans
        | Algo::BpMeans
        | Algo::CollapsedBpMeans
        | Algo::StepwiseKFeatures => json!(args.k),
        _ => Value::Null,
    };
    let mut summary = json!({
        "algo": args.algo.name(),
        "input": args.input.display().to_string(),
        "grey": args.grey,
        "n": x.n_rows(),
        "d": x.n_cols(),
        "k": fitted.k,
        "objective": fitted.objective,
        "penalty": args.penalty,
        "k_max": k_max,
        "refine": args.refines(),
        "plain": args.plain,
        "seeding": (args.algo.family() == Family::Features).then(|| args.seeding.map_or(FeatureSeeding::default(), Seeding::library).name()),
        "restarts": args.restarts_for(x.n_rows(), x.n_cols()),
        "seed": args.seed,
        "threads": args.threads,
        "max_iter": args.max_iter(),
        "iterations": fitted.n_iter,
        "converged": fitted.stop == Stop::Converged,
        "stop": fitted.stop.name(),
        "seconds": seconds,
        "best_run": fitted.best_run,
        "restart_objectives": {
            "min": sorted.first(),
            "median": sorted[sorted.len() / 2],
            "max": sorted.last(),
            "all": runs,
        },
        "trace": fitted.trace,
        "version": env!("CARGO_PKG_VERSION"),
    });
    if let Value::Object(map) = &mut summary {
        if sampler::is_sampler(args.algo) {
            // One chain, no objective to minimise: its log joint and trace stand instead.
            for key in [
                "objective",
                "penalty",
                "refine",
                "plain",
                "seeding",
                "restarts",
                "best_run",
                "restart_objectives",
            ] {
                map.remove(key);
            }
            map.insert("iterations_asked".into(), json!(args.iterations));
            if args.algo != Algo::Meibp {
                // A chain runs its sweeps; it does not converge.
                map.remove("converged");
            }
        }
        for (key, value) in &fitted.extra_json {
            map.insert((*key).to_string(), value.clone());
        }
    }
    summary
}

/// The PCA files of `--pca`: components, mean, and the means mapped back (returned).
fn write_projection(
    staging: &mut Staging,
    p: &Projection,
    fitted: &Fitted,
) -> Result<RowMatrix, CliError> {
    let npy = |m: &RowMatrix| {
        let mut buf = Vec::new();
        write_npy_to(&mut buf, m).map(|_| buf)
    };
    let mean = RowMatrix::new(1, p.pca.mean().len(), p.pca.mean().to_vec());
    staging.write("pca_components.npy", &npy(p.pca.components())?)?;
    staging.write("pca_mean.npy", &npy(&mean)?)?;
    // Cluster means are points (add the mean); feature means are additive directions.
    let original = if fitted.assignment.labels().is_some() {
        p.pca.inverse_transform(&fitted.means)
    } else {
        p.pca.inverse_transform_directions(&fitted.means)
    };
    staging.write("means_original.csv", matrix_csv(&original).as_bytes())?;
    Ok(original)
}

fn projection_json(p: &Projection, fitted: &Fitted) -> Value {
    let means_original = if fitted.assignment.labels().is_some() {
        "cluster means in the original space: pca_mean + means · pca_components"
    } else {
        "feature means in the original space: means · pca_components (x ≈ pca_mean + z · means_original)"
    };
    json!({
        "components": p.pca.n_components(),
        "original_d": p.original_d,
        "method": p.pca.method().name(),
        "seconds": p.seconds,
        "explained_variance": p.pca.explained_variance(),
        "explained_variance_ratio": p.pca.explained_variance_ratio(),
        "means_original": means_original,
    })
}
