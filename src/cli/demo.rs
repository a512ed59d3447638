//! `madbayes demo`: the toolkit at its defaults on two generated problems whose truth is
//! known — Gaussian clusters (DP-means, collapsed DP-means, K-means told K) and noisy block
//! images (BP-means, collapsed BP-means, stepwise K-features, K-features told K, and an IBP
//! Gibbs chain started from BP-means), with each learned 6×6 feature drawn in characters
//! beside the true shape it recovered.

use super::output::{Staging, binary_csv, check_out, labels_csv, matrix_csv};
use super::{CliError, check_memory, with_threads};
use madbayes::Fit;
use madbayes::clustering::{Clustering, CollapsedDpMeans, DpMeans, KMeans};
use madbayes::features::objective::bp_means_objective;
use madbayes::features::{
    BpMeans, CollapsedBpMeans, FeatureModel, KFeatures, StepwiseKFeatures, least_squares_means,
};
use madbayes::generate::{block_images, gaussian_blobs};
use madbayes::ibp::{IbpKind, IbpSampler};
use madbayes::metrics::adjusted_rand_index;
use madbayes::{BinaryMatrix, Model, RowMatrix};
use std::path::PathBuf;
use std::time::Instant;

/// Options of `madbayes demo`.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Number of points of the clustering problem.
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
    /// Number of block images of the feature problem.
    #[arg(long, default_value_t = 100)]
    pub images: usize,
    /// Noise standard deviation σ_X of the block images (the feature penalty is 4σ_X²N).
    #[arg(long, default_value_t = 0.5)]
    pub image_noise: f64,
    /// Also write the generated data here: data.csv and truth.csv (clusters), blocks.csv and
    /// blocks_z.csv (block images and their true features).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Memory per generated point or image: its values as f64 (four copies), its labels (three),
/// and its line of CSV.
const DEMO_BYTES_PER_POINT: u128 = 2 * 8 * 4 + 8 * 3 + 64;
const DEMO_BYTES_PER_IMAGE: u128 = 36 * 8 * 4 + 8 * 3 + 36 * 24;

pub fn run(args: DemoArgs) -> Result<(), CliError> {
    if args.n == 0 || args.clusters == 0 || args.clusters > args.n {
        return Err(CliError(format!(
            "demo needs 1 ≤ --clusters ≤ --n, got --clusters {} and --n {}",
            args.clusters, args.n
        )));
    }
    if args.images < 4 {
        return Err(CliError(format!(
            "demo needs --images of at least 4, got {}",
            args.images
        )));
    }
    if !(args.image_noise.is_finite() && args.image_noise > 0.0) {
        return Err(CliError(format!(
            "--image-noise must be a positive number, got {}",
            args.image_noise
        )));
    }
    check_memory(
        &format!("--n {} --images {}", args.n, args.images),
        args.n as u128 * DEMO_BYTES_PER_POINT + args.images as u128 * DEMO_BYTES_PER_IMAGE,
    )?;
    if let Some(dir) = &args.out {
        check_out(dir, &[])?;
    }
    let started = Instant::now();
    let (blobs, cluster_text) = clusters(&args)?;
    let (blocks, feature_text) = features(&args)?;
    print!("{cluster_text}{feature_text}");
    println!(
        "\nEverything above ran with the library's defaults (10 restarts, refinement on; `fit \
         --plain` runs the\npaper's algorithms as published) in {:.1} s.",
        started.elapsed().as_secs_f64()
    );
    if let Some(dir) = &args.out {
        let mut staging = Staging::open(dir, "demo")?;
        staging.write("data.csv", matrix_csv(&blobs.0).as_bytes())?;
        staging.write("truth.csv", labels_csv(&blobs.1).as_bytes())?;
        staging.write("blocks.csv", matrix_csv(&blocks.0).as_bytes())?;
        staging.write(
            "blocks_z.csv",
            binary_csv(&BinaryMatrix::from_row_matrix(&blocks.1)).as_bytes(),
        )?;
        staging.commit()?;
        println!(
            "wrote {0}/data.csv, truth.csv, blocks.csv and blocks_z.csv; try:\n  madbayes fit \
             {0}/data.csv --algo dp-means --penalty {1} --out {3}\n  madbayes fit \
             {0}/blocks.csv --algo bp-means --penalty {2} --out {4}",
            dir.display(),
            args.penalty,
            feature_penalty(&args),
            beside(dir, "clusters").display(),
            beside(dir, "features").display()
        );
    }
    Ok(())
}

/// Where the demo suggests writing a fit of its data: beside the demo folder (a result folder
/// holds one result, so not inside it).
fn beside(dir: &std::path::Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "demo".to_string());
    dir.with_file_name(format!("{name}-{what}"))
}

/// The feature penalty of the demo: 4σ_X²N, between what a true shape lowers the residual
/// by (about N p ‖a‖² ≥ 2.5 N) and what a feature fitted to noise does (well under σ_X²N).
fn feature_penalty(args: &DemoArgs) -> f64 {
    4.0 * args.image_noise * args.image_noise * args.images as f64
}

type Timed<T> = Result<(T, f64), CliError>;

/// Runs `f` on all cores and times it.
fn timed<T: Send>(f: &(dyn Fn() -> Result<T, madbayes::FitError> + Sync)) -> Timed<T> {
    let t = Instant::now();
    let m = with_threads(0, f)??;
    Ok((m, t.elapsed().as_secs_f64()))
}

/// The clustering half: the data and labels, and what to print.
fn clusters(args: &DemoArgs) -> Result<((RowMatrix, Vec<usize>), String), CliError> {
    let (d, box_half, sd) = (2, 12.0, args.sd);
    let blobs = gaussian_blobs(args.n, d, args.clusters, box_half, sd, args.seed);
    let x = &blobs.x;
    let mut out = String::new();
    out.push_str(&format!(
        "madbayes demo (seed {})\n\n1. Clusters: {} points in {d} dimensions from {} Gaussian \
         clusters (centers uniform in\n   [-{box_half}, {box_half}]², noise sd {sd}); \
         DP-means penalty P = {} (the cost of one more cluster).\n\n",
        args.seed, args.n, args.clusters, args.penalty
    ));
    let dp = DpMeans::params(args.penalty).seed(args.seed).check()?;
    let collapsed = CollapsedDpMeans::params(args.penalty)
        .seed(args.seed)
        .check()?;
    let kmeans = KMeans::params(args.clusters).seed(args.seed).check()?;
    out.push_str(&format!(
        "{:<26} {:>4} {:>14} {:>10} {:>9}\n",
        "algorithm", "K", "objective", "ARI/truth", "seconds"
    ));
    let mut row =
        |name: &str, fit: &(dyn Fn() -> Result<Clustering, madbayes::FitError> + Sync)| {
            let (m, secs) = timed(fit)?;
            out.push_str(&format!(
                "{:<26} {:>4} {:>14.4} {:>10.4} {:>9.3}\n",
                name,
                m.k(),
                m.objective(),
                adjusted_rand_index(m.labels(), &blobs.labels),
                secs
            ));
            Ok::<(), CliError>(())
        };
    row("dp-means", &|| dp.fit(x))?;
    row("collapsed-dp-means", &|| collapsed.fit(x))?;
    row(&format!("kmeans (told k = {})", args.clusters), &|| {
        kmeans.fit(x)
    })?;
    out.push_str(
        "\nARI 1 means the true clusters were recovered exactly. K-means is told the true K; \
         the DP-means variants\nfind it. (The paper's DP-means, `--plain`, opens a cluster only \
         for a point farther than √P from every\nmean, so clusters closer than that stay \
         merged; the refinement's splits and merges fix it.)\n",
    );
    Ok(((blobs.x.clone(), blobs.labels.clone()), out))
}

/// The feature half: the images and true Z, and what to print.
fn features(args: &DemoArgs) -> Result<((RowMatrix, RowMatrix), String), CliError> {
    let (n, sigma) = (args.images, args.image_noise);
    let data =
        block_images(n, 0.5, sigma, args.seed).map_err(|e| CliError(format!("demo: {e}")))?;
    let x = &data.x;
    let penalty = feature_penalty(args);
    let mut out = String::new();
    out.push_str(&format!(
        "\n2. Latent features: {n} block images of 6×6 pixels, each the sum of some of 4 \
         shapes (each present\n   with probability 0.5) plus noise of sd {sigma}; \
         penalty P = {penalty} (the cost of one more feature).\n\n"
    ));
    out.push_str(&format!(
        "{:<34} {:>4} {:>14} {:>9}\n",
        "algorithm", "K", "objective", "seconds"
    ));
    let true_z = BinaryMatrix::from_row_matrix(&data.z);
    let truth_a = least_squares_means(x, &true_z).a;
    let truth = bp_means_objective(x, &true_z, &truth_a, penalty);
    let bp = BpMeans::params(penalty).seed(args.seed).check()?;
    let collapsed = CollapsedBpMeans::params(penalty).seed(args.seed).check()?;
    let stepwise = StepwiseKFeatures::params(penalty).seed(args.seed).check()?;
    let kf = KFeatures::params(4).seed(args.seed).check()?;
    let mut line = |name: &str, k: usize, objective: f64, secs: Option<f64>| {
        let secs = secs.map_or(String::new(), |s| format!(" {s:>9.3}"));
        out.push_str(&format!("{name:<34} {k:>4} {objective:>14.4}{secs}\n"));
    };
    let (bp_fit, secs) = timed(&|| bp.fit(x))?;
    line("bp-means", bp_fit.k(), bp_fit.objective(), Some(secs));
    let (m, secs) = timed(&|| collapsed.fit(x))?;
    line("collapsed-bp-means", m.k(), m.objective(), Some(secs));
    let (m, secs) = timed(&|| stepwise.fit(x))?;
    line("stepwise-k-features", m.k(), m.objective(), Some(secs));
    let (m, secs) = timed(&|| kf.fit(x))?;
    // K-features minimises the residual alone; shown with 4·P added, as the others are.
    line(
        "k-features (told k = 4), + 4·P",
        m.k(),
        m.objective() + 4.0 * penalty,
        Some(secs),
    );
    line("the true Z (least-squares A)", 4, truth, None);
    // An IBP Gibbs chain from BP-means' answer, at the true noise level.
    let t = Instant::now();
    let chain = IbpSampler::params(IbpKind::Accelerated)
        .sigma_x(sigma)
        .sigma_a(1.0)
        .alpha(2.0)
        .iterations(200)
        .seed(args.seed)
        .start_from(bp_fit.z().to_row_matrix())
        .check()
        .map_err(|e| CliError(e.to_string()))?;
    let ibp = with_threads(0, || chain.fit(x))??;
    out.push_str(&format!(
        "\nAn IBP Gibbs chain (ibp-accelerated, σ_X = {sigma}, 200 sweeps) started from \
         BP-means' Z ends at K = {}\n({:.3} s): MAD-Bayes gives the samplers a good start.\n",
        ibp.k(),
        t.elapsed().as_secs_f64()
    ));
    out.push_str(&format!(
        "\nThe features BP-means learned (left of each pair) beside the true shape each one \
         recovered (right):\n{}\n",
        SHADES_LEGEND
    ));
    out.push_str(&feature_pictures(&bp_fit, &data.a));
    Ok(((data.x.clone(), data.z.clone()), out))
}

const SHADES_LEGEND: &str =
    "'#' ≥ 0.75, '+' ≥ 0.5, '-' ≥ 0.25, '.' below (a shape's pixels are 1, the rest 0)";

/// One pixel value as a character.
fn shade(v: f64) -> char {
    match v {
        v if v >= 0.75 => '#',
        v if v >= 0.5 => '+',
        v if v >= 0.25 => '-',
        _ => '.',
    }
}

/// Each learned feature as 6 lines of characters, next to the true shape closest to it (the
/// shapes matched greedily, closest pair first), four pairs to a row.
fn feature_pictures(fit: &FeatureModel, shapes: &RowMatrix) -> String {
    let a = fit.means();
    let z = fit.z();
    let dist = |j: usize, t: usize| -> f64 {
        a.row(j)
            .iter()
            .zip(shapes.row(t))
            .map(|(p, q)| (p - q) * (p - q))
            .sum()
    };
    let mut pairs: Vec<(usize, usize, f64)> = Vec::new();
    for j in 0..a.n_rows() {
        for t in 0..shapes.n_rows() {
            pairs.push((j, t, dist(j, t)));
        }
    }
    pairs.sort_by(|p, q| p.2.total_cmp(&q.2));
    let (mut used_j, mut used_t) = (vec![false; a.n_rows()], vec![false; shapes.n_rows()]);
    let mut matched: Vec<(usize, Option<usize>)> = Vec::new();
    for (j, t, _) in pairs {
        if !used_j[j] && !used_t[t] {
            used_j[j] = true;
            used_t[t] = true;
            matched.push((j, Some(t)));
        }
    }
    matched.extend((0..a.n_rows()).filter(|&j| !used_j[j]).map(|j| (j, None)));
    matched.sort();
    let mut out = String::new();
    for group in matched.chunks(4) {
        let mut head = String::new();
        for &(j, _) in group {
            let held = (0..z.n_rows()).filter(|&i| z.get(i, j)).count();
            head.push_str(&format!("{:<20}", format!("feature {} ({held})", j + 1)));
        }
        out.push_str(head.trim_end());
        out.push('\n');
        for r in 0..6 {
            let mut line = String::new();
            for &(j, t) in group {
                let learned: String = (0..6).map(|c| shade(a.row(j)[r * 6 + c])).collect();
                let truth: String = match t {
                    Some(t) => (0..6).map(|c| shade(shapes.row(t)[r * 6 + c])).collect(),
                    None => "      ".into(),
                };
                line.push_str(&format!("{learned}  {truth}      "));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str("(in brackets: how many images hold the feature)\n");
    out
}
