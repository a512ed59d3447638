//! Semi-collapsed Gibbs sampler (D-V&G §3 and footnote 1): the features A of the current
//! features are instantiated, new features have their A integrated out.
//!
//! Once per sweep A is drawn from its posterior given Z (Eq. 6). Then for each row n, with
//! the residual e = x_n − z_n A:
//! * for each k with m_{−n,k} > 0, P(z_nk = 1 | …) ∝ (m_{−n,k}/N) p(x_n | z_n, A), where
//!   log p(x_n | z_n, A) = −‖x_n − z_n A‖²/(2σ_X²) + const (the uncollapsed form of Eq. 3);
//! * the features held by n alone are dropped (with their rows of A) and the number j of new
//!   features held by n alone is drawn with
//!   P(j) ∝ Poisson(j; α/N) N(e; 0, (σ_X² + jσ_A²) I_D) — Eq. 4 with the new features' A
//!   integrated out (each entry of e is the noise plus a sum of j independent N(0, σ_A²));
//! * the new features' A (`j × D`) is then drawn from its posterior given e: precision
//!   I/σ_A² + 11ᵀ/σ_X², information 1 eᵀ/σ_X².

use super::common::{
    BlockPick, Hyper, block_log_prior, draw_binary, draw_log_weighted_with, gray,
    log_poisson_unnorm_into, log_prior_flip,
};
use super::dense::{draw_information, identity};
use super::model::a_posterior;
use super::state::Feats;
use crate::RowMatrix;
use crate::restarts::shuffle;
use rand_chacha::ChaCha8Rng;

/// State of the semi-collapsed sampler.
#[derive(Clone, Debug)]
pub(crate) struct SemiCollapsed {
    pub feats: Feats,
    hyper: Hyper,
    /// A, `K × D`, row-major.
    a: Vec<f64>,
    /// Boxed, so that the sampler stays small beside the others in `params::Chain`.
    scratch: Box<RowScratch>,
}

/// Buffers of one row's update, kept from row to row so that a row allocates nothing unless
/// it adds features. They carry no state between rows.
#[derive(Clone, Debug, Default)]
struct RowScratch {
    /// The row's residual e = x_n − z_n A.
    e: Vec<f64>,
    order: Vec<usize>,
    blocks: BlockPick,
    logw: Vec<f64>,
    weights: Vec<f64>,
}

impl SemiCollapsed {
    pub fn new(feats: Feats, hyper: Hyper) -> Self {
        Self {
            feats,
            hyper,
            a: Vec::new(),
            scratch: Box::default(),
        }
    }

    /// Replaces the hyperparameters (A is redrawn at the start of the next sweep).
    pub fn set_hyper(&mut self, hyper: Hyper) {
        self.hyper = hyper;
    }

    /// One sweep: A drawn from p(A | Z, X), then the rows in order 0..N.
    pub fn sweep(&mut self, x: &RowMatrix, rng: &mut ChaCha8Rng) {
        let post = a_posterior(
            x.view(),
            &self.feats.to_row_matrix(),
            self.hyper.sigma_x,
            self.hyper.sigma_a,
        );
        self.a = post.draw(rng).into_vec();
        for n in 0..x.n_rows() {
            self.row(x, n, rng);
        }
    }

    fn row(&mut self, x: &RowMatrix, n: usize, rng: &mut ChaCha8Rng) {
        let (nn, d) = (x.n_rows(), x.n_cols());
        let (sx2, sa2) = (self.hyper.sigma_x.powi(2), self.hyper.sigma_a.powi(2));
        let mut sc = std::mem::take(&mut *self.scratch);
        let RowScratch {
            e,
            order,
            blocks,
            logw,
            weights,
        } = &mut sc;
        e.clear();
        e.extend_from_slice(x.row(n));
        for c in 0..self.feats.k() {
            if self.feats.get(n, c) {
                sub(e, &self.a[c * d..(c + 1) * d]);
            }
        }
        // Existing features; n's singletons stay in Z meanwhile. The features in a fresh
        // random order (`common::shuffled`, without its allocation).
        order.clear();
        order.extend(0..self.feats.k());
        shuffle(order, rng);
        for &c in order.iter() {
            let on_now = self.feats.get(n, c);
            let m_minus = self.feats.m(c) - usize::from(on_now);
            if m_minus == 0 {
                continue;
            }
            let (p0, p1) = log_prior_flip(m_minus, nn);
            let ac = &self.a[c * d..(c + 1) * d];
            let (q0, q1) = flip_sq(e, ac, on_now);
            let l0 = -q0 / (2.0 * sx2);
            let l1 = -q1 / (2.0 * sx2);
            let on = draw_binary(p0 + l0, p1 + l1, rng);
            // e becomes e₀ = e (+ a_c when on now), then e₁ = e₀ − a_c when on: the values
            // `flip_sq` scored.
            if on_now {
                add(e, ac);
            }
            if on {
                sub(e, ac);
            }
            self.feats.set(n, c, on);
        }
        // The joint update on a block of shared features (`common::pick_block`), its 2^b
        // values visited in Gray-code order, one feature added to or taken from e each.
        if self.hyper.block >= 2 {
            let held = |c: usize| self.feats.get(n, c);
            if let Some(cur) = blocks.pick(&self.feats, held, &self.hyper, rng) {
                let BlockPick { block, terms, .. } = &*blocks;
                let toggle = |e: &mut [f64], t: usize, bits: usize, a: &[f64]| {
                    let ac = &a[block[t] * d..(block[t] + 1) * d];
                    // bits holds the value after the flip.
                    if (bits >> t) & 1 == 1 {
                        sub(e, ac);
                    } else {
                        add(e, ac);
                    }
                };
                logw.clear();
                for t in 0..1usize << block.len() {
                    if t > 0 {
                        let bit = (gray(t) ^ gray(t - 1)).trailing_zeros() as usize;
                        toggle(e, bit, cur ^ gray(t), &self.a);
                    }
                    logw.push(block_log_prior(terms, cur ^ gray(t)) - sq(e) / (2.0 * sx2));
                }
                let pick = draw_log_weighted_with(logw, weights, rng);
                let (last, want) = (cur ^ gray((1 << block.len()) - 1), cur ^ gray(pick));
                for (t, &c) in block.iter().enumerate() {
                    if ((last ^ want) >> t) & 1 == 1 {
                        toggle(e, t, want, &self.a);
                    }
                    self.feats.set(n, c, (want >> t) & 1 == 1);
                }
            }
        }
        // Drop the features held by row n alone; the new-feature step redraws them.
        for c in (0..self.feats.k()).rev() {
            if self.feats.get(n, c) && self.feats.m(c) == 1 {
                add(e, &self.a[c * d..(c + 1) * d]);
                self.a.drain(c * d..(c + 1) * d);
                self.feats.remove(c);
            }
        }
        // New features, A integrated out (Eq. 4).
        let ee = sq(e);
        log_poisson_unnorm_into(self.hyper.alpha / nn as f64, self.hyper.k_new_max, logw);
        for (j, lw) in logw.iter_mut().enumerate() {
            let v = sx2 + j as f64 * sa2;
            *lw += -0.5 * d as f64 * v.ln() - ee / (2.0 * v);
        }
        let j = draw_log_weighted_with(logw, weights, rng);
        if j > 0 {
            let mut p = identity(j, 1.0 / sa2);
            p.iter_mut().for_each(|v| *v += 1.0 / sx2);
            let h: Vec<f64> = (0..j).flat_map(|_| e.iter().map(|v| v / sx2)).collect();
            let (_, draw) =
                draw_information(&p, &h, j, d, rng).expect("the precision is positive definite");
            self.a.extend_from_slice(&draw);
            for _ in 0..j {
                self.feats.push_singleton(n);
            }
        }
        *self.scratch = sc;
    }
}

/// (‖e₀‖², ‖e₁‖²) for e₀ = e + a (when `on_now`, else e) and e₁ = e₀ − a: each entry and
/// each sum as [`add`], [`sub`] and [`sq`] would make them (the same bits), in one pass with
/// the two sums independent of each other.
fn flip_sq(e: &[f64], a: &[f64], on_now: bool) -> (f64, f64) {
    let (mut s0, mut s1) = (-0.0f64, -0.0f64);
    for (&v, &w) in e.iter().zip(a) {
        let v0 = if on_now { v + w } else { v };
        let v1 = v0 - w;
        s0 += v0 * v0;
        s1 += v1 * v1;
    }
    (s0, s1)
}

fn add(e: &mut [f64], a: &[f64]) {
    e.iter_mut().zip(a).for_each(|(v, w)| *v += w);
}

fn sub(e: &mut [f64], a: &[f64]) {
    e.iter_mut().zip(a).for_each(|(v, w)| *v -= w);
}

fn sq(e: &[f64]) -> f64 {
    e.iter().map(|v| v * v).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restarts::run_rng;
    use rand::RngExt;

    #[test]
    fn one_pass_flip_sums_are_the_bits_of_the_copies() {
        let mut rng = run_rng(3, 0);
        for d in [1, 7, 36, 100] {
            let e: Vec<f64> = (0..d).map(|_| rng.random::<f64>() * 4.0 - 2.0).collect();
            let a: Vec<f64> = (0..d).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
            for on_now in [false, true] {
                let mut e0 = e.clone();
                if on_now {
                    add(&mut e0, &a);
                }
                let mut e1 = e0.clone();
                sub(&mut e1, &a);
                let (q0, q1) = flip_sq(&e, &a, on_now);
                assert_eq!(q0.to_bits(), sq(&e0).to_bits(), "d {d}, on {on_now}");
                assert_eq!(q1.to_bits(), sq(&e1).to_bits(), "d {d}, on {on_now}");
                assert_ne!(q0, q1);
            }
        }
    }
}
