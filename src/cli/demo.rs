//! `madbayes demo`: a generated clustering problem, fitted by each clustering algorithm,
//! with what each one found set beside the truth.

use super::output::{Staging, check_out, labels_csv, matrix_csv};
use super::{CliError, check_memory, with_threads};
use madbayes::Model;
use madbayes::clustering::{Clustering, CollapsedDpMeans, DpMeans, KMeans};
use madbayes::generate::gaussian_blobs;
use madbayes::metrics::adjusted_rand_index;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `madbayes demo`.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Number of points.
    #[arg(long, default_value_t = 600)]
    pub n: usize,
    /// Number of true clusters.
    #[arg(long, default_value_t = 6)]
    pub clusters: usize,
    /// Seed of the data and of the fits.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Penalty P of the DP-means fits (squared distance beyond which a point opens a cluster).
    #[arg(long, default_value_t = 50.0)]
    pub penalty: f64,
    /// Standard deviation of the noise around each true center.
    #[arg(long, default_value_t = 0.5)]
    pub sd: f64,
    /// Also write the generated data (data.csv) and true labels (truth.csv) here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Memory per generated point: its two values as f64 (four copies), its labels (three), and
/// its line of data.csv.
const DEMO_BYTES_PER_POINT: u128 = 2 * 8 * 4 + 8 * 3 + 64;

pub fn run(args: DemoArgs) -> Result<(), CliError> {
    if args.n == 0 || args.clusters == 0 || args.clusters > args.n {
        return Err(CliError(format!(
            "demo needs 1 ≤ --clusters ≤ --n, got --clusters {} and --n {}",
            args.clusters, args.n
        )));
    }
    // The 2-D points, a few copies of them inside the fits, labels, and data.csv as text.
    check_memory(
        &format!("--n {}", args.n),
        args.n as u128 * DEMO_BYTES_PER_POINT,
    )?;
    if let Some(dir) = &args.out {
        check_out(dir, &[])?;
    }
    let (d, box_half, sd) = (2, 12.0, args.sd);
    let blobs = gaussian_blobs(args.n, d, args.clusters, box_half, sd, args.seed);
    println!(
        "madbayes demo: {} points in {d} dimensions from {} Gaussian clusters (centers uniform in [-{box_half}, {box_half}]², noise sd {sd}, seed {})",
        args.n, args.clusters, args.seed
    );
    println!(
        "DP-means penalty P = {} (a point farther than √P = {:.2} from every mean opens a new cluster)\n",
        args.penalty,
        args.penalty.sqrt()
    );
    let x = &blobs.x;
    let dp = DpMeans::params(args.penalty).seed(args.seed).check()?;
    let dp_refined = DpMeans::params(args.penalty)
        .seed(args.seed)
        .refine(true)
        .check()?;
    let collapsed = CollapsedDpMeans::params(args.penalty)
        .seed(args.seed)
        .check()?;
    let collapsed_refined = CollapsedDpMeans::params(args.penalty)
        .seed(args.seed)
        .refine(true)
        .check()?;
    let kmeans = KMeans::params(args.clusters).seed(args.seed).check()?;
    println!(
        "{:<28} {:>4} {:>16} {:>10} {:>9}",
        "algorithm (10 restarts)", "K", "objective", "ARI/truth", "seconds"
    );
    let show = |name: &str, fit: &(dyn Fn() -> Result<Clustering, madbayes::FitError> + Sync)| {
        let t = Instant::now();
        let m = with_threads(0, fit)??;
        println!(
            "{:<28} {:>4} {:>16.4} {:>10.4} {:>9.3}",
            name,
            m.k(),
            m.objective(),
            adjusted_rand_index(m.labels(), &blobs.labels),
            t.elapsed().as_secs_f64()
        );
        Ok::<(), CliError>(())
    };
    show("dp-means", &|| dp.fit(x))?;
    show("dp-means --refine", &|| dp_refined.fit(x))?;
    show("collapsed-dp-means", &|| collapsed.fit(x))?;
    show("collapsed-dp-means --refine", &|| collapsed_refined.fit(x))?;
    show(&format!("kmeans (k = {})", args.clusters), &|| {
        kmeans.fit(x)
    })?;
    println!(
        "\nARI 1 means the true clusters were recovered exactly. K-means is told the true K; the DP-means\n\
         variants must find it. Plain DP-means can only open a cluster for a point farther than √P from\n\
         every mean, so nearby clusters stay merged; --refine adds merge and split moves that fix this."
    );
    if let Some(dir) = &args.out {
        let mut staging = Staging::open(dir, "demo")?;
        staging.write("data.csv", matrix_csv(x).as_bytes())?;
        staging.write("truth.csv", labels_csv(&blobs.labels).as_bytes())?;
        staging.commit()?;
        println!(
            "wrote {0}/data.csv and {0}/truth.csv; try: madbayes fit {0}/data.csv --algo dp-means --penalty {1} --out {2}",
            dir.display(),
            args.penalty,
            fit_dir(dir).display()
        );
    }
    Ok(())
}

/// Where the demo suggests writing a fit of its data: beside the demo folder (a result
/// folder holds one result, so not inside it).
fn fit_dir(dir: &std::path::Path) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "demo".to_string());
    dir.with_file_name(format!("{name}-fit"))
}
