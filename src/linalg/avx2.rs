//! AVX2 forms of the four-at-a-time distance and dot kernels ([`super::sq_dist4`],
//! [`super::sq_dists_to`], [`super::sq_dists_rows`], [`super::dots_to`]), written with
//! intrinsics: each row's four running sums are one 256-bit register, and every operation of
//! the portable bodies is done lane for lane in the same order (subtract, multiply, add; no
//! FMA), so the bits are theirs. Compiled from the portable bodies instead, the compiler
//! packed the four rows' values of one column into a register with shuffles, which cost
//! more than the arithmetic (docs/speed.md §2, sitting of 11:08 on 2026-11-27).
//!
//! Callers check that the CPU has AVX2 before calling.

use std::arch::x86_64::{
    __m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    _mm256_sub_pd,
};

/// The four lanes of a running sum, added as the portable bodies add them:
/// (s₀ + s₁) + (s₂ + s₃).
#[inline(always)]
fn lanes_sum(v: __m256d) -> f64 {
    let mut s = [0.0; 4];
    // SAFETY: `s` holds four f64, the 32 bytes the store writes.
    unsafe { _mm256_storeu_pd(s.as_mut_ptr(), v) };
    (s[0] + s[1]) + (s[2] + s[3])
}

/// Four values of `v` from index `j`.
///
/// # Safety
/// `j + 4 <= v.len()`.
#[inline(always)]
pub(super) unsafe fn load4(v: &[f64], j: usize) -> __m256d {
    debug_assert!(j + 4 <= v.len());
    // SAFETY: the caller keeps j + 4 within `v`; the load needs no alignment.
    unsafe { _mm256_loadu_pd(v.as_ptr().add(j)) }
}

/// ‖a_t − b_t‖² for four pairs of slices of one length: [`super::sq_dist`]'s operations and
/// order for each pair.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn sq_dist4(a: [&[f64]; 4], b: [&[f64]; 4]) -> [f64; 4] {
    let d = a[0].len();
    assert!(a.iter().chain(&b).all(|v| v.len() == d));
    let chunks = d / 4;
    let mut acc = [_mm256_setzero_pd(); 4];
    for q in 0..chunks {
        let j = 4 * q;
        for t in 0..4 {
            // SAFETY: j + 4 <= 4·chunks <= d, the length of every slice (asserted above).
            let e = unsafe { _mm256_sub_pd(load4(a[t], j), load4(b[t], j)) };
            acc[t] = _mm256_add_pd(acc[t], _mm256_mul_pd(e, e));
        }
    }
    let mut out = [0.0; 4];
    for t in 0..4 {
        let mut s = lanes_sum(acc[t]);
        for j in 4 * chunks..d {
            let e = a[t][j] - b[t][j];
            s += e * e;
        }
        out[t] = s;
    }
    out
}

/// x_t · c for four slices x_t of `c`'s length: [`super::dot`]'s operations and order for
/// each.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn dots4(x: [&[f64]; 4], c: &[f64]) -> [f64; 4] {
    let d = c.len();
    assert!(x.iter().all(|v| v.len() == d));
    let chunks = d / 4;
    let mut acc = [_mm256_setzero_pd(); 4];
    for q in 0..chunks {
        let j = 4 * q;
        // SAFETY: j + 4 <= 4·chunks <= d, the length of `c` and of every row (asserted).
        let cj = unsafe { load4(c, j) };
        for t in 0..4 {
            // SAFETY: as above.
            let p = _mm256_mul_pd(unsafe { load4(x[t], j) }, cj);
            acc[t] = _mm256_add_pd(acc[t], p);
        }
    }
    let mut out = [0.0; 4];
    for t in 0..4 {
        let mut s = lanes_sum(acc[t]);
        for j in 4 * chunks..d {
            s += x[t][j] * c[j];
        }
        out[t] = s;
    }
    out
}

/// The four rows of `x` (row-major, `d` columns) from row `i`.
#[inline(always)]
fn rows4(x: &[f64], d: usize, i: usize) -> [&[f64]; 4] {
    std::array::from_fn(|t| &x[(i + t) * d..(i + t + 1) * d])
}

/// [`super::sq_dists_to`]: ‖x_i − c‖² for every row, four rows at a time.
#[target_feature(enable = "avx2")]
pub(super) fn sq_dists_to(x: &[f64], c: &[f64], out: &mut [f64]) {
    let (d, n) = (c.len(), out.len());
    assert_eq!(x.len(), n * d);
    let mut i = 0;
    while i + 4 <= n {
        out[i..i + 4].copy_from_slice(&sq_dist4(rows4(x, d, i), [c; 4]));
        i += 4;
    }
    for ii in i..n {
        out[ii] = super::sq_dist(&x[ii * d..(ii + 1) * d], c);
    }
}

/// [`super::sq_dists_rows`]: ‖x_i − y_i‖² for every pair of rows, four pairs at a time.
#[target_feature(enable = "avx2")]
pub(super) fn sq_dists_rows(x: &[f64], y: &[f64], d: usize, out: &mut [f64]) {
    let n = out.len();
    assert!(x.len() == n * d && y.len() == n * d);
    let mut i = 0;
    while i + 4 <= n {
        out[i..i + 4].copy_from_slice(&sq_dist4(rows4(x, d, i), rows4(y, d, i)));
        i += 4;
    }
    for ii in i..n {
        out[ii] = super::sq_dist(&x[ii * d..(ii + 1) * d], &y[ii * d..(ii + 1) * d]);
    }
}

/// [`super::dots_to`]: x_i · c for every row, four rows at a time.
#[target_feature(enable = "avx2")]
pub(super) fn dots_to(x: &[f64], c: &[f64], out: &mut [f64]) {
    let (d, n) = (c.len(), out.len());
    assert_eq!(x.len(), n * d);
    let mut i = 0;
    while i + 4 <= n {
        out[i..i + 4].copy_from_slice(&dots4(rows4(x, d, i), c));
        i += 4;
    }
    for ii in i..n {
        out[ii] = super::dot(&x[ii * d..(ii + 1) * d], c);
    }
}
