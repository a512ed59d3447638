//! `madbayes gen KIND --out DIR …`: seeded synthetic data with known truth, written as
//! x.csv (or x.npy), z.csv, a.csv and params.json.

use super::output::{Staging, binary_csv, check_out, matrix_csv};
use super::{CliError, check_memory};
use madbayes::RowMatrix;
use madbayes::generate::{
    FeatureData, block_images, gaussian_blobs, ibp_k_bound, ibp_linear_gaussian, meibp_factors,
};
use madbayes::io::write_npy_to;
use serde_json::json;
use std::path::PathBuf;

/// The data sets `gen` can draw.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The four 6×6 block images (D = 36, K = 4), Z ~ Bernoulli(p), X = Z A + σ_X E.
    /// Defaults n 100, p 0.5, sigma-x 0.5 (Griffiths & Ghahramani).
    Blocks,
    /// Reed & Ghahramani's synthetic factors: K binary factors of ceil(D/3) random ones.
    /// Defaults n 500, d 500, k 20, p 0.5, sigma-x 1.
    Meibp,
    /// The IBP linear Gaussian prior: Z ~ IBP(alpha), A ~ N(0, sigma-a²), X = Z A + σ_X E.
    /// Defaults n 100, d 36, alpha 3, sigma-a 1, sigma-x 0.5.
    Ibp,
    /// Gaussian clusters: K centers uniform in [−12, 12]^D, noise sd sigma-x; z is one-hot,
    /// a holds the centers. Defaults n 600, d 2, k 6, sigma-x 0.5.
    Blobs,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Blocks => "blocks",
            Kind::Meibp => "meibp",
            Kind::Ibp => "ibp",
            Kind::Blobs => "blobs",
        }
    }
}

/// Options of `madbayes gen`.
#[derive(clap::Args, Debug)]
pub struct GenArgs {
    /// What to generate.
    #[arg(value_enum)]
    pub kind: Kind,
    /// Folder to write x.csv (or x.npy), z.csv, a.csv and params.json into.
    #[arg(long)]
    pub out: PathBuf,
    /// Number of rows.
    #[arg(long)]
    pub n: Option<usize>,
    /// Seed of all randomness.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Dimensions (meibp, ibp, blobs).
    #[arg(long)]
    pub d: Option<usize>,
    /// Features or clusters (meibp, blobs).
    #[arg(long)]
    pub k: Option<usize>,
    /// Probability of each z_nk (blocks, meibp).
    #[arg(long)]
    pub p: Option<f64>,
    /// Noise standard deviation σ_X.
    #[arg(long, allow_negative_numbers = true)]
    pub sigma_x: Option<f64>,
    /// IBP concentration α (ibp).
    #[arg(long, allow_negative_numbers = true)]
    pub alpha: Option<f64>,
    /// Standard deviation of the feature means A (ibp).
    #[arg(long, allow_negative_numbers = true)]
    pub sigma_a: Option<f64>,
    /// Write x as x.npy (f64) instead of x.csv.
    #[arg(long)]
    pub npy: bool,
}

pub fn run(args: GenArgs) -> Result<(), CliError> {
    let kind = args.kind;
    let refuse = |flag: &str, given: bool| {
        if given {
            Err(CliError(format!(
                "--{flag} does not apply to {}",
                kind.name()
            )))
        } else {
            Ok(())
        }
    };
    refuse("d", args.d.is_some() && kind == Kind::Blocks)?;
    refuse(
        "k",
        args.k.is_some() && matches!(kind, Kind::Blocks | Kind::Ibp),
    )?;
    refuse(
        "p",
        args.p.is_some() && matches!(kind, Kind::Ibp | Kind::Blobs),
    )?;
    refuse("alpha", args.alpha.is_some() && kind != Kind::Ibp)?;
    refuse("sigma-a", args.sigma_a.is_some() && kind != Kind::Ibp)?;
    check_sizes(&args)?;
    check_out(&args.out, &[])?;
    let seed = args.seed;
    let (data, params) = match kind {
        Kind::Blocks => {
            let (n, p, sx) = (
                args.n.unwrap_or(100),
                args.p.unwrap_or(0.5),
                args.sigma_x.unwrap_or(0.5),
            );
            (
                block_images(n, p, sx, seed)?,
                json!({"n": n, "p": p, "sigma_x": sx}),
            )
        }
        Kind::Meibp => {
            let (n, d, k) = (
                args.n.unwrap_or(500),
                args.d.unwrap_or(500),
                args.k.unwrap_or(20),
            );
            let (p, sx) = (args.p.unwrap_or(0.5), args.sigma_x.unwrap_or(1.0));
            (
                meibp_factors(n, d, k, p, sx, seed)?,
                json!({"n": n, "d": d, "k": k, "p": p, "sigma_x": sx, "ones_per_factor": d.div_ceil(3)}),
            )
        }
        Kind::Ibp => {
            let (n, d) = (args.n.unwrap_or(100), args.d.unwrap_or(36));
            let (alpha, sa, sx) = (
                args.alpha.unwrap_or(3.0),
                args.sigma_a.unwrap_or(1.0),
                args.sigma_x.unwrap_or(0.5),
            );
            (
                ibp_linear_gaussian(n, d, alpha, sa, sx, seed)?,
                json!({"n": n, "d": d, "alpha": alpha, "sigma_a": sa, "sigma_x": sx}),
            )
        }
        Kind::Blobs => blobs(&args)?,
    };
    let mut staging = Staging::open(&args.out, "gen")?;
    let x_name = if args.npy {
        let mut buf = Vec::new();
        write_npy_to(&mut buf, &data.x)?;
        staging.write("x.npy", &buf)?;
        "x.npy"
    } else {
        staging.write("x.csv", matrix_csv(&data.x).as_bytes())?;
        "x.csv"
    };
    staging.write(
        "z.csv",
        binary_csv(&madbayes::BinaryMatrix::from_row_matrix(&data.z)).as_bytes(),
    )?;
    staging.write("a.csv", matrix_csv(&data.a).as_bytes())?;
    let (n, d, k) = (data.x.n_rows(), data.x.n_cols(), data.z.n_cols());
    let mut meta = json!({
        "kind": kind.name(),
        "seed": seed,
        "rows": n,
        "columns": d,
        "features": k,
        "model": "x = z a + sigma_x e, e ~ N(0, 1)",
        "version": env!("CARGO_PKG_VERSION"),
    });
    if let (Some(m), serde_json::Value::Object(p)) = (meta.as_object_mut(), params) {
        m.extend(p);
    }
    let text = serde_json::to_string_pretty(&meta)
        .map_err(|e| CliError(format!("cannot encode params.json: {e}")))?;
    staging.write("params.json", (text + "\n").as_bytes())?;
    staging.commit()?;
    println!(
        "{}: N = {n}, D = {d}, K = {k} (seed {seed}); wrote {x_name}, z.csv, a.csv and params.json in {}",
        kind.name(),
        args.out.display()
    );
    Ok(())
}

/// Refuses N, D and K whose data and files cannot be held in memory, before anything is
/// drawn: X, Z and A as `f64`, and the text of x.csv (or x.npy), z.csv and a.csv, which are
/// built in memory before they are written (up to 25 bytes per value in CSV).
fn check_sizes(args: &GenArgs) -> Result<(), CliError> {
    let n = args.n.unwrap_or(match args.kind {
        Kind::Blocks | Kind::Ibp => 100,
        Kind::Meibp => 500,
        Kind::Blobs => 600,
    });
    let (d, k) = match args.kind {
        Kind::Blocks => (36, 4),
        Kind::Meibp => (args.d.unwrap_or(500), args.k.unwrap_or(20)),
        Kind::Ibp => (
            args.d.unwrap_or(36),
            ibp_k_bound(n, args.alpha.unwrap_or(3.0).max(0.0)),
        ),
        Kind::Blobs => (args.d.unwrap_or(2), args.k.unwrap_or(6)),
    };
    let (n128, d128, k128) = (n as u128, d as u128, k as u128);
    let x_text: u128 = if args.npy { 8 } else { 25 };
    let bytes = (n128 * d128)
        .saturating_mul(8 + x_text)
        .saturating_add(n128.saturating_mul(k128).saturating_mul(8 + 2))
        .saturating_add(k128.saturating_mul(d128).saturating_mul(8 + 25));
    let what = match args.kind {
        Kind::Blocks => format!("--n {n} (D = 36, K = 4)"),
        Kind::Ibp => format!("--n {n} and --d {d} (with up to {k} features)"),
        _ => format!("--n {n}, --d {d} and --k {k}"),
    };
    check_memory(&what, bytes)
}

/// Gaussian clusters as feature data: z one-hot, a the centers.
fn blobs(args: &GenArgs) -> Result<(FeatureData, serde_json::Value), CliError> {
    let (n, d, k) = (
        args.n.unwrap_or(600),
        args.d.unwrap_or(2),
        args.k.unwrap_or(6),
    );
    let sx = args.sigma_x.unwrap_or(0.5);
    if n == 0 || d == 0 || k == 0 || k > n {
        return Err(CliError(format!(
            "blobs needs n ≥ 1, d ≥ 1 and 1 ≤ k ≤ n, got n {n}, d {d}, k {k}"
        )));
    }
    if !(sx.is_finite() && sx >= 0.0) {
        return Err(CliError(format!(
            "sigma-x must be a finite number ≥ 0, got {sx}"
        )));
    }
    let b = gaussian_blobs(n, d, k, 12.0, sx, args.seed);
    let mut z = RowMatrix::zeros(n, k);
    for (i, &c) in b.labels.iter().enumerate() {
        z.row_mut(i)[c] = 1.0;
    }
    let params = json!({"n": n, "d": d, "k": k, "sigma_x": sx, "box_half_width": 12.0});
    Ok((
        FeatureData {
            x: b.x,
            z,
            a: b.centers,
        },
        params,
    ))
}
