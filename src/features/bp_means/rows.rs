//! The parallel part of a BP-means sweep's row step: each row of a block flips its entries
//! over the features the sweep began with (Alg. 1, one pass k = 1..K), against G = A Aᵀ and
//! its row of X Aᵀ; under the cap it also gets the inputs of the new-feature test.
//!
//! The loop is compiled a second time with AVX2 and chosen at run time: the O(K) updates of
//! h = G z then run four lanes wide. Every value is the same expression in the same order
//! (no FMA contraction), so the same bits.

use crate::features::kernels::{flip_pass, gz_on, ones_of, row_cost_on};

/// What the in-order settling of a row needs from its parallel pass.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowPass {
    /// Entries the pass flipped.
    pub flips: usize,
    /// ‖x_n‖² + c(z_n) after the pass (NaN when not needed: at the cap).
    pub estimate: f64,
    /// Σ_{k: z_nk = 1} (G z_n)_k, the size of zᵀGz for the recompute margin (NaN at the cap).
    pub quad: f64,
}

/// One flip pass for each row of a block: `rows` (`b × k` bytes, the rows' entries when the
/// sweep began, updated in place), `gb` (`b × k`, the rows of X Aᵀ), `gm` (G, `k × k`),
/// `x_norms` (the rows' ‖x_n‖²). With `may_open` false (K at its cap) the error of a row is
/// not formed.
pub(super) fn flip_rows(
    rows: &mut [u8],
    gb: &[f64],
    gm: &[f64],
    k: usize,
    x_norms: &[f64],
    may_open: bool,
) -> Vec<RowPass> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { flip_rows_avx2(rows, gb, gm, k, x_norms, may_open) };
    }
    flip_rows_body(rows, gb, gm, k, x_norms, may_open)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn flip_rows_avx2(
    rows: &mut [u8],
    gb: &[f64],
    gm: &[f64],
    k: usize,
    x_norms: &[f64],
    may_open: bool,
) -> Vec<RowPass> {
    flip_rows_body(rows, gb, gm, k, x_norms, may_open)
}

#[inline(always)]
fn flip_rows_body(
    rows: &mut [u8],
    gb: &[f64],
    gm: &[f64],
    k: usize,
    x_norms: &[f64],
    may_open: bool,
) -> Vec<RowPass> {
    let b = x_norms.len();
    let mut out = Vec::with_capacity(b);
    let mut h = vec![0.0; k];
    let mut on = Vec::with_capacity(k);
    for i in 0..b {
        let zi = &mut rows[i * k..(i + 1) * k];
        let gi = &gb[i * k..(i + 1) * k];
        ones_of(zi, &mut on);
        gz_on(&on, gm, &mut h);
        let flips = flip_pass(zi, gi, gm, &mut h);
        if !may_open {
            out.push(RowPass {
                flips,
                estimate: f64::NAN,
                quad: f64::NAN,
            });
            continue;
        }
        // The new-feature test's inputs, valid while no feature has been opened.
        if flips > 0 {
            ones_of(zi, &mut on);
        }
        let quad: f64 = on.iter().map(|&j| h[j]).sum();
        let estimate = x_norms[i] + row_cost_on(&on, gi, gm, k);
        out.push(RowPass {
            flips,
            estimate,
            quad,
        });
    }
    out
}
