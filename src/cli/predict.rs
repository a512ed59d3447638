//! `madbayes predict MODEL INPUT --out DIR`: applies a fitted model (the `model.json` of a
//! `fit` result folder) to new rows. The rows are read like `fit`'s input, projected by the
//! model's PCA when it had one, and assigned: `z.csv` (N × K, one-hot for a clustering),
//! `labels.csv` (clusterings), `reconstruction.csv` (Z A, in the space the model was fitted
//! in) and `summary.json`.

use super::fit::read_input;
use super::output::{Staging, binary_csv_to, check_out, labels_csv, matrix_csv, one_hot_csv_to};
use super::saved::{ModelFile, SavedLayout};
use super::{CliError, check_threads, with_threads};
use madbayes::RowMatrix;
use madbayes::error::check_data;
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `madbayes predict`.
#[derive(clap::Args, Debug)]
pub struct PredictArgs {
    /// A result folder written by `madbayes fit` (or the model.json inside it).
    pub model: PathBuf,
    /// New rows, in any format `fit` reads (.csv, .npy, a folder of images, an IDX file),
    /// with the columns (or image size) of the data the model was fitted on.
    pub input: PathBuf,
    /// Image folders: convert every image to grey (as the model's input was, if it was).
    #[arg(long)]
    pub grey: bool,
    /// Folder to write z.csv, labels.csv (clusterings), reconstruction.csv and summary.json.
    #[arg(long)]
    pub out: PathBuf,
    /// Worker threads (0: one per core). The result does not depend on it.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

pub fn run(args: PredictArgs) -> Result<(), CliError> {
    check_threads(args.threads)?;
    check_out(&args.out, &[&args.input, &args.model])?;
    let (saved, model_path) = ModelFile::read(&args.model)?;
    let (x, images) = read_input(&args.input, args.grey)?;
    let input = args.input.display();
    check_data(&x).map_err(|e| CliError(format!("{input}: {e}")))?;
    let layout = images.as_ref().map(|i| SavedLayout::from(i.layout));
    if layout != saved.image {
        let describe = |l: &Option<SavedLayout>| match l {
            Some(l) => format!(
                "{}×{} images with {} channel(s){}",
                l.height,
                l.width,
                l.channels,
                if l.grey { " (--grey)" } else { "" }
            ),
            None => "rows of numbers".to_string(),
        };
        return Err(CliError(format!(
            "{input} holds {} but the model was fitted on {}; give input like the model's",
            describe(&layout),
            describe(&saved.image)
        )));
    }
    if x.n_cols() != saved.input_columns {
        return Err(CliError(format!(
            "{input} has {} columns but the model was fitted on {}; give rows of {} values",
            x.n_cols(),
            saved.input_columns,
            saved.input_columns
        )));
    }
    let staging = Staging::open(&args.out, "predict")?;
    let started = Instant::now();
    let (z, labels, recon, k) =
        with_threads(args.threads, || -> Result<_, madbayes::FitError> {
            let y = match &saved.pca {
                Some(p) => p.transform(&x),
                None => x,
            };
            let model = saved.model.as_model();
            let labels = saved.model.labels(&y).transpose()?;
            let (z, recon) = match &labels {
                // A clustering's Z is the one-hot matrix of its labels: written row by row, never
                // held (N·K bytes), and Z A is each row's mean (0 plus the mean, as Z A sums it).
                Some(l) => {
                    let means = model.means();
                    let mut recon = RowMatrix::zeros(l.len(), means.n_cols());
                    for (n, &c) in l.iter().enumerate() {
                        let row = recon.row_mut(n);
                        row.iter_mut().zip(means.row(c)).for_each(|(o, v)| *o += v);
                    }
                    (None, recon)
                }
                None => (
                    Some(model.predict_z(y.view())?),
                    model.reconstruct(y.view())?,
                ),
            };
            Ok((z, labels, recon, model.k()))
        })??;
    let n = recon.n_rows();
    let seconds = started.elapsed().as_secs_f64();
    let mut staging = staging;
    staging.write_with("z.csv", |w| match (&z, &labels) {
        (Some(z), _) => binary_csv_to(w, z),
        (None, labels) => one_hot_csv_to(w, labels.as_deref().unwrap_or_default(), k),
    })?;
    if let Some(l) = &labels {
        staging.write("labels.csv", labels_csv(l).as_bytes())?;
    }
    staging.write("reconstruction.csv", matrix_csv(&recon).as_bytes())?;
    let summary = json!({
        "command": "predict",
        "model": model_path.display().to_string(),
        "algo": saved.algo,
        "input": args.input.display().to_string(),
        "n": n,
        "d": saved.input_columns,
        "k": k,
        "pca": saved.pca.as_ref().map(|p| p.n_components()),
        "seconds": seconds,
        "version": env!("CARGO_PKG_VERSION"),
    });
    let text = serde_json::to_string_pretty(&summary)
        .map_err(|e| CliError(format!("cannot encode summary.json: {e}")))?;
    staging.write("summary.json", (text + "\n").as_bytes())?;
    staging.commit()?;
    println!(
        "predict ({}): N = {}, K = {}, {seconds:.3} s; results in {}",
        saved.algo,
        n,
        k,
        args.out.display()
    );
    Ok(())
}
