//! `madbayes render DIR`: redraws the pictures of a result folder written by `fit`.
//!
//! For a result on images it reads summary.json (the `image` layout, the algorithm, whether
//! `--pca` was used), z.csv, the means in pixel space (means_original.csv after `--pca`,
//! else means.csv) and, for features after `--pca`, pca_mean.npy; the example images are
//! read again from the folder recorded in summary.json (`image.folder`, else `input`). When
//! they are gone the sheet is drawn without examples and a note says so on stderr. For other
//! results it redraws `trace.png` from the summary's `trace`. The same inputs give the same
//! bytes as `fit` wrote.

use super::CliError;
use super::output::Staging;
use super::pictures::{
    PixelResult, image_files, is_clustering, read_examples, read_result_csv, trace_png,
};
use madbayes::io::{list_images, read_npy};
use madbayes::plot::pictures::{ImageLayout, Kind};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Options of `madbayes render`.
#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// A result folder written by `madbayes fit`.
    pub dir: PathBuf,
}

pub fn run(args: RenderArgs) -> Result<(), CliError> {
    let dir = &args.dir;
    let summary_path = dir.join("summary.json");
    let text = std::fs::read_to_string(&summary_path).map_err(|e| {
        CliError(format!(
            "{}: cannot read it ({e}); give a folder written by madbayes fit",
            summary_path.display()
        ))
    })?;
    let summary: Value = serde_json::from_str(&text).map_err(|e| {
        CliError(format!(
            "{}: not valid JSON ({e}); give a folder written by madbayes fit",
            summary_path.display()
        ))
    })?;
    let algo = summary["algo"].as_str().ok_or_else(|| {
        CliError(format!(
            "{}: no \"algo\"; give a folder written by madbayes fit",
            summary_path.display()
        ))
    })?;
    let files = match layout_of(&summary) {
        Some(layout) => {
            let result = pixel_result(dir, &summary, algo, layout)?;
            let examples = match image_folder(&summary) {
                None => Err("the summary records no input folder".to_string()),
                Some(folder) => list_images(&folder)
                    .map_err(|e| e.to_string())
                    .and_then(|files| read_examples(&files, &result.z, &layout)),
            };
            if let Err(why) = &examples {
                eprintln!("madbayes: note: overview drawn without examples: {why}");
            }
            image_files(&result, examples.as_ref().ok())
        }
        None => {
            let trace: Vec<f64> = summary["trace"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            vec![("trace.png".to_string(), trace_png(algo, &trace))]
        }
    };
    let mut staging = Staging::update(dir)?;
    for (name, bytes) in &files {
        staging.write(name, bytes)?;
    }
    staging.replace_pictures_in("features");
    staging.commit()?;
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    println!(
        "redrew {} file(s) in {}: {}",
        files.len(),
        dir.display(),
        names.join(", ")
    );
    Ok(())
}

/// The `image` object of summary.json, when the result is on images.
fn layout_of(summary: &Value) -> Option<ImageLayout> {
    let im = summary.get("image")?;
    let get = |k: &str| im[k].as_u64().map(|v| v as usize);
    Some(ImageLayout {
        height: get("height")?,
        width: get("width")?,
        channels: get("channels")?,
        grey: im["grey"].as_bool().unwrap_or(false),
    })
}

/// Where the input images were: the recorded absolute folder if it still exists, else the
/// input path as given.
fn image_folder(summary: &Value) -> Option<PathBuf> {
    let abs = summary["image"]["folder"].as_str().map(PathBuf::from);
    let given = summary["input"].as_str().map(PathBuf::from);
    abs.filter(|p| p.is_dir()).or(given)
}

fn pixel_result(
    dir: &Path,
    summary: &Value,
    algo: &str,
    layout: ImageLayout,
) -> Result<PixelResult, CliError> {
    let pca = summary.get("pca").is_some_and(|p| !p.is_null());
    let means_file = if pca {
        "means_original.csv"
    } else {
        "means.csv"
    };
    let means = read_result_csv(&dir.join(means_file)).map_err(CliError)?;
    let z = read_result_csv(&dir.join("z.csv")).map_err(CliError)?;
    let kind = if is_clustering(algo) {
        Kind::Clusters
    } else {
        Kind::Features
    };
    let offset = if pca && kind == Kind::Features {
        let m = read_npy(&dir.join("pca_mean.npy"))?;
        Some(m.into_vec())
    } else {
        None
    };
    let d = layout.height * layout.width * layout.channels;
    if means.n_cols() != d || z.n_cols() != means.n_rows() {
        return Err(CliError(format!(
            "{}: {} × {} means and {} columns of z.csv do not fit {}×{}×{} images; the folder is not one fit result",
            dir.display(),
            means.n_rows(),
            means.n_cols(),
            z.n_cols(),
            layout.width,
            layout.height,
            layout.channels
        )));
    }
    Ok(PixelResult {
        kind,
        layout,
        means,
        offset,
        z,
    })
}
