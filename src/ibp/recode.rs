//! Recoding moves: Metropolis–Hastings moves that rewrite two or three features whose rows
//! are disjoint or nested as another set of features that explains the same rows, scored on
//! the collapsed marginal p(X | Z) (A integrated out), like the split–merge moves.
//!
//! The traps they undo (measured on block images, docs/ibp.md): a feature that stands for
//! the sum of two true ones, b ≈ a₁ + a₂, held by the rows that hold both, beside features
//! a₁ and a₂ held by the rows that hold only one; or, on centred data, a feature that stands
//! for a sum of several negated shapes beside the features of its parts. Neither the
//! single-entry and block Gibbs updates (each row would have to change three or more entries
//! at once, and every row must do it before the feature can go) nor the split–merge moves
//! (a split allocates the rows of one feature; here the rows must join two *other*
//! features) leave such a state. Three deterministic proposals do:
//!
//! * **Fuse** three pairwise-disjoint features P, Q, B into P ∪ B and Q ∪ B (K → K − 1): the
//!   rows of B, which held b ≈ a₁ + a₂, now hold both a₁ and a₂.
//! * **Dissolve**, its reverse: two features X, Y that cross (X \ Y, Y \ X, X ∩ Y all
//!   non-empty) become X \ Y, Y \ X and X ∩ Y (K → K + 1).
//! * **Recode a pair** (K fixed): two features whose rows are disjoint (P, Q) or nested
//!   (P ∪ Q ⊃ Q) describe three row classes — none, P, Q — and can be written in three ways,
//!   {P, Q}, {P ∪ Q, P} and {P ∪ Q, Q}; the linear map that takes one to another leaves
//!   every row's mean unchanged (e.g. {P ∪ Q, Q} with means u, v − u is {P, Q} with u, v).
//!   The proposal picks one of the two other ways. A feature that is a sum of parts held by
//!   disjoint rows sheds one part per recoding, and two features with the same mean held by
//!   disjoint rows become one and a feature with a mean near 0 (which Gibbs then removes).
//!
//! One attempt picks one of the three kinds with probability ⅓ each, then for a pair recode
//! or a dissolve an unordered pair of features uniformly, for a fuse an unordered triple and
//! which of the three is B uniformly; if the chosen features do not have the required
//! relation nothing happens. Otherwise the move is accepted with probability min(1, R),
//!
//!   R = α^{K′−K} ∏_{k′} f(m_{k′}) / ∏_k f(m_k) · p(X | Z′) / p(X | Z) · c,
//!
//! f(m) = (N − m)!(m − 1)!/N! (Eq. 1's part of one feature), and c the ratio of the reverse
//! to the forward proposal's probability: 1 for a pair recode (each of the three ways
//! reaches the other two with probability ½), C(K, 2)/(3 C(K + 1, 3)) = 1/(K + 1) for a
//! dissolve and 3 C(K, 3)/C(K − 1, 2) = K for a fuse. On the equivalence classes \[Z\]
//! this is detailed balance for P(\[Z\] | X): when columns repeat, the number of ways to pick
//! a given pair or triple is the product of the columns' multiplicities, and those products
//! cancel against the ∏_h K_h! of the class's prior (Eq. 1), so the same R holds.
//! `tests/ibp_exact.rs` checks the move alone on the exact 3-row posterior and inside the
//! samplers' chains.
//!
//! Cost of one attempt: O(N) to compare the columns, and when they qualify the Gram update
//! and Cholesky factor of the split–merge moves, O(N K + m D + K³ + K² D).

use super::common::Hyper;
use super::split_merge::{self, Fault, Marginal, Scratch, log_f};
use super::state::Feats;
use crate::RowMatrix;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// A deliberate error in the acceptance ratio, for the tests that show the exact-posterior
/// checks catch it. Only [`RecodeFault::None`] is a correct move.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecodeFault {
    /// The correct move.
    None,
    /// The proposal-count ratio c of the dissolve and fuse (1/(K + 1), K) is left out.
    NoCount,
    /// The prior part ∏ f(m) of the ratio is left out (likelihood and α only).
    NoPrior,
}

/// How the rows of two columns relate.
enum Relation {
    /// Some row holds both, or the columns are equal: only a dissolve (when they cross).
    Cross {
        only_a: Vec<u8>,
        only_b: Vec<u8>,
        both: Vec<u8>,
    },
    /// The columns are equal (no move).
    Equal,
    /// The three ways of writing {P, Q}: P and Q disjoint and non-empty.
    Codes {
        p: Vec<u8>,
        q: Vec<u8>,
        current: usize,
    },
}

fn relation(a: &[u8], b: &[u8]) -> Relation {
    let (mut ab, mut a_only, mut b_only) = (0usize, 0usize, 0usize);
    for (&u, &v) in a.iter().zip(b) {
        match (u != 0, v != 0) {
            (true, true) => ab += 1,
            (true, false) => a_only += 1,
            (false, true) => b_only += 1,
            (false, false) => {}
        }
    }
    let minus = |x: &[u8], y: &[u8]| -> Vec<u8> {
        x.iter()
            .zip(y)
            .map(|(&u, &v)| u8::from(u != 0 && v == 0))
            .collect()
    };
    match (ab, a_only, b_only) {
        (0, _, _) => Relation::Codes {
            p: a.to_vec(),
            q: b.to_vec(),
            current: 0,
        },
        (_, 0, 0) => Relation::Equal,
        // b ⊂ a: {P ∪ Q, Q} with P = a \ b, Q = b.
        (_, _, 0) => Relation::Codes {
            p: minus(a, b),
            q: b.to_vec(),
            current: 2,
        },
        // a ⊂ b: {P ∪ Q, P} with P = a, Q = b \ a.
        (_, 0, _) => Relation::Codes {
            p: a.to_vec(),
            q: minus(b, a),
            current: 1,
        },
        _ => Relation::Cross {
            only_a: minus(a, b),
            only_b: minus(b, a),
            both: a
                .iter()
                .zip(b)
                .map(|(&u, &v)| u8::from(u != 0 && v != 0))
                .collect(),
        },
    }
}

/// Way `w` of writing the disjoint P, Q: 0 → {P, Q}, 1 → {P ∪ Q, P}, 2 → {P ∪ Q, Q}.
fn code(p: &[u8], q: &[u8], w: usize) -> Vec<Vec<u8>> {
    let union: Vec<u8> = p.iter().zip(q).map(|(&u, &v)| u | v).collect();
    match w {
        0 => vec![p.to_vec(), q.to_vec()],
        1 => vec![union, p.to_vec()],
        _ => vec![union, q.to_vec()],
    }
}

fn disjoint(a: &[u8], b: &[u8]) -> bool {
    a.iter().zip(b).all(|(&u, &v)| u == 0 || v == 0)
}

/// Two distinct indices in 0..k, increasing (k ≥ 2).
fn pair(k: usize, rng: &mut ChaCha8Rng) -> (usize, usize) {
    let a = rng.random_range(0..k);
    let mut b = rng.random_range(0..k - 1);
    if b >= a {
        b += 1;
    }
    (a.min(b), a.max(b))
}

/// One recoding attempt on `state` (module documentation): the features, their Gram
/// matrices and log p(X | Z), kept up to date. Returns whether a proposal was accepted.
pub(super) fn attempt(
    x: &RowMatrix,
    (feats, marg, ll): (&mut Feats, &mut Marginal, &mut f64),
    hyper: &Hyper,
    lf: &[f64],
    fault: RecodeFault,
    sc: &mut Scratch,
    rng: &mut ChaCha8Rng,
) -> bool {
    let k = feats.k();
    let kind = rng.random_range(0..3u8);
    // (columns removed, increasing; columns added; log of α^{ΔK} · c).
    let (gone, new, log_extra): (Vec<usize>, Vec<Vec<u8>>, f64) = match kind {
        0 | 1 if k >= 2 => {
            let (a, b) = pair(k, rng);
            match (kind, relation(feats.col(a), feats.col(b))) {
                (0, Relation::Codes { p, q, current }) => {
                    let w = (current + 1 + rng.random_range(0..2usize)) % 3;
                    (vec![a, b], code(&p, &q, w), 0.0)
                }
                (
                    1,
                    Relation::Cross {
                        only_a,
                        only_b,
                        both,
                    },
                ) => {
                    let count = if fault == RecodeFault::NoCount {
                        0.0
                    } else {
                        -((k + 1) as f64).ln()
                    };
                    (
                        vec![a, b],
                        vec![only_a, only_b, both],
                        hyper.alpha.ln() + count,
                    )
                }
                _ => return false,
            }
        }
        2 if k >= 3 => {
            // An unordered triple, then B among it.
            let mut t = [0usize; 3];
            t[0] = rng.random_range(0..k);
            loop {
                t[1] = rng.random_range(0..k);
                if t[1] != t[0] {
                    break;
                }
            }
            loop {
                t[2] = rng.random_range(0..k);
                if t[2] != t[0] && t[2] != t[1] {
                    break;
                }
            }
            // t is a uniformly random ordered triple; its last entry is B.
            let (p, q, b) = (feats.col(t[0]), feats.col(t[1]), feats.col(t[2]));
            if !(disjoint(p, q) && disjoint(p, b) && disjoint(q, b)) {
                return false;
            }
            let pb: Vec<u8> = p.iter().zip(b).map(|(&u, &v)| u | v).collect();
            let qb: Vec<u8> = q.iter().zip(b).map(|(&u, &v)| u | v).collect();
            let count = if fault == RecodeFault::NoCount {
                0.0
            } else {
                (k as f64).ln()
            };
            let mut gone = t.to_vec();
            gone.sort_unstable();
            (gone, vec![pb, qb], -hyper.alpha.ln() + count)
        }
        _ => return false,
    };
    let d = x.n_cols();
    let new_cols: Vec<&[u8]> = new.iter().map(Vec::as_slice).collect();
    marg.proposal_into(x, feats, (&gone, &new_cols), &mut sc.kept, &mut sc.spare);
    let ll2 = sc.spare.log_lik(d, hyper, &mut sc.lin);
    let mut log_r = ll2 - *ll + log_extra;
    if fault != RecodeFault::NoPrior {
        let m_of = |c: &[u8]| c.iter().filter(|&&v| v != 0).count();
        log_r += new.iter().map(|c| log_f(m_of(c), lf)).sum::<f64>()
            - gone.iter().map(|&c| log_f(feats.m(c), lf)).sum::<f64>();
    }
    if log_r >= 0.0 || rng.random::<f64>() < log_r.exp() {
        for &c in gone.iter().rev() {
            feats.remove(c);
        }
        for col in new {
            feats.push_col(col);
        }
        std::mem::swap(marg, &mut sc.spare);
        *ll = ll2;
        true
    } else {
        false
    }
}

/// Applies `attempts` recoding attempts (module documentation) to `z` (`N × K`, non-zero
/// entries count as 1, columns no row holds are dropped) under the linear-Gaussian IBP with
/// the given α, σ_X, σ_A, and returns the new Z. Each attempt leaves P(\[Z\] | X) invariant.
///
/// # Panics
/// When `z` and `x` differ in N or a hyperparameter is not positive.
pub fn recode_steps(
    x: &RowMatrix,
    z: &RowMatrix,
    alpha: f64,
    sigma_x: f64,
    sigma_a: f64,
    attempts: usize,
    rng: &mut ChaCha8Rng,
) -> RowMatrix {
    recode_steps_with_fault(
        x,
        z,
        alpha,
        sigma_x,
        sigma_a,
        attempts,
        RecodeFault::None,
        rng,
    )
}

/// [`recode_steps`] with a deliberate error in the acceptance ratio (tests only).
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn recode_steps_with_fault(
    x: &RowMatrix,
    z: &RowMatrix,
    alpha: f64,
    sigma_x: f64,
    sigma_a: f64,
    attempts: usize,
    fault: RecodeFault,
    rng: &mut ChaCha8Rng,
) -> RowMatrix {
    let hyper = (alpha, sigma_x, sigma_a);
    split_merge::moves_alone(x, z, hyper, (0, attempts), (Fault::None, fault), rng)
}
