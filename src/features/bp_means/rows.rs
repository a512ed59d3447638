//! The parallel part of a BP-means sweep's row step: each row of a block flips its entries
//! over the features the sweep began with (Alg. 1, one pass k = 1..K), against G = A Aᵀ and
//! its row of X Aᵀ; under the cap it also gets the inputs of the new-feature test.
//!
//! The loop is compiled a second time with AVX2 and chosen at run time: the O(K) updates of
//! h = G z then run four lanes wide. Every value is the same expression in the same order
//! (no FMA contraction), so the same bits.

use crate::features::kernels::{flip_pass, gz_on, ones_of, row_cost_on};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::__m512d;

/// Up to this many features the eight-row step keeps its working rows on the stack (2 KiB
/// each for g and h).
#[cfg(target_arch = "x86_64")]
const STACK_K: usize = 32;

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
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            let bits = std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("bmi2");
            // SAFETY: the CPU supports AVX-512F (checked just above), and AVX-512BW and BMI2
            // where `bits` says so.
            return unsafe { flip_rows_avx512(rows, gb, gm, k, x_norms, may_open, bits) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { flip_rows_avx2(rows, gb, gm, k, x_norms, may_open) };
        }
    }
    flip_rows_body(rows, gb, gm, k, x_norms, may_open)
}

/// [`flip_rows_body`] with eight rows at a time side by side, one row to a lane of a 512-bit
/// register: h = G z as K registers, z as K eight-bit masks. Each lane does its row's
/// operations in their order: h_j summed from 0 over the rows of G that z holds, in
/// ascending order (masked additions); then for k = 1..K the change of c (`flip_delta`'s
/// expression), and where it is negative the flip and h += ±G_k (`apply_flip`'s); then the
/// new-feature test's inputs, also in the lanes, in the body's order. The last rows of the
/// block (fewer than eight) go to the AVX2 form. So the same rows and bits. With `bits` (the
/// CPU has AVX-512BW and BMI2) and K ≤ 8, the masks are taken from and put back into the
/// eight rows' bytes by [`masks_of_rows`] and [`rows_of_masks`].
///
/// # Safety
/// The CPU has AVX-512F, and AVX-512BW and BMI2 if `bits`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn flip_rows_avx512(
    rows: &mut [u8],
    gb: &[f64],
    gm: &[f64],
    k: usize,
    x_norms: &[f64],
    may_open: bool,
    bits: bool,
) -> Vec<RowPass> {
    use std::arch::x86_64::{
        _mm512_i64gather_pd, _mm512_loadu_pd, _mm512_mask_add_pd, _mm512_set1_pd,
        _mm512_setr_epi64, _mm512_setzero_pd, _mm512_storeu_pd,
    };
    let b = x_norms.len();
    if k == 0 || b < 8 {
        // Fewer than eight rows: four lanes at a time (AVX-512F implies AVX2).
        return flip_rows_avx2(rows, gb, gm, k, x_norms, may_open);
    }
    let mut out = Vec::with_capacity(b);
    if bits && (1..=8).contains(&k) {
        // SAFETY: the caller checked AVX-512F, AVX-512BW and BMI2 (`bits`).
        let i = unsafe { flip_rows_in_registers(rows, gb, gm, k, x_norms, may_open, &mut out) };
        out.extend(flip_rows_avx2(
            &mut rows[i * k..],
            &gb[i * k..],
            gm,
            k,
            &x_norms[i..],
            may_open,
        ));
        return out;
    }
    // Per feature: the eight rows' g side by side, then their h; the rows' z as masks. On
    // the stack up to STACK_K features (a block is stepped once per sweep, and small
    // problems make many sweeps).
    let (mut g8_stack, mut h8_stack, mut zm_stack) =
        ([0.0f64; 8 * STACK_K], [0.0f64; 8 * STACK_K], [0u8; STACK_K]);
    let (mut g8_heap, mut h8_heap, mut zm_heap) = (Vec::new(), Vec::new(), Vec::new());
    let (g8, h8, zm): (&mut [f64], &mut [f64], &mut [u8]) = if k <= STACK_K {
        (
            &mut g8_stack[..8 * k],
            &mut h8_stack[..8 * k],
            &mut zm_stack[..k],
        )
    } else {
        g8_heap.resize(8 * k, 0.0);
        h8_heap.resize(8 * k, 0.0);
        zm_heap.resize(k, 0);
        (&mut g8_heap, &mut h8_heap, &mut zm_heap)
    };
    // The offsets of one feature in eight consecutive rows of `k` entries.
    let k64 = k as i64;
    let step = _mm512_setr_epi64(0, k64, 2 * k64, 3 * k64, 4 * k64, 5 * k64, 6 * k64, 7 * k64);
    let mut i = 0;
    while i + 8 <= b {
        let zb = &mut rows[i * k..(i + 8) * k];
        if bits && k <= 8 {
            // SAFETY: the caller checked AVX-512BW and BMI2 (`bits`); 8k ≤ 64 bytes.
            unsafe { masks_of_rows(zb, k, zm) };
        } else {
            zm.fill(0);
            for (r, zr) in zb.chunks_exact(k).enumerate() {
                for (m, &v) in zm.iter_mut().zip(zr) {
                    *m |= u8::from(v != 0) << r;
                }
            }
        }
        // Feature j's g of the eight rows: entries j, j + k, …, j + 7k from the block's row i.
        let gi = &gb[i * k..(i + 8) * k];
        for (j, g) in g8.chunks_exact_mut(8).enumerate() {
            // SAFETY: the largest index read is (j + 7k)·8 bytes past `gi`'s start, within
            // its 8k entries as j < k; the store writes the 8 entries of `g`.
            unsafe {
                let v = _mm512_i64gather_pd::<8>(step, gi.as_ptr().add(j).cast());
                _mm512_storeu_pd(g.as_mut_ptr(), v);
            }
        }
        // h_j = 0 + G_ij over the ones i of each row, ascending (G symmetric: row i).
        for j in 0..k {
            let mut hj = _mm512_setzero_pd();
            for (t, &m) in zm.iter().enumerate() {
                hj = _mm512_mask_add_pd(hj, m, hj, _mm512_set1_pd(gm[t * k + j]));
            }
            // SAFETY: `h8[8j..8j + 8]` holds the eight f64 the store writes.
            unsafe { _mm512_storeu_pd(h8.as_mut_ptr().add(8 * j), hj) };
        }
        let mut flips = [0usize; 8];
        for kk in 0..k {
            let gkk = gm[kk * k + kk];
            let zk = zm[kk];
            // SAFETY: `h8` and `g8` hold eight f64 at 8·kk, the 64 bytes each load reads.
            let (hk, gk) = unsafe {
                (
                    _mm512_loadu_pd(h8.as_ptr().add(8 * kk)),
                    _mm512_loadu_pd(g8.as_ptr().add(8 * kk)),
                )
            };
            let flip = lanes_to_flip(hk, gk, gkk, zk);
            if flip == 0 {
                continue;
            }
            for j in 0..k {
                // SAFETY: `h8[8j..8j + 8]` holds eight f64, read and written back.
                unsafe {
                    let hj = _mm512_loadu_pd(h8.as_ptr().add(8 * j));
                    let hj = lanes_flipped(hj, flip, zk, gm[kk * k + j]);
                    _mm512_storeu_pd(h8.as_mut_ptr().add(8 * j), hj);
                }
            }
            zm[kk] ^= flip;
            for (r, f) in flips.iter_mut().enumerate() {
                *f += usize::from(flip >> r & 1);
            }
        }
        if bits && k <= 8 {
            // SAFETY: as for `masks_of_rows` above.
            unsafe { rows_of_masks(zm, k, zb) };
        } else {
            for (r, zi) in zb.chunks_exact_mut(k).enumerate() {
                for (j, v) in zi.iter_mut().enumerate() {
                    *v = zm[j] >> r & 1;
                }
            }
        }
        if !may_open {
            out.extend(flips.map(|flips| RowPass {
                flips,
                estimate: f64::NAN,
                quad: f64::NAN,
            }));
            i += 8;
            continue;
        }
        // SAFETY: `h8` and `g8` hold eight f64 at 8·t for every feature t < k.
        let h_at = |t: usize| unsafe { _mm512_loadu_pd(h8.as_ptr().add(8 * t)) };
        // SAFETY: as for `h_at`.
        let g_at = |t: usize| unsafe { _mm512_loadu_pd(g8.as_ptr().add(8 * t)) };
        let (q8, e8) = lanes_test_inputs(h_at, g_at, zm, gm, &x_norms[i..i + 8]);
        out.extend((0..8).map(|r| RowPass {
            flips: flips[r],
            estimate: e8[r],
            quad: q8[r],
        }));
        i += 8;
    }
    // The last rows (fewer than eight) four lanes at a time; AVX-512F implies AVX2.
    out.extend(flip_rows_avx2(
        &mut rows[i * k..],
        &gb[i * k..],
        gm,
        k,
        &x_norms[i..],
        may_open,
    ));
    out
}

/// [`flip_rows_avx512`] for K ≤ 8 features (with AVX-512BW and BMI2): the same operations
/// in every lane, in the same order, but g and h of each group of eight rows held in
/// registers (`K` of each, the count known when compiled) instead of memory, and two groups
/// stepped side by side where registers allow (K ≤ 6), so that one group's chain of flips
/// (each feature's test waits on the last flip's update of h) overlaps the other's. Appends
/// the passes of the first rows, a multiple of eight, and returns how many it took.
///
/// # Safety
/// The CPU has AVX-512F, AVX-512BW and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,bmi2")]
unsafe fn flip_rows_in_registers(
    rows: &mut [u8],
    gb: &[f64],
    gm: &[f64],
    k: usize,
    x_norms: &[f64],
    may_open: bool,
    out: &mut Vec<RowPass>,
) -> usize {
    let b = x_norms.len();
    let mut i = 0;
    macro_rules! groups {
        ($k:literal, $pair:literal) => {{
            if $pair {
                while i + 16 <= b {
                    // SAFETY: as for this function.
                    unsafe { flip_groups::<$k, 2>(rows, gb, gm, x_norms, i, may_open, out) };
                    i += 16;
                }
            }
            while i + 8 <= b {
                // SAFETY: as for this function.
                unsafe { flip_groups::<$k, 1>(rows, gb, gm, x_norms, i, may_open, out) };
                i += 8;
            }
        }};
    }
    match k {
        1 => groups!(1, true),
        2 => groups!(2, true),
        3 => groups!(3, true),
        4 => groups!(4, true),
        5 => groups!(5, true),
        6 => groups!(6, true),
        7 => groups!(7, false),
        _ => groups!(8, false),
    }
    i
}

/// `P` groups of eight rows from row `i` for [`flip_rows_in_registers`].
///
/// # Safety
/// The CPU has AVX-512F, AVX-512BW and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,bmi2")]
unsafe fn flip_groups<const K: usize, const P: usize>(
    rows: &mut [u8],
    gb: &[f64],
    gm: &[f64],
    x_norms: &[f64],
    i: usize,
    may_open: bool,
    out: &mut Vec<RowPass>,
) {
    use std::arch::x86_64::{
        _mm512_i64gather_pd, _mm512_mask_add_epi64, _mm512_mask_add_pd, _mm512_set1_epi64,
        _mm512_set1_pd, _mm512_setr_epi64, _mm512_setzero_pd, _mm512_setzero_si512,
        _mm512_storeu_epi64,
    };
    assert!(K <= 8 && gm.len() == K * K);
    assert!((i + 8 * P) * K <= rows.len() && (i + 8 * P) * K <= gb.len());
    assert!(i + 8 * P <= x_norms.len());
    let k64 = K as i64;
    let step = _mm512_setr_epi64(0, k64, 2 * k64, 3 * k64, 4 * k64, 5 * k64, 6 * k64, 7 * k64);
    let mut zm = [[0u8; K]; P];
    let mut g = [[_mm512_setzero_pd(); K]; P];
    let mut h = [[_mm512_setzero_pd(); K]; P];
    for p in 0..P {
        let at = (i + 8 * p) * K;
        // SAFETY: the CPU has AVX-512BW and BMI2; the group's 8K ≤ 64 bytes.
        unsafe { masks_of_rows(&rows[at..at + 8 * K], K, &mut zm[p]) };
        for (j, gj) in g[p].iter_mut().enumerate() {
            // SAFETY: the largest index read is at + j + 7K < at + 8K, within `gb`.
            *gj = unsafe { _mm512_i64gather_pd::<8>(step, gb.as_ptr().add(at + j).cast()) };
        }
        // h_j = 0 + G_ij over the ones i of each row, ascending (G symmetric: row i).
        for (j, hj) in h[p].iter_mut().enumerate() {
            for (t, &m) in zm[p].iter().enumerate() {
                *hj = _mm512_mask_add_pd(*hj, m, *hj, _mm512_set1_pd(gm[t * K + j]));
            }
        }
    }
    let mut flips = [_mm512_setzero_si512(); P];
    for kk in 0..K {
        let gkk = gm[kk * K + kk];
        for p in 0..P {
            let zk = zm[p][kk];
            let flip = lanes_to_flip(h[p][kk], g[p][kk], gkk, zk);
            if flip == 0 {
                continue;
            }
            for (j, hj) in h[p].iter_mut().enumerate() {
                *hj = lanes_flipped(*hj, flip, zk, gm[kk * K + j]);
            }
            zm[p][kk] ^= flip;
            flips[p] = _mm512_mask_add_epi64(flips[p], flip, flips[p], _mm512_set1_epi64(1));
        }
    }
    for p in 0..P {
        let at = (i + 8 * p) * K;
        // SAFETY: as for `masks_of_rows` above.
        unsafe { rows_of_masks(&zm[p], K, &mut rows[at..at + 8 * K]) };
        let mut counts = [0i64; 8];
        // SAFETY: `counts` holds the eight i64 the store writes.
        unsafe { _mm512_storeu_epi64(counts.as_mut_ptr(), flips[p]) };
        if !may_open {
            out.extend(counts.map(|c| RowPass {
                flips: c as usize,
                estimate: f64::NAN,
                quad: f64::NAN,
            }));
            continue;
        }
        let r0 = i + 8 * p;
        let (hp, gp) = (&h[p], &g[p]);
        let (q8, e8) = lanes_test_inputs(|t| hp[t], |t| gp[t], &zm[p], gm, &x_norms[r0..r0 + 8]);
        out.extend((0..8).map(|r| RowPass {
            flips: counts[r] as usize,
            estimate: e8[r],
            quad: q8[r],
        }));
    }
}

/// `flip_delta` in eight lanes, one row each: s = h_k − (G_kk where entry k is set, else 0),
/// on = G_kk + 2 s − 2 g_k, negated where set; the rows where that change of c is negative,
/// whose entry k flips.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn lanes_to_flip(hk: __m512d, gk: __m512d, gkk: f64, zk: u8) -> u8 {
    use std::arch::x86_64::{
        _CMP_LT_OQ, _mm512_add_pd, _mm512_castpd_si512, _mm512_castsi512_pd, _mm512_cmp_pd_mask,
        _mm512_mask_mov_pd, _mm512_mask_xor_epi64, _mm512_mul_pd, _mm512_set1_epi64,
        _mm512_set1_pd, _mm512_setzero_pd, _mm512_sub_pd,
    };
    let (two, gkk) = (_mm512_set1_pd(2.0), _mm512_set1_pd(gkk));
    let s = _mm512_sub_pd(hk, _mm512_mask_mov_pd(_mm512_setzero_pd(), zk, gkk));
    let on_ = _mm512_sub_pd(
        _mm512_add_pd(gkk, _mm512_mul_pd(two, s)),
        _mm512_mul_pd(two, gk),
    );
    let on_ = _mm512_castpd_si512(on_);
    let sign = _mm512_set1_epi64(i64::MIN);
    let delta = _mm512_castsi512_pd(_mm512_mask_xor_epi64(on_, zk, on_, sign));
    _mm512_cmp_pd_mask::<_CMP_LT_OQ>(delta, _mm512_setzero_pd())
}

/// `apply_flip` in the lanes of `flip`: h_j + sign · G_kj, the sign −1 where entry k was set
/// (`zk`) and +1 where it was not.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn lanes_flipped(hj: __m512d, flip: u8, zk: u8, gkj: f64) -> __m512d {
    use std::arch::x86_64::{
        _mm512_mask_add_pd, _mm512_mask_mov_pd, _mm512_mul_pd, _mm512_set1_pd,
    };
    let sgn = _mm512_mask_mov_pd(_mm512_set1_pd(1.0), zk, _mm512_set1_pd(-1.0));
    _mm512_mask_add_pd(hj, flip, hj, _mm512_mul_pd(sgn, _mm512_set1_pd(gkj)))
}

/// The new-feature test's inputs of eight rows, in each lane as the body forms them: the quad
/// Σ h_j over the row's ones, ascending, from −0.0 (the start of a float `sum`), and
/// ‖x‖² (`norms`, eight) plus the cost c(z) = Σ_i (−2 g_i + Σ_j G_ij) over its ones i, j,
/// ascending, from 0.0 (`row_cost_on`). `h(t)` and `g(t)` are the rows' h_t and g_t, `zm`
/// their z as masks.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn lanes_test_inputs(
    h: impl Fn(usize) -> __m512d,
    g: impl Fn(usize) -> __m512d,
    zm: &[u8],
    gm: &[f64],
    norms: &[f64],
) -> ([f64; 8], [f64; 8]) {
    use std::arch::x86_64::{
        _mm512_add_pd, _mm512_loadu_pd, _mm512_mask_add_pd, _mm512_mask_sub_pd, _mm512_mul_pd,
        _mm512_set1_pd, _mm512_setzero_pd, _mm512_storeu_pd,
    };
    let k = zm.len();
    assert!(norms.len() == 8 && gm.len() == k * k);
    let two = _mm512_set1_pd(2.0);
    let mut quad = _mm512_set1_pd(-0.0);
    let mut cost = _mm512_setzero_pd();
    for (t, &mt) in zm.iter().enumerate() {
        quad = _mm512_mask_add_pd(quad, mt, quad, h(t));
        cost = _mm512_mask_sub_pd(cost, mt, cost, _mm512_mul_pd(two, g(t)));
        for (j, &mj) in zm.iter().enumerate() {
            cost = _mm512_mask_add_pd(cost, mt & mj, cost, _mm512_set1_pd(gm[t * k + j]));
        }
    }
    // SAFETY: `norms` holds the eight f64 the load reads (asserted above).
    let estimate = _mm512_add_pd(unsafe { _mm512_loadu_pd(norms.as_ptr()) }, cost);
    let (mut q8, mut e8) = ([0.0f64; 8], [0.0f64; 8]);
    // SAFETY: each array holds the eight f64 its store writes.
    unsafe {
        _mm512_storeu_pd(q8.as_mut_ptr(), quad);
        _mm512_storeu_pd(e8.as_mut_ptr(), estimate);
    }
    (q8, e8)
}

/// The bits of feature j, j + k, …, j + 7k in a 64-bit word: where eight rows of k ≤ 8
/// entries hold feature j.
#[cfg(target_arch = "x86_64")]
#[inline]
fn feature_lanes(j: usize, k: usize) -> u64 {
    (0..8).fold(0u64, |m, r| m | 1u64 << (r * k + j))
}

/// `zm[j]` bit r = (entry j of row r ≠ 0), for the eight rows of k ≤ 8 bytes in `zb`: one
/// masked load and test of the 8k bytes, then the bits of each feature gathered by `pext`.
///
/// # Safety
/// The CPU has AVX-512F, AVX-512BW and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,bmi2")]
unsafe fn masks_of_rows(zb: &[u8], k: usize, zm: &mut [u8]) {
    use std::arch::x86_64::{_mm512_maskz_loadu_epi8, _mm512_test_epi8_mask, _pext_u64};
    assert!(k <= 8 && zb.len() == 8 * k && zm.len() == k);
    let kept = if k == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * k)) - 1
    };
    // SAFETY: the mask keeps the 8k bytes of `zb`; the other lanes read nothing.
    let v = unsafe { _mm512_maskz_loadu_epi8(kept, zb.as_ptr().cast()) };
    let set = _mm512_test_epi8_mask(v, v);
    for (j, m) in zm.iter_mut().enumerate() {
        *m = _pext_u64(set, feature_lanes(j, k)) as u8;
    }
}

/// The inverse of [`masks_of_rows`]: entry j of row r = `zm[j]` bit r, as 0 or 1.
///
/// # Safety
/// The CPU has AVX-512F, AVX-512BW and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,bmi2")]
unsafe fn rows_of_masks(zm: &[u8], k: usize, zb: &mut [u8]) {
    use std::arch::x86_64::{_mm512_mask_storeu_epi8, _mm512_maskz_set1_epi8, _pdep_u64};
    assert!(k <= 8 && zb.len() == 8 * k && zm.len() == k);
    let set = zm.iter().enumerate().fold(0u64, |s, (j, &m)| {
        s | _pdep_u64(u64::from(m), feature_lanes(j, k))
    });
    let kept = if k == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * k)) - 1
    };
    // SAFETY: the mask keeps the 8k bytes of `zb`; the other lanes are not written.
    unsafe {
        _mm512_mask_storeu_epi8(zb.as_mut_ptr().cast(), kept, _mm512_maskz_set1_epi8(set, 1))
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RowMatrix;
    use crate::features::kernels::gram;
    use rand::{RngExt, SeedableRng};

    /// The dispatched pass (eight rows to a register where the CPU has AVX-512F, four lanes
    /// with AVX2) against the body one row at a time: the same rows, flip counts and bits
    /// of the new-feature test's inputs, on real values and on integer ones (where a change
    /// of c is often exactly 0, which must not flip). Row counts cover the eight-row loop
    /// and its rest; K up to 11, and either side of `STACK_K` (working rows on the stack or
    /// on the heap).
    /// The masks taken from eight rows' bytes by AVX-512BW and BMI2, and the bytes put back
    /// from them, are those of the byte loops, for every K ≤ 8 and bytes other than 0 and 1
    /// (read as set).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn masks_of_eight_rows_are_the_byte_loops() {
        if !(std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("bmi2"))
        {
            eprintln!("skipped: the CPU lacks AVX-512BW or BMI2");
            return;
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for k in 1..=8 {
            for _ in 0..50 {
                let zb: Vec<u8> = (0..8 * k)
                    .map(|_| [0u8, 1, 2, 255][rng.random_range(0..4usize)])
                    .collect();
                let want: Vec<u8> = (0..k)
                    .map(|j| (0..8).fold(0u8, |m, r| m | u8::from(zb[r * k + j] != 0) << r))
                    .collect();
                let mut zm = vec![0u8; k];
                // SAFETY: AVX-512BW and BMI2 checked above; they come with AVX-512F.
                unsafe { masks_of_rows(&zb, k, &mut zm) };
                assert_eq!(zm, want, "k {k}");
                let mut back = vec![7u8; 8 * k];
                // SAFETY: as above.
                unsafe { rows_of_masks(&zm, k, &mut back) };
                let bytes: Vec<u8> = zb.iter().map(|&v| u8::from(v != 0)).collect();
                assert_eq!(back, bytes, "k {k}");
            }
        }
    }

    #[test]
    fn rows_side_by_side_flip_as_one_at_a_time() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut flipped = 0;
        for k in (0..=11).chain([32, 33, 40]) {
            for trial in 0..24 {
                let integer = trial % 2 == 1;
                let mut value = |lo: f64, hi: f64| {
                    let v = rng.random_range(lo..hi);
                    if integer { v.round() } else { v }
                };
                // Up to 20 rows, and 42–63: pairs of groups of eight, a group, the rest.
                let b = if trial % 3 == 2 {
                    40 + trial
                } else {
                    trial % 21
                };
                let a: Vec<Vec<f64>> = (0..k)
                    .map(|_| (0..6).map(|_| value(-2.0, 2.0)).collect())
                    .collect();
                let gm = if k == 0 {
                    Vec::new()
                } else {
                    gram(&RowMatrix::from_rows(&a))
                };
                let gb: Vec<f64> = (0..b * k).map(|_| value(-6.0, 6.0)).collect();
                let x_norms: Vec<f64> = (0..b).map(|_| value(0.0, 30.0)).collect();
                let start: Vec<u8> = (0..b * k)
                    .map(|_| u8::from(value(0.0, 1.0) > 0.5))
                    .collect();
                for may_open in [true, false] {
                    let mut want = start.clone();
                    let want_pass = flip_rows_body(&mut want, &gb, &gm, k, &x_norms, may_open);
                    // The dispatch, and the AVX-512F form with and without the masks taken
                    // by AVX-512BW and BMI2, where the CPU has them.
                    let mut forms: Vec<(&str, Vec<u8>, Vec<RowPass>)> = Vec::new();
                    let mut got = start.clone();
                    let pass = flip_rows(&mut got, &gb, &gm, k, &x_norms, may_open);
                    forms.push(("dispatch", got, pass));
                    #[cfg(target_arch = "x86_64")]
                    if std::arch::is_x86_feature_detected!("avx512f") {
                        let bw = std::arch::is_x86_feature_detected!("avx512bw")
                            && std::arch::is_x86_feature_detected!("bmi2");
                        for bits in [false, true].into_iter().filter(|&b| !b || bw) {
                            let mut got = start.clone();
                            // SAFETY: AVX-512F checked above, AVX-512BW and BMI2 with `bits`.
                            let pass = unsafe {
                                flip_rows_avx512(&mut got, &gb, &gm, k, &x_norms, may_open, bits)
                            };
                            forms.push((if bits { "bits" } else { "bytes" }, got, pass));
                        }
                    }
                    for (form, got, got_pass) in &forms {
                        assert_eq!(got, &want, "{form}: k {k} trial {trial}");
                        assert_eq!(got_pass.len(), want_pass.len());
                        for (r, (p, q)) in got_pass.iter().zip(&want_pass).enumerate() {
                            assert_eq!(p.flips, q.flips, "{form}: k {k} trial {trial} row {r}");
                            assert_eq!(p.estimate.to_bits(), q.estimate.to_bits(), "row {r}");
                            assert_eq!(p.quad.to_bits(), q.quad.to_bits(), "row {r}");
                        }
                    }
                    flipped += want_pass.iter().map(|p| p.flips).sum::<usize>();
                }
            }
        }
        assert!(flipped > 500, "the cases flip entries ({flipped})");
    }
}
