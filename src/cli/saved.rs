//! `model.json`: the fitted model a `fit` leaves in its result folder, so that
//! `madbayes predict` can apply it to new rows later. It holds the model itself (serde), the
//! PCA of `--pca` when one was fitted, and what the input looked like (an image layout must
//! match), under a format name and version that `predict` checks before trusting anything.

use super::CliError;
use madbayes::clustering::{Clustering, MahalanobisClustering};
use madbayes::features::FeatureModel;
use madbayes::ibp::{IbpFit, MeibpFit};
use madbayes::pca::Pca;
use madbayes::plot::pictures::ImageLayout;
use madbayes::{Model, RowMatrix};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The format name written into every model file.
pub const FORMAT: &str = "madbayes-model";
/// The version of the file's layout; `predict` refuses any other.
pub const FORMAT_VERSION: u32 = 1;
/// The file's name inside a result folder.
pub const FILE_NAME: &str = "model.json";

/// A fitted model of any family.
#[derive(Serialize, Deserialize)]
#[serde(tag = "family", content = "fit", rename_all = "snake_case")]
pub enum AnyModel {
    /// K-means, DP-means, collapsed DP-means.
    Clustering(Clustering),
    /// Mahalanobis clustering.
    Mahalanobis(MahalanobisClustering),
    /// BP-means, collapsed BP-means, K-features, stepwise K-features.
    Features(FeatureModel),
    /// The IBP samplers.
    Ibp(IbpFit),
    /// MEIBP.
    Meibp(MeibpFit),
}

impl AnyModel {
    /// The model behind the contract every family keeps.
    pub fn as_model(&self) -> &dyn Model {
        match self {
            AnyModel::Clustering(m) => m,
            AnyModel::Mahalanobis(m) => m,
            AnyModel::Features(m) => m,
            AnyModel::Ibp(m) => m,
            AnyModel::Meibp(m) => m,
        }
    }

    /// The label of each row of `x` for a clustering (the nearest cluster by the model's own
    /// distance), `None` for the feature models.
    pub fn labels(&self, x: &RowMatrix) -> Option<Result<Vec<usize>, madbayes::FitError>> {
        match self {
            AnyModel::Clustering(m) => Some(m.predict(x.view())),
            AnyModel::Mahalanobis(m) => Some(m.predict(x.view())),
            _ => None,
        }
    }
}

/// The image layout of an image-folder input, as saved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedLayout {
    pub height: usize,
    pub width: usize,
    pub channels: usize,
    pub grey: bool,
}

impl From<ImageLayout> for SavedLayout {
    fn from(l: ImageLayout) -> Self {
        Self {
            height: l.height,
            width: l.width,
            channels: l.channels,
            grey: l.grey,
        }
    }
}

/// What `predict` reads of `model.json` (written by `fit`, which also writes `format`,
/// `format_version` and `written_by`; the first two are checked before this is read).
#[derive(Deserialize)]
pub struct ModelFile {
    /// The algorithm's command-line name.
    pub algo: String,
    /// The number of columns of the input rows (before `--pca`).
    pub input_columns: usize,
    /// The image layout, for a model fitted on a folder of images.
    pub image: Option<SavedLayout>,
    /// The PCA applied to the input rows before fitting (`--pca`).
    pub pca: Option<Pca>,
    pub model: AnyModel,
}

impl ModelFile {
    /// Reads a model from a result folder (its `model.json`) or from the file itself.
    pub fn read(path: &Path) -> Result<(Self, PathBuf), CliError> {
        let file = if path.is_dir() {
            path.join(FILE_NAME)
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file).map_err(|e| {
            CliError(format!(
                "cannot read the model {}: {e}; give a result folder written by `madbayes fit` or its {FILE_NAME}",
                file.display()
            ))
        })?;
        let not_ours = || {
            CliError(format!(
                "{} is not a madbayes model file; give a result folder written by `madbayes fit` or its {FILE_NAME}",
                file.display()
            ))
        };
        let header: serde_json::Value = serde_json::from_str(&text).map_err(|_| not_ours())?;
        if header.get("format").and_then(|v| v.as_str()) != Some(FORMAT) {
            return Err(not_ours());
        }
        let version = header.get("format_version").and_then(|v| v.as_u64());
        if version != Some(u64::from(FORMAT_VERSION)) {
            return Err(CliError(format!(
                "{} has model format version {}, this madbayes reads version {FORMAT_VERSION}; fit the model again with this version",
                file.display(),
                version.map_or("(none)".to_string(), |v| v.to_string())
            )));
        }
        let model: ModelFile = serde_json::from_value(header).map_err(|e| {
            CliError(format!(
                "{} is damaged ({e}); fit the model again",
                file.display()
            ))
        })?;
        model.check().map_err(|e| {
            CliError(format!(
                "{} is damaged ({e}); fit the model again",
                file.display()
            ))
        })?;
        Ok((model, file))
    }

    /// The consistency a model file must have before it is trusted.
    fn check(&self) -> Result<(), String> {
        let m = self.model.as_model();
        let d = match &self.pca {
            Some(p) => {
                if p.mean().len() != self.input_columns
                    || p.components().n_cols() != self.input_columns
                {
                    return Err("its PCA does not match the input's width".into());
                }
                p.n_components()
            }
            None => self.input_columns,
        };
        if m.n_cols() != d {
            return Err(format!(
                "its means have {} columns where {d} are expected",
                m.n_cols()
            ));
        }
        if let Some(l) = &self.image {
            let pixels = l
                .height
                .checked_mul(l.width)
                .and_then(|v| v.checked_mul(l.channels));
            if pixels != Some(self.input_columns) {
                return Err("its image size does not match the input's width".into());
            }
        }
        let labels = match &self.model {
            AnyModel::Clustering(c) => c.labels(),
            AnyModel::Mahalanobis(c) => c.labels(),
            _ => &[],
        };
        if labels.iter().any(|&l| l >= m.k()) {
            return Err("a training label is not below K".into());
        }
        Ok(())
    }
}
