//! The exact paths: thin SVD of the centred data, or the eigendecomposition of its Gram matrix.

use super::{PcaError, as_mut, gemm};
use crate::RowMatrix;
use crate::linalg::{axpy, dot, sq_norm};
use faer::{Mat, Side};

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

/// Eigenvalues of G at least this fraction of the largest give rows S⁻¹ Uᵀ X_c that are
/// orthonormal to about ε / 1e-4 ≈ 2e-12 (the rounding of G's eigenvectors, ε λ_max, divided
/// by s_i s_j); rows below it are re-orthogonalised.
const TRUSTED: f64 = 1e-4;

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
    let mut trusted = 0;
    // W (k × N) = S⁻¹ U_kᵀ; rows whose eigenvalue is at the rounding level of G
    // (ε · N · λ_max) would be noise and stay zero, to be completed below.
    let mut w = RowMatrix::zeros(k, n);
    for i in 0..k {
        let col = n - 1 - i;
        let si = lam[col].max(0.0).sqrt();
        s.push(si);
        if lam[col] >= TRUSTED * top && si > 0.0 {
            trusted = i + 1;
        }
        if si > 0.0 && lam[col] > top * f64::EPSILON * n as f64 {
            for m in 0..n {
                w.row_mut(i)[m] = u[(m, col)] / si;
            }
        }
    }
    let mut v = RowMatrix::zeros(k, x.n_cols());
    gemm(as_mut(&mut v), w.as_faer(), xc.as_faer());
    orthonormalise_rows(&mut v, trusted);
    Ok((v, s))
}

/// Makes the rows of `v` orthonormal, in order: rows before `from` are only scaled to unit
/// length (they are orthonormal up to rounding already); every later row is orthogonalised
/// against all earlier rows by two passes of Gram–Schmidt and normalised. A row that
/// (nearly) vanishes is replaced by the first standard basis vector that does not, so the
/// result is always k orthonormal rows (k ≤ D).
pub(super) fn orthonormalise_rows(v: &mut RowMatrix, from: usize) {
    let (k, d) = (v.n_rows(), v.n_cols());
    for i in 0..from.min(k) {
        let norm = sq_norm(v.row(i)).sqrt();
        v.row_mut(i).iter_mut().for_each(|x| *x /= norm);
    }
    let mut basis = 0;
    for i in from.min(k)..k {
        let mut candidate = v.row(i).to_vec();
        // (residual norm, vector) of the best standard basis vector tried so far.
        let mut best: Option<(f64, Vec<f64>)> = None;
        let mut tries = 0;
        loop {
            let before = sq_norm(&candidate).sqrt();
            for _pass in 0..2 {
                for j in 0..i {
                    let c = dot(&candidate, v.row(j));
                    axpy(-c, v.row(j), &mut candidate);
                }
            }
            let after = sq_norm(&candidate).sqrt();
            if before > 0.0 && after > 0.5 * before {
                candidate.iter_mut().for_each(|x| *x /= after);
                break;
            }
            if tries > 0 && best.as_ref().is_none_or(|b| after > b.0) {
                best = Some((after, candidate.clone()));
            }
            if tries == d {
                // Every basis vector tried (only possible when k is close to D): the one
                // with the largest residual (at least √((D − i) / D)) is used.
                let (norm, mut b) = best.take().expect("d ≥ 1 tries");
                b.iter_mut().for_each(|x| *x /= norm);
                candidate = b;
                break;
            }
            // Mostly inside the span of earlier rows: try the next standard basis vector.
            candidate = vec![0.0; d];
            candidate[basis % d] = 1.0;
            basis += 1;
            tries += 1;
        }
        v.row_mut(i).copy_from_slice(&candidate);
    }
}
