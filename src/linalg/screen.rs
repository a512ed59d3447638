//! The nearest centre by direct distances (ties to the lowest index), found with a GEMM
//! screen: most distances come from ‖x‖² − 2x·c + ‖c‖², and only the centres that rounding
//! could make the nearest are measured directly, so labels and distances are those of the
//! direct search bit for bit. Used by OCC DP-means' worker step and by Lloyd's iterations.

use super::{sq_dist, sq_norm};
use crate::MatrixView;
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, Par};

/// The nearest of `centres` to `x` by `sq_dist` (ties to the lowest index) and its squared
/// distance; `None` when there are no centres.
pub fn direct_nearest(x: &[f64], centres: MatrixView<'_>) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for (k, c) in centres.rows().enumerate() {
        let d = sq_dist(x, c);
        if best.is_none_or(|(_, b)| d < b) {
            best = Some((k, d));
        }
    }
    best
}

/// What [`screened_nearest`] finds for one row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Screened {
    /// The nearest centre, as [`direct_nearest`] picks it.
    pub label: usize,
    /// Its squared distance, the bits of `sq_dist`.
    pub dist: f64,
    /// A lower bound on the exact squared distance from the row to every *other* centre
    /// (+∞ when there is no other centre).
    pub others_above: f64,
}

/// Rows per GEMM call of [`screened_nearest`] (the `rows × K` products stay in cache).
pub const SCREEN_ROWS: usize = 256;

/// Calls `each(i, row_i, nearest)` for every row of `rows`, in row order, with the answer of
/// [`direct_nearest`] (label and distance bit for bit) plus a lower bound on the distance to
/// the other centres. `c_norms` are the centres' squared norms.
///
/// With p = fl(x·c) from the GEMM, e = fl(‖x‖² + ‖c‖² − 2p) differs from the direct
/// `sq_dist(x, c)`, and from the exact distance, by at most a few D·u·(‖x‖² + ‖c‖²)
/// (u = 2⁻⁵³; Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1, for the dot
/// products, and the direct distance's own rounding, at most D·u times the distance ≤
/// 2(‖x‖² + ‖c‖²)). With `margin` = (4D + 16)·u·(‖x‖² + max‖c‖²), a bound on that difference
/// for every centre, the centre that the direct search picks has e within 2·`margin` of the
/// smallest e, so measuring directly just the centres within that band, in index order with a
/// strict `<`, gives the direct search's answer; and every other centre is at least its e
/// minus `margin` away. Typically one centre is measured per row.
///
/// Past [`SCREEN_CENTRES`] centres the products are formed a tile of centres at a time, with
/// the same labels and distances.
pub fn screened_nearest<'a>(
    rows: MatrixView<'a>,
    centres: MatrixView<'_>,
    c_norms: &[f64],
    mut each: impl FnMut(usize, &'a [f64], Option<Screened>),
) {
    if centres.n_rows() > SCREEN_CENTRES && centres.n_cols() > 0 {
        screened_nearest_tiled(rows, centres, c_norms, SCREEN_CENTRES, each);
        return;
    }
    screened_nearest_with(rows, centres, c_norms, &mut Vec::new(), |i, x, best, _| {
        each(i, x, best)
    });
}

/// Centres per tile of [`screened_nearest`]: a tile's products with [`SCREEN_ROWS`] rows take
/// 512 KiB and stay in a core's second-level cache while their smallest two are read, where
/// the products of all the centres at once (20 MB for 10 000 centres) go out to memory and
/// back. A small gain: a default DP-means fit of 200 000 × 50 blobs at P = 100, whose paper
/// run opens 5 484 clusters, took 4.74 and 4.84 s against 4.85 and 4.89 s (docs/speed.md §4).
pub const SCREEN_CENTRES: usize = 256;

/// [`screened_nearest`] with the products formed `tile` centres at a time: each row's
/// smallest two e_j are kept across the tiles ([`Smallest::then`]), and a row whose second
/// smallest falls inside the band of its smallest (a near tie, which needs every e_j again) is
/// screened afresh with all centres at once, alone with the other such rows of its block.
/// Label and distance are the direct search's, bit for bit. The bound on the other centres
/// holds as [`screened_nearest_with`]'s does (its margin covers any rounding of the
/// products), but its last bits may differ from that one's: a tile narrower than the GEMM's
/// kernels rounds its products otherwise.
fn screened_nearest_tiled<'a>(
    rows: MatrixView<'a>,
    centres: MatrixView<'_>,
    c_norms: &[f64],
    tile: usize,
    mut each: impl FnMut(usize, &'a [f64], Option<Screened>),
) {
    let (k, d) = (centres.n_rows(), centres.n_cols());
    debug_assert!(k > 1 && d > 0 && tile > 0);
    let c_max = c_norms.iter().copied().fold(0.0, f64::max);
    let tol = (4 * d + 16) as f64 * f64::EPSILON / 2.0;
    let mut prod = vec![0.0; SCREEN_ROWS.min(rows.n_rows()) * tile.min(k)];
    let mut again = Vec::new();
    let mut start = 0;
    while start < rows.n_rows() {
        let end = (start + SCREEN_ROWS).min(rows.n_rows());
        let b = end - start;
        let lhs = rows.rows_view(start, end);
        let norms: Vec<f64> = lhs.rows().map(sq_norm).collect();
        let mut best = vec![Smallest::NONE; b];
        for c0 in (0..k).step_by(tile) {
            let c1 = (c0 + tile).min(k);
            let w = c1 - c0;
            let out = MatMut::from_row_major_slice_mut(&mut prod[..b * w], b, w);
            let rhs = centres.rows_view(c0, c1);
            matmul(
                out,
                Accum::Replace,
                lhs.as_faer(),
                rhs.as_faer().transpose(),
                1.0,
                Par::Seq,
            );
            for (i, s) in best.iter_mut().enumerate() {
                let p = &prod[i * w..(i + 1) * w];
                *s = s.then(smallest_two(norms[i], &c_norms[c0..c1], p), c0);
            }
        }
        let mut found: Vec<Option<Screened>> = vec![None; b];
        again.clear();
        for (i, s) in best.iter().enumerate() {
            let margin = tol * (norms[i] + c_max);
            if s.second > s.first + 2.0 * margin {
                // One centre in the band: the nearest, as in [`screened_nearest_with`].
                found[i] = Some(Screened {
                    label: s.at,
                    dist: sq_dist(lhs.row(i), centres.row(s.at)),
                    others_above: (s.second - margin).max(0.0),
                });
            } else {
                again.extend_from_slice(lhs.row(i));
            }
        }
        if !again.is_empty() {
            let ties = MatrixView::new(&again, again.len() / d, d).expect("gathered whole rows");
            let mut tied = found.iter_mut().filter(|f| f.is_none());
            screened_nearest_with(ties, centres, c_norms, &mut Vec::new(), |_, _, s, _| {
                *tied.next().expect("one slot a tied row") = s;
            });
        }
        for (i, s) in found.into_iter().enumerate() {
            each(start + i, rows.row(start + i), s);
        }
        start = end;
    }
}

/// What the screen knows of one row's distance to every centre: a lower bound on each.
pub struct ScreenRow<'a> {
    /// The GEMM products x·c_j (empty when there was no GEMM).
    products: &'a [f64],
    c_norms: &'a [f64],
    x_norm: f64,
    margin: f64,
    /// The bound when there was no GEMM: +∞ (one centre, so no other) or 0 (no columns).
    fallback: f64,
}

impl ScreenRow<'_> {
    /// Lower bounds on the exact squared distances from the row to every centre, into `out`
    /// (one per centre).
    pub fn dists_above(&self, out: &mut [f64]) {
        if self.products.is_empty() {
            out.fill(self.fallback);
            return;
        }
        // e_j rounded as the screen rounds it (within `margin` of the exact distance).
        let xn = self.x_norm;
        for ((o, &c), &p) in out.iter_mut().zip(self.c_norms).zip(self.products) {
            let v = (xn + c - 2.0 * p) - self.margin;
            *o = if v > 0.0 { v } else { 0.0 };
        }
    }
}

/// [`screened_nearest`], also passing each row's [`ScreenRow`], with the products in `prod`
/// (scratch space, grown as needed).
pub fn screened_nearest_with<'a>(
    rows: MatrixView<'a>,
    centres: MatrixView<'_>,
    c_norms: &[f64],
    prod: &mut Vec<f64>,
    mut each: impl FnMut(usize, &'a [f64], Option<Screened>, &ScreenRow<'_>),
) {
    let (k, d) = (centres.n_rows(), centres.n_cols());
    debug_assert_eq!(c_norms.len(), k);
    if k <= 1 || d == 0 {
        // One centre: no other; no columns: every distance is 0.
        let fallback = if k <= 1 { f64::INFINITY } else { 0.0 };
        let screen = ScreenRow {
            products: &[],
            c_norms,
            x_norm: 0.0,
            margin: 0.0,
            fallback,
        };
        for (i, x) in rows.rows().enumerate() {
            let best = direct_nearest(x, centres).map(|(label, dist)| Screened {
                label,
                dist,
                others_above: fallback,
            });
            each(i, x, best, &screen);
        }
        return;
    }
    let c_max = c_norms.iter().copied().fold(0.0, f64::max);
    let tol = (4 * d + 16) as f64 * f64::EPSILON / 2.0;
    let need = SCREEN_ROWS.min(rows.n_rows()) * k;
    if prod.len() < need {
        prod.resize(need, 0.0);
    }
    let mut start = 0;
    while start < rows.n_rows() {
        let end = (start + SCREEN_ROWS).min(rows.n_rows());
        let b = end - start;
        let out = MatMut::from_row_major_slice_mut(&mut prod[..b * k], b, k);
        let lhs = rows.rows_view(start, end).as_faer();
        matmul(
            out,
            Accum::Replace,
            lhs,
            centres.as_faer().transpose(),
            1.0,
            Par::Seq,
        );
        for i in 0..b {
            let x = rows.row(start + i);
            let xn = sq_norm(x);
            let p = &prod[i * k..(i + 1) * k];
            let e = |j: usize| xn + c_norms[j] - 2.0 * p[j];
            let Smallest { first, at, second } = smallest_two(xn, c_norms, p);
            let margin = tol * (xn + c_max);
            let band = first + 2.0 * margin;
            let (label, dist) = if second > band {
                // The usual case: one centre in the band.
                (at, sq_dist(x, centres.row(at)))
            } else {
                let mut best = (at, sq_dist(x, centres.row(at)));
                for c in 0..k {
                    if c != at && e(c) <= band {
                        let dist = sq_dist(x, centres.row(c));
                        if dist < best.1 || (dist == best.1 && c < best.0) {
                            best = (c, dist);
                        }
                    }
                }
                best
            };
            // The smallest e among the other centres: the second smallest of all when the
            // nearest holds the smallest, else the smallest.
            let other = if label == at { second } else { first };
            let best = Screened {
                label,
                dist,
                others_above: (other - margin).max(0.0),
            };
            let screen = ScreenRow {
                products: p,
                c_norms,
                x_norm: xn,
                margin,
                fallback: 0.0,
            };
            each(start + i, x, Some(best), &screen);
        }
        start = end;
    }
}

/// The smallest e_j = ‖x‖² + ‖c_j‖² − 2 p_j, its lowest index, and the second smallest (a
/// value held twice counts twice; +∞ when K = 1).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Smallest {
    first: f64,
    at: usize,
    second: f64,
}

impl Smallest {
    /// Of no centre.
    const NONE: Smallest = Smallest {
        first: f64::INFINITY,
        at: 0,
        second: f64::INFINITY,
    };

    /// The smallest two of these centres and of `next`'s, whose indices start at `offset`,
    /// past all of these: `next`'s smallest wins only when lower (the lowest index on a
    /// tie), and the second is the lower of the loser's smallest and the winner's second.
    fn then(self, next: Smallest, offset: usize) -> Smallest {
        if next.first < self.first {
            Smallest {
                first: next.first,
                at: offset + next.at,
                second: self.first.min(next.second),
            }
        } else {
            Smallest {
                second: self.second.min(next.first),
                ..self
            }
        }
    }
}

/// [`Smallest`] of one row, in one pass. Compiled three times — for the baseline target
/// and with AVX2 in four lanes, with AVX-512F in eight — and picked at run time: the same
/// e_j (no FMA contraction), and a result that does not depend on the lanes (the smallest,
/// its lowest index, the second smallest), so the same bits.
fn smallest_two(xn: f64, c_norms: &[f64], p: &[f64]) -> Smallest {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        return unsafe { smallest_two_avx512(xn, c_norms, p) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { smallest_two_avx2(xn, c_norms, p) };
    }
    smallest_two_body::<4>(xn, c_norms, p)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn smallest_two_avx2(xn: f64, c_norms: &[f64], p: &[f64]) -> Smallest {
    smallest_two_body::<4>(xn, c_norms, p)
}

/// [`smallest_two_body`] in eight lanes of AVX-512F registers: the same operations lane for
/// lane (e_j = (‖x‖² + ‖c_j‖²) − 2p_j, a strict `<`, `min` as `if a < b { a } else { b }`),
/// the indices held as f64.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn smallest_two_avx512(xn: f64, c_norms: &[f64], p: &[f64]) -> Smallest {
    use std::arch::x86_64::{
        _CMP_LT_OQ, _mm512_add_pd, _mm512_cmp_pd_mask, _mm512_loadu_pd, _mm512_mask_blend_pd,
        _mm512_min_pd, _mm512_mul_pd, _mm512_set1_pd, _mm512_setr_pd, _mm512_setzero_pd,
        _mm512_storeu_pd, _mm512_sub_pd,
    };
    debug_assert_eq!(c_norms.len(), p.len());
    let full = p.len().min(c_norms.len()) / 8 * 8;
    let (xv, two, step) = (_mm512_set1_pd(xn), _mm512_set1_pd(2.0), _mm512_set1_pd(8.0));
    let mut first = _mm512_set1_pd(f64::INFINITY);
    let mut second = first;
    let mut at = _mm512_setzero_pd();
    let mut index = _mm512_setr_pd(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0);
    for j in (0..full).step_by(8) {
        // SAFETY: j + 8 ≤ full, within both slices.
        let (nc, pc) = unsafe {
            (
                _mm512_loadu_pd(c_norms.as_ptr().add(j)),
                _mm512_loadu_pd(p.as_ptr().add(j)),
            )
        };
        let e = _mm512_sub_pd(_mm512_add_pd(xv, nc), _mm512_mul_pd(two, pc));
        let lower = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(e, first);
        // The loser of e and the lane's smallest, a candidate for its second.
        let hi = _mm512_mask_blend_pd(lower, e, first);
        second = _mm512_min_pd(hi, second);
        at = _mm512_mask_blend_pd(lower, at, index);
        first = _mm512_mask_blend_pd(lower, first, e);
        index = _mm512_add_pd(index, step);
    }
    let mut lanes = [[0.0f64; 8]; 3];
    // SAFETY: each array holds eight values.
    unsafe {
        _mm512_storeu_pd(lanes[0].as_mut_ptr(), first);
        _mm512_storeu_pd(lanes[1].as_mut_ptr(), at);
        _mm512_storeu_pd(lanes[2].as_mut_ptr(), second);
    }
    merge_lanes(&lanes[0], &lanes[1], &lanes[2], (xn, c_norms, p), full)
}

/// Running minima in `LANES` lanes (lane l sees j ≡ l mod `LANES` of the full chunks, strict
/// `<`, so each lane keeps its lowest index), then the lanes and the tail merged by value and
/// index ([`merge_lanes`]).
#[inline(always)]
fn smallest_two_body<const LANES: usize>(xn: f64, c_norms: &[f64], p: &[f64]) -> Smallest {
    debug_assert_eq!(c_norms.len(), p.len());
    let k = p.len();
    let full = k / LANES * LANES;
    let mut first = [f64::INFINITY; LANES];
    let mut second = [f64::INFINITY; LANES];
    // Indices as f64 (exact below 2⁵³), so the lanes blend like the values.
    let mut at = [0.0f64; LANES];
    for (c, (nc, pc)) in c_norms[..full]
        .chunks_exact(LANES)
        .zip(p[..full].chunks_exact(LANES))
        .enumerate()
    {
        for l in 0..LANES {
            let e = xn + nc[l] - 2.0 * pc[l];
            let lower = e < first[l];
            let hi = if lower { first[l] } else { e };
            second[l] = if hi < second[l] { hi } else { second[l] };
            at[l] = if lower { (c * LANES + l) as f64 } else { at[l] };
            first[l] = if lower { e } else { first[l] };
        }
    }
    merge_lanes(&first, &at, &second, (xn, c_norms, p), full)
}

/// The lanes' smallest (with their indices) and seconds, and the e_j of the tail from `full`
/// on, merged into one [`Smallest`]: by value, the lowest index on a tie.
#[inline(always)]
fn merge_lanes(
    first: &[f64],
    at: &[f64],
    second: &[f64],
    (xn, c_norms, p): (f64, &[f64], &[f64]),
    full: usize,
) -> Smallest {
    let mut best = Smallest::NONE;
    // A lane's smallest may become the smallest of all (the one it replaces becomes a
    // candidate for the second); a lane's second can only be a second.
    let mut push = |e: f64, j: usize, may_be_first: bool| {
        if may_be_first && (e < best.first || (e == best.first && j < best.at)) {
            best.second = best.second.min(best.first);
            best.first = e;
            best.at = j;
        } else {
            best.second = best.second.min(e);
        }
    };
    for l in 0..first.len() {
        push(first[l], at[l] as usize, true);
        push(second[l], usize::MAX, false);
    }
    for j in full..p.len() {
        push(xn + c_norms[j] - 2.0 * p[j], j, true);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RowMatrix;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn direct(rows: &RowMatrix, centres: &RowMatrix) -> Vec<Option<(usize, f64)>> {
        rows.rows()
            .map(|x| direct_nearest(x, centres.view()))
            .collect()
    }

    fn screened_all(rows: &RowMatrix, centres: &RowMatrix) -> Vec<Option<Screened>> {
        let norms: Vec<f64> = centres.rows().map(sq_norm).collect();
        let mut out = Vec::new();
        screened_nearest(rows.view(), centres.view(), &norms, |i, _, b| {
            assert_eq!(i, out.len());
            out.push(b);
        });
        out
    }

    fn screened(rows: &RowMatrix, centres: &RowMatrix) -> Vec<Option<(usize, f64)>> {
        screened_all(rows, centres)
            .into_iter()
            .map(|s| s.map(|s| (s.label, s.dist)))
            .collect()
    }

    /// `n` rows near `k` centres at `offset` from the origin: each row is a centre plus
    /// noise of `sd`, or the midpoint of two centres (a near tie).
    pub(crate) fn near_ties(
        n: usize,
        k: usize,
        d: usize,
        offset: f64,
        sd: f64,
        seed: u64,
    ) -> (RowMatrix, RowMatrix) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut centres = RowMatrix::zeros(k, d);
        for c in 0..k {
            for v in centres.row_mut(c) {
                *v = offset + rng.random_range(-1.0..1.0);
            }
        }
        let mut rows = RowMatrix::zeros(n, d);
        for i in 0..n {
            let (a, b) = (rng.random_range(0..k), rng.random_range(0..k));
            let mid = i % 2 == 0;
            for j in 0..d {
                let base = if mid {
                    0.5 * (centres.row(a)[j] + centres.row(b)[j])
                } else {
                    centres.row(a)[j]
                };
                rows.row_mut(i)[j] = base + sd * rng.random_range(-1.0..1.0);
            }
        }
        (rows, centres)
    }

    #[test]
    fn the_gemm_screen_finds_the_direct_nearest_bit_for_bit() {
        // Near the origin, far from it (where ‖x‖² ≫ the distances and GEMM's rounding is
        // large), with exact ties (duplicate centres, rows at equal distances), more rows
        // than one GEMM call, one centre, none, and zero columns.
        for (offset, sd) in [(0.0, 0.3), (1e6, 1e-6), (1e8, 1e-3), (-3e4, 0.0)] {
            for (n, k, d, seed) in [(700, 40, 16, 1), (300, 7, 3, 2), (513, 100, 50, 3)] {
                let (rows, centres) = near_ties(n, k, d, offset, sd, seed);
                assert_eq!(
                    screened(&rows, &centres),
                    direct(&rows, &centres),
                    "{offset} {n}"
                );
            }
        }
        let centres = RowMatrix::from_rows(&[[1.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]);
        // (0, 0) ties centres 0, 1, 2 and 3 … (3, 3) ties 0, 2 and 3 at 13: the lowest index wins.
        let rows = RowMatrix::from_rows(&[[0.0, 0.0], [1.0, 0.0], [0.5, 0.5], [3.0, 3.0]]);
        let want = vec![
            Some((0, 1.0)),
            Some((0, 0.0)),
            Some((0, 0.5)),
            Some((0, 13.0)),
        ];
        assert_eq!(screened(&rows, &centres), want);
        assert_eq!(direct(&rows, &centres), want);
        let one = RowMatrix::from_rows(&[[2.0, 2.0]]);
        assert_eq!(screened(&rows, &one), direct(&rows, &one));
        assert_eq!(screened(&rows, &RowMatrix::zeros(0, 2)), vec![None; 4]);
        let flat = RowMatrix::zeros(3, 0);
        assert_eq!(
            screened(&flat, &RowMatrix::zeros(2, 0)),
            vec![Some((0, 0.0)); 3]
        );
    }

    #[test]
    fn the_bound_on_the_other_centres_holds_and_is_tight_enough() {
        // Every other centre's direct distance is at least the bound, on the same near and
        // far data; near the origin the bound is close to the second distance (within the
        // GEMM's rounding), so a bound of 0 everywhere would fail the second check.
        for (offset, sd) in [(0.0, 0.3), (1e6, 1e-6), (1e8, 1e-3), (-3e4, 0.0)] {
            for (n, k, d, seed) in [(700, 40, 16, 1), (300, 7, 3, 2), (513, 100, 50, 3)] {
                let (rows, centres) = near_ties(n, k, d, offset, sd, seed);
                for (x, s) in rows.rows().zip(screened_all(&rows, &centres)) {
                    let s = s.unwrap();
                    let mut second = f64::INFINITY;
                    for (c, cr) in centres.rows().enumerate() {
                        if c != s.label {
                            let dist = sq_dist(x, cr);
                            assert!(dist >= s.others_above, "{offset} {n}: {dist} < bound");
                            second = second.min(dist);
                        }
                    }
                    if offset == 0.0 {
                        let gap = second - s.others_above;
                        let scale = 1.0 + sq_norm(x) + second;
                        assert!(gap <= 1e-9 * scale, "{second} {}", s.others_above);
                    }
                }
            }
        }
        let one = RowMatrix::from_rows(&[[2.0, 2.0]]);
        let rows = RowMatrix::from_rows(&[[0.0, 0.0]]);
        assert_eq!(
            screened_all(&rows, &one)[0].unwrap().others_above,
            f64::INFINITY
        );
    }

    /// Tiles of 1 to 64 centres give the direct search's labels and distances, bit for bit,
    /// and a bound on the other centres that holds and is as tight as the untiled one's: on
    /// near and far data with exact ties (which go to the screen afresh), and where the
    /// smallest two fall in one tile or two. Fails if the tiles' smallest two are merged with
    /// the later index winning a tie, with the wrong second, or with a tile's index not
    /// offset.
    #[test]
    fn tiles_of_centres_give_the_untiled_answers() {
        for (offset, sd) in [(0.0, 0.3), (1e6, 1e-6), (1e8, 1e-3), (-3e4, 0.0)] {
            for (n, k, d, seed) in [(700, 40, 16, 1), (300, 7, 3, 2), (513, 100, 50, 3)] {
                let (rows, centres) = near_ties(n, k, d, offset, sd, seed);
                let want = screened_all(&rows, &centres);
                let norms: Vec<f64> = centres.rows().map(sq_norm).collect();
                for tile in [1, 2, 3, 8, 33, 64] {
                    let mut got = Vec::new();
                    screened_nearest_tiled(rows.view(), centres.view(), &norms, tile, |i, _, b| {
                        assert_eq!(i, got.len());
                        got.push(b.unwrap());
                    });
                    for ((g, w), x) in got.iter().zip(&want).zip(rows.rows()) {
                        let w = w.unwrap();
                        let at = format!("{offset} {n} tile {tile}");
                        assert_eq!((g.label, g.dist), (w.label, w.dist), "{at}");
                        for (c, cr) in centres.rows().enumerate() {
                            if c != g.label {
                                assert!(sq_dist(x, cr) >= g.others_above, "{at}");
                            }
                        }
                        let scale = 1.0 + sq_norm(x) + w.others_above;
                        assert!(
                            (g.others_above - w.others_above).abs() <= 1e-12 * scale,
                            "{at}"
                        );
                    }
                }
            }
        }
    }

    /// The merge of two tiles' smallest two is the smallest two of both together.
    #[test]
    fn smallest_two_of_tiles_merge_as_one() {
        let v = [5.0, 2.0, 7.0, 2.0, 1.0, 9.0, 1.0, 3.0];
        let zeros = [0.0; 8];
        let whole = smallest_two(0.0, &v, &zeros);
        for cut in 0..=v.len() {
            let a = smallest_two(0.0, &v[..cut], &zeros[..cut]);
            let b = smallest_two(0.0, &v[cut..], &zeros[cut..]);
            assert_eq!(Smallest::NONE.then(a, 0).then(b, cut), whole, "cut {cut}");
        }
        assert_eq!((whole.first, whole.at, whole.second), (1.0, 4, 1.0));
    }

    #[test]
    fn smallest_two_finds_them_in_the_lanes_and_the_tail() {
        // e_j = 0 + norms[j] − 2·0: the values themselves. Every length around the lane
        // width, the two smallest anywhere, equal or not, and ties to the lowest index.
        // Every form: four lanes and eight (the AVX-512F form's), and the one this CPU takes.
        let run = |v: &[f64]| {
            let zeros = vec![0.0; v.len()];
            let s = smallest_two(0.0, v, &zeros);
            assert_eq!(smallest_two_body::<4>(0.0, v, &zeros), s);
            assert_eq!(smallest_two_body::<8>(0.0, v, &zeros), s);
            (s.first, s.at, s.second)
        };
        assert_eq!(run(&[3.0]), (3.0, 0, f64::INFINITY));
        for n in 2..20 {
            for a in 0..n {
                for b in 0..n {
                    if a == b {
                        continue;
                    }
                    let mut v: Vec<f64> = (0..n).map(|i| 10.0 + i as f64).collect();
                    v[a] = -1.5;
                    v[b] = -0.5;
                    assert_eq!(run(&v), (-1.5, a, -0.5), "{n} {a} {b}");
                    v[b] = -1.5;
                    assert_eq!(run(&v), (-1.5, a.min(b), -1.5), "{n} {a} {b}");
                }
            }
        }
    }

    #[test]
    fn without_its_margin_the_screen_would_pick_other_centres() {
        // The data of the test above far from the origin: the GEMM's distances alone pick
        // another centre than the direct search for some rows, so the band is what makes the
        // screen exact (and the test above can fail).
        let (rows, centres) = near_ties(700, 40, 16, 1e6, 1e-6, 1);
        let dots = |x: &[f64], c: &[f64]| x.iter().zip(c).map(|(a, b)| a * b).sum::<f64>();
        let differs = rows
            .rows()
            .zip(direct(&rows, &centres))
            .filter(|(x, want)| {
                let gemm = centres
                    .rows()
                    .map(|c| sq_norm(x) + sq_norm(c) - 2.0 * dots(x, c))
                    .enumerate()
                    .fold(
                        (0, f64::INFINITY),
                        |b, (i, e)| if e < b.1 { (i, e) } else { b },
                    );
                Some(gemm.0) != want.map(|w| w.0)
            })
            .count();
        assert!(
            differs > 0,
            "the far data must defeat an unguarded GEMM screen"
        );
    }
}
