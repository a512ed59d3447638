//! The randomized path (Halko, Martinsson & Tropp 2011): range finder with oversampling and
//! power iterations, each product followed by a thin QR, then the SVD of a small matrix.

use super::{PcaError, gemm};
use crate::RowMatrix;
use crate::generate::standard_normal;
use crate::restarts::run_rng;
use faer::{Mat, MatRef};

/// Top `k` components and singular values of X − 1 mᵀ, never forming the centred matrix.
pub(super) fn fit(
    x: &RowMatrix,
    mean: &[f64],
    k: usize,
    oversampling: usize,
    power_iters: usize,
    seed: u64,
) -> Result<(RowMatrix, Vec<f64>), PcaError> {
    let (n, d) = (x.n_rows(), x.n_cols());
    let l = (k + oversampling).min(n.min(d));
    let xf = x.as_faer();
    let mut rng = run_rng(seed, 0);
    let omega = Mat::<f64>::from_fn(d, l, |_, _| standard_normal(&mut rng));
    let mean_col = MatRef::from_column_major_slice(mean, d, 1);

    // Y = X_c Ω = X Ω − 1 (mᵀ Ω).
    let mut q = orthonormal_cols(centred_times(xf, mean_col, omega.as_ref()).as_ref());
    for _ in 0..power_iters {
        // W = X_cᵀ Q = Xᵀ Q − m (1ᵀ Q).
        let mut w = Mat::<f64>::zeros(d, l);
        gemm(w.as_mut(), xf.transpose(), q.as_ref());
        for c in 0..l {
            let col_sum: f64 = (0..n).map(|r| q[(r, c)]).sum();
            for j in 0..d {
                w[(j, c)] -= mean[j] * col_sum;
            }
        }
        let qw = orthonormal_cols(w.as_ref());
        q = orthonormal_cols(centred_times(xf, mean_col, qw.as_ref()).as_ref());
    }
    // B = Qᵀ X_c = Qᵀ X − (Qᵀ 1) mᵀ, l × D.
    let mut b = Mat::<f64>::zeros(l, d);
    gemm(b.as_mut(), q.as_ref().transpose(), xf);
    for c in 0..l {
        let col_sum: f64 = (0..n).map(|r| q[(r, c)]).sum();
        for j in 0..d {
            b[(c, j)] -= col_sum * mean[j];
        }
    }
    let svd = b
        .thin_svd()
        .map_err(|_| PcaError::NoConvergence("singular value decomposition"))?;
    let s = svd.S().column_vector();
    let v = svd.V();
    let mut comps = RowMatrix::zeros(k, d);
    for i in 0..k {
        let row = comps.row_mut(i);
        for j in 0..d {
            row[j] = v[(j, i)];
        }
    }
    Ok((comps, (0..k).map(|i| s[i]).collect()))
}

/// X_c · M = X M − 1 (mᵀ M) for an `N × D` row-major X and a `D × l` M.
fn centred_times(x: MatRef<'_, f64>, mean: MatRef<'_, f64>, m: MatRef<'_, f64>) -> Mat<f64> {
    let (n, l) = (x.nrows(), m.ncols());
    let mut y = Mat::<f64>::zeros(n, l);
    gemm(y.as_mut(), x, m);
    let mut shift = Mat::<f64>::zeros(1, l);
    gemm(shift.as_mut(), mean.transpose(), m);
    for c in 0..l {
        for r in 0..n {
            y[(r, c)] -= shift[(0, c)];
        }
    }
    y
}

/// An orthonormal basis of the column space of `a` (the thin Q of its QR).
fn orthonormal_cols(a: MatRef<'_, f64>) -> Mat<f64> {
    a.qr().compute_thin_Q()
}
