//! Principal component analysis: centre the rows, keep the top D' directions of largest
//! variance, and map data to and from that D'-dimensional space.
//!
//! For an `N × D` matrix X with column means m, the centred data X_c = X − 1 mᵀ have the thin
//! SVD X_c = U S Vᵀ. The model keeps m, the first D' right singular vectors as the rows of
//! `components` (D' × D, orthonormal rows, each signed so that its largest-magnitude entry is
//! positive), the singular values s_i and the explained variances s_i² / (N − 1).
//! [`Pca::transform`] gives Y = (X − 1 mᵀ) Vᵀ, [`Pca::inverse_transform`] gives
//! X̂ = Y V + 1 mᵀ, and ‖X − X̂‖²_F = Σ_{i > D'} s_i² (the discarded variance).
//!
//! Three ways to compute it ([`PcaMethod`]):
//! - **Svd**: faer's thin SVD of X_c (exact);
//! - **Gram**: the symmetric eigendecomposition of the N × N Gram matrix G = X_c X_cᵀ = U S² Uᵀ,
//!   then V = S⁻¹ Uᵀ X_c, re-orthonormalised by a thin QR (exact up to rounding; the fast
//!   exact path when N ≪ D, e.g. 100 images of 230 400 values). Directions with a zero singular
//!   value (centred data have rank ≤ N − 1) are completed to an orthonormal set by the QR;
//! - **Randomized**: the range finder of Halko, Martinsson & Tropp (2011, Alg. 4.4): a
//!   Gaussian test matrix Ω (D × l, l = D' + oversampling), Y = X_c Ω, then `power_iters`
//!   rounds of W = X_cᵀ Q, Y = X_c Q_W with a thin QR after every product, then the small
//!   SVD of B = Qᵀ X_c (l × D). Centring is implicit (X_c Ω = X Ω − 1 (mᵀ Ω)), so X is not
//!   copied. Ω comes from the ChaCha8 stream [`crate::restarts::run_rng`]`(seed, 0)`.
//!
//! **Auto** picks Randomized when min(N, D) > 1000 and D' + oversampling ≤ min(N, D) / 4,
//! else Gram when 4 N ≤ D, else Svd. Products run as single-threaded faer GEMMs; the QR, SVD
//! and eigendecomposition use faer's global parallelism.

mod exact;
mod randomized;
#[cfg(test)]
mod tests;

use crate::RowMatrix;
use crate::linalg::mean_row;
use faer::{Accum, MatMut, MatRef, Par};
use thiserror::Error;

/// How the components are computed (see the module doc).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcaMethod {
    /// Randomized for large data with few components, Gram when N ≪ D, else Svd.
    Auto,
    /// Thin SVD of the centred data.
    Svd,
    /// Eigendecomposition of the N × N Gram matrix.
    Gram,
    /// Randomized range finder with power iterations.
    Randomized,
}

impl PcaMethod {
    /// Lower-case name, as written in summaries.
    pub fn name(self) -> &'static str {
        match self {
            PcaMethod::Auto => "auto",
            PcaMethod::Svd => "svd",
            PcaMethod::Gram => "gram",
            PcaMethod::Randomized => "randomized",
        }
    }
}

/// Why PCA could not be fitted. Messages are one line.
#[derive(Debug, Error, PartialEq)]
pub enum PcaError {
    /// Zero components asked for.
    #[error("PCA needs at least 1 component; choose D' ≥ 1")]
    NoComponents,
    /// More components than min(N, D).
    #[error(
        "PCA to {asked} components is impossible for N = {n} rows and D = {d} columns; choose D' ≤ min(N, D) = {max}"
    )]
    TooManyComponents {
        /// D' asked for.
        asked: usize,
        /// Rows.
        n: usize,
        /// Columns.
        d: usize,
        /// min(N, D).
        max: usize,
    },
    /// The data contain NaN or ±Inf.
    #[error("PCA needs finite data; remove or impute NaN and infinite values")]
    NonFinite,
    /// A decomposition did not converge.
    #[error("PCA failed: the {0} did not converge")]
    NoConvergence(&'static str),
}

/// Settings of a PCA fit; build with [`Pca::params`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcaParams {
    n_components: usize,
    method: PcaMethod,
    oversampling: usize,
    power_iters: usize,
    seed: u64,
}

impl PcaParams {
    /// The method (default [`PcaMethod::Auto`]).
    pub fn method(mut self, method: PcaMethod) -> Self {
        self.method = method;
        self
    }
    /// Extra random directions of the randomized path (default 10).
    pub fn oversampling(mut self, p: usize) -> Self {
        self.oversampling = p;
        self
    }
    /// Power iterations of the randomized path (default 4).
    pub fn power_iters(mut self, q: usize) -> Self {
        self.power_iters = q;
        self
    }
    /// Seed of the randomized path's test matrix (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The method Auto resolves to for an `n × d` matrix.
    pub fn resolve(&self, n: usize, d: usize) -> PcaMethod {
        match self.method {
            PcaMethod::Auto => {
                let r = n.min(d);
                if r > 1000 && self.n_components + self.oversampling <= r / 4 {
                    PcaMethod::Randomized
                } else if 4 * n <= d {
                    PcaMethod::Gram
                } else {
                    PcaMethod::Svd
                }
            }
            m => m,
        }
    }

    /// Fits the model to the rows of `x`.
    pub fn fit(&self, x: &RowMatrix) -> Result<Pca, PcaError> {
        let (n, d) = (x.n_rows(), x.n_cols());
        let k = self.n_components;
        if k == 0 {
            return Err(PcaError::NoComponents);
        }
        if k > n.min(d) {
            return Err(PcaError::TooManyComponents {
                asked: k,
                n,
                d,
                max: n.min(d),
            });
        }
        if x.as_slice().iter().any(|v| !v.is_finite()) {
            return Err(PcaError::NonFinite);
        }
        let mean = mean_row(x.view());
        let method = self.resolve(n, d);
        let (components, singular_values) = match method {
            PcaMethod::Svd => exact::by_svd(x, &mean, k)?,
            PcaMethod::Gram => exact::by_gram(x, &mean, k)?,
            _ => randomized::fit(x, &mean, k, self.oversampling, self.power_iters, self.seed)?,
        };
        let mut components = components;
        fix_signs(&mut components);
        let dof = n.saturating_sub(1).max(1) as f64;
        let total: f64 = x
            .rows()
            .map(|r| {
                r.iter()
                    .zip(&mean)
                    .map(|(v, m)| (v - m) * (v - m))
                    .sum::<f64>()
            })
            .sum();
        Ok(Pca {
            explained_variance: singular_values.iter().map(|s| s * s / dof).collect(),
            singular_values,
            total_variance: total / dof,
            mean,
            components,
            method,
        })
    }
}

/// A fitted PCA: mean, components and explained variances.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Debug)]
pub struct Pca {
    mean: Vec<f64>,
    components: RowMatrix,
    singular_values: Vec<f64>,
    explained_variance: Vec<f64>,
    total_variance: f64,
    method: PcaMethod,
}

impl Pca {
    /// Settings for `n_components` components (method Auto, oversampling 10, 4 power
    /// iterations, seed 0).
    pub fn params(n_components: usize) -> PcaParams {
        PcaParams {
            n_components,
            method: PcaMethod::Auto,
            oversampling: 10,
            power_iters: 4,
            seed: 0,
        }
    }

    /// The column means m (length D).
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }
    /// The components V, D' × D with orthonormal rows, largest variance first.
    pub fn components(&self) -> &RowMatrix {
        &self.components
    }
    /// Singular values s_1 ≥ … ≥ s_D' of the centred data.
    pub fn singular_values(&self) -> &[f64] {
        &self.singular_values
    }
    /// Variance along each component, s_i² / (N − 1).
    pub fn explained_variance(&self) -> &[f64] {
        &self.explained_variance
    }
    /// Total variance of the data, ‖X − 1 mᵀ‖²_F / (N − 1).
    pub fn total_variance(&self) -> f64 {
        self.total_variance
    }
    /// Fraction of the total variance the components keep.
    pub fn explained_variance_ratio(&self) -> f64 {
        let kept: f64 = self.explained_variance.iter().sum();
        if self.total_variance > 0.0 {
            kept / self.total_variance
        } else {
            1.0
        }
    }
    /// The method that computed the components (never Auto).
    pub fn method(&self) -> PcaMethod {
        self.method
    }
    /// D'.
    pub fn n_components(&self) -> usize {
        self.components.n_rows()
    }

    /// Y = (X − 1 mᵀ) Vᵀ, one row of D' coordinates per row of `x`.
    ///
    /// # Panics
    /// When `x` does not have D columns.
    pub fn transform(&self, x: &RowMatrix) -> RowMatrix {
        assert_eq!(x.n_cols(), self.mean.len(), "Pca::transform: wrong D");
        let (d, k) = (x.n_cols(), self.n_components());
        let mut y = RowMatrix::zeros(x.n_rows(), k);
        // Centre a block of rows at a time: exact centring without copying all of X.
        const ROWS: usize = 256;
        let mut block = Vec::with_capacity(ROWS.min(x.n_rows()) * d);
        for start in (0..x.n_rows()).step_by(ROWS) {
            let end = (start + ROWS).min(x.n_rows());
            block.clear();
            block.extend_from_slice(x.rows_slice(start, end));
            for row in block.chunks_exact_mut(d) {
                for (v, m) in row.iter_mut().zip(&self.mean) {
                    *v -= m;
                }
            }
            let b = end - start;
            let out =
                MatMut::from_row_major_slice_mut(&mut y.as_mut_slice()[start * k..end * k], b, k);
            gemm(
                out,
                MatRef::from_row_major_slice(&block, b, d),
                self.components.as_faer().transpose(),
            );
        }
        y
    }

    /// Y = X Vᵀ, the rows projected on the components *without* removing the mean (how
    /// [`paper_matrix`](crate::experiments::paper_matrix) prepares the MAD-Bayes photos; the
    /// authors' code projects the centred rows): every row keeps the projection of the mean,
    /// m Vᵀ, which a feature model then learns as a base feature held by all rows.
    /// `transform(x)` plus m Vᵀ on every row.
    ///
    /// # Panics
    /// When `x` does not have D columns.
    pub fn project_uncentred(&self, x: &RowMatrix) -> RowMatrix {
        let mut y = self.transform(x);
        let k = self.n_components();
        let mut mv = vec![0.0; k];
        for (j, c) in self.components.rows().enumerate() {
            mv[j] = c.iter().zip(&self.mean).map(|(a, b)| a * b).sum();
        }
        for r in 0..y.n_rows() {
            for (v, m) in y.row_mut(r).iter_mut().zip(&mv) {
                *v += m;
            }
        }
        y
    }

    /// X̂ = Y V + 1 mᵀ: points of the D'-dimensional space back in the original one.
    ///
    /// # Panics
    /// When `y` does not have D' columns.
    pub fn inverse_transform(&self, y: &RowMatrix) -> RowMatrix {
        let mut x = self.inverse_transform_directions(y);
        for r in 0..x.n_rows() {
            for (v, m) in x.row_mut(r).iter_mut().zip(&self.mean) {
                *v += m;
            }
        }
        x
    }

    /// Y V without the mean: maps directions (differences of points, such as the additive
    /// features A of a latent feature model, X − 1 mᵀ ≈ Z A) back to the original space.
    ///
    /// # Panics
    /// When `y` does not have D' columns.
    pub fn inverse_transform_directions(&self, y: &RowMatrix) -> RowMatrix {
        assert_eq!(
            y.n_cols(),
            self.n_components(),
            "Pca::inverse_transform: wrong D'"
        );
        let mut x = RowMatrix::zeros(y.n_rows(), self.mean.len());
        gemm(as_mut(&mut x), y.as_faer(), self.components.as_faer());
        x
    }
}

/// A mutable faer view of a row-major matrix.
fn as_mut(m: &mut RowMatrix) -> MatMut<'_, f64> {
    let (n, d) = (m.n_rows(), m.n_cols());
    MatMut::from_row_major_slice_mut(m.as_mut_slice(), n, d)
}

/// dst = a · b, one single-threaded GEMM.
fn gemm(dst: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    if dst.nrows() == 0 || dst.ncols() == 0 {
        return;
    }
    faer::linalg::matmul::matmul(dst, Accum::Replace, a, b, 1.0, Par::Seq);
}

/// Flips each row so that its entry of largest magnitude is positive (first one on ties).
fn fix_signs(v: &mut RowMatrix) {
    for r in 0..v.n_rows() {
        let row = v.row_mut(r);
        let mut best = 0;
        for (j, x) in row.iter().enumerate() {
            if x.abs() > row[best].abs() {
                best = j;
            }
        }
        if row.get(best).is_some_and(|&x| x < 0.0) {
            row.iter_mut().for_each(|x| *x = -*x);
        }
    }
}
