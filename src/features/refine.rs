//! Beyond the paper: a refinement move for BP-means. Alg. 1 cannot remove a feature that
//! stays non-empty, nor join two features, so it can end with a superfluous feature (the
//! paper's tabletop run reports one). After a run converges, `refine` tries, for every
//! feature j, to **remove** it, and for every pair (i, j) to **merge** them (z_i ← z_i ∨ z_j,
//! j dropped): the rows that held the touched features take their best z given the remaining
//! means (exact enumeration while K ≤ [`EXACT_ROW_MAX_K`], coordinate descent above), A is
//! re-solved by least squares, and the move is kept only if the BP-means objective
//! ‖X − ZA‖²_F + K·P (Eq. 6) strictly drops. After an accepted move BP-means sweeps run again
//! to convergence, then the moves are tried again, until none helps. Every step lowers the
//! objective, so the whole refinement terminates and never raises it.

use super::bp_means::bp_means_run;
use super::kernels::{best_row_exact, descend_row, gram, row_cost};
use super::lstsq::least_squares;
use super::model::{EXACT_ROW_MAX_K, FeatureRun};
use super::objective::residual_ss;
use super::zmat::BinaryMatrix;
use crate::RowMatrix;
use crate::linalg::dot;

/// Refines a converged BP-means run (see the module documentation).
pub(crate) fn refine_bp_means(
    x: &RowMatrix,
    x_norms: &[f64],
    penalty: f64,
    k_max: usize,
    max_iter: usize,
    mut run: FeatureRun,
) -> FeatureRun {
    let mut rounds = 0;
    while rounds < max_iter {
        rounds += 1;
        let Some((z, a)) = best_move(x, &run.z, &run.a, penalty, run.objective) else {
            break;
        };
        let mut trace = std::mem::take(&mut run.trace);
        let n_iter = run.n_iter;
        run = bp_means_run(x, x_norms, penalty, k_max, max_iter, z, a);
        trace.append(&mut run.trace);
        run.trace = trace;
        run.n_iter += n_iter;
    }
    run
}

/// The first removal or merge (removals first, then pairs in order) that lowers the
/// objective below `current`, as the new (Z, A).
fn best_move(
    x: &RowMatrix,
    z: &BinaryMatrix,
    a: &RowMatrix,
    penalty: f64,
    current: f64,
) -> Option<(BinaryMatrix, RowMatrix)> {
    let k = z.k();
    let tol = 1e-12 * current.abs().max(1.0);
    let objective =
        |zc: &BinaryMatrix, ac: &RowMatrix| residual_ss(x, zc, ac) + ac.n_rows() as f64 * penalty;
    for j in 0..k {
        let mut keep = vec![true; k];
        keep[j] = false;
        let affected: Vec<usize> = (0..z.n()).filter(|&n| z.row(n)[j] != 0).collect();
        let (zc, ac) = apply(x, z, a, &keep, None, &affected);
        if objective(&zc, &ac) < current - tol {
            return Some((zc, ac));
        }
    }
    for i in 0..k {
        for j in i + 1..k {
            let mut keep = vec![true; k];
            keep[j] = false;
            let affected: Vec<usize> = (0..z.n())
                .filter(|&n| z.row(n)[i] != 0 || z.row(n)[j] != 0)
                .collect();
            let (zc, ac) = apply(x, z, a, &keep, Some((i, j)), &affected);
            if objective(&zc, &ac) < current - tol {
                return Some((zc, ac));
            }
        }
    }
    None
}

/// Builds the candidate: optionally OR column `merge.1` into `merge.0`, keep the `keep`
/// columns, solve A by least squares, let the `affected` rows take their best z, re-solve A.
fn apply(
    x: &RowMatrix,
    z: &BinaryMatrix,
    a: &RowMatrix,
    keep: &[bool],
    merge: Option<(usize, usize)>,
    affected: &[usize],
) -> (BinaryMatrix, RowMatrix) {
    let mut zc = z.clone();
    if let Some((i, j)) = merge {
        for n in affected {
            let row = zc.row_mut(*n);
            row[i] |= row[j];
        }
    }
    zc.retain_cols(keep);
    let mut ac = a.clone();
    ac.retain_rows(keep);
    if merge.is_some() {
        ac = least_squares(x, &zc).a;
    }
    let kc = zc.k();
    if kc > 0 {
        let gm = gram(&ac);
        let mut g = vec![0.0; kc];
        let mut cand = vec![0u8; kc];
        for &n in affected {
            for (gk, ak) in g.iter_mut().zip(ac.rows()) {
                *gk = dot(ak, x.row(n));
            }
            if kc <= EXACT_ROW_MAX_K {
                best_row_exact(&g, &gm, &mut cand);
            } else {
                cand.copy_from_slice(zc.row(n));
                descend_row(&mut cand, &g, &gm, 4 * kc + 8);
            }
            if row_cost(&cand, &g, &gm) < row_cost(zc.row(n), &g, &gm) {
                zc.row_mut(n).copy_from_slice(&cand);
            }
        }
    }
    ac = least_squares(x, &zc).a;
    (zc, ac)
}
