//! Row kernels shared by the feature algorithms, all on the Gram matrix G = A Aᵀ (`K × K`,
//! row-major) and g = A x_n (one row of the GEMM X Aᵀ):
//!
//! ‖x_n − z A‖² = ‖x_n‖² + c(z),  c(z) = zᵀ G z − 2 z·g.
//!
//! Flipping z_k changes c by `G_kk + 2 s_k − 2 g_k` (0 → 1; the negative for 1 → 0) with
//! s_k = Σ_{j≠k} G_kj z_j; keeping h = G z up to date makes every flip O(K).

use crate::RowMatrix;
#[cfg(test)]
use crate::linalg::dot;
use crate::linalg::dots_to;

/// G = A Aᵀ, row-major `K × K`: G_ij = G_ji = `dot(a_i, a_j)` (j ≤ i), the products of row i
/// with rows 0..=i formed four at a time ([`dots_to`], the same bits).
pub(crate) fn gram(a: &RowMatrix) -> Vec<f64> {
    let k = a.n_rows();
    let mut g = vec![0.0; k * k];
    for i in 0..k {
        dots_to(
            a.rows_slice(0, i + 1),
            a.row(i),
            &mut g[i * k..i * k + i + 1],
        );
        for j in 0..i {
            g[j * k + i] = g[i * k + j];
        }
    }
    g
}

/// The positions of the ones of `z` (its entries other than 0 or `false`), ascending, into
/// `on` (cleared first). Branch-free: the entries of a row of Z, or which rows take a
/// feature, are close to random, so a branch per entry would be mispredicted often.
#[inline(always)]
pub(crate) fn ones_of<T: Copy + Default + PartialEq>(z: &[T], on: &mut Vec<usize>) {
    on.clear();
    on.resize(z.len(), 0);
    let m = ones_into(z, on);
    on.truncate(m);
}

/// [`ones_of`] into the front of `on` (at least `z.len()` long, e.g. on the stack); returns
/// how many.
#[inline(always)]
pub(crate) fn ones_into<T: Copy + Default + PartialEq>(z: &[T], on: &mut [usize]) -> usize {
    let mut m = 0;
    for (j, &v) in z.iter().enumerate() {
        on[m] = j;
        m += usize::from(v != T::default());
    }
    m
}

/// c(z) = zᵀ G z − 2 z·g, the error of `z` less ‖x‖²: the terms of [`row_cost_on`] in its
/// order (so its bits). Up to 64 features the ones are listed on the stack without a branch
/// per entry (which entries are set is close to random, and a branch per entry was
/// mispredicted often); above, read off the row as they come (this is called for every row
/// a step re-optimises, and a list on the heap was an allocation each time).
pub(crate) fn row_cost(z: &[u8], g: &[f64], gm: &[f64]) -> f64 {
    let k = z.len();
    if k <= 64 {
        let mut on = [0usize; 64];
        let m = ones_into(z, &mut on);
        return row_cost_on(&on[..m], g, gm, k);
    }
    let on = || (0..k).filter(|&j| z[j] != 0);
    on().fold(0.0, |c, i| {
        let row = &gm[i * k..(i + 1) * k];
        on().fold(c - 2.0 * g[i], |c, j| c + row[j])
    })
}

/// [`row_cost`] of the row whose ones are at `on` (ascending) among `k` features: the same
/// terms added in the same order, so the same bits. The sum is carried through a fold, which
/// keeps it in a register (a plain `+=` loop here was compiled with the sum on the stack, a
/// store and a load on every term).
#[inline(always)]
pub(crate) fn row_cost_on(on: &[usize], g: &[f64], gm: &[f64], k: usize) -> f64 {
    on.iter().fold(0.0, |c, &i| {
        let row = &gm[i * k..(i + 1) * k];
        on.iter().fold(c - 2.0 * g[i], |c, &j| c + row[j])
    })
}

/// h = G z (G is symmetric, so column j is read as row j: contiguous).
pub(crate) fn gz(z: &[u8], gm: &[f64], h: &mut [f64]) {
    let mut on = Vec::with_capacity(z.len());
    ones_of(z, &mut on);
    gz_on(&on, gm, h);
}

/// [`gz`] of the row whose ones are at `on` (ascending): each h_i is 0 plus G_ji over j in
/// `on` in that order, the additions of adding the rows of G one after another, so the same
/// bits. Four entries of h are summed at a time in registers, where adding whole rows into h
/// would store and reload h once per one of z.
#[inline(always)]
pub(crate) fn gz_on(on: &[usize], gm: &[f64], h: &mut [f64]) {
    let k = h.len();
    let mut chunks = h.chunks_exact_mut(4);
    let mut i = 0;
    for out in &mut chunks {
        let mut acc = [0.0f64; 4];
        for &j in on {
            let g = &gm[j * k + i..j * k + i + 4];
            for (a, v) in acc.iter_mut().zip(g) {
                *a += v;
            }
        }
        out.copy_from_slice(&acc);
        i += 4;
    }
    for (hi, col) in chunks.into_remainder().iter_mut().zip(i..) {
        *hi = on.iter().fold(0.0, |a, &j| a + gm[j * k + col]);
    }
}

/// Change of c when z_k flips (from its current value), given h = G z.
#[inline(always)]
pub(crate) fn flip_delta(z: &[u8], k: usize, g: &[f64], gm: &[f64], h: &[f64]) -> f64 {
    let kk = z.len();
    let gkk = gm[k * kk + k];
    let s = h[k] - if z[k] != 0 { gkk } else { 0.0 };
    let on = gkk + 2.0 * s - 2.0 * g[k];
    if z[k] != 0 { -on } else { on }
}

/// Flips z_k and updates h = G z.
#[inline(always)]
pub(crate) fn apply_flip(z: &mut [u8], k: usize, gm: &[f64], h: &mut [f64]) {
    let kk = z.len();
    let sign = if z[k] != 0 { -1.0 } else { 1.0 };
    z[k] ^= 1;
    // Column k of the symmetric G, read as row k.
    for (hi, g) in h.iter_mut().zip(&gm[k * kk..(k + 1) * kk]) {
        *hi += sign * g;
    }
}

/// One pass of BP-means' row step (Alg. 1): for k = 0..K in turn, set z_k to the value with
/// the smaller error, the others fixed (a flip only when it strictly lowers the error).
/// `h` must hold G z on entry and holds it on exit. Returns the number of flips.
#[inline(always)]
pub(crate) fn flip_pass(z: &mut [u8], g: &[f64], gm: &[f64], h: &mut [f64]) -> usize {
    flip_pass_from(z, g, gm, h, 0)
}

/// [`flip_pass`] over k = `from`..K only.
#[inline(always)]
pub(crate) fn flip_pass_from(
    z: &mut [u8],
    g: &[f64],
    gm: &[f64],
    h: &mut [f64],
    from: usize,
) -> usize {
    let mut flips = 0;
    for k in from..z.len() {
        if flip_delta(z, k, g, gm, h) < 0.0 {
            apply_flip(z, k, gm, h);
            flips += 1;
        }
    }
    flips
}

/// Coordinate descent to a row that no single flip improves (at most `max_pass` passes).
pub(crate) fn descend_row(z: &mut [u8], g: &[f64], gm: &[f64], max_pass: usize) {
    let mut h = vec![0.0; z.len()];
    gz(z, gm, &mut h);
    for _ in 0..max_pass {
        if flip_pass(z, g, gm, &mut h) == 0 {
            break;
        }
    }
}

/// The row z ∈ {0,1}^K minimising c(z), by visiting all 2^K rows in Gray-code order (O(K)
/// per row). Ties keep the first row found in that order (starting from z = 0).
///
/// The row is a bit mask and h = G z lives on the stack: the same terms in the same order
/// as [`flip_delta`] and [`apply_flip`] on a byte row, so the same bits, without allocating
/// or copying the best row at every improvement (it is read off the Gray code at the end).
///
/// # Panics
/// When K > 30 (the enumeration would not finish).
pub(crate) fn best_row_exact(g: &[f64], gm: &[f64], out: &mut [u8]) -> f64 {
    let k = g.len();
    assert!(k <= 30, "exact row search needs K ≤ 30, got {k}");
    let mut h = [0.0f64; 30];
    let h = &mut h[..k];
    let mut z: u32 = 0;
    let mut c = 0.0;
    let mut best = 0.0;
    let mut best_z: u32 = 0;
    for step in 1u32..(1u32 << k) {
        let bit = step.trailing_zeros() as usize;
        let gkk = gm[bit * k + bit];
        let row = &gm[bit * k..(bit + 1) * k];
        let set = z & (1 << bit) != 0;
        // flip_delta, then apply_flip, on the mask.
        let s = h[bit] - if set { gkk } else { 0.0 };
        let on = gkk + 2.0 * s - 2.0 * g[bit];
        c += if set { -on } else { on };
        let sign = if set { -1.0 } else { 1.0 };
        z ^= 1 << bit;
        for (hi, gv) in h.iter_mut().zip(row) {
            *hi += sign * gv;
        }
        if c < best {
            best = c;
            best_z = z;
        }
    }
    for (j, o) in out.iter_mut().enumerate() {
        *o = u8::from(best_z & (1 << j) != 0);
    }
    best
}

/// Largest K for which [`GraySteps`] tabulates the 2^K steps (16 bytes each: 1 MiB at 16).
pub(crate) const GRAY_TABLE_MAX_K: usize = 16;

/// The row-independent half of [`best_row_exact`] for one G, tabulated once and shared by
/// every row searched against it.
///
/// Step s of the Gray-code enumeration flips bit b_s, and its change of c is ±(G_bb + 2 s_b
/// − 2 g_b), where s_b = (G z)_b without the diagonal term depends on G and the step alone.
/// The table holds G_bb + 2 s_b — formed exactly as [`best_row_exact`] forms it, and that
/// expression is evaluated left to right, so subtracting 2 g_b from it gives the very same
/// bits — and a row costs O(1) per step instead of O(K).
#[derive(Clone, Debug)]
pub(crate) struct GraySteps {
    k: usize,
    /// Per step 1..2^K: G_bb + 2 s_b, the bit b, and whether it is set before the flip.
    base: Vec<f64>,
    bit: Vec<u8>,
    set: Vec<bool>,
}

impl GraySteps {
    /// The steps for G (`gm`, `k × k`).
    ///
    /// # Panics
    /// When K > [`GRAY_TABLE_MAX_K`].
    pub(crate) fn new(gm: &[f64], k: usize) -> Self {
        assert!(
            k <= GRAY_TABLE_MAX_K,
            "Gray-step table needs K ≤ 16, got {k}"
        );
        let steps = (1usize << k) - 1;
        let (mut base, mut bit, mut set) = (
            Vec::with_capacity(steps),
            Vec::with_capacity(steps),
            Vec::with_capacity(steps),
        );
        let mut h = [0.0f64; GRAY_TABLE_MAX_K];
        let h = &mut h[..k];
        let mut z: u32 = 0;
        for step in 1u32..=steps as u32 {
            let b = step.trailing_zeros() as usize;
            let gbb = gm[b * k + b];
            let on = z & (1 << b) != 0;
            let s = h[b] - if on { gbb } else { 0.0 };
            base.push(gbb + 2.0 * s);
            bit.push(b as u8);
            set.push(on);
            let sign = if on { -1.0 } else { 1.0 };
            z ^= 1 << b;
            for (hi, gv) in h.iter_mut().zip(&gm[b * k..(b + 1) * k]) {
                *hi += sign * gv;
            }
        }
        Self { k, base, bit, set }
    }

    /// [`best_row_exact`] for the row with g = A x_n: the same value and row, bit for bit.
    pub(crate) fn best(&self, g: &[f64], out: &mut [u8]) -> f64 {
        debug_assert_eq!(g.len(), self.k);
        let mut c = 0.0;
        let mut best = 0.0;
        let mut best_step: u32 = 0;
        for (idx, ((&t, &b), &on)) in self.base.iter().zip(&self.bit).zip(&self.set).enumerate() {
            let delta = t - 2.0 * g[b as usize];
            c += if on { -delta } else { delta };
            if c < best {
                best = c;
                best_step = idx as u32 + 1;
            }
        }
        gray_row(best_step, out);
        best
    }

    /// [`GraySteps::best`] for four rows at once (`g`: each row's A x_n), each the same
    /// value and row, bit for bit: the four running sums advance together through the
    /// steps, four lanes wide where the CPU has AVX2 (the same operations, no FMA), so that
    /// each waits on its own last addition four times less often.
    pub(crate) fn best4(&self, g: [&[f64]; 4], out: [&mut [u8]; 4]) -> [f64; 4] {
        assert!(g.iter().all(|r| r.len() == self.k));
        // g laid out step-ready: the four rows' values of feature b side by side.
        let mut g4 = [[0.0f64; 4]; GRAY_TABLE_MAX_K];
        for (b, v) in g4.iter_mut().enumerate().take(self.k) {
            *v = g.map(|r| r[b]);
        }
        #[cfg(target_arch = "x86_64")]
        let (best, best_step) = if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { self.best4_avx2(&g4) }
        } else {
            self.best4_body(&g4)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let (best, best_step) = self.best4_body(&g4);
        for (step, o) in best_step.into_iter().zip(out) {
            gray_row(step, o);
        }
        best
    }

    /// [`GraySteps::best4`] for eight rows: one 512-bit register of running sums where the
    /// CPU has AVX-512F (the same operations, no FMA), else two fours.
    pub(crate) fn best8(&self, g: [&[f64]; 8], out: [&mut [u8]; 8]) -> [f64; 8] {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            assert!(g.iter().all(|r| r.len() == self.k));
            let mut gl = [[0.0f64; 8]; GRAY_TABLE_MAX_K];
            for (b, v) in gl.iter_mut().enumerate().take(self.k) {
                *v = g.map(|r| r[b]);
            }
            // SAFETY: the CPU supports AVX-512F (checked just above).
            let (best, best_step) = unsafe { self.lanes8_avx512(&gl) };
            for (step, o) in best_step.into_iter().zip(out) {
                gray_row(step, o);
            }
            return best;
        }
        let [o0, o1, o2, o3, o4, o5, o6, o7] = out;
        let lo = self.best4([g[0], g[1], g[2], g[3]], [o0, o1, o2, o3]);
        let hi = self.best4([g[4], g[5], g[6], g[7]], [o4, o5, o6, o7]);
        std::array::from_fn(|r| if r < 4 { lo[r] } else { hi[r - 4] })
    }

    /// [`GraySteps::best4_body`] for eight rows in one 512-bit register: each lane does the
    /// body's operations in its order (t − 2·g_b, negated by its sign bit when the bit is
    /// set, added to c; a strictly smaller c taken as the best, with its step).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn lanes8_avx512(&self, gl: &[[f64; 8]; GRAY_TABLE_MAX_K]) -> ([f64; 8], [u32; 8]) {
        use std::arch::x86_64::{
            _CMP_LT_OQ, _mm512_add_pd, _mm512_castpd_si512, _mm512_castsi512_pd,
            _mm512_cmp_pd_mask, _mm512_loadu_pd, _mm512_mask_blend_pd, _mm512_mask_xor_epi64,
            _mm512_mul_pd, _mm512_set1_epi64, _mm512_set1_pd, _mm512_setzero_pd, _mm512_storeu_pd,
            _mm512_sub_pd,
        };
        let sign = _mm512_set1_epi64(i64::MIN);
        let two = _mm512_set1_pd(2.0);
        let one = _mm512_set1_pd(1.0);
        let mut c = _mm512_setzero_pd();
        let mut best = _mm512_setzero_pd();
        // The step number counted in every lane (below 2^16, exact as f64), and the best one.
        let mut step = _mm512_setzero_pd();
        let mut best_step = _mm512_setzero_pd();
        for ((&t, &b), &on) in self.base.iter().zip(&self.bit).zip(&self.set) {
            // `b < k <= 16`, so `& 15` leaves it as it is (and the index needs no check).
            let gb = &gl[usize::from(b) & (GRAY_TABLE_MAX_K - 1)];
            // SAFETY: `gb` holds eight f64, the 64 bytes the load reads.
            let gb = unsafe { _mm512_loadu_pd(gb.as_ptr()) };
            let delta = _mm512_sub_pd(_mm512_set1_pd(t), _mm512_mul_pd(two, gb));
            // −delta where the bit is set: its sign bit flipped, in every lane or none.
            let flip = u8::from(on).wrapping_neg();
            let delta = _mm512_castpd_si512(delta);
            let delta = _mm512_castsi512_pd(_mm512_mask_xor_epi64(delta, flip, delta, sign));
            c = _mm512_add_pd(c, delta);
            step = _mm512_add_pd(step, one);
            let better = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(c, best);
            best = _mm512_mask_blend_pd(better, best, c);
            best_step = _mm512_mask_blend_pd(better, best_step, step);
        }
        let (mut b, mut st) = ([0.0f64; 8], [0.0f64; 8]);
        // SAFETY: each array holds eight f64, the 64 bytes each store writes.
        unsafe {
            _mm512_storeu_pd(b.as_mut_ptr(), best);
            _mm512_storeu_pd(st.as_mut_ptr(), best_step);
        }
        (b, st.map(|v| v as u32))
    }

    /// [`GraySteps::best`] for each row of `g` (row-major, K values a row) into the same row
    /// of `out`, eight rows at a time ([`GraySteps::best8`]), then four, then one: the bits
    /// of one at a time.
    pub(crate) fn best_rows(&self, g: &[f64], out: &mut [u8]) {
        let k = self.k;
        if k == 0 {
            return;
        }
        let mut eights = g.chunks_exact(8 * k).zip(out.chunks_exact_mut(8 * k));
        for (gq, oq) in &mut eights {
            let rows: [&[f64]; 8] = std::array::from_fn(|r| &gq[r * k..(r + 1) * k]);
            let mut outs = oq.chunks_exact_mut(k);
            let outs: [&mut [u8]; 8] = std::array::from_fn(|_| outs.next().expect("8 rows"));
            self.best8(rows, outs);
        }
        let mut done = g.len() / (8 * k) * 8 * k;
        if g.len() - done >= 4 * k {
            let (gq, oq) = (&g[done..done + 4 * k], &mut out[done..done + 4 * k]);
            let rows: [&[f64]; 4] = std::array::from_fn(|r| &gq[r * k..(r + 1) * k]);
            let mut outs = oq.chunks_exact_mut(k);
            let outs: [&mut [u8]; 4] = std::array::from_fn(|_| outs.next().expect("4 rows"));
            self.best4(rows, outs);
            done += 4 * k;
        }
        for (gi, oi) in g[done..]
            .chunks_exact(k)
            .zip(out[done..].chunks_exact_mut(k))
        {
            self.best(gi, oi);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn best4_avx2(&self, g4: &[[f64; 4]; GRAY_TABLE_MAX_K]) -> ([f64; 4], [u32; 4]) {
        self.best4_body(g4)
    }

    #[inline(always)]
    fn best4_body(&self, g4: &[[f64; 4]; GRAY_TABLE_MAX_K]) -> ([f64; 4], [u32; 4]) {
        let mut c = [0.0f64; 4];
        let mut best = [0.0f64; 4];
        let mut best_step = [0u32; 4];
        for (idx, ((&t, &b), &on)) in self.base.iter().zip(&self.bit).zip(&self.set).enumerate() {
            let gb = &g4[b as usize];
            let step = idx as u32 + 1;
            for r in 0..4 {
                let delta = t - 2.0 * gb[r];
                c[r] += if on { -delta } else { delta };
                // Selected without a branch: which row improves is unpredictable.
                let better = c[r] < best[r];
                best[r] = if better { c[r] } else { best[r] };
                best_step[r] = if better { step } else { best_step[r] };
            }
        }
        (best, best_step)
    }
}

/// The row after step `step` of the reflected Gray code, `step ^ (step >> 1)`, as bytes.
fn gray_row(step: u32, out: &mut [u8]) {
    let z = step ^ (step >> 1);
    for (j, o) in out.iter_mut().enumerate() {
        *o = u8::from(z & (1 << j) != 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::objective::row_residual;

    fn setup() -> (RowMatrix, Vec<f64>, Vec<f64>, Vec<f64>) {
        let a = RowMatrix::from_rows(&[
            [1.0, 0.0, 2.0],
            [0.5, 1.0, -1.0],
            [0.0, 2.0, 0.0],
            [1.0, 1.0, 1.0],
        ]);
        let x = vec![1.4, 3.1, 0.9];
        let gm = gram(&a);
        let g: Vec<f64> = a.rows().map(|r| dot(r, &x)).collect();
        (a, x, gm, g)
    }

    #[test]
    fn costs_and_flips_match_direct_residuals() {
        let (a, x, gm, g) = setup();
        let xn = dot(&x, &x);
        let mut r = vec![0.0; 3];
        let mut z = vec![1u8, 0, 1, 0];
        let mut h = vec![0.0; 4];
        gz(&z, &gm, &mut h);
        for k in [0, 3, 1, 0, 2] {
            let before = row_residual(&x, &z, &a, &mut r);
            assert!((xn + row_cost(&z, &g, &gm) - before).abs() < 1e-12);
            let d = flip_delta(&z, k, &g, &gm, &h);
            apply_flip(&mut z, k, &gm, &mut h);
            let after = row_residual(&x, &z, &a, &mut r);
            assert!((after - before - d).abs() < 1e-12);
        }
    }

    #[test]
    fn gray_enumeration_finds_the_brute_force_optimum() {
        let (a, x, gm, g) = setup();
        let mut r = vec![0.0; 3];
        let mut best = f64::INFINITY;
        for mask in 0u8..16 {
            let z: Vec<u8> = (0..4).map(|k| (mask >> k) & 1).collect();
            best = best.min(row_residual(&x, &z, &a, &mut r));
        }
        let mut z = vec![0u8; 4];
        let c = best_row_exact(&g, &gm, &mut z);
        let direct = row_residual(&x, &z, &a, &mut r);
        assert!((direct - best).abs() < 1e-12);
        assert!((dot(&x, &x) + c - best).abs() < 1e-12);
        // Coordinate descent ends where no flip helps, never above its start.
        let mut zc = vec![0u8; 4];
        descend_row(&mut zc, &g, &gm, 100);
        let mut h = vec![0.0; 4];
        gz(&zc, &gm, &mut h);
        assert!((0..4).all(|k| flip_delta(&zc, k, &g, &gm, &h) >= 0.0));
        assert!(row_residual(&x, &zc, &a, &mut r) <= dot(&x, &x));
    }

    /// The Gray-code search as first written (byte row, `flip_delta` and `apply_flip`,
    /// the best row copied at every improvement): the mask form must give the same bits.
    fn best_row_exact_on_bytes(g: &[f64], gm: &[f64], out: &mut [u8]) -> f64 {
        let k = g.len();
        let mut z = vec![0u8; k];
        let mut h = vec![0.0; k];
        let (mut c, mut best) = (0.0, 0.0);
        out.iter_mut().for_each(|v| *v = 0);
        for step in 1u64..(1u64 << k) {
            let bit = step.trailing_zeros() as usize;
            c += flip_delta(&z, bit, g, gm, &h);
            apply_flip(&mut z, bit, gm, &mut h);
            if c < best {
                best = c;
                out.copy_from_slice(&z);
            }
        }
        best
    }

    #[test]
    fn mask_and_table_enumerations_give_the_bits_of_the_byte_enumeration() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for k in 0..=10 {
            for trial in 0..20 {
                let d = 6;
                let rows: Vec<Vec<f64>> = (0..k)
                    .map(|_| (0..d).map(|_| rng.random_range(-1.0..1.0)).collect())
                    .collect();
                let a = RowMatrix::from_rows(&rows);
                let a = if k == 0 { RowMatrix::zeros(0, d) } else { a };
                let x: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
                let gm = gram(&a);
                let g: Vec<f64> = a.rows().map(|r| dot(r, &x)).collect();
                let (mut p, mut q) = (vec![9u8; k], vec![7u8; k]);
                let cp = best_row_exact(&g, &gm, &mut p);
                let cq = best_row_exact_on_bytes(&g, &gm, &mut q);
                assert_eq!(cp.to_bits(), cq.to_bits(), "k {k} trial {trial}");
                assert_eq!(p, q, "k {k} trial {trial}");
                let mut t = vec![5u8; k];
                let ct = GraySteps::new(&gm, k).best(&g, &mut t);
                assert_eq!(ct.to_bits(), cq.to_bits(), "table: k {k} trial {trial}");
                assert_eq!(t, q, "table: k {k} trial {trial}");
            }
        }
    }

    /// Rows searched together (four, eight, and any count through `best_rows`: eights,
    /// then a four, then single rows) end where each ends alone, bit for bit, on real values
    /// and on integer ones (where costs tie and the first of equals must win).
    #[test]
    fn rows_searched_together_give_the_bits_of_one_at_a_time() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        for k in 0..=9 {
            for trial in 0..30 {
                let integer = trial % 2 == 1;
                let mut value = |lo: f64, hi: f64| {
                    let v = rng.random_range(lo..hi);
                    if integer { v.round() } else { v }
                };
                let gm: Vec<f64> = {
                    let a: Vec<Vec<f64>> = (0..k)
                        .map(|_| (0..5).map(|_| value(-2.0, 2.0)).collect())
                        .collect();
                    let a = if k == 0 {
                        RowMatrix::zeros(0, 5)
                    } else {
                        RowMatrix::from_rows(&a)
                    };
                    gram(&a)
                };
                let n = trial % 23;
                let g: Vec<f64> = (0..n.max(8) * k).map(|_| value(-4.0, 4.0)).collect();
                let row = |r: usize| &g[r * k..(r + 1) * k];
                let table = GraySteps::new(&gm, k);
                let mut alone = vec![vec![7u8; k]; n.max(8)];
                let costs: Vec<f64> = (0..n.max(8))
                    .map(|r| table.best(row(r), &mut alone[r]))
                    .collect();
                let mut outs = vec![vec![9u8; k]; 8];
                let mut it = outs.iter_mut();
                let got8 = table.best8(
                    std::array::from_fn(row),
                    std::array::from_fn(|_| it.next().expect("8").as_mut_slice()),
                );
                for r in 0..8 {
                    assert_eq!(
                        got8[r].to_bits(),
                        costs[r].to_bits(),
                        "k {k} trial {trial} row {r}"
                    );
                    assert_eq!(outs[r], alone[r], "k {k} trial {trial} row {r}");
                }
                let mut it = outs.iter_mut();
                let got4 = table.best4(
                    std::array::from_fn(row),
                    std::array::from_fn(|_| it.next().expect("4").as_mut_slice()),
                );
                for r in 0..4 {
                    assert_eq!(
                        got4[r].to_bits(),
                        costs[r].to_bits(),
                        "k {k} trial {trial} row {r}"
                    );
                    assert_eq!(outs[r], alone[r], "k {k} trial {trial} row {r}");
                }
                let mut rows = vec![9u8; n * k];
                table.best_rows(&g[..n * k], &mut rows);
                assert_eq!(
                    rows,
                    alone[..n].concat(),
                    "best_rows: k {k} trial {trial} n {n}"
                );
            }
        }
    }

    #[test]
    fn register_sums_give_the_bits_of_the_row_by_row_sums() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        // Both forms of `row_cost`: ones listed on the stack (K ≤ 64), and read as they come.
        for k in (0..=13).chain([64, 65, 70]) {
            for _ in 0..20 {
                let gm: Vec<f64> = (0..k * k).map(|_| rng.random_range(-3.0..3.0)).collect();
                let g: Vec<f64> = (0..k).map(|_| rng.random_range(-3.0..3.0)).collect();
                let z: Vec<u8> = (0..k).map(|_| u8::from(rng.random_bool(0.4))).collect();
                let mut on = Vec::new();
                ones_of(&z, &mut on);
                // The former forms: rows of G added into h; the cost summed with `+=`.
                let mut want = vec![0.0; k];
                for &j in &on {
                    for (w, v) in want.iter_mut().zip(&gm[j * k..(j + 1) * k]) {
                        *w += v;
                    }
                }
                let mut cost = 0.0;
                for &i in &on {
                    cost -= 2.0 * g[i];
                    for &j in &on {
                        cost += gm[i * k + j];
                    }
                }
                let mut h = vec![f64::NAN; k];
                gz_on(&on, &gm, &mut h);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&h), bits(&want), "k {k}");
                assert_eq!(row_cost_on(&on, &g, &gm, k).to_bits(), cost.to_bits());
                assert_eq!(row_cost(&z, &g, &gm).to_bits(), cost.to_bits());
            }
        }
    }
}
