//! `X Aᵀ` for a few rows of A (2 ≤ K ≤ 8) on data kept in panels of eight rows.
//!
//! BP-means on small data forms `X Aᵀ` for a 100 × 100 X and a K × 100 A with K ≈ 5 once
//! per sweep. faer's GEMM puts its vector lanes across the K rows of A (three of eight idle
//! at K = 5) and pays its packing on every call: on the tabletop photos it took about a fifth
//! of a `--plain` fit (docs/speed.md §2). Here the lanes run across eight rows of X instead,
//! read from a copy of X laid out for that ([`RowPanels`]), and each entry is one chain of
//! fused multiply-adds over the columns in order, starting from zero — the order in which
//! faer's kernels sum these shapes, so the bits are faer's where faer sums that way.

use crate::{MatrixView, RowMatrix};

/// Rows per panel: one AVX-512 register of f64.
pub const PANEL_ROWS: usize = 8;

/// The rows of an N × D matrix in panels of [`PANEL_ROWS`]: panel p holds, for each column j
/// in order, the values of rows 8p … 8p + 7 in column j (zeros past the last row).
#[derive(Clone, Debug)]
pub struct RowPanels {
    n: usize,
    d: usize,
    data: Vec<f64>,
}

impl RowPanels {
    /// The panels of `x`, `n` rows of `d` values, row-major.
    pub fn new(x: &[f64], n: usize, d: usize) -> Self {
        assert_eq!(x.len(), n * d, "x holds n × d values");
        let mut data = vec![0.0; n.div_ceil(PANEL_ROWS) * PANEL_ROWS * d];
        for (i, row) in x.chunks_exact(d.max(1)).enumerate().take(n) {
            let (p, l) = (i / PANEL_ROWS, i % PANEL_ROWS);
            let panel = &mut data[p * PANEL_ROWS * d..(p + 1) * PANEL_ROWS * d];
            for (j, &v) in row.iter().enumerate() {
                panel[j * PANEL_ROWS + l] = v;
            }
        }
        RowPanels { n, d, data }
    }

    /// Rows.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Columns.
    pub fn d(&self) -> usize {
        self.d
    }

    /// Panel `p`: `PANEL_ROWS · d` values.
    fn panel(&self, p: usize) -> &[f64] {
        &self.data[p * PANEL_ROWS * self.d..(p + 1) * PANEL_ROWS * self.d]
    }
}

/// The most values of X a fit copies into panels (8 MB): on larger data a sweep's GEMM runs
/// on blocks of thousands of rows, where faer's packing is paid once per block, and a second
/// copy of X would cost more memory than the panels save time.
pub const PANEL_MAX_VALUES: usize = 1 << 20;

/// The panels of `x` if this CPU has the kernel and `x` holds at most [`PANEL_MAX_VALUES`]
/// values; `None` otherwise.
pub fn panels_for(x: MatrixView<'_>) -> Option<RowPanels> {
    let small = x.n_rows() * x.n_cols() <= PANEL_MAX_VALUES && x.n_cols() > 0;
    (small && panels_take(2)).then(|| RowPanels::new(x.as_slice(), x.n_rows(), x.n_cols()))
}

/// Whether [`gemm_panels`] takes A with `k` rows on this CPU.
pub fn panels_take(k: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        (2..=8).contains(&k) && std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = k;
        false
    }
}

/// `dst = x[s..e] · Aᵀ` (row-major, (e − s) × K): by [`gemm_panels`] where `panels` (the
/// panels of `x`, or none) take A's K and `s` starts a panel, by faer's GEMM
/// ([`super::gemm_xat`]) otherwise.
pub fn gemm_rows_xat(
    dst: &mut [f64],
    x: MatrixView<'_>,
    panels: Option<&RowPanels>,
    s: usize,
    e: usize,
    a: &RowMatrix,
) {
    match panels {
        Some(p) if s.is_multiple_of(PANEL_ROWS) && panels_take(a.n_rows()) => {
            debug_assert_eq!((p.n, p.d), (x.n_rows(), x.n_cols()), "the panels of x");
            gemm_panels(dst, p, s, e, a)
        }
        _ => super::gemm_xat(dst, x.rows_slice(s, e), e - s, a),
    }
}

/// `dst (rows s..e of X, row-major × K) = X[s..e] · Aᵀ`, where `panels` holds X and A is
/// K × D. Each entry is Σ_j x_ij a_kj as one chain of fused multiply-adds in j order from
/// zero ([`gemm_panels_portable`] gives the same bits).
///
/// # Panics
/// If `s` is not a multiple of [`PANEL_ROWS`], `e` exceeds N, A's width is not D, `dst` is
/// not `(e − s) · K` long, or [`panels_take`] is false for K.
pub fn gemm_panels(dst: &mut [f64], panels: &RowPanels, s: usize, e: usize, a: &RowMatrix) {
    let k = a.n_rows();
    assert!(panels_take(k), "gemm_panels takes 2 ≤ K ≤ 8 on AVX-512F");
    check(dst, panels, s, e, a);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `panels_take` checked AVX-512F, `check` the shapes.
    unsafe {
        match k {
            2 => panels_avx512::<2>(dst, panels, s, e, a.as_slice()),
            3 => panels_avx512::<3>(dst, panels, s, e, a.as_slice()),
            4 => panels_avx512::<4>(dst, panels, s, e, a.as_slice()),
            5 => panels_avx512::<5>(dst, panels, s, e, a.as_slice()),
            6 => panels_avx512::<6>(dst, panels, s, e, a.as_slice()),
            7 => panels_avx512::<7>(dst, panels, s, e, a.as_slice()),
            _ => panels_avx512::<8>(dst, panels, s, e, a.as_slice()),
        }
    }
}

fn check(dst: &[f64], panels: &RowPanels, s: usize, e: usize, a: &RowMatrix) {
    assert!(s.is_multiple_of(PANEL_ROWS), "rows start at a panel");
    assert!(s <= e && e <= panels.n, "rows within X");
    assert_eq!(a.n_cols(), panels.d, "A as wide as X");
    assert_eq!(
        dst.len(),
        (e - s) * a.n_rows(),
        "dst holds (e − s) × K values"
    );
}

/// [`gemm_panels`] one entry at a time with `f64::mul_add`: the same chains, for any K.
pub fn gemm_panels_portable(
    dst: &mut [f64],
    panels: &RowPanels,
    s: usize,
    e: usize,
    a: &RowMatrix,
) {
    check(dst, panels, s, e, a);
    let (k, d) = (a.n_rows(), panels.d);
    for i in s..e {
        let panel = panels.panel(i / PANEL_ROWS);
        let l = i % PANEL_ROWS;
        for c in 0..k {
            let ar = a.row(c);
            let mut acc = 0.0f64;
            for j in 0..d {
                acc = panel[j * PANEL_ROWS + l].mul_add(ar[j], acc);
            }
            dst[(i - s) * k + c] = acc;
        }
    }
}

/// The AVX-512F body: two panels (16 rows) at a time, so that each broadcast of a_kj serves
/// two multiply-adds and 2K chains are in flight (at K ≥ 2, enough to cover the
/// multiply-add's latency).
///
/// # Safety
/// The CPU has AVX-512F; the shapes passed [`check`] and `a` is K × D.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn panels_avx512<const K: usize>(
    dst: &mut [f64],
    panels: &RowPanels,
    s: usize,
    e: usize,
    a: &[f64],
) {
    use std::arch::x86_64::{
        __m512d, _mm512_fmadd_pd, _mm512_loadu_pd, _mm512_set1_pd, _mm512_setzero_pd,
        _mm512_storeu_pd,
    };
    let d = panels.d;
    let store = |dst: &mut [f64], acc: &[__m512d; K], first: usize| {
        let mut lanes = [[0.0f64; PANEL_ROWS]; K];
        for (c, v) in acc.iter().enumerate() {
            // SAFETY: `lanes[c]` holds the eight f64 the store writes.
            unsafe { _mm512_storeu_pd(lanes[c].as_mut_ptr(), *v) };
        }
        let rows = (e - first).min(PANEL_ROWS);
        for l in 0..rows {
            let out = &mut dst[(first + l - s) * K..(first + l - s + 1) * K];
            for c in 0..K {
                out[c] = lanes[c][l];
            }
        }
    };
    let mut first = s;
    while first + PANEL_ROWS < e {
        let p0 = panels.panel(first / PANEL_ROWS).as_ptr();
        let p1 = panels.panel(first / PANEL_ROWS + 1).as_ptr();
        let mut acc0 = [_mm512_setzero_pd(); K];
        let mut acc1 = [_mm512_setzero_pd(); K];
        for j in 0..d {
            // SAFETY: each panel holds PANEL_ROWS · d values; `a` holds K · d.
            let (x0, x1) = unsafe {
                (
                    _mm512_loadu_pd(p0.add(j * PANEL_ROWS)),
                    _mm512_loadu_pd(p1.add(j * PANEL_ROWS)),
                )
            };
            for c in 0..K {
                // SAFETY: c · d + j < K · d.
                let b = _mm512_set1_pd(unsafe { *a.get_unchecked(c * d + j) });
                acc0[c] = _mm512_fmadd_pd(x0, b, acc0[c]);
                acc1[c] = _mm512_fmadd_pd(x1, b, acc1[c]);
            }
        }
        store(dst, &acc0, first);
        store(dst, &acc1, first + PANEL_ROWS);
        first += 2 * PANEL_ROWS;
    }
    if first < e {
        // One panel left.
        let p0 = panels.panel(first / PANEL_ROWS).as_ptr();
        let mut acc = [_mm512_setzero_pd(); K];
        for j in 0..d {
            // SAFETY: as above.
            let x0 = unsafe { _mm512_loadu_pd(p0.add(j * PANEL_ROWS)) };
            for c in 0..K {
                // SAFETY: c · d + j < K · d.
                let b = _mm512_set1_pd(unsafe { *a.get_unchecked(c * d + j) });
                acc[c] = _mm512_fmadd_pd(x0, b, acc[c]);
            }
        }
        store(dst, &acc, first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::gemm_xat;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> RowMatrix {
        let data = (0..rows * cols)
            .map(|_| rng.random_range(-3.0..3.0))
            .collect();
        RowMatrix::new(rows, cols, data)
    }

    /// Every shape near the panel edges: the AVX-512F body equals the portable chains bit
    /// for bit, and both agree with faer's GEMM to rounding.
    #[test]
    fn panels_are_the_fma_chains_and_the_product() {
        if !panels_take(2) {
            eprintln!("skipped: the AVX-512F kernel (this CPU lacks AVX-512F); portable part run");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for n in [1, 7, 8, 9, 15, 16, 17, 33, 100] {
            for d in [1, 3, 8, 67, 100] {
                let x = random(n, d, &mut rng);
                let panels = RowPanels::new(x.as_slice(), n, d);
                for k in 1..=9 {
                    let a = random(k, d, &mut rng);
                    for (s, e) in [(0, n), (0, n / 2), (8 * (n / 16), n)] {
                        let mut want = vec![0.0; (e - s) * k];
                        gemm_panels_portable(&mut want, &panels, s, e, &a);
                        let mut faer = vec![0.0; (e - s) * k];
                        gemm_xat(&mut faer, x.rows_slice(s, e), e - s, &a);
                        for (w, f) in want.iter().zip(&faer) {
                            assert!((w - f).abs() <= 1e-12 * (1.0 + f.abs()), "{w} {f}");
                        }
                        if panels_take(k) {
                            let mut got = vec![f64::NAN; (e - s) * k];
                            gemm_panels(&mut got, &panels, s, e, &a);
                            let bits =
                                |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            assert_eq!(bits(&got), bits(&want), "n {n} d {d} k {k} rows {s}..{e}");
                        }
                    }
                }
            }
        }
    }

    /// Panel layout: row i, column j sits at panel i / 8, offset 8j + i mod 8; past the last
    /// row, zeros.
    #[test]
    fn panels_hold_the_rows_by_columns() {
        let x = RowMatrix::from_rows(
            &(0..10)
                .map(|i| vec![i as f64, -(i as f64)])
                .collect::<Vec<_>>(),
        );
        let p = RowPanels::new(x.as_slice(), 10, 2);
        assert_eq!((p.n(), p.d()), (10, 2));
        assert_eq!(p.panel(0)[..8], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        assert_eq!(
            p.panel(0)[8..],
            [-0.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0]
        );
        assert_eq!(p.panel(1)[..8], [8.0, 9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }
}
