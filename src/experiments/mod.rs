//! Data preparations of the MAD-Bayes paper's experiments, so that the command line, the
//! tests and the benchmarks run them the same way.

use crate::RowMatrix;
use crate::pca::{Pca, PcaError};

/// The tabletop photos as the authors' code prepares them (see the tabletop data's README):
/// `x` holds one photo per row with pixels in [0, 1]; rows are scaled by 1/√(N − 1) and
/// projected on the top `dims` principal components *without* removing the mean, so every
/// row keeps the projected mean image, which a feature model learns as a base feature.
pub fn tabletop_matrix(mut x: RowMatrix, dims: usize) -> Result<RowMatrix, PcaError> {
    let n = x.n_rows().max(2);
    let scale = 1.0 / ((n - 1) as f64).sqrt();
    x.as_mut_slice().iter_mut().for_each(|v| *v *= scale);
    let pca = Pca::params(dims).fit(&x)?;
    Ok(pca.project_uncentred(&x))
}
