//! Block kernels for ZᵀX and its change: by GEMM on a 0.0/1.0 (or −1/0/+1) copy of a block
//! of Z when it is dense, instead of one `axpy` of a D-vector per non-zero entry.
//!
//! A row with m ones costs m·D additions the sparse way and 2·K·D flops by GEMM; GEMM runs
//! many times faster per flop, so it wins once a block holds more than about one entry in
//! eight (`DENSE_FRACTION`). The choice depends on the block's contents only, so results
//! stay the same for any thread count.

use crate::RowMatrix;
use crate::linalg::axpy;
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

/// A block uses GEMM when at least 1/`DENSE_FRACTION` of its Z entries are ones.
const DENSE_FRACTION: usize = 8;

fn dense(ones: usize, rows: usize, k: usize) -> bool {
    k > 0 && DENSE_FRACTION * ones >= rows * k
}

/// `out (K × D) += Z_bᵀ X_b` for a block given as its rows of X (`xb`, row-major) and of Z
/// (`zb`, row-major `b × k` bytes).
pub(crate) fn add_ztx_rows(xb: &[f64], zb: &[u8], k: usize, out: &mut RowMatrix) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { add_ztx_rows_avx2(xb, zb, k, out) };
    }
    add_ztx_rows_body(xb, zb, k, out)
}

/// [`add_ztx_rows`] compiled with AVX2: the same operations (no FMA); the count of ones and
/// the 0.0/1.0 copy 32 bytes at a time, the row additions four lanes wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_ztx_rows_avx2(xb: &[f64], zb: &[u8], k: usize, out: &mut RowMatrix) {
    add_ztx_rows_body(xb, zb, k, out)
}

#[inline(always)]
fn add_ztx_rows_body(xb: &[f64], zb: &[u8], k: usize, out: &mut RowMatrix) {
    let d = out.n_cols();
    if k == 0 || d == 0 {
        return;
    }
    let b = zb.len() / k;
    let ones = zb.iter().filter(|&&v| v != 0).count();
    if dense(ones, b, k) {
        let buf: Vec<f64> = zb.iter().map(|&v| f64::from(v)).collect();
        let zt = MatRef::from_row_major_slice(&buf, b, k).transpose();
        let xm = MatRef::from_row_major_slice(xb, b, d);
        let dst = MatMut::from_row_major_slice_mut(out.as_mut_slice(), k, d);
        matmul(dst, Accum::Add, zt, xm, 1.0, Par::Seq);
        return;
    }
    for (zr, xr) in zb.chunks_exact(k).zip(xb.chunks_exact(d)) {
        for (c, &v) in zr.iter().enumerate() {
            if v != 0 {
                axpy(1.0, xr, out.row_mut(c));
            }
        }
    }
}

/// `out (K × D) += (Z_new − Z_old)_bᵀ X_b` for a block given as its rows of X (`xb`) and its
/// rows of Z before and after a sweep (`old`, `new`, row-major `b × k` bytes): the change of
/// ZᵀX when those entries flipped. Returns how many entries differ. GEMM on a −1/0/+1 copy
/// when at least 1/`DENSE_FRACTION` of the entries differ, else one ± `axpy` per differing
/// entry (rows in order, columns in order). `changed` marks the rows that may differ (a
/// row not marked must be equal in both; the sweep knows them from its flip counts), so the
/// others are passed over without comparing their bytes.
pub(crate) fn add_ztx_change_rows(
    xb: &[f64],
    old: &[u8],
    new: &[u8],
    changed: &[bool],
    k: usize,
    out: &mut RowMatrix,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { add_ztx_change_rows_avx2(xb, old, new, changed, k, out) };
    }
    add_ztx_change_rows_body(xb, old, new, changed, k, out)
}

/// [`add_ztx_change_rows`] compiled with AVX2: the same operations; the differing entries
/// counted 32 bytes at a time instead of two.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_ztx_change_rows_avx2(
    xb: &[f64],
    old: &[u8],
    new: &[u8],
    changed: &[bool],
    k: usize,
    out: &mut RowMatrix,
) -> usize {
    add_ztx_change_rows_body(xb, old, new, changed, k, out)
}

#[inline(always)]
fn add_ztx_change_rows_body(
    xb: &[f64],
    old: &[u8],
    new: &[u8],
    changed: &[bool],
    k: usize,
    out: &mut RowMatrix,
) -> usize {
    let d = out.n_cols();
    if k == 0 || d == 0 {
        return 0;
    }
    let b = old.len() / k;
    let flips = old.iter().zip(new).filter(|(o, n)| o != n).count();
    if flips == 0 {
        return 0;
    }
    if dense(flips, b, k) {
        let buf: Vec<f64> = (old.iter().zip(new))
            .map(|(&o, &n)| f64::from(n) - f64::from(o))
            .collect();
        let zt = MatRef::from_row_major_slice(&buf, b, k).transpose();
        let xm = MatRef::from_row_major_slice(xb, b, d);
        let dst = MatMut::from_row_major_slice_mut(out.as_mut_slice(), k, d);
        matmul(dst, Accum::Add, zt, xm, 1.0, Par::Seq);
        return flips;
    }
    let rows = old.chunks_exact(k).zip(new.chunks_exact(k));
    for (((zo, zn), xr), &maybe) in rows.zip(xb.chunks_exact(d)).zip(changed) {
        debug_assert!(maybe || zo == zn, "a row not marked as changed differs");
        if !maybe {
            continue;
        }
        for (c, (&o, &n)) in zo.iter().zip(zn).enumerate() {
            if o != n {
                let sign = if n != 0 { 1.0 } else { -1.0 };
                axpy(sign, xr, out.row_mut(c));
            }
        }
    }
    flips
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::zmat::BinaryMatrix;

    /// Z with the given density pattern, X and A with irregular values.
    fn problem(n: usize, k: usize, d: usize, every: usize) -> (RowMatrix, BinaryMatrix, RowMatrix) {
        let x = RowMatrix::new(
            n,
            d,
            (0..n * d).map(|i| ((i * 31 % 17) as f64) - 8.0).collect(),
        );
        let a = RowMatrix::new(
            k,
            d,
            (0..k * d).map(|i| ((i * 7 % 11) as f64) / 3.0).collect(),
        );
        let mut z = BinaryMatrix::zeros(n, k);
        for i in 0..n {
            for c in 0..k {
                z.row_mut(i)[c] = u8::from((i * 5 + c * 3) % every == 0);
            }
        }
        (x, z, a)
    }

    /// The forms compiled with AVX2 (where the CPU has it) give the bits of the portable ones,
    /// on dense and on sparse blocks.
    #[test]
    fn dispatched_block_kernels_give_the_bits_of_the_portable_ones() {
        for every in [2, 13] {
            let (x, z, _) = problem(300, 6, 37, every);
            let rows: Vec<u8> = (0..300).flat_map(|i| z.row(i).to_vec()).collect();
            let (mut fast, mut body) = (RowMatrix::zeros(6, 37), RowMatrix::zeros(6, 37));
            add_ztx_rows(x.as_slice(), &rows, 6, &mut fast);
            add_ztx_rows_body(x.as_slice(), &rows, 6, &mut body);
            let bits = |m: &RowMatrix| m.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&body), "every {every}");
            // A change from these rows to rows with one entry in `every` flipped: the GEMM
            // path for every = 2, one axpy per flip for every = 13.
            let flipped: Vec<u8> = (rows.iter().enumerate())
                .map(|(i, &v)| v ^ u8::from(i % every == 0))
                .collect();
            let differ = vec![true; 300];
            let (mut fast, mut body) = (RowMatrix::zeros(6, 37), RowMatrix::zeros(6, 37));
            let n_fast = add_ztx_change_rows(x.as_slice(), &rows, &flipped, &differ, 6, &mut fast);
            let n_body =
                add_ztx_change_rows_body(x.as_slice(), &rows, &flipped, &differ, 6, &mut body);
            assert_eq!(n_fast, n_body, "every {every}");
            assert_eq!(n_fast, 1800_usize.div_ceil(every), "every {every}");
            assert_eq!(bits(&fast), bits(&body), "change, every {every}");
        }
    }

    #[test]
    fn dense_and_sparse_ztx_agree_with_plain_sums() {
        // every = 2: dense (GEMM); every = 13: sparse.
        for every in [2, 13] {
            let (x, z, _) = problem(300, 6, 5, every);
            let mut ztx = RowMatrix::zeros(6, 5);
            let rows: Vec<u8> = (0..300).flat_map(|i| z.row(i).to_vec()).collect();
            add_ztx_rows(x.as_slice(), &rows, 6, &mut ztx);
            let mut want_ztx = RowMatrix::zeros(6, 5);
            for i in 0..300 {
                for c in 0..6 {
                    if z.row(i)[c] != 0 {
                        axpy(1.0, x.row(i), want_ztx.row_mut(c));
                    }
                }
            }
            for (g, w) in ztx.as_slice().iter().zip(want_ztx.as_slice()) {
                assert!((g - w).abs() <= 1e-9 * (1.0 + w.abs()), "every {every}");
            }
        }
    }

    #[test]
    fn changes_of_ztx_are_the_differences_of_the_sums() {
        // Integer X, so every sum is exact whatever its order: the change must equal the
        // difference of the two sums bit for bit, on the GEMM path (every second entry
        // flips) and on the entry-by-entry path (one in 29), and be nothing without flips.
        let (x, old, _) = problem(300, 6, 5, 3);
        let bytes = |z: &BinaryMatrix| -> Vec<u8> { z.rows().flatten().copied().collect() };
        for (flip_every, want_flips) in [(2, 900), (29, 63), (usize::MAX, 0)] {
            let mut new = old.clone();
            let mut flips = 0;
            for i in 0..300 {
                for c in 0..6 {
                    if (i * 6 + c) % flip_every == 0 && flip_every != usize::MAX {
                        new.row_mut(i)[c] ^= 1;
                        flips += 1;
                    }
                }
            }
            assert_eq!(flips, want_flips);
            let mut change = RowMatrix::zeros(6, 5);
            let differ: Vec<bool> = (0..300).map(|i| old.row(i) != new.row(i)).collect();
            let got = add_ztx_change_rows(
                x.as_slice(),
                &bytes(&old),
                &bytes(&new),
                &differ,
                6,
                &mut change,
            );
            assert_eq!(got, flips);
            // Every row marked, changed or not: the same change.
            let mut every = RowMatrix::zeros(6, 5);
            let all = vec![true; 300];
            add_ztx_change_rows(
                x.as_slice(),
                &bytes(&old),
                &bytes(&new),
                &all,
                6,
                &mut every,
            );
            assert_eq!(every.as_slice(), change.as_slice());
            let (mut before, mut after) = (RowMatrix::zeros(6, 5), RowMatrix::zeros(6, 5));
            add_ztx_rows(x.as_slice(), &bytes(&old), 6, &mut before);
            add_ztx_rows(x.as_slice(), &bytes(&new), 6, &mut after);
            let want: Vec<f64> = (after.as_slice().iter().zip(before.as_slice()))
                .map(|(a, b)| a - b)
                .collect();
            assert_eq!(change.as_slice(), &want[..], "one flip in {flip_every}");
        }
    }
}
