//! Dense kernels shared by every algorithm family: row norms, `X Aᵀ` by GEMM over row
//! blocks, nearest-row search, and a block reduction whose result does not depend on the
//! number of threads.
//!
//! Kernels run single-threaded GEMM (`Par::Seq`); parallelism comes from splitting rows into
//! fixed blocks on the rayon pool, so restarts and row blocks share the same threads without
//! oversubscription.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod blocks;
mod mean_blocks;
mod nearest;
mod screen;
#[cfg(target_arch = "x86_64")]
mod sse2;

pub use blocks::{
    BLOCK_ROWS, GEMM_ROWS, for_each_block, ordered_block_reduce, ordered_block_stream,
};
pub use mean_blocks::MeanBlocks;
pub use nearest::{Nearest, nearest_rows, nearest_rows_in_block};
pub use screen::{
    SCREEN_CENTRES, SCREEN_ROWS, ScreenRow, Screened, direct_nearest, screened_nearest,
    screened_nearest_with,
};

use crate::MatrixView;
use crate::RowMatrix;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

/// Dot product of two equal-length slices: four running sums over the entries 4q + l, each
/// added in index order, then (s₀ + s₁) + (s₂ + s₃) and the last len mod 4 products in
/// order. The four-at-a-time kernels ([`dots_to`]) give the same bits.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    return sse2::dot(a, b);
    #[cfg(not(target_arch = "x86_64"))]
    dot_portable(a, b)
}

/// [`dot`] as plain Rust: the form off x86-64, and the tests' reference.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn dot_portable(a: &[f64], b: &[f64]) -> f64 {
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

/// Squared Euclidean distance ‖a − b‖², computed from the differences (no cancellation),
/// summed as [`dot`] sums its products. The four-at-a-time kernels ([`sq_dist4`],
/// [`sq_dists_to`], [`sq_dists_rows`]) give the same bits.
#[inline]
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    return sse2::sq_dist(a, b);
    #[cfg(not(target_arch = "x86_64"))]
    sq_dist_portable(a, b)
}

/// [`sq_dist`] as plain Rust: the form off x86-64, and the tests' reference.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn sq_dist_portable(a: &[f64], b: &[f64]) -> f64 {
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

/// Asks the CPU to start loading `data` into its caches (a hint with no effect on any
/// result): for rows visited in a random order, where each row would otherwise wait for
/// memory. No-op off x86-64.
#[inline]
pub fn prefetch(data: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // One hint per 64-byte line (8 values).
        for line in data.chunks(8) {
            // SAFETY: prefetching is a hint; it never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast::<i8>()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// How many rows ahead of the one being read a pass that reads the rows of X in order (the
/// bounded passes of K-means and DP-means, which measure each row's distance to its own
/// mean) asks for the next rows with [`prefetch`]. The hardware's own prefetch left those
/// loads waiting on memory on the machines measured: one `--plain` DP-means run on 200 000 ×
/// 50 blobs at P = 150 (108 sweeps) took 3.31–3.44 s without, 2.78–2.86 s at 8 rows ahead,
/// 2.73–2.83 s at 16 and 2.83–2.88 s at 32, with the same bits; a K-means Lloyd iteration
/// on 200 000 × 50 at K = 100 took 19.1 ms against 23.0 ms on one thread (docs/speed.md §1
/// and §4).
pub const ROWS_AHEAD: usize = 16;

/// [`prefetch`] for the cache line that holds `value`.
#[inline]
pub fn prefetch_one<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: prefetching is a hint; it never faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// x_i · c for the rows x_i of `x` (row-major, `c.len()` columns) into `out`, one per row:
/// row by row the operations and their order of [`dot`] (`dot(x_i, c)`), so the same bits,
/// four rows at a time (see [`sq_dists_to`]).
pub fn dots_to(x: &[f64], c: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { avx512::dots_to(x, c, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { avx2::dots_to(x, c, out) };
        }
    }
    dots_to_body(x, c, out);
}

/// Estimates of x_i · c for the rows x_i of `x` (row-major, `c.len()` columns) into `out`,
/// for screens whose decisions are confirmed exactly wherever an estimate could be wrong.
/// Where the CPU has AVX-512F, eight rows at a time by fused multiply-adds (one operation
/// per product and sum where [`dots_to`] takes two, and [`sq_dists_to`] three); otherwise
/// [`dots_to`]. The products are summed in some order, so each estimate is within
/// (D + 1)·ε/2·Σ_j |x_ij c_j| of the exact value (D = `c.len()`, ε = `f64::EPSILON`, short
/// of underflow), but its bits are not [`dot`]'s and differ between CPUs: no result may
/// depend on them beyond what that bound allows.
pub fn dots_to_estimate(x: &[f64], c: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        return unsafe { avx512::dots_to_fused(x, c, out) };
    }
    dots_to(x, c, out);
}

#[inline(always)]
fn dots_to_body(x: &[f64], c: &[f64], out: &mut [f64]) {
    let d = c.len();
    let n = out.len();
    debug_assert_eq!(x.len(), n * d);
    let chunks = d / 4;
    let mut i = 0;
    while i + 4 <= n {
        let rows = &x[i * d..(i + 4) * d];
        let (r0, rest) = rows.split_at(d);
        let (r1, rest) = rest.split_at(d);
        let (r2, r3) = rest.split_at(d);
        let mut acc = [[0.0f64; 4]; 4];
        for q in 0..chunks {
            let j = 4 * q;
            let cj = &c[j..j + 4];
            for (t, r) in [r0, r1, r2, r3].into_iter().enumerate() {
                let rj = &r[j..j + 4];
                acc[t][0] += rj[0] * cj[0];
                acc[t][1] += rj[1] * cj[1];
                acc[t][2] += rj[2] * cj[2];
                acc[t][3] += rj[3] * cj[3];
            }
        }
        for (t, r) in [r0, r1, r2, r3].into_iter().enumerate() {
            let a = &acc[t];
            let mut s = (a[0] + a[1]) + (a[2] + a[3]);
            for j in 4 * chunks..d {
                s += r[j] * c[j];
            }
            out[i + t] = s;
        }
        i += 4;
    }
    for ii in i..n {
        out[ii] = dot(&x[ii * d..(ii + 1) * d], c);
    }
}

/// ‖x_i − c‖² for the rows x_i of `x` (row-major, `c.len()` columns) into `out`, one per
/// row: row by row the operations and their order of [`sq_dist`], so the same bits, but four
/// rows at a time, so that their independent sums overlap in the pipeline instead of each
/// waiting on its own previous addition (one row alone is bound by the latency of its four
/// running sums).
pub fn sq_dists_to(x: &[f64], c: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { avx512::sq_dists_to(x, c, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { avx2::sq_dists_to(x, c, out) };
        }
    }
    sq_dists_to_body(x, c, out);
}

#[inline(always)]
fn sq_dists_to_body(x: &[f64], c: &[f64], out: &mut [f64]) {
    let d = c.len();
    let n = out.len();
    debug_assert_eq!(x.len(), n * d);
    let mut i = 0;
    while i + 4 <= n {
        let rows = &x[i * d..(i + 4) * d];
        let (r0, rest) = rows.split_at(d);
        let (r1, rest) = rest.split_at(d);
        let (r2, r3) = rest.split_at(d);
        out[i..i + 4].copy_from_slice(&sq_dist4_body([r0, r1, r2, r3], [c; 4]));
        i += 4;
    }
    for ii in i..n {
        out[ii] = sq_dist(&x[ii * d..(ii + 1) * d], c);
    }
}

/// ‖x_r − c‖² for the chosen rows r = `rows[t]` of `x` (row-major, `c.len()` columns) into
/// `out[t]`: the bits of [`sq_dist`], eight rows at a time where the CPU has AVX-512F,
/// then four at a time ([`sq_dist4`]).
pub fn sq_dists_at(x: &[f64], rows: &[usize], c: &[f64], out: &mut [f64]) {
    assert_eq!(rows.len(), out.len());
    let d = c.len();
    let row = |r: usize| &x[r * d..(r + 1) * d];
    #[allow(unused_mut)]
    let mut t = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        t = unsafe { avx512::sq_dists_at(x, rows, c, out) };
    }
    while t + 4 <= rows.len() {
        let four = std::array::from_fn(|u| row(rows[t + u]));
        out[t..t + 4].copy_from_slice(&sq_dist4(four, [c; 4]));
        t += 4;
    }
    for u in t..rows.len() {
        out[u] = sq_dist(row(rows[u]), c);
    }
}

/// ‖x_i − y_i‖² for the rows x_i of `x` and y_i of `y` (row-major, `d` columns, as many rows
/// as `out` has entries) into `out`: row by row the operations and their order of
/// [`sq_dist`], so the same bits, four rows at a time as in [`sq_dists_to`].
pub fn sq_dists_rows(x: &[f64], y: &[f64], d: usize, out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { avx512::sq_dists_rows(x, y, d, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { avx2::sq_dists_rows(x, y, d, out) };
        }
    }
    sq_dists_rows_body(x, y, d, out);
}

#[inline(always)]
fn sq_dists_rows_body(x: &[f64], y: &[f64], d: usize, out: &mut [f64]) {
    let n = out.len();
    assert!(x.len() == n * d && y.len() == n * d);
    let mut i = 0;
    while i + 4 <= n {
        let xs: [&[f64]; 4] = std::array::from_fn(|t| &x[(i + t) * d..(i + t + 1) * d]);
        let ys: [&[f64]; 4] = std::array::from_fn(|t| &y[(i + t) * d..(i + t + 1) * d]);
        out[i..i + 4].copy_from_slice(&sq_dist4_body(xs, ys));
        i += 4;
    }
    for ii in i..n {
        out[ii] = sq_dist(&x[ii * d..(ii + 1) * d], &y[ii * d..(ii + 1) * d]);
    }
}

/// ‖a_t − b_t‖² for four pairs of equal-length slices at once: each pair by the operations
/// and their order of [`sq_dist`], so the same bits, but the four sums overlap in the
/// pipeline instead of each waiting on its own previous addition.
pub fn sq_dist4(a: [&[f64]; 4], b: [&[f64]; 4]) -> [f64; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { avx512::sq_dist4(a, b) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { avx2::sq_dist4(a, b) };
        }
    }
    sq_dist4_body(a, b)
}

/// ‖x − m_t‖² for one row and eight slices of its length: each by the operations and
/// their order of [`sq_dist`] (`sq_dist(x, m_t)`), so the same bits; eight sums overlap in
/// the pipeline where the CPU has AVX-512F, else two calls of [`sq_dist4`].
pub fn sq_dists_from(x: &[f64], m: [&[f64]; 8]) -> [f64; 8] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        return unsafe { avx512::sq_dists_from(x, m) };
    }
    let lo = sq_dist4([x; 4], [m[0], m[1], m[2], m[3]]);
    let hi = sq_dist4([x; 4], [m[4], m[5], m[6], m[7]]);
    std::array::from_fn(|t| if t < 4 { lo[t] } else { hi[t - 4] })
}

#[inline(always)]
fn sq_dist4_body(a: [&[f64]; 4], b: [&[f64]; 4]) -> [f64; 4] {
    let d = a[0].len();
    debug_assert!(a.iter().chain(&b).all(|v| v.len() == d));
    let chunks = d / 4;
    let mut acc = [[0.0f64; 4]; 4];
    for q in 0..chunks {
        let j = 4 * q;
        for t in 0..4 {
            let (aj, bj) = (&a[t][j..j + 4], &b[t][j..j + 4]);
            let d0 = aj[0] - bj[0];
            let d1 = aj[1] - bj[1];
            let d2 = aj[2] - bj[2];
            let d3 = aj[3] - bj[3];
            acc[t][0] += d0 * d0;
            acc[t][1] += d1 * d1;
            acc[t][2] += d2 * d2;
            acc[t][3] += d3 * d3;
        }
    }
    let mut out = [0.0; 4];
    for t in 0..4 {
        let s4 = &acc[t];
        let mut s = (s4[0] + s4[1]) + (s4[2] + s4[3]);
        for j in 4 * chunks..d {
            let e = a[t][j] - b[t][j];
            s += e * e;
        }
        out[t] = s;
    }
    out
}

/// ‖a‖².
#[inline]
pub fn sq_norm(a: &[f64]) -> f64 {
    dot(a, a)
}

/// `y += alpha * x`, entry by entry (a product, then a sum: no FMA, so the same bits however
/// wide the vectors). From eight entries on, where the CPU has AVX2, four entries at a time
/// instead of the baseline's two; from 64 on, with AVX-512F, eight.
#[inline]
pub fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    debug_assert_eq!(x.len(), y.len());
    #[cfg(target_arch = "x86_64")]
    if x.len() >= 8 {
        if x.len() >= 64 && std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { avx512::axpy(alpha, x, y) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { axpy_avx2(alpha, x, y) };
        }
    }
    axpy_body(alpha, x, y);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn axpy_avx2(alpha: f64, x: &[f64], y: &mut [f64]) {
    axpy_body(alpha, x, y);
}

#[inline(always)]
fn axpy_body(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// The sum of the rows `rows` of `x` (`d` values a row, row-major): each entry from 0.0,
/// the rows added in the order given, so the bits of adding them one at a time into zeros.
/// Where the CPU has AVX-512F, 64 columns at a time are summed in registers over all the
/// rows before the next 64, instead of reading and writing the sum for every row.
pub fn sum_rows(x: &[f64], d: usize, rows: &[usize]) -> Vec<f64> {
    debug_assert!(rows.iter().all(|&r| (r + 1) * d <= x.len()));
    #[cfg(target_arch = "x86_64")]
    if d >= 8 && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        return unsafe { avx512::sum_rows(x, d, rows) };
    }
    sum_rows_body(x, d, rows)
}

#[inline(always)]
fn sum_rows_body(x: &[f64], d: usize, rows: &[usize]) -> Vec<f64> {
    let mut sum = vec![0.0; d];
    for &r in rows {
        for (s, v) in sum.iter_mut().zip(&x[r * d..(r + 1) * d]) {
            *s += v;
        }
    }
    sum
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

/// X's entries column by column (`D × N`, row-major: column j's N values from j·N): the
/// copy [`xat_columns`] reads.
pub fn columns_of(x: MatrixView<'_>) -> Vec<f64> {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut xt = vec![0.0; n * d];
    for (i, row) in x.rows().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            xt[j * n + i] = v;
        }
    }
    xt
}

/// Rows `s..e` of X Aᵀ (`(e − s) × K`, row-major, into `dst`) from X's column-major copy
/// `xt` ([`columns_of`], N rows): each entry x_n·a_k one chain of fused multiply-adds over
/// the columns in order from zero, the order faer's kernels sum these products in at the
/// shapes of small feature fits (so [`gemm_xat`]'s bits there; `tests::xat_columns_are_the_ordered_chains`).
/// Without AVX-512F it is [`gemm_xat`] on the rows gathered back from the columns (the same
/// values, at the cost of the gather): fits keep no copy there ([`columns_pay`]).
pub fn xat_columns(dst: &mut [f64], xt: &[f64], n: usize, s: usize, e: usize, a: &RowMatrix) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        return unsafe { avx512::xat_columns(dst, xt, n, s, e, a.as_slice(), a.n_rows()) };
    }
    let d = a.n_cols();
    let xb: Vec<f64> = (s..e)
        .flat_map(|i| (0..d).map(move |j| xt[j * n + i]))
        .collect();
    gemm_xat(dst, &xb, e - s, a)
}

/// Whether a fit gains by keeping X column by column for [`xat_block`]: only where
/// [`xat_columns`] has its AVX-512F form (without it, it is faer's product after a gather).
pub fn columns_pay() -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        return true;
    }
    false
}

/// Features up to which [`xat_columns`] forms X Aᵀ faster than faer: two panels of eight
/// rows against K broadcast means make 2K FMAs per column, and from K = 7 on that is slower
/// than faer's K lanes (100 × 100 rows on AMD EPYC family 26: 1.03–1.11 µs at K = 2–4,
/// 1.31 and 1.43 µs at K = 5 and 6, against faer's 1.51–1.60 µs; 1.58 against 1.51 µs at
/// K = 7).
pub const COLUMNS_MAX_K: usize = 6;

/// Rows `s..e` of X Aᵀ into `dst`: by [`xat_columns`] from X's columns where a run has them,
/// the block holds at least 64 rows and 2 ≤ K ≤ [`COLUMNS_MAX_K`], the shapes at which
/// faer's kernels sum each product in one chain from the first column, so the bits are
/// [`gemm_xat`]'s (`tests::xat_columns_are_the_ordered_chains`); else by [`gemm_xat`].
pub fn xat_block(
    dst: &mut [f64],
    x: MatrixView<'_>,
    x_cols: Option<&[f64]>,
    s: usize,
    e: usize,
    a: &RowMatrix,
) {
    match x_cols {
        Some(xt) if e - s >= 64 && (2..=COLUMNS_MAX_K).contains(&a.n_rows()) => {
            xat_columns(dst, xt, x.n_rows(), s, e, a)
        }
        _ => gemm_xat(dst, x.rows_slice(s, e), e - s, a),
    }
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

    /// Estimates of dot products: exact on small integers (every order sums them exactly),
    /// so each row and column is where it belongs, and within the documented bound on
    /// fractions; for row counts and widths on both sides of the eight-wide groups.
    #[test]
    fn dot_estimates_are_exact_on_integers_and_within_the_bound() {
        for n in [0, 1, 7, 8, 9, 17, 100] {
            for d in [1, 3, 8, 9, 31, 100] {
                let ints: Vec<f64> = (0..n * d).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
                let c: Vec<f64> = (0..d).map(|j| ((j * 5) % 11) as f64 - 5.0).collect();
                let mut got = vec![f64::NAN; n];
                dots_to_estimate(&ints, &c, &mut got);
                for i in 0..n {
                    let row = &ints[i * d..(i + 1) * d];
                    let want: f64 = row.iter().zip(&c).map(|(a, b)| a * b).sum();
                    assert_eq!(got[i], want, "integers, n {n}, d {d}, row {i}");
                }
                let fracs: Vec<f64> = ints.iter().map(|v| v / 3.7 + 0.1).collect();
                let cf: Vec<f64> = c.iter().map(|v| v / 1.9 - 0.3).collect();
                dots_to_estimate(&fracs, &cf, &mut got);
                for i in 0..n {
                    let row = &fracs[i * d..(i + 1) * d];
                    let want = dot(row, &cf);
                    let mag: f64 = row.iter().zip(&cf).map(|(a, b)| (a * b).abs()).sum();
                    let bound = (d as f64 + 1.0) * f64::EPSILON * mag;
                    assert!(
                        (got[i] - want).abs() <= bound,
                        "fractions, n {n}, d {d}, row {i}"
                    );
                }
            }
        }
    }

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

    /// [`xat_columns`] forms every entry of X Aᵀ as one chain of fused multiply-adds over the
    /// columns in order from zero, on blocks starting anywhere (rows left over from the
    /// panels of sixteen, features past a group of eight); and at the shapes the BP-means
    /// sweep gives it (blocks of 64 rows and more, 2 ≤ K ≤ 6) those are faer's bits.
    #[test]
    fn xat_columns_are_the_ordered_chains() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        // Without AVX-512F the columns are faer's own product.
        #[cfg(target_arch = "x86_64")]
        let chains = std::arch::is_x86_feature_detected!("avx512f");
        #[cfg(not(target_arch = "x86_64"))]
        let chains = false;
        let mut faers = 0;
        for d in [1, 3, 8, 37, 100, 257] {
            for n in [1, 7, 16, 17, 64, 100, 130] {
                for k in 1..=11 {
                    let x = RowMatrix::new(n, d, (0..n * d).map(|_| next()).collect());
                    let a = RowMatrix::new(k, d, (0..k * d).map(|_| next()).collect());
                    let xt = columns_of(x.view());
                    for (s, e) in [(0, n), (n / 3, n), (0, n / 2)] {
                        let mut got = vec![f64::NAN; (e - s) * k];
                        xat_columns(&mut got, &xt, n, s, e, &a);
                        for i in (s..e).filter(|_| chains) {
                            for f in 0..k {
                                let chain = (x.row(i).iter().zip(a.row(f)))
                                    .fold(0.0f64, |acc, (p, q)| p.mul_add(*q, acc));
                                let at = (i - s) * k + f;
                                assert_eq!(got[at].to_bits(), chain.to_bits(), "{n} {d} {k}");
                            }
                        }
                        if e - s >= 64 && (2..=6).contains(&k) {
                            let mut faer = vec![0.0; (e - s) * k];
                            gemm_xat(&mut faer, x.rows_slice(s, e), e - s, &a);
                            let bits =
                                |v: &[f64]| v.iter().map(|t| t.to_bits()).collect::<Vec<_>>();
                            assert_eq!(bits(&got), bits(&faer), "n {n} d {d} k {k} rows {s}..{e}");
                            faers += 1;
                        }
                    }
                }
            }
        }
        assert!(faers > 100, "{faers}");
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

    /// Row-paired distances: each row's bits are those of `sq_dist` of its pair, and those
    /// of the squared norm of the difference formed first (as the residual kernels did).
    #[test]
    fn paired_rows_give_the_bits_of_sq_dist() {
        for d in (0..13).chain([31, 100]) {
            for n in (0..20).chain([100]) {
                let x: Vec<f64> = (0..n * d)
                    .map(|i| ((i * 37 % 23) as f64).sqrt() - 2.1)
                    .collect();
                let y: Vec<f64> = (0..n * d).map(|i| (i as f64 * 0.7).sin()).collect();
                let mut out = vec![f64::NAN; n];
                sq_dists_rows(&x, &y, d, &mut out);
                let mut body = vec![f64::NAN; n];
                sq_dists_rows_body(&x, &y, d, &mut body);
                assert_eq!(out, body);
                for i in 0..n {
                    let (xi, yi) = (&x[i * d..(i + 1) * d], &y[i * d..(i + 1) * d]);
                    let want = sq_dist(xi, yi);
                    assert_eq!(out[i].to_bits(), want.to_bits(), "d {d} n {n} row {i}");
                    let r: Vec<f64> = xi.iter().zip(yi).map(|(a, b)| a - b).collect();
                    assert_eq!(out[i].to_bits(), sq_norm(&r).to_bits(), "d {d} row {i}");
                }
            }
        }
    }

    #[test]
    fn four_rows_at_a_time_give_the_bits_of_one_at_a_time() {
        for d in (0..13).chain([31, 100]) {
            for n in (0..20).chain([100]) {
                let x: Vec<f64> = (0..n * d)
                    .map(|i| ((i * 37 % 23) as f64).sqrt() - 2.1)
                    .collect();
                let c: Vec<f64> = (0..d).map(|j| (j as f64 * 0.7).sin()).collect();
                // The dispatched kernel (AVX2 where the CPU has it) and the portable body.
                let mut body = vec![f64::NAN; n];
                sq_dists_to_body(&x, &c, &mut body);
                let mut out = vec![f64::NAN; n];
                sq_dists_to(&x, &c, &mut out);
                assert_eq!(out, body);
                dots_to_body(&x, &c, &mut body);
                for i in 0..n {
                    let want = sq_dist(&x[i * d..(i + 1) * d], &c);
                    assert_eq!(out[i].to_bits(), want.to_bits(), "d {d} n {n} row {i}");
                    if d > 0 {
                        let zero = vec![0.0; d];
                        let mut one = [0.0];
                        sq_dists_to(&x[i * d..(i + 1) * d], &zero, &mut one);
                        let norm = sq_norm(&x[i * d..(i + 1) * d]);
                        assert_eq!(one[0].to_bits(), norm.to_bits(), "d {d} row {i}");
                    }
                }
                dots_to(&x, &c, &mut out);
                assert_eq!(out, body);
                for i in 0..n {
                    let want = dot(&x[i * d..(i + 1) * d], &c);
                    assert_eq!(out[i].to_bits(), want.to_bits(), "dot: d {d} n {n} row {i}");
                    if d > 0 {
                        // Operands swapped: the products are the same, so the bits too.
                        let swapped = dot(&c, &x[i * d..(i + 1) * d]);
                        assert_eq!(out[i].to_bits(), swapped.to_bits());
                    }
                }
            }
        }
    }

    /// `dot` and `sq_dist` as built here (SSE2 on x86-64) against the portable loops, bit for
    /// bit, on lengths with and without a remainder and values whose sums round differently
    /// in another order.
    #[test]
    fn dot_and_sq_dist_give_the_bits_of_the_portable_loops() {
        let mut differs = 0;
        for d in (0..40).chain([50, 100, 101]) {
            for seed in 0..4 {
                let a: Vec<f64> = (0..d)
                    .map(|j| (((seed * 13 + j * 37) % 23) as f64).sqrt() * 1.3 - 2.9)
                    .collect();
                let b: Vec<f64> = (0..d)
                    .map(|j| ((j + seed) as f64 * 0.7).sin() * 3.1)
                    .collect();
                assert_eq!(
                    dot(&a, &b).to_bits(),
                    dot_portable(&a, &b).to_bits(),
                    "dot d {d}"
                );
                let (got, want) = (sq_dist(&a, &b), sq_dist_portable(&a, &b));
                assert_eq!(got.to_bits(), want.to_bits(), "sq_dist d {d}");
                // The same terms summed in index order: often other bits, so a kernel that
                // summed so would be seen.
                let serial = a
                    .iter()
                    .zip(&b)
                    .fold(0.0, |s, (x, y)| s + (x - y) * (x - y));
                differs += usize::from(serial.to_bits() != want.to_bits());
            }
        }
        assert!(
            differs > 20,
            "the order of the sums shows in the bits ({differs})"
        );
    }

    /// `axpy` (AVX2 from eight entries, AVX-512F from 64, where the CPU has them) against
    /// the loop entry by entry, bit for bit, with and without a remainder of the vectors.
    #[test]
    fn axpy_gives_the_bits_of_the_loop() {
        for d in (0..20).chain([50, 63, 64, 65, 71, 100, 101, 1000]) {
            let x: Vec<f64> = (0..d)
                .map(|j| ((j * 37 % 23) as f64).sqrt() - 2.1)
                .collect();
            let y0: Vec<f64> = (0..d).map(|j| (j as f64 * 0.7).sin()).collect();
            for alpha in [1.0, -1.0, 0.3] {
                let mut got = y0.clone();
                axpy(alpha, &x, &mut got);
                let want: Vec<u64> = (y0.iter().zip(&x))
                    .map(|(y, v)| (y + alpha * v).to_bits())
                    .collect();
                let got: Vec<u64> = got.iter().map(|v| v.to_bits()).collect();
                assert_eq!(got, want, "d {d} alpha {alpha}");
            }
        }
    }

    /// Rows summed by the dispatch, and by the AVX-512F form called directly where the CPU
    /// has it (for every length, below the dispatch's eight too), have the bits of adding
    /// the rows one at a time: lengths across the 64-column runs and their masked rests, rows
    /// repeated and out of order, values of mixed size so that another order of additions
    /// gives other bits.
    #[test]
    fn rows_summed_in_registers_give_the_bits_of_one_at_a_time() {
        for d in [0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 100, 129, 200] {
            let n = 9;
            let x: Vec<f64> = (0..n * d)
                .map(|i| {
                    let v = ((i * 37 % 23) as f64).sqrt() - 2.2;
                    if i % 5 == 0 { v * 1e16 } else { v }
                })
                .collect();
            let lists: [Vec<usize>; 4] =
                [vec![], vec![4], vec![8, 0, 3, 3, 7, 1], (0..n).collect()];
            for rows in &lists {
                let want: Vec<u64> = sum_rows_body(&x, d, rows)
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                let bits = |v: Vec<f64>| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(sum_rows(&x, d, rows)), want, "d {d}, rows {rows:?}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU supports AVX-512F (checked just above).
                    let direct = unsafe { avx512::sum_rows(&x, d, rows) };
                    assert_eq!(bits(direct), want, "d {d}, rows {rows:?}, AVX-512F");
                }
            }
            if d >= 16 {
                // The order matters for these values: a reordering gives other bits.
                let fwd = sum_rows_body(&x, d, &[0, 5, 1]);
                let back = sum_rows_body(&x, d, &[1, 5, 0]);
                assert!(fwd.iter().zip(&back).any(|(a, b)| a != b), "d {d}");
            }
        }
    }

    #[test]
    fn four_pairs_at_a_time_give_the_bits_of_one_at_a_time() {
        for d in (0..13).chain([31, 100]) {
            let v = |seed: usize| -> Vec<f64> {
                (0..d)
                    .map(|j| (((seed * 13 + j * 37) % 23) as f64).sqrt() * 1.3 - 2.9)
                    .collect()
            };
            let a: Vec<Vec<f64>> = (0..4).map(v).collect();
            let b: Vec<Vec<f64>> = (4..8).map(v).collect();
            let a4 = [&a[0][..], &a[1][..], &a[2][..], &a[3][..]];
            let b4 = [&b[0][..], &b[1][..], &b[2][..], &b[3][..]];
            let got = sq_dist4(a4, b4);
            assert_eq!(got, sq_dist4_body(a4, b4));
            // One row against eight: each the bits of `sq_dist`, in its place.
            let m8: [&[f64]; 8] = std::array::from_fn(|t| if t < 4 { b4[t] } else { a4[t - 4] });
            let from = sq_dists_from(a4[0], m8);
            for t in 0..8 {
                let want = sq_dist(a4[0], m8[t]);
                assert_eq!(from[t].to_bits(), want.to_bits(), "d {d} mean {t}");
            }
            for t in 0..4 {
                let want = sq_dist(&a[t], &b[t]);
                assert_eq!(got[t].to_bits(), want.to_bits(), "d {d} pair {t}");
                // Operands swapped: the differences change sign only, so the same bits.
                assert_eq!(sq_dist(&b[t], &a[t]).to_bits(), want.to_bits());
            }
            if d > 4 {
                assert!(
                    got[0] != got[1],
                    "the pairs differ, so a mixed-up pair is seen"
                );
            }
        }
    }

    /// Each form the CPU can run (AVX2, AVX-512F), called directly rather than through the
    /// dispatch, against the portable bodies, bit for bit: on a CPU with AVX-512F the
    /// dispatch alone would leave the AVX2 forms untried, though the AVX-512F forms hand
    /// them their last rows. Row counts cover the eight-row loop, its four-row rest and the
    /// single rows; lengths cover the four-value chunks and their remainders.
    #[cfg(target_arch = "x86_64")]
    /// Distances to chosen rows, in any order and repeated, have the bits of [`sq_dist`] on
    /// each row, whatever the count (groups of eight, of four, and the rest).
    #[test]
    fn distances_of_chosen_rows_are_the_bits_of_sq_dist() {
        for d in (0..13).chain([31, 50, 100]) {
            let n = 30;
            let x: Vec<f64> = (0..n * d)
                .map(|i| ((i * 37 % 23) as f64).sqrt() - 2.1)
                .collect();
            let c: Vec<f64> = (0..d).map(|j| (j as f64 * 0.3).cos() * 1.7).collect();
            for count in [0, 1, 3, 4, 7, 8, 9, 12, 17, 29] {
                let rows: Vec<usize> = (0..count).map(|t| (t * 11 + 3) % n).collect();
                let mut got = vec![f64::NAN; count];
                sq_dists_at(&x, &rows, &c, &mut got);
                for (t, &r) in rows.iter().enumerate() {
                    let want = sq_dist(&x[r * d..(r + 1) * d], &c);
                    assert_eq!(
                        got[t].to_bits(),
                        want.to_bits(),
                        "d {d} count {count} t {t}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_compiled_form_gives_the_bits_of_the_portable_bodies() {
        type Kernels = (
            fn(&[f64], &[f64], &mut [f64]),
            fn(&[f64], &[f64], usize, &mut [f64]),
            fn(&[f64], &[f64], &mut [f64]),
            fn([&[f64]; 4], [&[f64]; 4]) -> [f64; 4],
        );
        let mut forms: Vec<(&str, Kernels)> = Vec::new();
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY (each call): the CPU supports AVX2 (checked just above).
            forms.push((
                "avx2",
                (
                    |x, c, o| unsafe { avx2::sq_dists_to(x, c, o) },
                    |x, y, d, o| unsafe { avx2::sq_dists_rows(x, y, d, o) },
                    |x, c, o| unsafe { avx2::dots_to(x, c, o) },
                    |a, b| unsafe { avx2::sq_dist4(a, b) },
                ),
            ));
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY (each call): the CPU supports AVX-512F (checked just above).
            forms.push((
                "avx512f",
                (
                    |x, c, o| unsafe { avx512::sq_dists_to(x, c, o) },
                    |x, y, d, o| unsafe { avx512::sq_dists_rows(x, y, d, o) },
                    |x, c, o| unsafe { avx512::dots_to(x, c, o) },
                    |a, b| unsafe { avx512::sq_dist4(a, b) },
                ),
            ));
        }
        eprintln!(
            "compiled kernel forms checked on this CPU: {:?}",
            forms.iter().map(|f| f.0).collect::<Vec<_>>()
        );
        for (name, (to, rows, dots, four)) in &forms {
            for d in (0..13).chain([31, 50, 100]) {
                for n in (0..26).chain([100]) {
                    let x: Vec<f64> = (0..n * d)
                        .map(|i| ((i * 37 % 23) as f64).sqrt() - 2.1)
                        .collect();
                    let y: Vec<f64> = (0..n * d).map(|i| (i as f64 * 0.7).sin()).collect();
                    let c: Vec<f64> = (0..d).map(|j| (j as f64 * 0.3).cos() * 1.7).collect();
                    let (mut got, mut want) = (vec![f64::NAN; n], vec![f64::NAN; n]);
                    let bits = |v: &[f64]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
                    to(&x, &c, &mut got);
                    sq_dists_to_body(&x, &c, &mut want);
                    assert_eq!(bits(&got), bits(&want), "{name} sq_dists_to d {d} n {n}");
                    rows(&x, &y, d, &mut got);
                    sq_dists_rows_body(&x, &y, d, &mut want);
                    assert_eq!(bits(&got), bits(&want), "{name} sq_dists_rows d {d} n {n}");
                    dots(&x, &c, &mut got);
                    dots_to_body(&x, &c, &mut want);
                    assert_eq!(bits(&got), bits(&want), "{name} dots_to d {d} n {n}");
                    if n >= 8 {
                        let a: [&[f64]; 4] = std::array::from_fn(|t| &x[t * d..(t + 1) * d]);
                        let b: [&[f64]; 4] = std::array::from_fn(|t| &y[(t + 4) * d..(t + 5) * d]);
                        let (g4, w4) = (four(a, b), sq_dist4_body(a, b));
                        assert_eq!(bits(&g4), bits(&w4), "{name} sq_dist4 d {d}");
                    }
                }
            }
        }
    }
}
