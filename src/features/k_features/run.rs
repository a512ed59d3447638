//! One run of K-features (MAD-Bayes Alg. 4): minimise ‖X − Z A‖²_F (Eq. 14) with K fixed.
//!
//! Repeat until Z does not change: every row takes the z_n minimising ‖x_n − z_n A‖² given A
//! (rows are independent, so the step runs in parallel over row blocks with g = X Aᵀ by GEMM;
//! exact enumeration of the 2^K rows for K ≤ `exact_max_k`, coordinate descent from the
//! current row above); then A = (ZᵀZ)⁻¹ZᵀX. A row changes only when its error strictly drops.

use crate::MatrixView;
use crate::RowMatrix;
use crate::features::kernels::{
    GRAY_TABLE_MAX_K, GraySteps, best_row_exact, descend_row, gram, row_cost,
};
use crate::features::lstsq::least_squares_rss_gram;
use crate::features::model::FeatureRun;
use crate::features::objective::residual_ss;
use crate::features::zmat::BinaryMatrix;
use crate::linalg::{BLOCK_ROWS, ordered_block_reduce, xat_block};

/// Runs K-features from the seed (Z, A); `exact_max_k` bounds exact row enumeration, `x_sq`
/// is ‖X‖²_F ([`entry_sq_sum`]), `x_cols` X column by column where the fit keeps it (for the
/// sweeps' X Aᵀ, [`crate::linalg::xat_block`]).
///
/// [`entry_sq_sum`]: crate::features::lstsq::entry_sq_sum
pub(crate) fn k_features_run(
    x: MatrixView<'_>,
    x_cols: Option<&[f64]>,
    x_sq: f64,
    max_iter: usize,
    exact_max_k: usize,
    z0: BinaryMatrix,
    a0: RowMatrix,
) -> FeatureRun {
    let mut run =
        k_features_run_until(x, x_cols, x_sq, max_iter, exact_max_k, z0, a0, |_, _| false);
    run.objective = residual_ss(x, &run.z, &run.a);
    run
}

/// [`k_features_run`] without its last step (the returned `objective` is NaN, not
/// ‖X − ZA‖²_F recomputed from Z and A: for a run handed straight to BP-means, which scores
/// its own end), calling `stop(z, sweeps)` after each sweep's least-squares step, and ending
/// there (`converged` false) when it returns true. From that point on the
/// run is a function of Z alone: A is the least-squares A of Z (whose bits depend on Z
/// only), and the next sweep both starts from it and may end the run. A caller that knows
/// where the run goes from a Z it was shown (the refinement's deep moves, `refine.rs`) stops
/// it there.
#[allow(clippy::too_many_arguments)]
pub(crate) fn k_features_run_until(
    x: MatrixView<'_>,
    x_cols: Option<&[f64]>,
    x_sq: f64,
    max_iter: usize,
    exact_max_k: usize,
    z0: BinaryMatrix,
    a0: RowMatrix,
    mut stop: impl FnMut(&BinaryMatrix, usize) -> bool,
) -> FeatureRun {
    let mut z = z0;
    let mut a = a0;
    let mut trace = Vec::new();
    let mut converged = false;
    let mut n_iter = 0;
    // The seed's A is not the least-squares A of its Z (see BP-means).
    let mut a_is_ls = false;
    // G = A Aᵀ of the current A when the least-squares step formed it.
    let mut gm_a: Option<Vec<f64>> = None;
    while n_iter < max_iter {
        n_iter += 1;
        let gm = gm_a.take().unwrap_or_else(|| gram(&a));
        let changed = row_step(x, x_cols, &mut z, &a, &gm, exact_max_k);
        if changed == 0 && a_is_ls {
            // Z is the Z of the last least-squares step, whose A, G and residual are
            // functions of Z alone: solving again would give their bits.
            gm_a = Some(gm);
            let rss = *trace.last().expect("a least-squares step was made");
            trace.push(rss);
        } else {
            let (ls, rss, gm) = least_squares_rss_gram(x, &z, x_sq);
            a = ls.a;
            gm_a = Some(gm);
            trace.push(rss);
        }
        if stop(&z, n_iter) {
            break;
        }
        if changed == 0 && a_is_ls {
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

/// Sets every row of `z` to its best response to `a`; returns how many rows changed.
fn row_step(
    x: MatrixView<'_>,
    x_cols: Option<&[f64]>,
    z: &mut BinaryMatrix,
    a: &RowMatrix,
    gm: &[f64],
    exact_max_k: usize,
) -> usize {
    let (n, k) = (x.n_rows(), a.n_rows());
    if k == 0 {
        return 0;
    }
    let mut changed = 0;
    let zr: &BinaryMatrix = z;
    // The row-independent half of the exact search, once for every row.
    let table = (k <= exact_max_k && k <= GRAY_TABLE_MAX_K).then(|| GraySteps::new(gm, k));
    let mut updates: Vec<(usize, Vec<u8>)> = Vec::new();
    ordered_block_reduce(
        n,
        BLOCK_ROWS,
        |_, s, e| {
            let b = e - s;
            let mut g = vec![0.0; b * k];
            xat_block(&mut g, x, x_cols, s, e, a);
            // Each row's best response (through the table, four rows at a time).
            let mut cands = vec![0u8; b * k];
            if let Some(t) = &table {
                t.best_rows(&g, &mut cands);
            } else {
                for i in 0..b {
                    let (gi, cand) = (&g[i * k..(i + 1) * k], &mut cands[i * k..(i + 1) * k]);
                    if k <= exact_max_k {
                        best_row_exact(gi, gm, cand);
                    } else {
                        cand.copy_from_slice(zr.row(s + i));
                        descend_row(cand, gi, gm, 4 * k + 8);
                    }
                }
            }
            let mut out = Vec::new();
            for (i, cand) in cands.chunks_exact(k).enumerate() {
                let (gi, cur) = (&g[i * k..(i + 1) * k], zr.row(s + i));
                if cand != cur && row_cost(cand, gi, gm) < row_cost(cur, gi, gm) {
                    out.push((s + i, cand.to_vec()));
                }
            }
            out
        },
        |out| updates.extend(out),
    );
    for (i, row) in updates {
        z.row_mut(i).copy_from_slice(&row);
        changed += 1;
    }
    changed
}
