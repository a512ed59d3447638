//! AVX-512F forms of the distance and dot kernels ([`super::sq_dist4`],
//! [`super::sq_dists_to`], [`super::sq_dists_rows`], [`super::dots_to`]), of the sum of
//! chosen rows ([`super::sum_rows`]) and of [`super::axpy`]. One 512-bit
//! register holds the four running sums of two rows (lanes 0–3 and 4–7), and every operation
//! of the portable bodies is done lane for lane in the same order (subtract, multiply, add;
//! no FMA), so the bits are theirs and those of the AVX2 forms. Eight rows go together where
//! the AVX2 forms take four: the AVX2 loops are bound by the two floating-point adders (a
//! subtraction and an addition for every four values of a row), and a 512-bit operation does
//! the work of two. (100 rows of 100 values against one mean, 200 000 calls in a scratch
//! program on AMD EPYC family 26: 1.02–1.05 µs a call in AVX2, 0.61–0.64 µs here, equal bits.)
//!
//! Callers check that the CPU has AVX-512F (which implies AVX2) before calling.

use super::avx2::{self, load4};
use std::arch::x86_64::{
    __m512d, __mmask8, _mm512_add_pd, _mm512_broadcast_f64x4, _mm512_castpd256_pd512,
    _mm512_fmadd_pd, _mm512_insertf64x4, _mm512_maskz_loadu_pd, _mm512_mul_pd,
    _mm512_reduce_add_pd, _mm512_setzero_pd, _mm512_storeu_pd, _mm512_sub_pd,
};

/// The four values of `lo` from index `j` in lanes 0–3 and those of `hi` in lanes 4–7.
///
/// # Safety
/// `j + 4` is within both slices.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load_pair(lo: &[f64], hi: &[f64], j: usize) -> __m512d {
    // SAFETY: the caller keeps j + 4 within both slices.
    let (l, h) = unsafe { (load4(lo, j), load4(hi, j)) };
    _mm512_insertf64x4::<1>(_mm512_castpd256_pd512(l), h)
}

/// The two rows' sums of a register, each added as the portable bodies add their four
/// lanes: (s₀ + s₁) + (s₂ + s₃).
#[inline]
#[target_feature(enable = "avx512f")]
fn halves_sums(v: __m512d) -> [f64; 2] {
    let mut s = [0.0; 8];
    // SAFETY: `s` holds eight f64, the 64 bytes the store writes.
    unsafe { _mm512_storeu_pd(s.as_mut_ptr(), v) };
    [(s[0] + s[1]) + (s[2] + s[3]), (s[4] + s[5]) + (s[6] + s[7])]
}

/// `s` plus the squared differences of the entries from `from` on, one at a time in order
/// (the portable bodies' remainder).
#[inline(always)]
fn sq_tail(mut s: f64, a: &[f64], b: &[f64], from: usize) -> f64 {
    for j in from..a.len() {
        let e = a[j] - b[j];
        s += e * e;
    }
    s
}

/// `s` plus the products of the entries from `from` on, one at a time in order.
#[inline(always)]
fn dot_tail(mut s: f64, a: &[f64], b: &[f64], from: usize) -> f64 {
    for j in from..a.len() {
        s += a[j] * b[j];
    }
    s
}

/// The eight rows of `x` (row-major, `d` columns) from row `i`.
#[inline(always)]
fn rows8(x: &[f64], d: usize, i: usize) -> [&[f64]; 8] {
    std::array::from_fn(|t| &x[(i + t) * d..(i + t + 1) * d])
}

/// [`super::sq_dist4`]: the pairs (0, 1) and (2, 3) each share a register.
#[target_feature(enable = "avx512f")]
pub(super) fn sq_dist4(a: [&[f64]; 4], b: [&[f64]; 4]) -> [f64; 4] {
    let d = a[0].len();
    assert!(a.iter().chain(&b).all(|v| v.len() == d));
    let chunks = d / 4;
    let mut acc = [_mm512_setzero_pd(); 2];
    for q in 0..chunks {
        let j = 4 * q;
        for (p, s) in acc.iter_mut().enumerate() {
            // SAFETY: j + 4 <= 4·chunks <= d, the length of every slice (asserted above).
            let e = unsafe {
                _mm512_sub_pd(
                    load_pair(a[2 * p], a[2 * p + 1], j),
                    load_pair(b[2 * p], b[2 * p + 1], j),
                )
            };
            *s = _mm512_add_pd(*s, _mm512_mul_pd(e, e));
        }
    }
    let mut out = [0.0; 4];
    for (p, s) in acc.into_iter().enumerate() {
        for (h, sum) in halves_sums(s).into_iter().enumerate() {
            let t = 2 * p + h;
            out[t] = sq_tail(sum, a[t], b[t], 4 * chunks);
        }
    }
    out
}

/// Eight rows of `x` (row-major, `c.len()` columns) at a time against `c`, the first
/// `n − n mod 8` rows of `out`: per four-value chunk j, each pair of rows' register is
/// `acc = step(acc, rows_j, c_j)` (c_j in both halves); each row's four sums are then added
/// as the portable bodies add them and `tail(sum, row, c, 4·chunks)` adds the remainder.
/// Returns how many rows it did.
#[inline]
#[target_feature(enable = "avx512f")]
fn eight_rows_against(
    x: &[f64],
    c: &[f64],
    out: &mut [f64],
    step: impl Fn(__m512d, __m512d, __m512d) -> __m512d,
    tail: impl Fn(f64, &[f64], &[f64], usize) -> f64,
) -> usize {
    let (d, n) = (c.len(), out.len());
    assert_eq!(x.len(), n * d);
    let mut i = 0;
    while i + 8 <= n {
        out[i..i + 8].copy_from_slice(&against8(rows8(x, d, i), c, &step, &tail));
        i += 8;
    }
    i
}

/// [`eight_rows_against`] for eight given rows (each `c.len()` long).
#[inline]
#[target_feature(enable = "avx512f")]
fn against8(
    r: [&[f64]; 8],
    c: &[f64],
    step: &impl Fn(__m512d, __m512d, __m512d) -> __m512d,
    tail: &impl Fn(f64, &[f64], &[f64], usize) -> f64,
) -> [f64; 8] {
    let d = c.len();
    assert!(r.iter().all(|row| row.len() == d));
    let chunks = d / 4;
    let mut acc = [_mm512_setzero_pd(); 4];
    for q in 0..chunks {
        let j = 4 * q;
        // SAFETY: j + 4 <= 4·chunks <= d, the length of `c` and of every row.
        let cj = _mm512_broadcast_f64x4(unsafe { load4(c, j) });
        for (p, s) in acc.iter_mut().enumerate() {
            // SAFETY: as above.
            *s = step(*s, unsafe { load_pair(r[2 * p], r[2 * p + 1], j) }, cj);
        }
    }
    let mut out = [0.0; 8];
    for (p, s) in acc.into_iter().enumerate() {
        for (h, sum) in halves_sums(s).into_iter().enumerate() {
            let t = 2 * p + h;
            out[t] = tail(sum, r[t], c, 4 * chunks);
        }
    }
    out
}

/// [`super::sq_dists_at`]: the first `rows.len() − rows.len() mod 8` of the chosen rows,
/// eight at a time; returns how many it did.
#[target_feature(enable = "avx512f")]
pub(super) fn sq_dists_at(x: &[f64], rows: &[usize], c: &[f64], out: &mut [f64]) -> usize {
    let d = c.len();
    let step = |acc, v, cj| {
        let e = _mm512_sub_pd(v, cj);
        _mm512_add_pd(acc, _mm512_mul_pd(e, e))
    };
    let mut t = 0;
    while t + 8 <= rows.len() {
        let r = std::array::from_fn(|u| &x[rows[t + u] * d..(rows[t + u] + 1) * d]);
        out[t..t + 8].copy_from_slice(&against8(r, c, &step, &sq_tail));
        t += 8;
    }
    t
}

/// [`super::sq_dists_to`]: eight rows at a time, then the AVX2 form for the rest.
#[target_feature(enable = "avx512f")]
pub(super) fn sq_dists_to(x: &[f64], c: &[f64], out: &mut [f64]) {
    let step = |acc, v, cj| {
        let e = _mm512_sub_pd(v, cj);
        _mm512_add_pd(acc, _mm512_mul_pd(e, e))
    };
    let i = eight_rows_against(x, c, out, step, sq_tail);
    let d = c.len();
    avx2::sq_dists_to(&x[i * d..], c, &mut out[i..]);
}

/// [`super::sq_dists_rows`]: eight pairs of rows at a time, then the AVX2 form for the rest.
#[target_feature(enable = "avx512f")]
pub(super) fn sq_dists_rows(x: &[f64], y: &[f64], d: usize, out: &mut [f64]) {
    let n = out.len();
    assert!(x.len() == n * d && y.len() == n * d);
    let chunks = d / 4;
    let mut i = 0;
    while i + 8 <= n {
        let (xr, yr) = (rows8(x, d, i), rows8(y, d, i));
        let mut acc = [_mm512_setzero_pd(); 4];
        for q in 0..chunks {
            let j = 4 * q;
            for (p, s) in acc.iter_mut().enumerate() {
                // SAFETY: j + 4 <= 4·chunks <= d, the length of every row.
                let e = unsafe {
                    _mm512_sub_pd(
                        load_pair(xr[2 * p], xr[2 * p + 1], j),
                        load_pair(yr[2 * p], yr[2 * p + 1], j),
                    )
                };
                *s = _mm512_add_pd(*s, _mm512_mul_pd(e, e));
            }
        }
        for (p, s) in acc.into_iter().enumerate() {
            for (h, sum) in halves_sums(s).into_iter().enumerate() {
                let t = 2 * p + h;
                out[i + t] = sq_tail(sum, xr[t], yr[t], 4 * chunks);
            }
        }
        i += 8;
    }
    avx2::sq_dists_rows(&x[i * d..], &y[i * d..], d, &mut out[i..]);
}

/// [`super::dots_to`]: eight rows at a time, then the AVX2 form for the rest.
#[target_feature(enable = "avx512f")]
pub(super) fn dots_to(x: &[f64], c: &[f64], out: &mut [f64]) {
    let step = |acc, v, cj| _mm512_add_pd(acc, _mm512_mul_pd(v, cj));
    let i = eight_rows_against(x, c, out, step, dot_tail);
    let d = c.len();
    avx2::dots_to(&x[i * d..], c, &mut out[i..]);
}

/// [`super::dots_to_estimate`]: each row's products eight columns at a time into one
/// register by fused multiply-adds (the last group of columns by masked loads), eight rows
/// side by side against one load of `c`, then the eight lanes added; the rows past the last
/// eight one at a time alike. The products are summed in another order than
/// [`super::dot`]'s, which the estimate's contract allows.
#[target_feature(enable = "avx512f")]
pub(super) fn dots_to_fused(x: &[f64], c: &[f64], out: &mut [f64]) {
    let (d, n) = (c.len(), out.len());
    assert_eq!(x.len(), n * d);
    let mut i = 0;
    while i + 8 <= n {
        let sums: [__m512d; 8] = fused_rows(x, c, i);
        for (t, s) in sums.into_iter().enumerate() {
            out[i + t] = _mm512_reduce_add_pd(s);
        }
        i += 8;
    }
    while i < n {
        let [s]: [__m512d; 1] = fused_rows(x, c, i);
        out[i] = _mm512_reduce_add_pd(s);
        i += 1;
    }
}

/// The lane sums of x_t · c for the `R` rows from row `i` (see [`dots_to_fused`]).
#[inline]
#[target_feature(enable = "avx512f")]
fn fused_rows<const R: usize>(x: &[f64], c: &[f64], i: usize) -> [__m512d; R] {
    let d = c.len();
    assert!((i + R) * d <= x.len());
    let (xp, cp) = (x.as_ptr(), c.as_ptr());
    let mut acc = [_mm512_setzero_pd(); R];
    let mut j = 0;
    while j < d {
        let mask: __mmask8 = if d - j >= 8 {
            0xff
        } else {
            (1u8 << (d - j)) - 1
        };
        // SAFETY: the lanes in `mask` are columns j..min(j + 8, d) of `c` and of rows
        // i..i + R of `x` (within x, asserted above); masked-off lanes touch no memory.
        let cj = unsafe { _mm512_maskz_loadu_pd(mask, cp.add(j)) };
        for (t, a) in acc.iter_mut().enumerate() {
            // SAFETY: as above.
            let v = unsafe { _mm512_maskz_loadu_pd(mask, xp.add((i + t) * d + j)) };
            *a = _mm512_fmadd_pd(v, cj, *a);
        }
        j += 8;
    }
    acc
}

/// [`super::sq_dists_from`]: the means as the eight rows of [`against8`], the row as its
/// mean. ‖m_t − x‖² has the bits of ‖x − m_t‖²: a difference and its negation square alike.
#[target_feature(enable = "avx512f")]
pub(super) fn sq_dists_from(x: &[f64], m: [&[f64]; 8]) -> [f64; 8] {
    let step = |acc, v, xj| {
        let e = _mm512_sub_pd(v, xj);
        _mm512_add_pd(acc, _mm512_mul_pd(e, e))
    };
    against8(m, x, &step, &sq_tail)
}

/// [`super::sum_rows`]: for each run of 64 columns, eight registers of running sums, each
/// row's values added lane for lane in the order of `rows` (the portable body's additions,
/// entry by entry), then stored. The last run's registers past `d` load nothing (masked
/// loads, which do not touch memory in masked-off lanes) and are not stored.
#[target_feature(enable = "avx512f")]
pub(super) fn sum_rows(x: &[f64], d: usize, rows: &[usize]) -> Vec<f64> {
    use std::arch::x86_64::{_mm512_mask_storeu_pd, _mm512_maskz_loadu_pd};
    assert!(
        rows.iter().all(|&r| (r + 1) * d <= x.len()),
        "sum_rows: a row past the data"
    );
    let mut sum = vec![0.0; d];
    let mut c0 = 0;
    while c0 < d {
        // The lanes of register v that hold columns below d.
        let masks: [u8; 8] = std::array::from_fn(|v| {
            let left = d.saturating_sub(c0 + 8 * v).min(8);
            ((1u16 << left) - 1) as u8
        });
        let mut acc = [_mm512_setzero_pd(); 8];
        for &r in rows {
            let base = x.as_ptr().wrapping_add(r * d + c0);
            for (v, a) in acc.iter_mut().enumerate() {
                // SAFETY: the lanes the mask keeps are columns c0 + 8v + l < d of row r,
                // within `x` (asserted above); masked-off lanes read nothing.
                let row = unsafe { _mm512_maskz_loadu_pd(masks[v], base.wrapping_add(8 * v)) };
                *a = _mm512_add_pd(*a, row);
            }
        }
        for (v, a) in acc.iter().enumerate() {
            // SAFETY: the lanes stored are columns below d of `sum`, as for the loads.
            unsafe {
                _mm512_mask_storeu_pd(sum.as_mut_ptr().wrapping_add(c0 + 8 * v), masks[v], *a)
            };
        }
        c0 += 64;
    }
    sum
}

/// [`super::axpy`]: `y += alpha * x` eight entries at a time, the rest (fewer than eight)
/// with masked loads and stores; each entry a product then a sum, as in the loop.
#[target_feature(enable = "avx512f")]
pub(super) fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    use std::arch::x86_64::_mm512_set1_pd;
    use std::arch::x86_64::{_mm512_loadu_pd, _mm512_mask_storeu_pd, _mm512_maskz_loadu_pd};
    let n = x.len().min(y.len());
    let a = _mm512_set1_pd(alpha);
    let mut j = 0;
    while j + 8 <= n {
        // SAFETY: entries j..j + 8 are within both slices.
        unsafe {
            let v = _mm512_add_pd(
                _mm512_loadu_pd(y.as_ptr().add(j)),
                _mm512_mul_pd(a, _mm512_loadu_pd(x.as_ptr().add(j))),
            );
            _mm512_storeu_pd(y.as_mut_ptr().add(j), v);
        }
        j += 8;
    }
    if j < n {
        let m = ((1u16 << (n - j)) - 1) as u8;
        // SAFETY: the mask keeps entries j..n, within both slices; the others are neither
        // read nor written.
        unsafe {
            let v = _mm512_add_pd(
                _mm512_maskz_loadu_pd(m, y.as_ptr().add(j)),
                _mm512_mul_pd(a, _mm512_maskz_loadu_pd(m, x.as_ptr().add(j))),
            );
            _mm512_mask_storeu_pd(y.as_mut_ptr().add(j), m, v);
        }
    }
}

/// [`super::xat_columns`]: sixteen rows a step, two registers of eight, against up to eight
/// of A's rows at a time (`NF` of them here): for each column j in order, the rows' values
/// of column j (two loads from X's column-major copy `xt`) times a_fj (one broadcast), added
/// by FMA to the running product of row and feature. A last step of fewer than sixteen rows
/// loads nothing past them (masked loads).
#[target_feature(enable = "avx512f")]
fn xat_columns_step<const NF: usize>(
    out: &mut [f64; 2 * 8 * 8],
    xt: &[f64],
    n: usize,
    r0: usize,
    rows: usize,
    a: &[f64],
    f0: usize,
) {
    use std::arch::x86_64::{_mm512_maskz_loadu_pd, _mm512_set1_pd};
    let d = xt.len() / n;
    assert!(NF <= 8 && rows <= 16 && r0 + rows <= n && xt.len() == n * d);
    assert!((f0 + NF) * d <= a.len());
    let m0 = ((1u32 << rows.min(8)) - 1) as u8;
    let m1 = ((1u32 << rows.saturating_sub(8)) - 1) as u8;
    let mut acc = [[_mm512_setzero_pd(); 2]; NF];
    for j in 0..d {
        let col = xt[j * n..].as_ptr().wrapping_add(r0);
        // SAFETY: the lanes the masks keep are rows r0..r0 + rows of column j, within `xt`
        // (asserted above); masked-off lanes touch no memory.
        let (v0, v1) = unsafe {
            (
                _mm512_maskz_loadu_pd(m0, col),
                _mm512_maskz_loadu_pd(m1, col.wrapping_add(8)),
            )
        };
        for (f, s) in acc.iter_mut().enumerate() {
            let av = _mm512_set1_pd(a[(f0 + f) * d + j]);
            s[0] = _mm512_fmadd_pd(v0, av, s[0]);
            s[1] = _mm512_fmadd_pd(v1, av, s[1]);
        }
    }
    for (f, s) in acc.iter().enumerate() {
        // SAFETY: `out` holds 2 · 8 · 8 values; feature f's sixteen go to 16 f .. 16 f + 16.
        unsafe {
            _mm512_storeu_pd(out.as_mut_ptr().add(16 * f), s[0]);
            _mm512_storeu_pd(out.as_mut_ptr().add(16 * f + 8), s[1]);
        }
    }
}

/// [`super::xat_columns`] with AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) fn xat_columns(
    dst: &mut [f64],
    xt: &[f64],
    n: usize,
    s: usize,
    e: usize,
    a: &[f64],
    k: usize,
) {
    let d = a.len().checked_div(k).unwrap_or(0);
    assert!(s <= e && e <= n && xt.len() == n * d && a.len() == k * d);
    assert_eq!(dst.len(), (e - s) * k);
    let mut out = [0.0; 2 * 8 * 8];
    let mut r0 = s;
    while r0 < e {
        let rows = (e - r0).min(16);
        let mut f0 = 0;
        while f0 < k {
            let nf = (k - f0).min(8);
            match nf {
                1 => xat_columns_step::<1>(&mut out, xt, n, r0, rows, a, f0),
                2 => xat_columns_step::<2>(&mut out, xt, n, r0, rows, a, f0),
                3 => xat_columns_step::<3>(&mut out, xt, n, r0, rows, a, f0),
                4 => xat_columns_step::<4>(&mut out, xt, n, r0, rows, a, f0),
                5 => xat_columns_step::<5>(&mut out, xt, n, r0, rows, a, f0),
                6 => xat_columns_step::<6>(&mut out, xt, n, r0, rows, a, f0),
                7 => xat_columns_step::<7>(&mut out, xt, n, r0, rows, a, f0),
                _ => xat_columns_step::<8>(&mut out, xt, n, r0, rows, a, f0),
            }
            for f in 0..nf {
                for r in 0..rows {
                    dst[(r0 - s + r) * k + f0 + f] = out[16 * f + r];
                }
            }
            f0 += nf;
        }
        r0 += rows;
    }
}
