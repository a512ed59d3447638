//! Data preparations of the MAD-Bayes paper's experiments, so that the command line, the
//! tests and the benchmarks run them the same way.

use crate::RowMatrix;
use crate::pca::{Pca, PcaError};

/// A data matrix prepared for the MAD-Bayes experiments ([`paper_matrix`]), with what is
/// needed to map results back to the input's units (pixels, for images).
#[derive(Clone, Debug)]
pub struct PaperMatrix {
    /// N × `dims`: the scaled rows projected on the components, mean not removed.
    pub y: RowMatrix,
    /// The PCA of the scaled rows (its mean and components are in scaled units).
    pub pca: Pca,
    /// The factor s = √(N − 1) the rows were divided by (1 when N < 2).
    pub scale: f64,
}

impl PaperMatrix {
    /// Directions of the prepared space (feature means A) in input units: s · A V.
    pub fn directions_to_input(&self, a: &RowMatrix) -> RowMatrix {
        let mut out = self.pca.inverse_transform_directions(a);
        out.as_mut_slice().iter_mut().for_each(|v| *v *= self.scale);
        out
    }

    /// The part of the input mean the components do not span, in input units:
    /// s · (m − m Vᵀ V). A prepared row y stands for the input row s · y V + this, so it is
    /// what a base feature's picture adds to s · A_base V.
    pub fn mean_outside(&self) -> Vec<f64> {
        let m = self.pca.mean();
        let mrow = RowMatrix::new(1, m.len(), m.to_vec());
        // project_uncentred of the mean itself is m Vᵀ (its centred part is zero).
        let inside = self
            .pca
            .inverse_transform_directions(&self.pca.project_uncentred(&mrow));
        m.iter()
            .zip(inside.row(0))
            .map(|(a, b)| self.scale * (a - b))
            .collect()
    }

    /// Points of the prepared space (cluster means) in input units:
    /// s · c V + [`mean_outside`](Self::mean_outside).
    pub fn points_to_input(&self, c: &RowMatrix) -> RowMatrix {
        let mut out = self.directions_to_input(c);
        let outside = self.mean_outside();
        for r in 0..out.n_rows() {
            for (v, o) in out.row_mut(r).iter_mut().zip(&outside) {
                *v += o;
            }
        }
        out
    }
}

/// Prepares `x` (one data point per row) for the paper's image experiments (the tabletop
/// photos, the faces): rows are divided by s = √(N − 1) and projected on the top `dims`
/// principal components *without* removing the mean, so every row keeps the projected mean,
/// which a feature model learns as a base feature held by all rows. Penalties are in the
/// units of this scaling.
///
/// The authors' code (`run_high_dim_pca.m`) scales the rows the same way but projects the
/// *centred* rows. For the same pixels and the same signs of the components, the two
/// matrices differ by one vector, the projected mean, added to every row. K-means is not
/// changed by that shift, nor is the objective of a Z with a column of ones (its A absorbs
/// the shift), but the optima of a feature model can be: on the tabletop photos at P = 20
/// the best BP-means objective known is 261.2804 here and 261.2449 on the authors' matrix.
pub fn paper_matrix(mut x: RowMatrix, dims: usize) -> Result<PaperMatrix, PcaError> {
    let n = x.n_rows().max(2);
    let scale = ((n - 1) as f64).sqrt();
    let inv = 1.0 / scale;
    x.as_mut_slice().iter_mut().for_each(|v| *v *= inv);
    let pca = Pca::params(dims).fit(&x)?;
    let y = pca.project_uncentred(&x);
    Ok(PaperMatrix { y, pca, scale })
}

/// The tabletop photos as the experiments here prepare them: [`paper_matrix`] of `x`, one
/// photo per row with pixels in [0, 1].
pub fn tabletop_matrix(x: RowMatrix, dims: usize) -> Result<RowMatrix, PcaError> {
    paper_matrix(x, dims).map(|p| p.y)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of a rank-2 set around a mean: mapped back, the prepared rows are the input rows,
    /// and a cluster mean of the prepared space maps to the input mean of its rows.
    #[test]
    fn prepared_rows_map_back_to_the_input() {
        let rows: Vec<[f64; 4]> = (0..7)
            .map(|i| {
                let (a, b) = ((i as f64).sin(), (i as f64 * 0.7).cos());
                [0.5 + a, 0.2 - a + b, 0.9 + 2.0 * b, 0.4 + a - b]
            })
            .collect();
        let x = RowMatrix::from_rows(&rows);
        let p = paper_matrix(x.clone(), 2).unwrap();
        assert_eq!(p.scale, 6f64.sqrt());
        let back = p.points_to_input(&p.y);
        for (u, v) in back.as_slice().iter().zip(x.as_slice()) {
            assert!((u - v).abs() < 1e-10, "{u} vs {v}");
        }
        // A direction maps linearly: the difference of two rows.
        let mut d = RowMatrix::zeros(1, 2);
        for j in 0..2 {
            d.row_mut(0)[j] = p.y.row(1)[j] - p.y.row(0)[j];
        }
        let dx = p.directions_to_input(&d);
        for j in 0..4 {
            assert!((dx.row(0)[j] - (x.row(1)[j] - x.row(0)[j])).abs() < 1e-10);
        }
        assert_eq!(tabletop_matrix(x, 2).unwrap().as_slice(), p.y.as_slice());
    }
}
