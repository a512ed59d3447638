//! The least-squares feature means Â = argmin_A ‖X − Z A‖²_F, i.e. the solution of the normal
//! equations (ZᵀZ) A = ZᵀX (MAD-Bayes Eq. 10 and the A-step of Algs. 1 and 4).
//!
//! ZᵀZ is singular whenever a column of Z is empty, duplicates another, or is a sum of others
//! (e.g. z_3 = z_1 + z_2 on disjoint supports), and the authors' MATLAB `inv(ZᵀZ)` returns NaN
//! means there. Here the solve is a Cholesky factorisation of ZᵀZ **with removal of dependent
//! columns**: columns are factored in order, and a column whose Cholesky pivot (its squared
//! distance to the span of the columns kept before it) falls below `1e-10 · (ZᵀZ)_kk` is
//! declared dependent, left out of the solve, and gets a zero row in A. The kept columns span
//! the same space as all of Z, so Z Â — and the residual — is that of every least-squares
//! solution; Â is the one with zero rows on the dependent columns (not the minimum-norm one).
//! ZᵀZ and ZᵀX are summed over fixed row blocks in block order (thread-count independent).

use super::dense::{add_ztx_change_rows, add_ztx_rows};
use super::kernels::ones_into;
use super::zmat::BinaryMatrix;
use crate::MatrixView;
use crate::RowMatrix;
use crate::linalg::{BLOCK_ROWS, axpy, dot, ordered_block_reduce};

/// Relative pivot threshold below which a column of Z counts as dependent.
pub const DEPENDENT_PIVOT: f64 = 1e-10;

/// The result of [`least_squares_means`].
#[derive(Clone, Debug, PartialEq)]
pub struct LeastSquares {
    /// Â, `K × D`; the rows of dependent columns are zero.
    pub a: RowMatrix,
    /// Columns of Z found linearly dependent on earlier columns (or empty), ascending.
    pub dependent: Vec<usize>,
}

/// Solves (ZᵀZ) A = ZᵀX for a binary `z` (`N × K`) and data `x` (`N × D`), surviving
/// singular ZᵀZ as described in the module documentation.
///
/// # Panics
/// When `z` and `x` have different numbers of rows.
#[track_caller]
pub fn least_squares_means(x: &RowMatrix, z: &BinaryMatrix) -> LeastSquares {
    assert_eq!(x.n_rows(), z.n_rows(), "Z and X differ in N");
    least_squares(x.view(), z)
}

/// ZᵀZ (`K × K`, row-major) and ZᵀX (`K × D`).
pub(crate) fn normal_equations(x: MatrixView<'_>, z: &BinaryMatrix) -> (Vec<f64>, RowMatrix) {
    let (k, d) = (z.k(), x.n_cols());
    let mut acc = NormalSums::zeros(k, d);
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |_, s, e| {
            let mut rows = Vec::with_capacity((e - s) * k);
            (s..e).for_each(|n| rows.extend_from_slice(z.row(n)));
            NormalSums::of_block(x.rows_slice(s, e), &rows, k, d)
        },
        |part| acc.add(&part),
    );
    (acc.ztz, acc.ztx)
}

/// ZᵀZ and ZᵀX summed over row blocks: a block's part, or the sum of parts added in block
/// order (so the result is the same for any thread count).
pub(crate) struct NormalSums {
    pub ztz: Vec<f64>,
    pub ztx: RowMatrix,
}

impl NormalSums {
    pub fn zeros(k: usize, d: usize) -> Self {
        Self {
            ztz: vec![0.0; k * k],
            ztx: RowMatrix::zeros(k, d),
        }
    }

    /// The part of one block: its rows of X (`xb`) and of Z (`zb`, `b × k` bytes).
    pub fn of_block(xb: &[f64], zb: &[u8], k: usize, d: usize) -> Self {
        let mut ztx = RowMatrix::zeros(k, d);
        add_ztx_rows(xb, zb, k, &mut ztx);
        Self {
            ztz: ztz_counts(zb, k),
            ztx,
        }
    }

    /// How one block's share changes when its rows of Z go from `old` to `new` (`b × k`
    /// bytes each, X's rows `xb`; `changed` marks the rows that may differ, every other row
    /// being equal in both): ZᵀZ's change in exact counts, ZᵀX's as (Z_new − Z_old)ᵀ X
    /// ([`add_ztx_change_rows`]). `None` when no entry differs.
    pub fn change_of_block(
        xb: &[f64],
        old: &[u8],
        new: &[u8],
        changed: &[bool],
        k: usize,
        d: usize,
    ) -> Option<Self> {
        if old == new {
            return None;
        }
        let mut change = Self::zeros(k, d);
        add_ztx_change_rows(xb, old, new, changed, k, &mut change.ztx);
        // The ones of a row listed without a branch per entry (on the stack up to 64
        // features); the counts are exact, so their order does not matter.
        let mut stack = [0usize; 64];
        let mut heap = Vec::new();
        let ones: &mut [usize] = if k <= 64 {
            &mut stack[..k]
        } else {
            heap.resize(k, 0);
            &mut heap
        };
        for ((zo, zn), &maybe) in old.chunks_exact(k).zip(new.chunks_exact(k)).zip(changed) {
            debug_assert!(maybe || zo == zn, "a row not marked as changed differs");
            if !maybe {
                continue;
            }
            for (z, step) in [(zo, -1.0), (zn, 1.0)] {
                let m = ones_into(z, ones);
                for &i in &ones[..m] {
                    for &j in &ones[..m] {
                        change.ztz[i * k + j] += step;
                    }
                }
            }
        }
        Some(change)
    }

    pub fn add(&mut self, part: &NormalSums) {
        for (t, v) in self.ztz.iter_mut().zip(&part.ztz) {
            *t += v;
        }
        axpy(1.0, part.ztx.as_slice(), self.ztx.as_mut_slice());
    }

    /// Keeps the columns of Z marked in `keep`.
    pub fn retain(&mut self, keep: &[bool]) {
        let k = keep.len();
        let kept: Vec<usize> = (0..k).filter(|&i| keep[i]).collect();
        let mut m = Vec::with_capacity(kept.len() * kept.len());
        for &i in &kept {
            for &j in &kept {
                m.push(self.ztz[i * k + j]);
            }
        }
        self.ztz = m;
        self.ztx.retain_rows(keep);
    }
}

/// ZᵀZ of a block of Z (`zb`, `b × k` bytes, row-major) as `k × k` counts: each column is
/// turned into a bit set over the block's rows, and (ZᵀZ)_ij is the number of bits of
/// column i AND column j. Exact integers, so the same values as any other way of counting.
fn ztz_counts(zb: &[u8], k: usize) -> Vec<f64> {
    if k == 0 {
        return Vec::new();
    }
    let b = zb.len() / k;
    let words = b.div_ceil(64);
    let mut bits = vec![0u64; k * words];
    for (i, zr) in zb.chunks_exact(k).enumerate() {
        let (w, shift) = (i / 64, i % 64);
        for (c, &v) in zr.iter().enumerate() {
            bits[c * words + w] |= u64::from(v != 0) << shift;
        }
    }
    let mut m = vec![0.0; k * k];
    for i in 0..k {
        let bi = &bits[i * words..(i + 1) * words];
        for j in i..k {
            let bj = &bits[j * words..(j + 1) * words];
            let n: u32 = bi.iter().zip(bj).map(|(p, q)| (p & q).count_ones()).sum();
            m[i * k + j] = f64::from(n);
            m[j * k + i] = f64::from(n);
        }
    }
    m
}

pub(crate) fn least_squares(x: MatrixView<'_>, z: &BinaryMatrix) -> LeastSquares {
    let (ztz, ztx) = normal_equations(x, z);
    solve_normal(&ztz, ztx)
}

/// Below this fraction of ‖X‖²_F the residual sum of squares is recomputed explicitly rather
/// than taken from the normal equations (whose expansion cancels).
const RSS_EXPANSION_FLOOR: f64 = 1e-3;

/// [`least_squares`], and the residual sum of squares ‖X − Z Â‖²_F of its solution without a
/// pass over the data: ‖X‖²_F − 2⟨ZᵀX, Â⟩ + ⟨ZᵀZ, Â Âᵀ⟩ from the normal equations
/// (`x_sq` = ‖X‖²_F). The expansion loses about ε·‖X‖²_F, so when the residual is below
/// `RSS_EXPANSION_FLOOR`·‖X‖²_F (as on noise-free data) it is formed explicitly instead.
pub(crate) fn least_squares_and_rss(
    x: MatrixView<'_>,
    z: &BinaryMatrix,
    x_sq: f64,
) -> (LeastSquares, f64) {
    let (ls, rss, _) = least_squares_rss_gram(x, z, x_sq);
    (ls, rss)
}

/// [`least_squares_and_rss`] with the Gram matrix of Â (as [`solve_with_rss_gram`]).
pub(crate) fn least_squares_rss_gram(
    x: MatrixView<'_>,
    z: &BinaryMatrix,
    x_sq: f64,
) -> (LeastSquares, f64, Vec<f64>) {
    let (ztz, ztx) = normal_equations(x, z);
    solve_with_rss_gram(&ztz, &ztx, x_sq, x, z)
}

/// [`least_squares_and_rss`] from given normal equations ZᵀZ (`ztz`) and ZᵀX (`ztx`) of `z`,
/// with the Gram matrix Â Âᵀ it formed on the way (`K × K`, row-major, the values
/// [`gram`](super::kernels::gram) of Â gives) for the next sweep to reuse.
pub(crate) fn solve_with_rss_gram(
    ztz: &[f64],
    ztx: &RowMatrix,
    x_sq: f64,
    x: MatrixView<'_>,
    z: &BinaryMatrix,
) -> (LeastSquares, f64, Vec<f64>) {
    let ls = solve_normal(ztz, ztx.clone());
    let k = z.k();
    let gm = super::kernels::gram(&ls.a);
    // Four running sums each ([`dot`]), not one chain of K·D dependent additions.
    let cross = dot(ztx.as_slice(), ls.a.as_slice());
    debug_assert_eq!(gm.len(), k * k);
    let quad = dot(ztz, &gm);
    let rss = x_sq - 2.0 * cross + quad;
    if rss < RSS_EXPANSION_FLOOR * x_sq {
        let exact = super::objective::residual_ss(x, z, &ls.a);
        return (ls, exact, gm);
    }
    (ls, rss, gm)
}

/// ‖X‖²_F summed entry by entry in row-major order: the value K-features' runs and the
/// refinement's removals and merges expand their residuals around ([`least_squares_and_rss`]).
/// A fit computes it once and hands it to them, since the sum is one long chain of additions.
pub(crate) fn entry_sq_sum(x: MatrixView<'_>) -> f64 {
    x.as_slice().iter().map(|v| v * v).sum()
}

/// Solves `M A = B` (M = ZᵀZ, `K × K` symmetric positive semi-definite) by Cholesky with
/// removal of dependent columns; `b` is overwritten by the solution.
pub(crate) fn solve_normal(m: &[f64], b: RowMatrix) -> LeastSquares {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { solve_normal_avx2(m, b) };
    }
    solve_normal_body(m, b)
}

/// [`solve_normal`] compiled with AVX2: the same operations (no FMA), four lanes wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn solve_normal_avx2(m: &[f64], b: RowMatrix) -> LeastSquares {
    solve_normal_body(m, b)
}

#[inline(always)]
fn solve_normal_body(m: &[f64], mut b: RowMatrix) -> LeastSquares {
    let k = b.n_rows();
    debug_assert_eq!(m.len(), k * k);
    let mut l = vec![0.0; k * k];
    let mut kept = vec![false; k];
    for j in 0..k {
        let mut s = m[j * k + j];
        for p in 0..j {
            s -= l[j * k + p] * l[j * k + p];
        }
        if s.is_nan() || s <= DEPENDENT_PIVOT * m[j * k + j] || m[j * k + j] <= 0.0 {
            continue;
        }
        kept[j] = true;
        let ljj = s.sqrt();
        l[j * k + j] = ljj;
        for i in j + 1..k {
            let mut v = m[i * k + j];
            for p in 0..j {
                v -= l[i * k + p] * l[j * k + p];
            }
            l[i * k + j] = v / ljj;
        }
    }
    let d = b.n_cols();
    // Forward: L Y = B over kept rows (dependent rows of L are zero and are skipped). Row i
    // is updated in place from the rows before it (split off, so no copy is needed).
    for i in 0..k {
        if !kept[i] {
            b.row_mut(i).iter_mut().for_each(|v| *v = 0.0);
            continue;
        }
        let (done, rest) = b.as_mut_slice().split_at_mut(i * d);
        let row = &mut rest[..d];
        for p in 0..i {
            if kept[p] && l[i * k + p] != 0.0 {
                axpy(-l[i * k + p], &done[p * d..(p + 1) * d], row);
            }
        }
        let inv = 1.0 / l[i * k + i];
        row.iter_mut().for_each(|v| *v *= inv);
    }
    // Backward: Lᵀ A = Y.
    for i in (0..k).rev() {
        if !kept[i] {
            continue;
        }
        let (head, later) = b.as_mut_slice().split_at_mut((i + 1) * d);
        let row = &mut head[i * d..];
        for p in i + 1..k {
            if kept[p] && l[p * k + i] != 0.0 {
                let q = p - i - 1;
                axpy(-l[p * k + i], &later[q * d..(q + 1) * d], row);
            }
        }
        let inv = 1.0 / l[i * k + i];
        row.iter_mut().for_each(|v| *v *= inv);
    }
    debug_assert_eq!(b.n_cols(), d);
    LeastSquares {
        a: b,
        dependent: (0..k).filter(|&j| !kept[j]).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::objective::sum_of_squares;

    /// The solve compiled with AVX2 (where the CPU has it) gives the bits of the portable
    /// one, dependent columns included.
    #[test]
    fn dispatched_solve_gives_the_bits_of_the_portable_one() {
        for k in 1..7 {
            let d = 11;
            let z = RowMatrix::new(
                20,
                k,
                (0..20 * k)
                    .map(|i| f64::from(u8::from((i * 7 + i / 5) % 3 == 0)))
                    .collect(),
            );
            let mut m = vec![0.0; k * k];
            for i in 0..k {
                for j in 0..k {
                    m[i * k + j] = z.rows().map(|r| r[i] * r[j]).sum();
                }
            }
            let b = RowMatrix::new(k, d, (0..k * d).map(|i| (i as f64 * 0.37).sin()).collect());
            let (fast, body) = (solve_normal(&m, b.clone()), solve_normal_body(&m, b));
            assert_eq!(fast.dependent, body.dependent, "k {k}");
            let bits = |a: &RowMatrix| a.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast.a), bits(&body.a), "k {k}");
        }
    }

    #[test]
    fn bit_set_counts_are_the_gram_matrix_of_z() {
        for (b, k) in [(0, 3), (1, 1), (63, 5), (64, 7), (130, 9), (300, 50)] {
            let zb: Vec<u8> = (0..b * k)
                .map(|i| u8::from((i * 7 + i / 3) % 5 < 2))
                .collect();
            let got = ztz_counts(&zb, k);
            for i in 0..k {
                for j in 0..k {
                    let want = (0..b).filter(|&n| zb[n * k + i] != 0 && zb[n * k + j] != 0);
                    assert_eq!(
                        got[i * k + j],
                        want.count() as f64,
                        "b {b} k {k} ({i}, {j})"
                    );
                }
            }
        }
        assert!(ztz_counts(&[], 0).is_empty());
    }

    /// A block's change of ZᵀZ is the counts after less the counts before, with the ones
    /// listed on the stack (K ≤ 64) and on the heap (K > 64).
    #[test]
    fn changes_of_ztz_are_the_differences_of_the_counts() {
        for (b, k) in [(40, 5), (40, 64), (40, 70)] {
            let old: Vec<u8> = (0..b * k)
                .map(|i| u8::from((i * 7 + i / 3) % 5 < 2))
                .collect();
            let new: Vec<u8> = (old.iter().enumerate())
                .map(|(i, &v)| v ^ u8::from(i % 11 == 0))
                .collect();
            let changed: Vec<bool> = (0..b)
                .map(|n| old[n * k..(n + 1) * k] != new[n * k..(n + 1) * k])
                .collect();
            let xb = vec![1.0; b * 2];
            let change = NormalSums::change_of_block(&xb, &old, &new, &changed, k, 2).unwrap();
            let (before, after) = (ztz_counts(&old, k), ztz_counts(&new, k));
            for (i, (c, (a, p))) in change.ztz.iter().zip(after.iter().zip(&before)).enumerate() {
                assert_eq!(*c, a - p, "b {b} k {k} entry {i}");
            }
        }
    }

    fn data() -> RowMatrix {
        RowMatrix::from_rows(&[
            [1.0, 2.0, 0.5],
            [0.0, 1.0, -1.0],
            [3.0, 0.0, 2.0],
            [1.5, -2.0, 0.0],
            [-1.0, 0.5, 4.0],
        ])
    }

    /// Zᵀ(X − Z Â) = 0: the normal equations hold, so Â is a least-squares solution.
    fn assert_normal_equations(x: &RowMatrix, z: &BinaryMatrix, a: &RowMatrix) {
        let z = z.to_row_matrix();
        for k in 0..z.n_cols() {
            for dd in 0..x.n_cols() {
                let mut g = 0.0;
                for n in 0..x.n_rows() {
                    let fit: f64 = (0..z.n_cols()).map(|j| z.row(n)[j] * a.row(j)[dd]).sum();
                    g += z.row(n)[k] * (x.row(n)[dd] - fit);
                }
                assert!(g.abs() < 1e-10, "gradient {g} at ({k}, {dd})");
            }
            assert!(a.row(k).iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn full_rank_matches_the_normal_equations() {
        let x = data();
        let z = BinaryMatrix::from_rows(&[[1, 0], [1, 1], [0, 1], [1, 0], [0, 1]]);
        let ls = least_squares_means(&x, &z);
        assert!(ls.dependent.is_empty());
        assert_normal_equations(&x, &z, &ls.a);
    }

    #[test]
    fn duplicate_and_sum_of_others_columns_are_dropped() {
        let x = data();
        let base = BinaryMatrix::from_rows(&[[1, 0], [1, 1], [0, 1], [1, 0], [0, 1]]);
        let reduced = least_squares_means(&x, &base);
        let rss = sum_of_squares(&x, &base, &reduced.a);
        // Duplicate column (col 2 = col 0), an empty column (3), and with disjoint supports
        // a column that is the sum of two others (col 4 = col 5 + col 6 on rows {0,3} ∪ {2}).
        let z = BinaryMatrix::from_rows(&[
            [1, 0, 1, 0, 1, 1, 0],
            [1, 1, 1, 0, 0, 0, 0],
            [0, 1, 0, 0, 1, 0, 1],
            [1, 0, 1, 0, 1, 1, 0],
            [0, 1, 0, 0, 0, 0, 0],
        ]);
        let ls = least_squares_means(&x, &z);
        assert_eq!(ls.dependent, vec![2, 3, 6]);
        assert_normal_equations(&x, &z, &ls.a);
        for j in [2, 3, 6] {
            assert!(ls.a.row(j).iter().all(|&v| v == 0.0));
        }
        // The columns span more than `base`, so the residual cannot be larger.
        assert!(sum_of_squares(&x, &z, &ls.a) <= rss + 1e-12);
        // Only duplicated columns: exactly the residual of the reduced problem.
        let dup = BinaryMatrix::from_rows(&[[1, 0, 1], [1, 1, 1], [0, 1, 0], [1, 0, 1], [0, 1, 0]]);
        let ls = least_squares_means(&x, &dup);
        assert_eq!(ls.dependent, vec![2]);
        assert!((sum_of_squares(&x, &dup, &ls.a) - rss).abs() < 1e-12);
    }
}
