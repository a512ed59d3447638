//! `madbayes experiment groups`: the MAD-Bayes paper's faces comparison (§5.2, Figure 3) on
//! any set of same-sized pictures: stepwise K-features against K-means at K = 3 and K = 4,
//! counting how many rows fall in each group — each feature code (`100`, `110`, …) for
//! the features, each cluster for K-means — and, when the data carry labels, which labels
//! make up each group.
//!
//! **Inputs** (`--kind auto` picks by the path): a folder of PNG/JPEG images such as the
//! FEI faces (`NNa.jpg` neutral, `NNb.jpg` smiling; when every file name is digits followed
//! by letters, the letters are the rows' labels); the scikit-learn digits `digits.csv.gz`
//! (65 integers per line, 64 pixel counts 0..16 then the label; pixels divided by 16); an
//! IDX image file of (Fashion-)MNIST, whose labels are read from the `labels-idx1` file
//! beside it when there is one (class names for Fashion-MNIST, when the path says
//! `fashion`). `--limit N` keeps the first N rows.
//!
//! **Preparation** as for the tabletop photos ([`madbayes::experiments::paper_matrix`]):
//! rows divided by √(N − 1) and projected on the top `--dims` principal components (default
//! 100, or min(N, D) when that is smaller) without removing the mean (the authors' code
//! projects the centred rows).
//!
//! **Penalty.** Stepwise K-features adds the K-th feature while it lowers the residual
//! R(K) = ‖X − Z A‖²_F by more than P, i.e. while the drop d_K = R(K − 1) − R(K) exceeds P.
//! The paper's outcome, a base feature plus two features, is K = 3: d₂ > P, d₃ > P > d₄.
//! Without `--penalty` the experiment first runs K-features for K = 1 … 5 (the same runs,
//! same seeds, as stepwise K-features makes) and takes P = √(d₃ · d₄), the geometric mean
//! of the 3rd and 4th drops; it refuses when d₄ ≥ d₃, since then no penalty gives K = 3.
//! The drops are reported either way.
//!
//! **Order of the features.** Features are reported by the number of rows holding them,
//! most first (ties: the algorithm's order), so the base feature is the first digit of every
//! code, as in the paper's `100`, `110`, `101`, `111`.

use super::output::{Staging, binary_csv, check_out, labels_csv, matrix_csv};
use super::pictures::{PixelResult, image_files, read_examples};
use super::{CliError, with_threads};
use madbayes::Fit;
use madbayes::clustering::{Clustering, KMeans};
use madbayes::experiments::{PaperMatrix, paper_matrix};
use madbayes::features::{FeatureModel, StepwiseKFeatures};
use madbayes::io::{IdxKind, parse_csv, read_idx, read_image_folder};
use madbayes::plot::pictures::{EXAMPLES, ImageLayout, Kind, code, column_counts, example_rows};
use madbayes::{BinaryMatrix, Model, RowMatrix};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The cluster counts K-means is run with (the paper's Figure 3).
const KMEANS_K: [usize; 2] = [3, 4];
/// The features of the paper's outcome: a base feature plus two.
const TARGET_K: usize = 3;
/// K-features is profiled up to this K (one past the target and one more for the table).
const PROFILE_K: usize = 5;
/// Labels shown per group.
const TOP_LABELS: usize = 3;

/// What the input is.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A folder → images; `*-ubyte`, `*-ubyte.gz`, `.idx`, `.idx.gz` → idx; `.csv`,
    /// `.csv.gz` → digits.
    Auto,
    /// A folder of PNG/JPEG images, one row per image.
    Images,
    /// The scikit-learn digits CSV (plain or gzip): 64 pixel counts 0..16, then the label.
    Digits,
    /// An MNIST/Fashion-MNIST IDX image file (plain or gzip).
    Idx,
}

impl InputKind {
    fn name(self) -> &'static str {
        match self {
            InputKind::Auto => "auto",
            InputKind::Images => "images",
            InputKind::Digits => "digits",
            InputKind::Idx => "idx",
        }
    }
}

/// Options of `madbayes experiment groups`.
#[derive(clap::Args, Debug)]
pub struct GroupsArgs {
    /// The data: a folder of images (e.g. the FEI faces), the digits CSV (.csv or .csv.gz)
    /// or an IDX image file.
    #[arg(long)]
    pub input: PathBuf,
    /// Folder to write table.md, results.json, the fitted groups and the pictures into.
    #[arg(long)]
    pub out: PathBuf,
    /// What the input is (auto: by the path).
    #[arg(long, value_enum, default_value_t = InputKind::Auto)]
    pub kind: InputKind,
    /// Keep only the first N rows.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Principal components kept [default: 100, or min(N, D) when smaller].
    #[arg(long)]
    pub dims: Option<usize>,
    /// Penalty P of stepwise K-features, in the units of the authors' scaling [default:
    /// √(d₃·d₄), the geometric mean of the 3rd and 4th drops of the K-features residual].
    #[arg(long, allow_negative_numbers = true)]
    pub penalty: Option<f64>,
    /// Restarts of K-features at every K and of K-means.
    #[arg(long, default_value_t = 20)]
    pub restarts: usize,
    /// Seed of all randomness.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Convert colour images to grey (0.299 R + 0.587 G + 0.114 B); images only.
    #[arg(long)]
    pub grey: bool,
}

/// The data read, before preparation.
struct Input {
    x: RowMatrix,
    labels: Option<Vec<String>>,
    /// Where the labels came from, for the table.
    labels_from: String,
    layout: ImageLayout,
    /// The image files, for image folders (examples are read again from them).
    files: Option<Vec<PathBuf>>,
}

/// Fashion-MNIST's classes, by label value.
const FASHION: [&str; 10] = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
];

fn resolve_kind(path: &Path, kind: InputKind) -> Result<InputKind, CliError> {
    if !path.exists() {
        return Err(CliError(format!(
            "{}: no such file or folder; check --input",
            path.display()
        )));
    }
    if kind != InputKind::Auto {
        return Ok(kind);
    }
    if path.is_dir() {
        return Ok(InputKind::Images);
    }
    let lower = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ["-ubyte", "-ubyte.gz", ".idx", ".idx.gz"]
        .iter()
        .any(|s| lower.ends_with(s))
    {
        Ok(InputKind::Idx)
    } else if lower.ends_with(".csv") || lower.ends_with(".csv.gz") {
        Ok(InputKind::Digits)
    } else {
        Err(CliError(format!(
            "{}: cannot tell what the input is; give a folder of images, a .csv/.csv.gz digits file or an IDX file, or pass --kind",
            path.display()
        )))
    }
}

fn read_input(path: &Path, kind: InputKind, grey: bool) -> Result<Input, CliError> {
    if grey && kind != InputKind::Images {
        return Err(CliError(format!(
            "{}: --grey applies only to a folder of images; drop --grey for this input",
            path.display()
        )));
    }
    match kind {
        InputKind::Images => read_images(path, grey),
        InputKind::Digits => read_digits(path),
        InputKind::Idx => read_idx_images(path),
        InputKind::Auto => unreachable!("resolved before"),
    }
}

/// A folder of images; labels from the file names when all are digits then letters
/// (`12a.jpg` → `a`).
fn read_images(path: &Path, grey: bool) -> Result<Input, CliError> {
    if !path.is_dir() {
        return Err(CliError(format!(
            "{}: --kind images needs a folder of PNG/JPEG images",
            path.display()
        )));
    }
    let set = read_image_folder(path, grey)?;
    let suffixes: Option<Vec<String>> = set
        .files
        .iter()
        .map(|f| {
            let stem = f.file_stem()?.to_str()?;
            let digits = stem.len() - stem.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let rest = &stem[digits..];
            (digits > 0 && !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphabetic()))
                .then(|| rest.to_string())
        })
        .collect();
    let (labels, labels_from) = match suffixes {
        Some(l) => (
            Some(l),
            "the letters after the number in each file name (FEI: a neutral, b smiling)".into(),
        ),
        None => (None, "none (file names are not number + letters)".into()),
    };
    Ok(Input {
        layout: ImageLayout {
            height: set.height,
            width: set.width,
            channels: set.channels,
            grey,
        },
        x: set.x,
        labels,
        labels_from,
        files: Some(set.files),
    })
}

/// The scikit-learn digits CSV, plain or gzip-compressed (by its first bytes).
fn read_digits(path: &Path) -> Result<Input, CliError> {
    let name = path.display().to_string();
    let mut file = std::fs::File::open(path)
        .map_err(|e| CliError(format!("{name}: cannot open the file ({e}); check --input")))?;
    if path.is_dir() {
        return Err(CliError(format!(
            "{name}: is a folder; --kind digits needs the digits .csv or .csv.gz file"
        )));
    }
    let mut sig = [0u8; 2];
    let got = file.read(&mut sig).unwrap_or(0);
    let file = std::fs::File::open(path)
        .map_err(|e| CliError(format!("{name}: cannot open the file ({e}); check --input")))?;
    let table = if got == 2 && sig == [0x1f, 0x8b] {
        parse_csv(BufReader::new(flate2::read::GzDecoder::new(file)), &name)?
    } else {
        parse_csv(BufReader::new(file), &name)?
    };
    if table.n_cols() != 65 {
        return Err(CliError(format!(
            "{name}: {} columns, expected 65 (64 pixel counts of an 8×8 digit, then its label); give scikit-learn's digits.csv.gz",
            table.n_cols()
        )));
    }
    let n = table.n_rows();
    let mut x = RowMatrix::zeros(n, 64);
    let mut labels = Vec::with_capacity(n);
    for (i, row) in table.rows().enumerate() {
        for (j, &v) in row[..64].iter().enumerate() {
            if !(0.0..=16.0).contains(&v) {
                return Err(CliError(format!(
                    "{name}: row {} column {}: pixel count {v} outside 0..16; give scikit-learn's digits.csv.gz",
                    i + 1,
                    j + 1
                )));
            }
            x.row_mut(i)[j] = v / 16.0;
        }
        let l = row[64];
        if l.fract() != 0.0 {
            return Err(CliError(format!(
                "{name}: row {}: label {l} is not a whole number",
                i + 1
            )));
        }
        labels.push(format!("{l}"));
    }
    Ok(Input {
        x,
        labels: Some(labels),
        labels_from: "the last column of the CSV".into(),
        layout: ImageLayout {
            height: 8,
            width: 8,
            channels: 1,
            grey: false,
        },
        files: None,
    })
}

/// An IDX image file and, when present beside it, its `labels-idx1` file.
fn read_idx_images(path: &Path) -> Result<Input, CliError> {
    let name = path.display().to_string();
    let idx = read_idx(path)?;
    let IdxKind::Images { height, width } = idx.kind else {
        return Err(CliError(format!(
            "{name}: holds labels, not images; give the *-images-idx3-ubyte file"
        )));
    };
    let file_name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let label_path = file_name
        .contains("images-idx3")
        .then(|| path.with_file_name(file_name.replace("images-idx3", "labels-idx1")))
        .filter(|p| p.is_file());
    let (labels, labels_from) = match label_path {
        Some(lp) => {
            let l = read_idx(&lp)?;
            if l.kind != IdxKind::Labels || l.x.n_rows() != idx.x.n_rows() {
                return Err(CliError(format!(
                    "{}: not the labels of {name} ({} rows for {} images)",
                    lp.display(),
                    l.x.n_rows(),
                    idx.x.n_rows()
                )));
            }
            let fashion = name.to_ascii_lowercase().contains("fashion");
            let labels =
                l.x.as_slice()
                    .iter()
                    .map(|&v| match FASHION.get(v as usize) {
                        Some(class) if fashion => class.to_string(),
                        _ => format!("{v}"),
                    })
                    .collect();
            (Some(labels), lp.display().to_string())
        }
        None => (None, "none (no labels-idx1 file beside the images)".into()),
    };
    Ok(Input {
        x: idx.x,
        labels,
        labels_from,
        layout: ImageLayout {
            height,
            width,
            channels: 1,
            grey: false,
        },
        files: None,
    })
}

/// Keeps the first `limit` rows.
fn truncate(input: &mut Input, limit: usize) {
    let n = input.x.n_rows();
    if limit >= n {
        return;
    }
    let keep: Vec<bool> = (0..n).map(|i| i < limit).collect();
    input.x.retain_rows(&keep);
    if let Some(l) = &mut input.labels {
        l.truncate(limit);
    }
    if let Some(f) = &mut input.files {
        f.truncate(limit);
    }
}

/// The K-features residual R(K) for K = 0 … and its drops, from stepwise K-features run
/// with a negligible penalty (the same K-features runs, same seeds, as at any penalty).
struct Profile {
    /// R(0) = ‖Y‖²_F, then R(1), R(2), … as far as the residual fell.
    residual: Vec<f64>,
}

impl Profile {
    /// d_K = R(K − 1) − R(K), for K = 1 … (index K − 1).
    fn drops(&self) -> Vec<f64> {
        self.residual.windows(2).map(|w| w[0] - w[1]).collect()
    }

    /// The rule of the module documentation: √(d₃ · d₄).
    fn penalty(&self) -> Result<f64, String> {
        let d = self.drops();
        if d.len() < TARGET_K + 1 {
            return Err(format!(
                "the K-features residual stopped falling at K = {} (drops {:?}), so the 3rd and 4th drops are not known",
                d.len(),
                d
            ));
        }
        let (d3, d4) = (d[TARGET_K - 1], d[TARGET_K]);
        if !(d4 > 0.0 && d3 > d4) {
            return Err(format!(
                "the 4th drop of the K-features residual ({d4:.6e}) is not smaller than the 3rd ({d3:.6e}), so no penalty stops stepwise K-features at K = 3"
            ));
        }
        Ok((d3 * d4).sqrt())
    }
}

fn profile(y: &RowMatrix, a: &GroupsArgs) -> Result<Profile, CliError> {
    let tiny = f64::MIN_POSITIVE;
    // The paper's stepwise K-features as published (as for the rest of the experiment).
    let p = StepwiseKFeatures::params(tiny)
        .plain()
        .k(Some(PROFILE_K.min(y.n_rows())))
        .restarts(a.restarts)
        .seed(a.seed)
        .check()?;
    let m = with_threads(a.threads, || p.fit(y))??;
    let total: f64 = y.as_slice().iter().map(|v| v * v).sum();
    let mut residual = vec![total];
    for (i, e) in m.objective_by_k().iter().enumerate() {
        let r = e - (i + 1) as f64 * tiny;
        if r > *residual.last().expect("R(0)") {
            break;
        }
        residual.push(r);
    }
    Ok(Profile { residual })
}

/// Z's columns and A's rows ordered by how many rows hold each feature, most first.
fn ordered_features(m: &FeatureModel) -> (RowMatrix, RowMatrix, Vec<usize>) {
    let z = m.z().to_row_matrix();
    let counts = column_counts(&z);
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(counts[k]));
    let (n, k) = (z.n_rows(), order.len());
    let mut zo = RowMatrix::zeros(n, k);
    for i in 0..n {
        for (j, &o) in order.iter().enumerate() {
            zo.row_mut(i)[j] = z.row(i)[o];
        }
    }
    let mut ao = RowMatrix::zeros(0, m.means().n_cols());
    for &o in &order {
        ao.push_row(m.means().row(o));
    }
    let counts = order.iter().map(|&o| counts[o]).collect();
    (zo, ao, counts)
}

/// One group: its name, its rows, and its labels by count (most first).
struct Group {
    name: String,
    rows: usize,
    labels: Vec<(String, usize)>,
}

/// Groups of rows by key, largest first (ties: by name).
fn groups(keys: &[String], labels: Option<&[String]>) -> Vec<Group> {
    let mut by: BTreeMap<&str, (usize, BTreeMap<&str, usize>)> = BTreeMap::new();
    for (i, k) in keys.iter().enumerate() {
        let e = by.entry(k.as_str()).or_default();
        e.0 += 1;
        if let Some(l) = labels {
            *e.1.entry(l[i].as_str()).or_default() += 1;
        }
    }
    let mut out: Vec<Group> = by
        .into_iter()
        .map(|(name, (rows, ls))| {
            let mut labels: Vec<(String, usize)> =
                ls.into_iter().map(|(l, c)| (l.to_string(), c)).collect();
            labels.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| natural(&a.0, &b.0)));
            Group {
                name: name.to_string(),
                rows,
                labels,
            }
        })
        .collect();
    out.sort_by(|a, b| b.rows.cmp(&a.rows).then_with(|| a.name.cmp(&b.name)));
    out
}

fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    madbayes::io::natural_cmp(a, b)
}

fn top_labels(g: &Group) -> String {
    let shown: Vec<String> = g
        .labels
        .iter()
        .take(TOP_LABELS)
        .map(|(l, c)| format!("{l} ({c})"))
        .collect();
    let rest: usize = g.labels.iter().skip(TOP_LABELS).map(|(_, c)| c).sum();
    if rest > 0 {
        format!("{}; others {rest}", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

fn groups_json(gs: &[Group]) -> Value {
    Value::Array(
        gs.iter()
            .map(|g| {
                json!({"group": g.name, "rows": g.rows,
                    "labels": g.labels.iter().map(|(l, c)| json!([l, c])).collect::<Vec<_>>()})
            })
            .collect(),
    )
}

fn group_table(md: &mut String, head: &str, gs: &[Group], labelled: bool) {
    if labelled {
        let _ = writeln!(md, "| {head} | rows | top labels (rows) |\n|---|---:|---|");
    } else {
        let _ = writeln!(md, "| {head} | rows |\n|---|---:|");
    }
    for g in gs {
        if labelled {
            let _ = writeln!(md, "| `{}` | {} | {} |", g.name, g.rows, top_labels(g));
        } else {
            let _ = writeln!(md, "| `{}` | {} |", g.name, g.rows);
        }
    }
}

/// Pictures of one result: `features/…` and the overview, the names as given by `rename`.
fn pictures(
    staging: &mut Staging,
    input: &Input,
    raw: Option<&RowMatrix>,
    result: &PixelResult,
    rename: impl Fn(&str) -> String,
) -> Result<(), CliError> {
    let rows = example_rows(&result.z, EXAMPLES);
    let examples = match (&input.files, raw) {
        (Some(files), _) => read_examples(files, &result.z, &input.layout)
            .map_err(|e| CliError(format!("cannot read the example images: {e}")))?,
        (None, Some(x)) => {
            let mut e = RowMatrix::zeros(0, x.n_cols());
            for i in rows {
                e.push_row(x.row(i));
            }
            e
        }
        (None, None) => unreachable!("the rows are kept when there are no files"),
    };
    for (name, bytes) in image_files(result, Some(&examples)) {
        staging.write(&rename(&name), &bytes)?;
    }
    Ok(())
}

pub fn run(a: GroupsArgs) -> Result<(), CliError> {
    if let Some(p) = a.penalty
        && !(p.is_finite() && p > 0.0)
    {
        return Err(CliError(format!(
            "--penalty must be a positive finite number, got {p}; or leave it out to use the rule √(d₃·d₄)"
        )));
    }
    if a.restarts == 0 {
        return Err(CliError("--restarts must be at least 1".into()));
    }
    if a.limit == Some(0) || a.dims == Some(0) {
        return Err(CliError("--limit and --dims must be at least 1".into()));
    }
    super::check_threads(a.threads)?;
    super::fit::check_run_lengths(a.restarts, 0, 0)?;
    check_out(&a.out, &[&a.input])?;
    let started = Instant::now();
    let kind = resolve_kind(&a.input, a.kind)?;
    let mut input = with_threads(a.threads, || read_input(&a.input, kind, a.grey))??;
    if let Some(limit) = a.limit {
        truncate(&mut input, limit);
    }
    let (n, d) = (input.x.n_rows(), input.x.n_cols());
    let need = KMEANS_K[KMEANS_K.len() - 1];
    if n < need {
        return Err(CliError(format!(
            "{}: {n} rows; the experiment needs at least {need} (K-means with K = {need})",
            a.input.display()
        )));
    }
    let max_dims = n.min(d);
    let dims = a.dims.unwrap_or(100.min(max_dims));
    if dims > max_dims {
        return Err(CliError(format!(
            "--dims {dims}: at most min(N, D) = {max_dims} components for this input ({n} rows of {d} values); pass a smaller --dims"
        )));
    }
    // The raw rows are kept for the example pictures unless they can be read from files.
    let raw = input.files.is_none().then(|| input.x.clone());
    let x = std::mem::replace(&mut input.x, RowMatrix::zeros(0, 0));
    let prepared: PaperMatrix = with_threads(a.threads, || paper_matrix(x, dims))?
        .map_err(|e| CliError(format!("--dims {dims}: {e}")))?;
    let y = &prepared.y;
    let staging = Staging::open(&a.out, "experiment groups")?;
    let prepare_secs = started.elapsed().as_secs_f64();

    let t = Instant::now();
    let prof = profile(y, &a)?;
    let (penalty, rule) = match a.penalty {
        Some(p) => (p, "given (--penalty)".to_string()),
        None => {
            let p = prof.penalty().map_err(|e| {
                CliError(format!(
                    "cannot choose the penalty: {e}; pass --penalty P (the drops are d = {:?})",
                    prof.drops()
                ))
            })?;
            (
                p,
                "√(d₃·d₄), the geometric mean of the 3rd and 4th drops of the K-features residual"
                    .to_string(),
            )
        }
    };
    // Progress goes to stderr only once nothing more can fail on the input, so that a
    // failure is the one line `madbayes: error: …`.
    eprintln!(
        "groups: {} ({}) → {n} × {d}, prepared {n} × {dims} in {prepare_secs:.2} s",
        a.input.display(),
        kind.name(),
    );
    eprintln!(
        "K-features residual for K = 0..{}: {:?} ({:.2} s); P = {penalty:.6}",
        prof.residual.len() - 1,
        prof.residual,
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let step = StepwiseKFeatures::params(penalty)
        .plain()
        .restarts(a.restarts)
        .seed(a.seed)
        .check()?;
    let model = with_threads(a.threads, || step.fit(y))??;
    let step_secs = t.elapsed().as_secs_f64();
    eprintln!("stepwise K-features: K = {}, {step_secs:.2} s", model.k());
    let (z, feat_a, feat_counts) = ordered_features(&model);
    let codes: Vec<String> = (0..n).map(|i| code(&z, i)).collect();
    let labels = input.labels.as_deref();
    let code_groups = groups(&codes, labels);

    let mut kmeans: Vec<(usize, Clustering, f64)> = Vec::new();
    for k in KMEANS_K {
        let t = Instant::now();
        let p = KMeans::params(k)
            .restarts(a.restarts)
            .seed(a.seed)
            .check()?;
        let c = with_threads(a.threads, || p.fit(y))??;
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "K-means, K = {k}: objective {:.6e}, {secs:.2} s",
            c.objective()
        );
        kmeans.push((k, c, secs));
    }

    // table.md
    let labelled = labels.is_some();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Input: `{}` ({}), N = {n} rows of D = {d} values; rows divided by √(N − 1) = {:.4} and projected on {dims} principal components without removing the mean. Labels: {}. Restarts {}, seed {}.\n",
        a.input.display(),
        kind.name(),
        prepared.scale,
        input.labels_from,
        a.restarts,
        a.seed
    );
    let _ = writeln!(md, "Penalty P = {penalty:.6} ({rule}).\n");
    md.push_str("| K | K-features residual R(K) | drop d_K = R(K−1) − R(K) | objective R(K) + K·P |\n|---:|---:|---:|---:|\n");
    let drops = prof.drops();
    for (k, r) in prof.residual.iter().enumerate() {
        let drop = if k == 0 {
            "".to_string()
        } else {
            format!("{:.6e}", drops[k - 1])
        };
        let _ = writeln!(
            md,
            "| {k} | {r:.6e} | {drop} | {:.6e} |",
            r + k as f64 * penalty
        );
    }
    let _ = writeln!(
        md,
        "\n**Stepwise K-features** (objective by K tried: {}): K = {} features, objective {:.6e}; rows holding each feature (base first): {}.\n",
        model
            .objective_by_k()
            .iter()
            .map(|v| format!("{v:.6e}"))
            .collect::<Vec<_>>()
            .join(", "),
        model.k(),
        model.objective(),
        feat_counts
            .iter()
            .enumerate()
            .map(|(k, c)| format!("F{k} {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    group_table(&mut md, "code", &code_groups, labelled);
    let mut kmeans_json = Vec::new();
    for (k, c, secs) in &kmeans {
        let keys: Vec<String> = c.labels().iter().map(|l| format!("C{l}")).collect();
        let gs = groups(&keys, labels);
        let _ = writeln!(
            md,
            "\n**K-means, K = {k}**: objective {:.6e}.\n",
            c.objective()
        );
        group_table(&mut md, "cluster", &gs, labelled);
        let mut sizes = vec![0usize; c.k()];
        for &l in c.labels() {
            sizes[l] += 1;
        }
        kmeans_json.push(json!({"k": k, "objective": c.objective(), "seconds": secs,
            "sizes": sizes, "groups": groups_json(&gs)}));
    }

    let results = json!({
        "input": a.input.display().to_string(),
        "kind": kind.name(),
        "n": n,
        "d": d,
        "dims": dims,
        "scale": prepared.scale,
        "restarts": a.restarts,
        "seed": a.seed,
        "threads": a.threads,
        "labels": input.labels_from,
        "penalty": penalty,
        "penalty_rule": rule,
        "residual_by_k": prof.residual,
        "drops": drops,
        "stepwise": {
            "k": model.k(),
            "objective": model.objective(),
            "objective_by_k": model.objective_by_k(),
            "seconds": step_secs,
            "feature_rows": feat_counts,
            "codes": groups_json(&code_groups),
        },
        "kmeans": kmeans_json,
    });

    let mut staging = staging;
    staging.write("table.md", md.as_bytes())?;
    staging.write(
        "stepwise_z.csv",
        binary_csv(&BinaryMatrix::from_row_matrix(&z)).as_bytes(),
    )?;
    staging.write("stepwise_means.csv", matrix_csv(&feat_a).as_bytes())?;
    for (k, c, _) in &kmeans {
        staging.write(
            &format!("kmeans{k}_labels.csv"),
            labels_csv(c.labels()).as_bytes(),
        )?;
        staging.write(
            &format!("kmeans{k}_means.csv"),
            matrix_csv(c.means()).as_bytes(),
        )?;
    }
    let features = PixelResult {
        kind: Kind::Features,
        layout: input.layout,
        means: prepared.directions_to_input(&feat_a),
        offset: Some(prepared.mean_outside()),
        z: z.clone(),
    };
    pictures(&mut staging, &input, raw.as_ref(), &features, |s| {
        s.to_string()
    })?;
    for (k, c, _) in &kmeans {
        let result = PixelResult {
            kind: Kind::Clusters,
            layout: input.layout,
            means: prepared.points_to_input(c.means()),
            offset: None,
            z: c.z().to_row_matrix(),
        };
        pictures(&mut staging, &input, raw.as_ref(), &result, |s| {
            if s == "overview.png" {
                format!("overview_kmeans{k}.png")
            } else {
                s.replace("features/cluster_", &format!("features/cluster_k{k}_"))
            }
        })?;
    }
    staging.replace_pictures_in("features");
    let text = serde_json::to_string_pretty(&results)
        .map_err(|e| CliError(format!("cannot encode results.json: {e}")))?;
    staging.write("results.json", (text + "\n").as_bytes())?;
    staging.commit()?;
    print!("{md}");
    Ok(())
}
