//! The exact paths: thin SVD of the centred data, or the eigendecomposition of its Gram matrix.

use super::{PcaError, as_mut, gemm};
use crate::RowMatrix;
use faer::{Mat, MatRef, Side};

/// X − 1 mᵀ as a new matrix.
pub(super) fn centred(x: &RowMatrix, mean: &[f64]) -> RowMatrix {
    let mut xc = x.clone();
    for r in 0..xc.n_rows() {
        for (v, m) in xc.row_mut(r).iter_mut().zip(mean) {
            *v -= m;
        }
    }
    xc
}

/// Top `k` right singular vectors (rows, k × D) and singular values by faer's thin SVD.
pub(super) fn by_svd(
    x: &RowMatrix,
    mean: &[f64],
    k: usize,
) -> Result<(RowMatrix, Vec<f64>), PcaError> {
    let xc = centred(x, mean);
    let svd = xc
        .as_faer()
        .thin_svd()
        .map_err(|_| PcaError::NoConvergence("singular value decomposition"))?;
    let s = svd.S().column_vector();
    let v = svd.V();
    let d = x.n_cols();
    let mut comps = RowMatrix::zeros(k, d);
    for i in 0..k {
        let row = comps.row_mut(i);
        for j in 0..d {
            row[j] = v[(j, i)];
        }
    }
    Ok((comps, (0..k).map(|i| s[i]).collect()))
}

/// Top `k` components from the eigendecomposition of G = X_c X_cᵀ (N × N).
pub(super) fn by_gram(
    x: &RowMatrix,
    mean: &[f64],
    k: usize,
) -> Result<(RowMatrix, Vec<f64>), PcaError> {
    let n = x.n_rows();
    let xc = centred(x, mean);
    let mut g = Mat::<f64>::zeros(n, n);
    gemm(g.as_mut(), xc.as_faer(), xc.as_faer().transpose());
    let evd = g
        .self_adjoint_eigen(Side::Lower)
        .map_err(|_| PcaError::NoConvergence("eigendecomposition"))?;
    // Eigenvalues come in nondecreasing order: the largest are last.
    let lam = evd.S().column_vector();
    let u = evd.U();
    let top = lam[n - 1].max(0.0);
    let mut s = Vec::with_capacity(k);
    // W (k × N) = S⁻¹ U_kᵀ, with rows of negligible singular value left zero.
    let mut w = RowMatrix::zeros(k, n);
    for i in 0..k {
        let col = n - 1 - i;
        let si = lam[col].max(0.0).sqrt();
        s.push(si);
        // At or below the rounding level of G's eigenvalues (ε · N · λ_max) the direction
        // S⁻¹ Uᵀ X_c is noise: leave the row zero and let the QR complete it.
        if si > 0.0 && lam[col] > top * f64::EPSILON * n as f64 {
            for m in 0..n {
                w.row_mut(i)[m] = u[(m, col)] / si;
            }
        }
    }
    let mut v = RowMatrix::zeros(k, x.n_cols());
    gemm(as_mut(&mut v), w.as_faer(), xc.as_faer());
    Ok((orthonormal_rows(v.as_faer()), s))
}

/// Rows spanning the same space as `v`'s rows (in order), orthonormal, each keeping the
/// orientation of the original row: the thin QR of vᵀ, columns of Q signed by diag(R).
/// Zero rows become unit vectors orthogonal to the others.
pub(super) fn orthonormal_rows(v: MatRef<'_, f64>) -> RowMatrix {
    let (k, d) = (v.nrows(), v.ncols());
    let qr = v.transpose().qr();
    let q = qr.compute_thin_Q();
    let r = qr.thin_R();
    let mut out = RowMatrix::zeros(k, d);
    for i in 0..k {
        let sign = if r[(i, i)] < 0.0 { -1.0 } else { 1.0 };
        let row = out.row_mut(i);
        for j in 0..d {
            row[j] = sign * q[(j, i)];
        }
    }
    out
}
