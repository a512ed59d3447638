//! SSE2 forms of [`super::dot`] and [`super::sq_dist`] (every x86-64 CPU has SSE2, so no
//! run-time check): the four running sums are two 128-bit registers, updated lane for lane
//! with the portable loops' operations in their order (no FMA), so the bits are theirs.
//! Compiled from the portable loops instead, the compiler subtracted and multiplied one value
//! at a time and packed the results in pairs before adding them.

use std::arch::x86_64::{
    __m128d, _mm_add_pd, _mm_loadu_pd, _mm_mul_pd, _mm_setzero_pd, _mm_storeu_pd, _mm_sub_pd,
};

/// Two values of `v` from index `j`.
///
/// # Safety
/// `j + 2 <= v.len()`.
#[inline(always)]
unsafe fn load2(v: &[f64], j: usize) -> __m128d {
    debug_assert!(j + 2 <= v.len());
    // SAFETY: the caller keeps j + 2 within `v`; the load needs no alignment.
    unsafe { _mm_loadu_pd(v.as_ptr().add(j)) }
}

/// The running sums s₀ s₁ (in `lo`) and s₂ s₃ (in `hi`) added as the portable loops add
/// them: (s₀ + s₁) + (s₂ + s₃).
#[inline(always)]
fn sums(lo: __m128d, hi: __m128d) -> f64 {
    let (mut l, mut h) = ([0.0; 2], [0.0; 2]);
    // SAFETY: each array holds the two f64 a store writes.
    unsafe {
        _mm_storeu_pd(l.as_mut_ptr(), lo);
        _mm_storeu_pd(h.as_mut_ptr(), hi);
    }
    (l[0] + l[1]) + (h[0] + h[1])
}

/// [`super::dot`].
#[inline(always)]
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let chunks = a.len() / 4;
    // SAFETY: SSE2 is part of x86-64; the call reads no memory.
    let (mut lo, mut hi) = unsafe { (_mm_setzero_pd(), _mm_setzero_pd()) };
    for c in 0..chunks {
        let i = 4 * c;
        // SAFETY: i + 4 <= 4·chunks <= the length of both slices.
        unsafe {
            lo = _mm_add_pd(lo, _mm_mul_pd(load2(a, i), load2(b, i)));
            hi = _mm_add_pd(hi, _mm_mul_pd(load2(a, i + 2), load2(b, i + 2)));
        }
    }
    let mut s = sums(lo, hi);
    for i in 4 * chunks..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// [`super::sq_dist`].
#[inline(always)]
pub(super) fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let chunks = a.len() / 4;
    // SAFETY: SSE2 is part of x86-64; the call reads no memory.
    let (mut lo, mut hi) = unsafe { (_mm_setzero_pd(), _mm_setzero_pd()) };
    for c in 0..chunks {
        let i = 4 * c;
        // SAFETY: i + 4 <= 4·chunks <= the length of both slices.
        unsafe {
            let e = _mm_sub_pd(load2(a, i), load2(b, i));
            lo = _mm_add_pd(lo, _mm_mul_pd(e, e));
            let e = _mm_sub_pd(load2(a, i + 2), load2(b, i + 2));
            hi = _mm_add_pd(hi, _mm_mul_pd(e, e));
        }
    }
    let mut s = sums(lo, hi);
    for i in 4 * chunks..a.len() {
        let d = a[i] - b[i];
        s += d * d;
    }
    s
}
