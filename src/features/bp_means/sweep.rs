//! One run of BP-means (MAD-Bayes Alg. 1): minimise ‖X − Z A‖²_F + K·P (Eq. 6) over Z, A and
//! K; capped BP-means (Eq. 15) never opens feature K_max + 1.
//!
//! Each sweep visits n = 1..N: for k = 1..K in turn z_nk takes the value with the smaller
//! ‖x_n − z_n A‖² (O(K) per flip through G = A Aᵀ and g = A x_n, one row of the GEMM X Aᵀ,
//! computed for whole blocks of rows in parallel since A is fixed during the sweep); then if
//! ‖r‖² > P for r = x_n − z_n A, a new feature with mean r held by n alone is opened (the
//! objective drops by ‖r‖² − P). After the sweep empty features are dropped, features with
//! identical columns of Z merged, and A = (ZᵀZ)⁻¹ZᵀX (see [`least_squares_means`]); a
//! column the least-squares solve finds dependent on the others (e.g. the sum of two) gets a
//! zero mean and is dropped too, since Z A does not change without it. Stop when a sweep
//! changes nothing and no column went.
//!
//! Precision: ‖r‖² = ‖x_n‖² − 2 z·g + zᵀGz cancels badly when ‖r‖ ≪ ‖x_n‖. Whenever that
//! estimate is within a safety margin of P (or above it) r is recomputed directly from x_n and
//! the rows of A, and the decision is taken on the direct value.
//!
//! [`least_squares_means`]: crate::features::least_squares_means

use super::rows::{RowPass, flip_rows};
use crate::MatrixView;
use crate::RowMatrix;
use crate::features::kernels::{flip_pass_from, gram, gz_on, ones_of, row_cost_on};
use crate::features::lstsq::{NormalSums, normal_equations, solve_with_rss_gram};
use crate::features::model::FeatureRun;
use crate::features::objective::{residual_ss, row_residual};
use crate::features::zmat::BinaryMatrix;
use crate::linalg::{BLOCK_ROWS, dot, gemm_xat, ordered_block_stream, xat_block};
use std::collections::HashMap;

/// Relative margin (of ‖x_n‖² + zᵀGz) inside which ‖r‖² is recomputed directly.
const RECOMPUTE_MARGIN: f64 = 1e-7;

/// A BP-means run's data and settings, all but its seed: the rows `x` and their squared
/// norms, the penalty P, the cap on K and on the sweeps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BpMeansRun<'a> {
    pub x: MatrixView<'a>,
    pub x_norms: &'a [f64],
    pub penalty: f64,
    pub k_max: usize,
    pub max_iter: usize,
    /// X column by column ([`columns_of`]), on small data: the sweeps then form X Aᵀ by
    /// [`xat_block`] where that gives faer's bits and is faster.
    ///
    /// [`columns_of`]: crate::linalg::columns_of
    /// [`xat_block`]: crate::linalg::xat_block
    pub x_cols: Option<&'a [f64]>,
}

impl BpMeansRun<'_> {
    /// Runs BP-means from the seed (Z, A) until Z stops changing or `max_iter` sweeps; the
    /// objective is recomputed from the final Z and A (directly, see the module
    /// documentation).
    pub fn run(&self, z0: BinaryMatrix, a0: RowMatrix) -> FeatureRun {
        let mut run = self.run_unscored(z0, a0);
        run.objective = residual_ss(self.x, &run.z, &run.a) + run.a.n_rows() as f64 * self.penalty;
        run
    }

    /// [`BpMeansRun::run`] without its last step: the returned `objective` is NaN, not the
    /// objective recomputed from Z and A. For a run handed straight to the refinement, which
    /// derives A and the objective from Z again.
    pub fn run_unscored(&self, z0: BinaryMatrix, a0: RowMatrix) -> FeatureRun {
        let BpMeansRun {
            x,
            x_norms,
            penalty,
            k_max,
            max_iter,
            x_cols,
        } = *self;
        let mut z = z0;
        let mut a = a0;
        let mut trace = Vec::new();
        let mut converged = false;
        let mut n_iter = 0;
        // The seed's A is not the least-squares A of its Z: a sweep without changes only proves
        // convergence once A has been through the least-squares step.
        let mut a_is_ls = false;
        let x_sq: f64 = x_norms.iter().sum();
        // G = A Aᵀ of the current A when the least-squares step formed it (the same values
        // `gram` gives), so the sweep need not form it again.
        let mut gm_a: Option<Vec<f64>> = None;
        // ZᵀZ and ZᵀX of Z as the next sweep starts, once summed: the sweep then only adds the
        // change from the entries it flips (see [`sweep`]).
        let mut normal_kept: Option<NormalSums> = None;
        while n_iter < max_iter {
            n_iter += 1;
            let gm_old = gm_a.take().unwrap_or_else(|| gram(&a));
            let kept = normal_kept.take();
            let (changed, opened, sums) =
                sweep(x, x_cols, x_norms, penalty, k_max, &mut z, &a, gm_old, kept);
            if changed == 0 && a_is_ls {
                // Nothing flipped or opened: Z, ZᵀZ and ZᵀX are those of the last
                // least-squares step, which left no empty, duplicate or dependent column, so
                // its A and objective are what solving again would give, bit for bit.
                let last = *trace.last().expect("a least-squares step was made");
                trace.push(last);
                converged = true;
                break;
            }
            for r in opened.rows() {
                a.push_row(r);
            }
            // The sweep gave ZᵀZ and ZᵀX of the new Z while it streamed X, unless it opened a
            // feature; then they are summed afresh. Empty and duplicate columns are read off ZᵀZ.
            let mut normal = sums.unwrap_or_else(|| {
                let (ztz, ztx) = normal_equations(x, &z);
                NormalSums { ztz, ztx }
            });
            let keep = clean_columns_mask_from_gram(&normal.ztz, z.k());
            let mut removed = keep.iter().filter(|&&v| !v).count();
            if removed > 0 {
                z.retain_cols(&keep);
                normal.retain(&keep);
            }
            let (ls, rss, gm) = solve_with_rss_gram(&normal.ztz, &normal.ztx, x_sq, x, &z);
            a = ls.a;
            gm_a = Some(gm);
            if !ls.dependent.is_empty() {
                // A column in the span of the others has a zero mean: Z A is unchanged without
                // it, and K·P drops.
                let mut keep = vec![true; z.k()];
                ls.dependent.iter().for_each(|&j| keep[j] = false);
                z.retain_cols(&keep);
                a.retain_rows(&keep);
                normal.retain(&keep);
                gm_a = gm_a.map(|g| retain_square(&g, &keep));
                removed += ls.dependent.len();
            }
            normal_kept = Some(normal);
            // Dropping dependent columns leaves Z A, hence the residual, unchanged.
            trace.push(rss + a.n_rows() as f64 * penalty);
            if changed == 0 && removed == 0 && a_is_ls {
                converged = true;
                break;
            }
            a_is_ls = true;
        }
        FeatureRun {
            z,
            a,
            objective: f64::NAN,
            n_iter,
            converged,
            trace,
        }
    }
}

/// One BP-means sweep against the fixed means `a` (rows in order 0..N). Returns the number
/// of changed entries plus opened features, the means of the opened features (whose
/// columns were appended to `z`), and, when it opened none, ZᵀZ and ZᵀX of the new Z.
/// Those are summed per block while the block of X is at hand, in block order: from
/// scratch, or, given `kept` (ZᵀZ and ZᵀX of `z` as the sweep starts), as `kept` plus each
/// block's change: ZᵀZ's in exact counts, ZᵀX's as (Z_new − Z_old)ᵀ X
/// ([`NormalSums::change_of_block`]). After the first
/// sweeps few entries flip, so this replaces a product the size of the GEMM X Aᵀ by a few
/// row additions. ZᵀZ's counts are exact either way; ZᵀX's rounding accumulates over the
/// sweeps by at most one rounding of each entry per flip that touches it.
///
/// The flips of row n over the features that existed when the sweep began depend only on
/// x_n and those features (the columns opened earlier in the sweep are 0 for row n until
/// its own pass reaches them), so they run in parallel over row blocks, together with the
/// GEMM X Aᵀ. The rows are then settled in order: a row flips the features opened earlier
/// in this sweep (if any), and may open a new one.
#[allow(clippy::too_many_arguments)]
fn sweep(
    x: MatrixView<'_>,
    x_cols: Option<&[f64]>,
    x_norms: &[f64],
    penalty: f64,
    k_max: usize,
    z: &mut BinaryMatrix,
    a: &RowMatrix,
    gm_old: Vec<f64>,
    kept: Option<NormalSums>,
) -> (usize, RowMatrix, Option<NormalSums>) {
    let (n, d) = (x.n_rows(), x.n_cols());
    let k_old = a.n_rows();
    debug_assert_eq!(gm_old.len(), k_old * k_old);
    let by_change = kept.is_some();
    let mut sums = Some(kept.unwrap_or_else(|| NormalSums::zeros(k_old, d)));
    // Gram matrix of old + opened features, row-major with stride `k_now`.
    // G and the means of old + opened features, copied from the sweep's own when the first
    // feature opens (most sweeps open none).
    let mut grown_gm: Option<Vec<f64>> = None;
    let mut opened = RowMatrix::zeros(0, d);
    let mut grown_all: Option<RowMatrix> = None;
    let mut changed = 0usize;
    let mut g = Vec::new();
    let mut h = Vec::new();
    let mut on = Vec::new();
    let mut r = vec![0.0; d];
    let start: &BinaryMatrix = &z.clone();
    debug_assert_eq!(start.k(), k_old, "Z and A differ in K");
    ordered_block_stream(
        n,
        BLOCK_ROWS,
        |_, s, e| {
            let b = e - s;
            let mut gb = vec![0.0; b * k_old];
            xat_block(&mut gb, x, x_cols, s, e, a);
            let mut rows = vec![0u8; b * k_old];
            start.pack_rows(s, e, &mut rows);
            // Under the cap no row can open a feature: the new-feature test is skipped.
            let may_open = k_old < k_max;
            let old = if by_change { rows.clone() } else { Vec::new() };
            let settled = flip_rows(&mut rows, &gb, &gm_old, k_old, &x_norms[s..e], may_open);
            // The rows whose residual may exceed P (`clearly_below` is false: the per-row test
            // below, on the same values): until a feature opens in this sweep, the others only
            // take their pass in order.
            let may_exceed: Vec<bool> = settled
                .iter()
                .zip(&x_norms[s..e])
                .map(|(p, &xn)| may_open && !clearly_below(p.estimate, p.quad, xn, penalty))
                .collect();
            // This block's share of ZᵀZ and ZᵀX (or its change), right if no feature opens up
            // to its end.
            let xb = x.rows_slice(s, e);
            let part = if by_change {
                // The rows the pass flipped an entry of: the others are as they were.
                let changed: Vec<bool> = settled.iter().map(|p| p.flips > 0).collect();
                NormalSums::change_of_block(xb, &old, &rows, &changed, k_old, d)
            } else {
                Some(NormalSums::of_block(xb, &rows, k_old, d))
            };
            (s, e, gb, rows, settled, may_exceed, part)
        },
        |(s, e, gb, rows, settled, may_exceed, part)| {
            // Products with the features opened in earlier blocks, by one GEMM for the block;
            // features opened inside this block are multiplied row by row.
            let k_pre = opened.n_rows();
            let mut ob = vec![0.0; (e - s) * k_pre];
            gemm_xat(&mut ob, x.rows_slice(s, e), e - s, &opened);
            let mut next = s;
            while next < e {
                if grown_all.is_none() {
                    // No feature opened yet: up to the next row that may open one, the rows
                    // take their pass as it is (the per-row code below would do just that).
                    let stop = may_exceed[next - s..]
                        .iter()
                        .position(|&m| m)
                        .map_or(e, |p| next + p);
                    for j in next..stop {
                        z.set_row_start(j, &rows[(j - s) * k_old..(j - s + 1) * k_old]);
                        changed += settled[j - s].flips;
                    }
                    next = stop;
                    if next == e {
                        break;
                    }
                }
                let i = next;
                next += 1;
                let (gm, all) = (
                    grown_gm.as_deref().unwrap_or(&gm_old),
                    grown_all.as_ref().unwrap_or(a),
                );
                let k_now = all.n_rows();
                z.set_row_start(i, &rows[(i - s) * k_old..(i - s + 1) * k_old]);
                let zi = z.row_mut(i);
                let RowPass {
                    flips,
                    mut estimate,
                    mut quad,
                } = settled[i - s];
                changed += flips;
                if k_now > k_old {
                    g.clear();
                    g.extend_from_slice(&gb[(i - s) * k_old..(i - s + 1) * k_old]);
                    g.extend_from_slice(&ob[(i - s) * k_pre..(i - s + 1) * k_pre]);
                    g.extend(opened.rows().skip(k_pre).map(|o| dot(o, x.row(i))));
                    h.resize(k_now, 0.0);
                    ones_of(zi, &mut on);
                    gz_on(&on, gm, &mut h);
                    changed += flip_pass_from(zi, &g, gm, &mut h, k_old);
                    ones_of(zi, &mut on);
                    quad = on.iter().map(|&j| h[j]).sum();
                    estimate = x_norms[i] + row_cost_on(&on, &g, gm, k_now);
                }
                if k_now >= k_max {
                    continue;
                }
                if clearly_below(estimate, quad, x_norms[i], penalty) {
                    continue;
                }
                let exact = row_residual(x.row(i), zi, all, &mut r);
                if exact > penalty {
                    // Open feature k_now = r, held by row i alone.
                    let new = z.push_col();
                    debug_assert_eq!(new, k_now);
                    z.row_mut(i)[new] = 1;
                    let mut grown = vec![0.0; (k_now + 1) * (k_now + 1)];
                    for p in 0..k_now {
                        grown[p * (k_now + 1)..p * (k_now + 1) + k_now]
                            .copy_from_slice(&gm[p * k_now..(p + 1) * k_now]);
                    }
                    for p in 0..k_now {
                        let v = dot(all.row(p), &r);
                        grown[p * (k_now + 1) + k_now] = v;
                        grown[k_now * (k_now + 1) + p] = v;
                    }
                    grown[k_now * (k_now + 1) + k_now] = exact;
                    grown_gm = Some(grown);
                    grown_all.get_or_insert_with(|| a.clone()).push_row(&r);
                    opened.push_row(&r);
                    changed += 1;
                }
            }
            if grown_all.is_some() {
                sums = None;
            }
            if let (Some(acc), Some(part)) = (sums.as_mut(), &part) {
                acc.add(part);
            }
        },
    );
    (changed, opened, sums)
}

/// Whether a row's residual ‖r‖², estimated as `estimate` = ‖x_n‖² + c(z) with zᵀGz =
/// `quad`, is below P by more than the margin within which it is recomputed directly, so
/// that the row cannot open a feature (false for a NaN estimate).
#[inline]
fn clearly_below(estimate: f64, quad: f64, x_norm: f64, penalty: f64) -> bool {
    let margin = RECOMPUTE_MARGIN * (x_norm + quad.abs());
    estimate <= penalty - margin
}

/// The rows and columns marked in `keep` of the square row-major matrix `m`.
fn retain_square(m: &[f64], keep: &[bool]) -> Vec<f64> {
    let k = keep.len();
    let kept: Vec<usize> = (0..k).filter(|&i| keep[i]).collect();
    let mut out = Vec::with_capacity(kept.len() * kept.len());
    for &i in &kept {
        out.extend(kept.iter().map(|&j| m[i * k + j]));
    }
    out
}

/// Drops empty columns of Z and merges identical ones (keeping the first). Returns how many
/// columns went. Means are not kept: the caller recomputes A by least squares.
pub(crate) fn clean_columns(z: &mut BinaryMatrix) -> usize {
    let keep = clean_columns_mask(z);
    let removed = keep.iter().filter(|&&v| !v).count();
    if removed > 0 {
        z.retain_cols(&keep);
    }
    removed
}

/// The columns [`clean_columns`] keeps, read off ZᵀZ (`ztz`, `k × k`): column c is empty
/// when (ZᵀZ)_cc = 0, and columns i < j are identical when (ZᵀZ)_ii = (ZᵀZ)_jj = (ZᵀZ)_ij
/// (their overlap is as large as each). O(K²), no pass over Z.
pub(crate) fn clean_columns_mask_from_gram(ztz: &[f64], k: usize) -> Vec<bool> {
    let mut keep: Vec<bool> = (0..k).map(|c| ztz[c * k + c] > 0.0).collect();
    for j in 0..k {
        if !keep[j] {
            continue;
        }
        let mjj = ztz[j * k + j];
        if (0..j).any(|i| keep[i] && ztz[i * k + i] == mjj && ztz[i * k + j] == mjj) {
            keep[j] = false;
        }
    }
    keep
}

/// The columns [`clean_columns`] keeps: non-empty, and the first of identical ones.
pub(crate) fn clean_columns_mask(z: &BinaryMatrix) -> Vec<bool> {
    let k = z.k();
    let sums = z.col_sums();
    let mut keep = vec![true; k];
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    for c in 0..k {
        if sums[c] == 0 {
            keep[c] = false;
            continue;
        }
        if seen.insert(z.col(c), c).is_some() {
            keep[c] = false;
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::row_sq_norms;

    /// Rows x = c + e with ‖c‖² ≈ 10¹⁶–10¹⁷ and one feature a = c held by every row: the true
    /// residual of each row is ‖e‖² = 1, but the Gram-matrix estimate ‖x‖² − 2 g + G carries
    /// an error of several units. Every row must open a feature at P = 0.5 (and none at
    /// P = 1.5): the decision has to be taken on the residual recomputed directly.
    #[test]
    fn duplicate_and_empty_columns_read_off_the_gram_matrix() {
        // Columns: 0 base, 1 empty, 2 = 0, 3 other, 4 = 3, 5 = 0, 6 subset of 3.
        let mut z = BinaryMatrix::zeros(9, 7);
        for n in 0..9 {
            let r = z.row_mut(n);
            r[0] = u8::from(n % 2 == 0);
            r[2] = r[0];
            r[5] = r[0];
            r[3] = u8::from(n < 5);
            r[4] = r[3];
            r[6] = u8::from(n < 2);
        }
        let x = RowMatrix::zeros(9, 1);
        let (ztz, _) = normal_equations(x.view(), &z);
        let want = clean_columns_mask(&z);
        assert_eq!(want, vec![true, false, false, true, false, false, true]);
        assert_eq!(clean_columns_mask_from_gram(&ztz, 7), want);
    }

    /// Integer-valued X (so ZᵀX is exact in any order), three blocks of rows, a random start
    /// Z and means that make many rows flip, then means that make few flip: a sweep given
    /// the start's sums and adding the changes returns what a sweep summing afresh returns,
    /// bit for bit, and both are the sums of the new Z.
    #[test]
    fn kept_sums_plus_changes_are_the_sums_afresh() {
        use crate::linalg::row_sq_norms;
        let (n, d, k) = (2 * BLOCK_ROWS + 300, 6, 4);
        let x = RowMatrix::new(
            n,
            d,
            (0..n * d).map(|i| ((i * 37 % 23) as f64) - 11.0).collect(),
        );
        let norms = row_sq_norms(x.view());
        let mut z = BinaryMatrix::zeros(n, k);
        for i in 0..n {
            for c in 0..k {
                z.row_mut(i)[c] = u8::from((i * 7 + c * 5) % 3 == 0);
            }
        }
        let means = |shift: f64| {
            RowMatrix::new(
                k,
                d,
                (0..k * d)
                    .map(|i| ((i * 5 % 9) as f64) - 4.0 + shift)
                    .collect(),
            )
        };
        let mut flips = Vec::new();
        for a in [means(0.0), means(0.05)] {
            let (ztz, ztx) = normal_equations(x.view(), &z);
            let kept = NormalSums { ztz, ztx };
            let mut z_fresh = z.clone();
            let run = |z: &mut BinaryMatrix, kept| {
                sweep(
                    x.view(),
                    None,
                    &norms,
                    1e300,
                    usize::MAX,
                    z,
                    &a,
                    gram(&a),
                    kept,
                )
            };
            let (changed, opened, by_change) = run(&mut z, Some(kept));
            let (changed_fresh, _, fresh) = run(&mut z_fresh, None);
            assert_eq!(opened.n_rows(), 0);
            assert_eq!(changed, changed_fresh);
            assert!(z.rows().eq(z_fresh.rows()));
            let (by_change, fresh) = (by_change.unwrap(), fresh.unwrap());
            assert_eq!(by_change.ztz, fresh.ztz);
            assert_eq!(by_change.ztx.as_slice(), fresh.ztx.as_slice());
            let (ztz, ztx) = normal_equations(x.view(), &z);
            assert_eq!(fresh.ztz, ztz);
            assert_eq!(fresh.ztx.as_slice(), ztx.as_slice());
            flips.push(changed);
        }
        // Many flips (the GEMM path of the changes), then few (entry by entry).
        eprintln!("flips per sweep: {flips:?}");
        assert!(
            8 * flips[0] > n * k && flips[1] > 0 && 8 * flips[1] < n * k,
            "{flips:?}"
        );
    }

    /// A run that reports convergence ends at a fixed point: its last sweep changed nothing
    /// (its trace ends with the same value twice, the last least-squares step not made
    /// again), A is the least-squares A of the returned Z, and one more sweep from (Z, A)
    /// flips and opens nothing. Block images, paper's and grown seeds, several penalties.
    #[test]
    fn converged_runs_end_at_a_fixed_point() {
        use crate::features::lstsq::least_squares;
        use crate::features::seeding::{FeatureSeeding, SeedTarget, seed_features};
        use crate::generate::block_images;
        use crate::restarts::run_rng;
        let mut converged = 0;
        for (n, sigma, penalty) in [(60, 0.5, 30.0), (120, 0.3, 10.0), (200, 0.5, 90.0)] {
            let x = block_images(n, 0.5, sigma, 4).unwrap().x;
            let norms = row_sq_norms(x.view());
            let bp = BpMeansRun {
                x: x.view(),
                x_norms: &norms,
                penalty,
                k_max: usize::MAX,
                max_iter: 300,
                x_cols: None,
            };
            for (r, grow) in (0..6).zip([false, true].into_iter().cycle()) {
                let target = SeedTarget::Penalty {
                    penalty,
                    k_max: usize::MAX,
                };
                let form = FeatureSeeding::BaseFeature;
                let (z0, a0) = seed_features(x.view(), form, target, grow, &mut run_rng(7, r));
                let run = bp.run(z0, a0);
                assert!(run.converged, "n {n} restart {r}");
                converged += 1;
                let t = &run.trace;
                assert!(t.len() >= 2 && t[t.len() - 1] == t[t.len() - 2], "{t:?}");
                let ls = least_squares(x.view(), &run.z).a;
                let scale = 1.0 + ls.as_slice().iter().fold(0.0f64, |m, v| m.max(v.abs()));
                for (p, q) in ls.as_slice().iter().zip(run.a.as_slice()) {
                    assert!((p - q).abs() <= 1e-9 * scale, "n {n} restart {r}: {p} {q}");
                }
                let mut z = run.z.clone();
                let (changed, opened, _) = sweep(
                    x.view(),
                    None,
                    &norms,
                    penalty,
                    usize::MAX,
                    &mut z,
                    &run.a,
                    gram(&run.a),
                    None,
                );
                assert_eq!((changed, opened.n_rows()), (0, 0), "n {n} restart {r}");
            }
        }
        assert_eq!(converged, 18);
    }

    #[test]
    fn new_features_are_decided_on_the_exact_residual() {
        for scale in [1e8, 2.5e8] {
            let c: Vec<f64> = (0..4).map(|j| scale * (1.0 + 0.37 * j as f64)).collect();
            let rows: Vec<Vec<f64>> = (0..24)
                .map(|i| {
                    let mut r = c.clone();
                    // A unit step along one axis, axis and sign varying by row (c ± 1 is
                    // exact in f64 at these magnitudes, so the true residual is exactly 1).
                    r[i % 4] += if i % 8 < 4 { 1.0 } else { -1.0 };
                    r
                })
                .collect();
            let x = RowMatrix::from_rows(&rows);
            let a = RowMatrix::from_rows(std::slice::from_ref(&c));
            for (penalty, want_open) in [(0.5, true), (1.5, false)] {
                let mut z = BinaryMatrix::zeros(x.n_rows(), 0);
                z.push_col();
                (0..x.n_rows()).for_each(|i| z.row_mut(i)[0] = 1);
                let (_, opened, _) = sweep(
                    x.view(),
                    None,
                    &row_sq_norms(x.view()),
                    penalty,
                    usize::MAX,
                    &mut z,
                    &a,
                    gram(&a),
                    None,
                );
                // The first row opens a feature; every later row then fits it or its mirror
                // image exactly or opens its own. Either way no row may keep a residual > P.
                let mut all = a.clone();
                opened.rows().for_each(|r| all.push_row(r));
                let mut r = vec![0.0; 4];
                for i in 0..x.n_rows() {
                    let res = row_residual(x.row(i), z.row(i), &all, &mut r);
                    assert!(
                        res <= penalty,
                        "scale {scale}, P {penalty}: row {i} keeps {res}"
                    );
                }
                assert_eq!(opened.n_rows() > 0, want_open, "scale {scale}, P {penalty}");
            }
        }
    }
}
