//! The picture files of a result, shared by `fit` and `render` so that both write the same
//! bytes: for image inputs `features/…` and `overview.png` (see [`madbayes::plot::pictures`]
//! and [`madbayes::plot::sheet`]), for other inputs `trace.png`: the objective after each
//! iteration of the winning run, or for the IBP methods log p(X, Z) after each sweep or
//! iteration of their one chain or run.

use madbayes::RowMatrix;
use madbayes::io::{read_image, read_matrix};
use madbayes::plot::chart::{Chart, charts_png};
use madbayes::plot::pictures::{EXAMPLES, ImageLayout, Kind, Learned, all_files, example_rows};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The learned means in pixel space and what goes with them.
pub struct PixelResult {
    pub kind: Kind,
    pub layout: ImageLayout,
    /// Cluster means (points) or feature means (directions) in pixel space.
    pub means: RowMatrix,
    /// The PCA mean, added to the base feature's picture (features after `--pca` only).
    pub offset: Option<Vec<f64>>,
    pub z: RowMatrix,
}

/// The `image` object of summary.json: enough to draw the means and find the examples.
pub fn image_json(layout: &ImageLayout, folder: &Path) -> Value {
    let absolute = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
    json!({
        "height": layout.height,
        "width": layout.width,
        "channels": layout.channels,
        "grey": layout.grey,
        "folder": absolute.display().to_string(),
    })
}

/// Reads the example rows ([`example_rows`] of Z) from the image files, in row order of the
/// data; `Err` says why they cannot be drawn.
pub fn read_examples(
    files: &[PathBuf],
    z: &RowMatrix,
    layout: &ImageLayout,
) -> Result<RowMatrix, String> {
    if files.len() != z.n_rows() {
        return Err(format!(
            "the folder now holds {} images, the result has {} rows",
            files.len(),
            z.n_rows()
        ));
    }
    let rows = example_rows(z, EXAMPLES);
    let d = layout.height * layout.width * layout.channels;
    let mut x = RowMatrix::zeros(0, d);
    for i in rows {
        let im = read_image(&files[i]).map_err(|e| e.to_string())?;
        let im = if layout.grey { im.to_grey() } else { im };
        if (im.height, im.width, im.channels) != (layout.height, layout.width, layout.channels) {
            return Err(format!(
                "{} no longer has the size of the fitted images",
                files[i].display()
            ));
        }
        x.push_row(&im.values);
    }
    Ok(x)
}

/// `features/…` and `overview.png` of a result on images.
pub fn image_files(r: &PixelResult, examples: Option<&RowMatrix>) -> Vec<(String, Vec<u8>)> {
    let learned = Learned {
        kind: r.kind,
        layout: r.layout,
        means: &r.means,
        offset: r.offset.as_deref(),
        z: &r.z,
    };
    all_files(&learned, examples)
}

/// Title, x label and y label of `trace.png` for `algo` (a name of `fit --algo`): what its
/// `trace` holds. The samplers record log p(X, Z) (A integrated out) after each sweep of
/// their one chain; MEIBP records the same log joint, at its own σ's, after each iteration
/// (its evidence bound is in summary.json); every other method records its objective after
/// each iteration of the winning restart.
pub fn trace_labels(algo: &str) -> (String, &'static str, &'static str) {
    match algo {
        "ibp-gibbs" | "ibp-semicollapsed" | "ibp-accelerated" => (
            format!("{algo}: LOG P(X, Z) PER SWEEP"),
            "SWEEP",
            "LOG P(X, Z)",
        ),
        "meibp" => (
            format!("{algo}: LOG P(X, Z) PER ITERATION"),
            "ITERATION",
            "LOG P(X, Z)",
        ),
        _ => (
            format!("{algo}: OBJECTIVE PER ITERATION OF THE BEST RUN"),
            "ITERATION",
            "OBJECTIVE",
        ),
    }
}

/// `trace.png`: the trace of a result, labelled by [`trace_labels`].
pub fn trace_png(algo: &str, trace: &[f64]) -> Vec<u8> {
    let (title, x_label, y_label) = trace_labels(algo);
    let chart = Chart {
        title,
        x_label: x_label.into(),
        y_label: y_label.into(),
        x_log: false,
        points: trace
            .iter()
            .enumerate()
            .map(|(i, &v)| ((i + 1) as f64, v))
            .collect(),
        integer: (true, false),
    };
    charts_png(&[chart], 800, 480)
}

/// Whether `algo` (a name of `fit --algo`) learns clusters rather than features.
pub fn is_clustering(algo: &str) -> bool {
    super::algos::ALGOS
        .iter()
        .any(|a| a.name == algo && a.family == super::algos::Family::Clustering)
}

/// Reads a CSV matrix written by `fit`, naming the file on failure.
pub fn read_result_csv(path: &Path) -> Result<RowMatrix, String> {
    read_matrix(path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::trace_labels;
    use crate::cli::fit::Algo;
    use clap::ValueEnum;

    /// Every algorithm of `fit --algo` gets the title of what its trace holds: the IBP
    /// methods never an "objective of the best run" (one chain or run, a log joint to raise).
    #[test]
    fn trace_title_says_what_each_method_records() {
        for algo in Algo::value_variants() {
            let name = algo.name();
            let (title, x, y) = trace_labels(name);
            match algo {
                Algo::IbpGibbs | Algo::IbpSemicollapsed | Algo::IbpAccelerated => {
                    assert_eq!(title, format!("{name}: LOG P(X, Z) PER SWEEP"));
                    assert_eq!((x, y), ("SWEEP", "LOG P(X, Z)"));
                }
                Algo::Meibp => {
                    assert_eq!(title, "meibp: LOG P(X, Z) PER ITERATION");
                    assert_eq!((x, y), ("ITERATION", "LOG P(X, Z)"));
                }
                _ => {
                    assert_eq!(
                        title,
                        format!("{name}: OBJECTIVE PER ITERATION OF THE BEST RUN")
                    );
                    assert_eq!((x, y), ("ITERATION", "OBJECTIVE"));
                }
            }
        }
    }
}
