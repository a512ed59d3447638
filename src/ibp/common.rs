//! Pieces shared by the three Gibbs samplers: the hyperparameters, drawing from
//! log-weights, and the prior part of the new-feature step (D-V&G Eq. 4).

use super::model::ln_factorial;
use super::state::Feats;
use crate::restarts::draw_weighted;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::sync::OnceLock;

/// Hyperparameters of one chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Hyper {
    pub alpha: f64,
    pub sigma_x: f64,
    pub sigma_a: f64,
    /// Largest number of new features one row may draw in one step (truncation of Eq. 4).
    pub k_new_max: usize,
    /// Size of the block of shared features each row draws jointly after its single-entry
    /// updates (0 or 1: none); see [`pick_block`].
    pub block: usize,
    /// A deliberate error in the block update's weights (tests only; [`BlockFault::None`]
    /// everywhere else).
    pub block_fault: BlockFault,
}

/// A deliberate error in the joint block update's weights, for the tests that show the
/// exact-posterior checks catch it. Only [`BlockFault::None`] is a correct sampler.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockFault {
    /// The correct update.
    None,
    /// The prior of the block's values is left out (weights from the likelihood alone).
    NoPrior,
    /// The prior of each entry is m_{−n,k}/(N − 1) (on) and (N − 1 − m_{−n,k})/(N − 1) (off),
    /// the share among the other rows, instead of Eq. 3's m_{−n,k}/N.
    OtherRowsShare,
}

/// Draws z ∈ {0, 1} with P(z = 1) = e^{l1} / (e^{l0} + e^{l1}).
pub(crate) fn draw_binary(l0: f64, l1: f64, rng: &mut ChaCha8Rng) -> bool {
    let p1 = 1.0 / (1.0 + (l0 - l1).exp());
    rng.random::<f64>() < p1
}

/// Draws an index with probability ∝ exp(`logw`).
pub(crate) fn draw_log_weighted(logw: &[f64], rng: &mut ChaCha8Rng) -> usize {
    draw_log_weighted_with(logw, &mut Vec::new(), rng)
}

/// [`draw_log_weighted`] with the weights written into `buf` (no allocation once it is large
/// enough); the same draw.
pub(crate) fn draw_log_weighted_with(
    logw: &[f64],
    buf: &mut Vec<f64>,
    rng: &mut ChaCha8Rng,
) -> usize {
    let max = logw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    buf.clear();
    buf.extend(logw.iter().map(|l| (l - max).exp()));
    draw_weighted(buf, rng)
}

/// log Poisson(j; λ) up to the constant −λ, for j = 0..=j_max: j log λ − log j!.
pub(crate) fn log_poisson_unnorm(lambda: f64, j_max: usize) -> Vec<f64> {
    let mut out = Vec::new();
    log_poisson_unnorm_into(lambda, j_max, &mut out);
    out
}

/// [`log_poisson_unnorm`] written into `out` (replacing its contents).
pub(crate) fn log_poisson_unnorm_into(lambda: f64, j_max: usize, out: &mut Vec<f64>) {
    out.clear();
    let ln_lambda = lambda.ln();
    out.extend((0..=j_max).map(|j| j as f64 * ln_lambda - ln_factorial_kept(j)));
}

/// How many values of log j! are kept (j = 0..64).
const KEPT_LN_FACTORIALS: usize = 64;

/// log j!, as [`ln_factorial`] computes it (the same bits), from a table made once for
/// j < [`KEPT_LN_FACTORIALS`]: every row's new-feature step asks for log 0! … log j_max!.
fn ln_factorial_kept(j: usize) -> f64 {
    static TABLE: OnceLock<Vec<f64>> = OnceLock::new();
    let table = TABLE.get_or_init(|| (0..KEPT_LN_FACTORIALS).map(ln_factorial).collect());
    table.get(j).copied().unwrap_or_else(|| ln_factorial(j))
}

thread_local! {
    /// [`log_prior_flip`]'s values for every m = 0..=N of the last N asked for on this thread.
    static PRIOR_FLIPS: RefCell<(usize, Vec<(f64, f64)>)> = const { RefCell::new((0, Vec::new())) };
}

/// The prior weights of z_nk given the other rows: log(m/N) for z = 1 and log((N − m)/N)
/// for z = 0, with m = m_{−n,k} (G&G 2006 Eq. 17; D-V&G Eq. 3). Returns (l0, l1).
///
/// A sweep asks for these N·K times with the same N: the values for every m are computed once
/// per N and thread (by the same expression, so the same bits) and then looked up.
pub(crate) fn log_prior_flip(m_minus: usize, n: usize) -> (f64, f64) {
    let direct = |m: usize| {
        let nf = n as f64;
        (((n - m) as f64 / nf).ln(), (m as f64 / nf).ln())
    };
    if m_minus > n {
        // Not a count of other rows; left to fail as the direct expression does.
        return direct(m_minus);
    }
    PRIOR_FLIPS.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.0 != n || kept.1.len() != n + 1 {
            *kept = (n, (0..=n).map(direct).collect());
        }
        kept.1[m_minus]
    })
}

/// 0..k in a uniformly random order (Fisher–Yates).
///
/// The existing features of a row are visited in a fresh random order: the chain keeps its
/// features in a list with new ones appended at the end, so a fixed visiting order would tie
/// the order of the updates to the age of the features, and the scan's outcome would then
/// depend on more than the class \[Z\] — the chain would no longer leave P(\[Z\] | X) invariant.
pub(crate) fn shuffled(k: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    crate::restarts::random_permutation(k, rng)
}

/// The block of a row's joint update: `b` distinct features drawn uniformly among those
/// with m_{−n,k} > 0 (`eligible`, which depends on the other rows only, so choosing the block
/// does not look at the entries it updates). The row's entries on the block are then drawn
/// jointly from their conditional over all 2^b values (a blocked Gibbs step), which moves a
/// row between, e.g., {a + b} and {a, b} — two features taking the place of their sum — in one
/// step where single-entry moves must cross a state that fits the row far worse.
pub(crate) fn pick_block(eligible: &[usize], b: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut pool = Vec::new();
    pick_block_into(eligible, b, rng, &mut pool);
    pool
}

/// [`pick_block`] written into `pool` (replacing its contents); the same draw.
pub(crate) fn pick_block_into(
    eligible: &[usize],
    b: usize,
    rng: &mut ChaCha8Rng,
    pool: &mut Vec<usize>,
) {
    pool.clear();
    pool.extend_from_slice(eligible);
    let b = b.min(pool.len());
    for t in 0..b {
        let u = rng.random_range(t..pool.len());
        pool.swap(t, u);
    }
    pool.truncate(b);
}

/// Buffers of a row's joint block update, kept from row to row: the block [`pick_block`]
/// draws and its prior terms ([`block_prior_terms`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockPick {
    eligible: Vec<usize>,
    m_minus: Vec<usize>,
    /// The block's features; bit t of a value is feature `block[t]`.
    pub block: Vec<usize>,
    /// Their prior terms, for [`block_log_prior`].
    pub terms: Vec<(f64, f64)>,
}

impl BlockPick {
    /// Draws row n's block among the features another row holds (`holds(c)`: whether row
    /// n holds feature c now) and the block's prior terms; returns the row's current value
    /// on the block as bits, or `None` when fewer than two features are eligible.
    pub(crate) fn pick(
        &mut self,
        feats: &Feats,
        holds: impl Fn(usize) -> bool,
        hyper: &Hyper,
        rng: &mut ChaCha8Rng,
    ) -> Option<usize> {
        self.eligible.clear();
        self.eligible
            .extend((0..feats.k()).filter(|&c| feats.m(c) > usize::from(holds(c))));
        if self.eligible.len() < 2 {
            return None;
        }
        pick_block_into(&self.eligible, hyper.block, rng, &mut self.block);
        self.m_minus.clear();
        self.m_minus.extend(
            self.block
                .iter()
                .map(|&c| feats.m(c) - usize::from(holds(c))),
        );
        block_prior_terms_into(&self.m_minus, feats.n(), hyper.block_fault, &mut self.terms);
        Some(
            self.block
                .iter()
                .enumerate()
                .map(|(t, &c)| usize::from(holds(c)) << t)
                .sum(),
        )
    }
}

/// The t-th value of the binary reflected Gray code: consecutive values differ in one bit.
pub(crate) fn gray(t: usize) -> usize {
    t ^ (t >> 1)
}

/// The prior terms of a block's entries, one (log P(z = 0), log P(z = 1)) per feature:
/// log((N − m_{−n,k})/N) and log(m_{−n,k}/N) (Eq. 3, independent over k), computed once per
/// row so that each of the 2^b values costs b additions, not 2b logarithms.
/// `fault` is [`BlockFault::None`] except in the tests that break it on purpose.
pub(crate) fn block_prior_terms(m_minus: &[usize], n: usize, fault: BlockFault) -> Vec<(f64, f64)> {
    let mut terms = Vec::new();
    block_prior_terms_into(m_minus, n, fault, &mut terms);
    terms
}

/// [`block_prior_terms`] written into `terms` (replacing its contents).
pub(crate) fn block_prior_terms_into(
    m_minus: &[usize],
    n: usize,
    fault: BlockFault,
    terms: &mut Vec<(f64, f64)>,
) {
    terms.clear();
    terms.extend(m_minus.iter().map(|&m| match fault {
        BlockFault::None => log_prior_flip(m, n),
        BlockFault::NoPrior => (0.0, 0.0),
        BlockFault::OtherRowsShare => {
            let others = (n - 1) as f64;
            (((n - 1 - m) as f64 / others).ln(), (m as f64 / others).ln())
        }
    }));
}

/// log prior of the block's values `bits` (bit t for feature `block[t]`), from the terms of
/// [`block_prior_terms`].
pub(crate) fn block_log_prior(terms: &[(f64, f64)], bits: usize) -> f64 {
    terms
        .iter()
        .enumerate()
        .map(|(t, &(l0, l1))| if (bits >> t) & 1 == 1 { l1 } else { l0 })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_prior_terms_are_the_direct_ones_bit_for_bit() {
        // N changes between calls on one thread (tables remade), and back again.
        for n in [1usize, 7, 100, 7, 2000] {
            let nf = n as f64;
            for m in 0..=n {
                let want = (((n - m) as f64 / nf).ln(), (m as f64 / nf).ln());
                let got = log_prior_flip(m, n);
                assert_eq!(got.0.to_bits(), want.0.to_bits(), "n {n} m {m}");
                assert_eq!(got.1.to_bits(), want.1.to_bits(), "n {n} m {m}");
            }
        }
        for j in 0..KEPT_LN_FACTORIALS + 5 {
            assert_eq!(
                ln_factorial_kept(j).to_bits(),
                ln_factorial(j).to_bits(),
                "{j}"
            );
        }
        let lambda = 0.37f64;
        let got = log_poisson_unnorm(lambda, 70);
        for (j, v) in got.iter().enumerate() {
            let want = j as f64 * lambda.ln() - ln_factorial(j);
            assert_eq!(v.to_bits(), want.to_bits(), "j {j}");
        }
        assert!(got[3] < got[1], "a small mean favours few new features");
    }
}
