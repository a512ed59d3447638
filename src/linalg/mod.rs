//! Dense kernels shared by every algorithm family: row norms, `X Aᵀ` by GEMM over row
//! blocks, nearest-row search, and a block reduction whose result does not depend on the
//! number of threads.
//!
//! Kernels run single-threaded GEMM (`Par::Seq`); parallelism comes from splitting rows into
//! fixed blocks on the rayon pool, so restarts and row blocks share the same threads without
//! oversubscription.

mod blocks;
mod nearest;

pub use blocks::{
    BLOCK_ROWS, GEMM_ROWS, for_each_block, ordered_block_reduce, ordered_block_stream,
};
pub use nearest::{Nearest, nearest_rows, nearest_rows_in_block};

use crate::MatrixView;
use crate::RowMatrix;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

/// Dot product of two equal-length slices.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    // Four independent accumulators let the compiler vectorise without reassociating.
    let mut acc = [0.0f64; 4];
    let chunks = a.len() / 4;
    for c in 0..chunks {
        let i = 4 * c;
        acc[0] += a[i] * b[i];
        acc[1] += a[i + 1] * b[i + 1];
        acc[2] += a[i + 2] * b[i + 2];
        acc[3] += a[i + 3] * b[i + 3];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for i in 4 * chunks..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// Squared Euclidean distance ‖a − b‖², computed from the differences (no cancellation).
#[inline]
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0f64; 4];
    let chunks = a.len() / 4;
    for c in 0..chunks {
        let i = 4 * c;
        let d0 = a[i] - b[i];
        let d1 = a[i + 1] - b[i + 1];
        let d2 = a[i + 2] - b[i + 2];
        let d3 = a[i + 3] - b[i + 3];
        acc[0] += d0 * d0;
        acc[1] += d1 * d1;
        acc[2] += d2 * d2;
        acc[3] += d3 * d3;
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for i in 4 * chunks..a.len() {
        let d = a[i] - b[i];
        s += d * d;
    }
    s
}

/// ‖a‖².
#[inline]
pub fn sq_norm(a: &[f64]) -> f64 {
    dot(a, a)
}

/// `y += alpha * x`.
#[inline]
pub fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    debug_assert_eq!(x.len(), y.len());
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// ‖x_n‖² for every row, in parallel (each value is computed alone, so the result is exact
/// and independent of the thread count).
pub fn row_sq_norms(x: MatrixView<'_>) -> Vec<f64> {
    let d = x.n_cols();
    if d == 0 {
        return vec![0.0; x.n_rows()];
    }
    let mut out = vec![0.0; x.n_rows()];
    out.par_chunks_mut(BLOCK_ROWS)
        .zip(x.as_slice().par_chunks(BLOCK_ROWS * d))
        .for_each(|(o, rows)| {
            for (v, r) in o.iter_mut().zip(rows.chunks_exact(d)) {
                *v = sq_norm(r);
            }
        });
    out
}

/// `dst (b × k, row-major) = xb (b × d, row-major) · aᵀ` where `a` is `k × d`: one
/// single-threaded GEMM.
pub fn gemm_xat(dst: &mut [f64], xb: &[f64], b: usize, a: &RowMatrix) {
    let (k, d) = (a.n_rows(), a.n_cols());
    debug_assert_eq!(dst.len(), b * k);
    debug_assert_eq!(xb.len(), b * d);
    if b == 0 || k == 0 {
        return;
    }
    let lhs = MatRef::from_row_major_slice(xb, b, d);
    let rhs = a.as_faer().transpose();
    let out = MatMut::from_row_major_slice_mut(dst, b, k);
    faer::linalg::matmul::matmul(out, Accum::Replace, lhs, rhs, 1.0, Par::Seq);
}

/// The mean of all rows of `x` (zero for no rows).
pub fn mean_row(x: MatrixView<'_>) -> Vec<f64> {
    let d = x.n_cols();
    let mut m = vec![0.0; d];
    // Partial sums per fixed block, added in block order: parallel, same bits for any pool.
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| {
            let mut part = vec![0.0; d];
            for n in s..e {
                axpy(1.0, x.row(n), &mut part);
            }
            part
        },
        |part| axpy(1.0, &part, &mut m),
    );
    if x.n_rows() > 0 {
        let inv = 1.0 / x.n_rows() as f64;
        m.iter_mut().for_each(|v| *v *= inv);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_matches_naive_products() {
        let x = RowMatrix::from_rows(&[[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]);
        let a = RowMatrix::from_rows(&[[0.0, 1.0, 0.0], [2.0, 2.0, 2.0], [1.0, -1.0, 0.5]]);
        let mut out = vec![f64::NAN; 6];
        gemm_xat(&mut out, x.as_slice(), 2, &a);
        for i in 0..2 {
            for k in 0..3 {
                assert!((out[i * 3 + k] - dot(x.row(i), a.row(k))).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn small_kernels() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [5.0, 4.0, 3.0, 2.0, 1.0];
        assert_eq!(dot(&a, &b), 35.0);
        assert_eq!(sq_dist(&a, &b), 40.0);
        assert_eq!(sq_norm(&a), 55.0);
        let mut y = b;
        axpy(2.0, &a, &mut y);
        assert_eq!(y, [7.0, 8.0, 9.0, 10.0, 11.0]);
        let x = RowMatrix::from_rows(&[[3.0, 4.0], [1.0, 1.0]]);
        assert_eq!(row_sq_norms(x.view()), vec![25.0, 2.0]);
    }
}
