//! ‖x_n − z_n A‖² row by row: the one form of the residual every reported objective is
//! summed from ([`residual_ss`](super::objective::residual_ss)).
//!
//! For row n with ones k₁ < k₂ < … (none allowed), the prediction is p = ((0 + a_k₁) + a_k₂) + …
//! entry by entry, and e = x_n − p. The columns are taken eight at a time (the last group
//! padded with zeros, whose squares add nothing): eight sums s_l of e_j² (j ≡ l mod 8, in
//! column order, a product then a sum, no fused multiply-add), then
//! ((s₀ + s₄) + (s₂ + s₆)) + ((s₁ + s₅) + (s₃ + s₇)). The rows' values are added in row order.
//! Every CPU gives these bits: the AVX-512F form holds the eight sums in one register, the
//! portable form (compiled with AVX2 where the CPU has it) in an array.
//!
//! A row costs one addition per one of Z per column, against 2·K per column for the product
//! Z A by GEMM, and it needs no copy of Z as numbers nor a buffer for Z A.

use super::kernels::ones_into;
use super::zmat::BinaryMatrix;
use crate::MatrixView;
use crate::RowMatrix;

/// Lanes of the sums (see the module documentation).
const LANES: usize = 8;

/// Σ_{n ∈ s..e} ‖x_n − z_n A‖², in the form of the module documentation.
pub(crate) fn residual_ss_rows(
    x: MatrixView<'_>,
    z: &BinaryMatrix,
    a: &RowMatrix,
    s: usize,
    e: usize,
) -> f64 {
    debug_assert_eq!(z.k(), a.n_rows());
    debug_assert_eq!(x.n_cols(), a.n_cols());
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { rows_avx512(x, z, a, s, e) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { rows_avx2(x, z, a, s, e) };
        }
    }
    rows_body(x, z, a, s, e, row_portable)
}

/// The rows in order, each through `row` (given x_n, the positions of its ones and A).
#[inline(always)]
fn rows_body(
    x: MatrixView<'_>,
    z: &BinaryMatrix,
    a: &RowMatrix,
    s: usize,
    e: usize,
    row: impl Fn(&[f64], &[usize], &RowMatrix) -> f64,
) -> f64 {
    let k = z.k();
    let mut total = 0.0;
    if k <= 64 {
        let mut on = [0usize; 64];
        for n in s..e {
            let m = ones_into(z.row(n), &mut on);
            total += row(x.row(n), &on[..m], a);
        }
    } else {
        let mut on = vec![0usize; k];
        for n in s..e {
            let m = ones_into(z.row(n), &mut on);
            total += row(x.row(n), &on[..m], a);
        }
    }
    total
}

/// The portable form compiled with AVX2: the eight sums in two registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn rows_avx2(x: MatrixView<'_>, z: &BinaryMatrix, a: &RowMatrix, s: usize, e: usize) -> f64 {
    rows_body(x, z, a, s, e, row_portable)
}

/// One row's ‖x − p‖² (module documentation), lane sums in an array: whole groups of eight
/// columns as fixed-size arrays (which the compiler keeps in vector registers), then the
/// last group.
#[inline(always)]
fn row_portable(x: &[f64], on: &[usize], a: &RowMatrix) -> f64 {
    let d = x.len();
    let mut acc = [0.0; LANES];
    let full = d / LANES * LANES;
    let group =
        |v: &[f64], j: usize| -> [f64; LANES] { v[j..j + LANES].try_into().expect("eight values") };
    let mut j = 0;
    while j < full {
        let mut p = [0.0; LANES];
        for &k in on {
            let r = group(a.row(k), j);
            for l in 0..LANES {
                p[l] += r[l];
            }
        }
        let xs = group(x, j);
        for l in 0..LANES {
            let e = xs[l] - p[l];
            acc[l] += e * e;
        }
        j += LANES;
    }
    if j < d {
        let w = d - j;
        let mut p = [0.0; LANES];
        for &k in on {
            for (pl, al) in p.iter_mut().zip(&a.row(k)[j..]) {
                *pl += al;
            }
        }
        for l in 0..w {
            let e = x[j + l] - p[l];
            acc[l] += e * e;
        }
    }
    reduce(acc)
}

/// ((s₀ + s₄) + (s₂ + s₆)) + ((s₁ + s₅) + (s₃ + s₇)).
#[inline(always)]
fn reduce(s: [f64; LANES]) -> f64 {
    let t = [s[0] + s[4], s[1] + s[5], s[2] + s[6], s[3] + s[7]];
    (t[0] + t[2]) + (t[1] + t[3])
}

/// The rows with the eight sums in one AVX-512 register.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn rows_avx512(x: MatrixView<'_>, z: &BinaryMatrix, a: &RowMatrix, s: usize, e: usize) -> f64 {
    rows_body(x, z, a, s, e, |xr, on, a| row_avx512(xr, on, a))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn row_avx512(x: &[f64], on: &[usize], a: &RowMatrix) -> f64 {
    use std::arch::x86_64::*;
    let d = x.len();
    debug_assert!(on.iter().all(|&k| k < a.n_rows()) && a.n_cols() == d);
    let base = a.as_slice().as_ptr();
    let xp = x.as_ptr();
    let mut acc = _mm512_setzero_pd();
    let mut j = 0;
    // Four groups at a time: the loop over the ones runs a quarter as often, with four
    // independent sums per one.
    while j + 4 * LANES <= d {
        let mut p = [_mm512_setzero_pd(); 4];
        for &k in on {
            for (q, pq) in p.iter_mut().enumerate() {
                // SAFETY: k < K and j + 32 <= D, so the values lie in row k of A.
                *pq = _mm512_add_pd(*pq, unsafe {
                    _mm512_loadu_pd(base.add(k * d + j + q * LANES))
                });
            }
        }
        for (q, pq) in p.into_iter().enumerate() {
            // SAFETY: j + 32 <= D = x.len().
            let e = _mm512_sub_pd(unsafe { _mm512_loadu_pd(xp.add(j + q * LANES)) }, pq);
            acc = _mm512_add_pd(acc, _mm512_mul_pd(e, e));
        }
        j += 4 * LANES;
    }
    while j < d {
        // One group, the last padded with zeros by masked loads.
        let mask: __mmask8 = if d - j >= LANES {
            0xff
        } else {
            (1u8 << (d - j)) - 1
        };
        let mut p = _mm512_setzero_pd();
        for &k in on {
            // SAFETY: only the lanes in `mask` are read, all inside row k of A.
            p = _mm512_add_pd(p, unsafe {
                _mm512_maskz_loadu_pd(mask, base.add(k * d + j))
            });
        }
        // SAFETY: as above, inside x.
        let e = _mm512_sub_pd(unsafe { _mm512_maskz_loadu_pd(mask, xp.add(j)) }, p);
        acc = _mm512_add_pd(acc, _mm512_mul_pd(e, e));
        j += LANES;
    }
    let t = _mm256_add_pd(
        _mm512_castpd512_pd256(acc),
        _mm512_extractf64x4_pd::<1>(acc),
    );
    let u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd::<1>(t));
    _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::objective::row_residual;

    /// Irregular X and A (fractions that round), and Z with rows of every count of ones.
    fn problem(n: usize, k: usize, d: usize, seed: usize) -> (RowMatrix, BinaryMatrix, RowMatrix) {
        let val = |i: usize, m: usize| ((i * m + seed) % 97) as f64 / 7.3 - 6.1;
        let x = RowMatrix::new(n, d, (0..n * d).map(|i| val(i, 31)).collect());
        let a = RowMatrix::new(k, d, (0..k * d).map(|i| val(i, 13)).collect());
        let mut z = BinaryMatrix::zeros(n, k);
        for i in 0..n {
            for c in 0..k {
                z.row_mut(i)[c] = u8::from((i * 7 + c * 3 + seed).is_multiple_of(1 + i % 4));
            }
        }
        (x, z, a)
    }

    /// The module's definition written out entry by entry.
    fn by_definition(x: &[f64], z: &[u8], a: &RowMatrix) -> f64 {
        let mut s = [0.0; LANES];
        for (j, &xj) in x.iter().enumerate() {
            let mut p = 0.0;
            for (c, &v) in z.iter().enumerate() {
                if v != 0 {
                    p += a.row(c)[j];
                }
            }
            let e = xj - p;
            s[j % LANES] += e * e;
        }
        ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
    }

    /// Every form (AVX-512F, AVX2, portable) gives the definition's bits: D across the
    /// group sizes, K = 0 to past the stack list, rows with no ones.
    #[test]
    fn every_form_gives_the_bits_of_the_definition() {
        for d in [1, 3, 7, 8, 9, 16, 23, 100, 131] {
            for k in [0, 1, 2, 5, 9, 64, 65, 70] {
                let n = 13;
                let (x, z, a) = problem(n, k, d, d * 100 + k);
                let mut want = 0.0;
                for i in 0..n {
                    // Row by row first: in a sum of rows a lane's last bit is often lost.
                    let row = by_definition(x.row(i), z.row(i), &a);
                    let got = residual_ss_rows(x.view(), &z, &a, i, i + 1);
                    assert_eq!(got.to_bits(), row.to_bits(), "row {i}, D {d}, K {k}");
                    want += row;
                }
                let got = residual_ss_rows(x.view(), &z, &a, 0, n);
                assert_eq!(got.to_bits(), want.to_bits(), "D {d}, K {k}");
                let portable = rows_body(x.view(), &z, &a, 0, n, row_portable);
                assert_eq!(portable.to_bits(), want.to_bits(), "portable, D {d}, K {k}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    let avx2 = unsafe { rows_avx2(x.view(), &z, &a, 0, n) };
                    assert_eq!(avx2.to_bits(), want.to_bits(), "AVX2, D {d}, K {k}");
                }
                let part = residual_ss_rows(x.view(), &z, &a, 3, 11);
                let mut want_part = 0.0;
                for i in 3..11 {
                    want_part += by_definition(x.row(i), z.row(i), &a);
                }
                assert_eq!(
                    part.to_bits(),
                    want_part.to_bits(),
                    "rows 3..11, D {d}, K {k}"
                );
            }
        }
    }

    /// Within rounding of the residual formed by subtracting the means one at a time.
    #[test]
    fn agrees_with_the_row_residuals() {
        let (x, z, a) = problem(40, 6, 37, 5);
        let mut r = vec![0.0; 37];
        let want: f64 = (0..40)
            .map(|i| row_residual(x.row(i), z.row(i), &a, &mut r))
            .sum();
        let got = residual_ss_rows(x.view(), &z, &a, 0, 40);
        assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
        assert!(want > 1.0);
    }
}
