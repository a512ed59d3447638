//! One run of collapsed BP-means (MAD-Bayes Alg. 3, objective Eq. 10).
//!
//! Each sweep visits n = 1..N and gives row n the value minimising Eq. 10 with the other
//! rows fixed ([`RowModel`](super::row::RowModel): exactly over all 2^K values while K ≤ `exact_max_k`, by
//! coordinate descent above); then, if the residual of row n still exceeds P (q > P), a
//! singleton feature {n} is added (it fits x_n exactly, so the objective drops by q − P; it
//! is never redundant since q > 0 means x_n is not already fit). ZᵀZ, ZᵀX, (ZᵀZ)⁻¹ and
//! (ZᵀX)(ZᵀX)ᵀ are kept up to date by rank-one updates as rows change ([`NormalState`]), so
//! a row's model costs O(K·D + K³); rows whose removal leaves ZᵀZ singular use the
//! dependent-column solve. After the sweep empty, duplicate and dependent columns are
//! dropped (none of which raises Eq. 10). Stop when a sweep changes nothing.

use super::inverse::NormalState;
use crate::MatrixView;
use crate::features::bp_means::clean_columns;
use crate::features::lstsq::least_squares;
use crate::features::model::FeatureRun;
use crate::features::objective::residual_ss;
use crate::features::zmat::BinaryMatrix;

/// Runs collapsed BP-means from the seed `z0`.
pub(crate) fn collapsed_bp_means_run(
    x: MatrixView<'_>,
    penalty: f64,
    k_max: usize,
    max_iter: usize,
    exact_max_k: usize,
    z0: BinaryMatrix,
) -> FeatureRun {
    let n = x.n_rows();
    let mut z = z0;
    clean_columns(&mut z);
    let mut trace = Vec::new();
    let mut converged = false;
    let mut n_iter = 0;
    // The least-squares A of the current Z and the objective, once a sweep formed them.
    let mut last = None;
    while n_iter < max_iter {
        n_iter += 1;
        let mut state = NormalState::new(x, &z);
        let mut changed = 0usize;
        for i in 0..n {
            let old = z.row(i).to_vec();
            let (model, removed) = state.remove_row(x.row(i), &old, penalty);
            model.best(z.row_mut(i), exact_max_k);
            if z.row(i) != old.as_slice() {
                changed += 1;
                state.replace_row(x.row(i), removed, z.row(i));
            }
            if state.k() < k_max && model.increment(z.row(i)) > penalty {
                state.push_singleton(x.row(i), z.row(i));
                let c = z.push_col();
                z.row_mut(i)[c] = 1;
                changed += 1;
            }
        }
        let mut removed = clean_columns(&mut z);
        let ls = least_squares(x, &z);
        let a = if ls.dependent.is_empty() {
            ls.a
        } else {
            let mut keep = vec![true; z.k()];
            ls.dependent.iter().for_each(|&j| keep[j] = false);
            z.retain_cols(&keep);
            removed += ls.dependent.len();
            least_squares(x, &z).a
        };
        let objective = residual_ss(x, &z, &a) + z.k() as f64 * penalty;
        trace.push(objective);
        last = Some((a, objective));
        if changed == 0 && removed == 0 {
            converged = true;
            break;
        }
    }
    // Z has not changed since the last sweep's A and objective were formed.
    let (a, objective) = last.unwrap_or_else(|| {
        let a = least_squares(x, &z).a;
        let objective = residual_ss(x, &z, &a) + a.n_rows() as f64 * penalty;
        (a, objective)
    });
    FeatureRun {
        z,
        a,
        objective,
        n_iter,
        converged,
        trace,
    }
}
