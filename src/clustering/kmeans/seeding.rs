//! Greedy k-means++ seeding (Arthur & Vassilvitskii 2007): each new center is drawn with
//! probability ∝ D(x)², the squared distance to the nearest center chosen so far; of
//! `2 + ⌊ln K⌋` such draws the one that lowers the potential Σ D(x)² most is kept.
//!
//! One step is one pass over the data. Rows are cut into fixed blocks of [`BLOCK_ROWS`]
//! that run in parallel; each row's squared distances to all the step's candidates come
//! from one fused kernel (‖x‖² + ‖c‖² − 2 x·c, the dot products over fixed lanes, so the
//! same bits on every CPU and thread count), are lowered to the row's D(x)² and written to
//! one buffer per candidate, and summed per chunk of [`CHUNK_ROWS`] rows. A candidate's
//! potential is the sum of its chunk sums in chunk order. The next draws use the kept
//! candidate's chunk sums: the chunk first, then the row inside it, so a draw reads a few
//! hundred numbers instead of all N.

use crate::MatrixView;
use crate::RowMatrix;
use crate::linalg::{BLOCK_ROWS, prefetch, sq_norm};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Rows per partial sum of D(x)² (the unit of a draw's first, coarse search).
const CHUNK_ROWS: usize = 256;

/// Chunks in a block of rows.
const CHUNKS_PER_BLOCK: usize = BLOCK_ROWS / CHUNK_ROWS;

/// Independent partial sums of one dot product (two AVX2 registers).
const LANES: usize = 8;

/// Most candidates whose dot products with a row are accumulated together (two registers
/// of partial sums each: eight of the sixteen AVX2 registers).
const GROUP: usize = 4;

/// How far ahead, in values, a pass asks for the rows it will read: the row that starts at
/// least this far ahead (12 rows at D = 50). A pass streams X from memory once per step, and
/// the hardware's own prefetch alone left the kernel waiting for it. One thread, 200 000 ×
/// 50, K = 100 (`bench_clustering seed`, 2026-11-28, three calls each): 1.04–1.12 s without,
/// 0.83–0.84 / 0.74–0.75 / 0.65–0.66 / 0.61–0.63 / 0.61–0.65 / 0.63–0.65 / 0.63–0.64 s at
/// 2 / 4 / 8 / 12 / 16 / 24 / 32 rows ahead.
const PREFETCH_VALUES: usize = 600;

/// The same with AVX-512F: one register of partial sums each, eight of the 32 registers. A
/// step's 2 + ⌊ln K⌋ candidates come in one group for K up to 1 096 (six for K = 100), so
/// each row is read once per step.
const GROUP_AVX512: usize = 8;

/// Chooses `k` initial means among the rows of `x` (`x_norms[n] = ‖x_n‖²`).
pub fn kmeans_plus_plus(
    x: MatrixView<'_>,
    x_norms: &[f64],
    k: usize,
    rng: &mut ChaCha8Rng,
) -> RowMatrix {
    let (n, d) = (x.n_rows(), x.n_cols());
    let trials = 2 + (k as f64).ln().floor() as usize;
    let mut centers = RowMatrix::zeros(0, d);
    if k == 0 || n == 0 {
        return centers;
    }
    let first = rng.random_range(0..n);
    centers.push_row(x.row(first));
    let mut state = SeedState::new(n, trials);
    state.pass(x, x_norms, &[first], None);
    let mut kept = 0;
    for _ in 1..k {
        let cand_idx: Vec<usize> = (0..trials).map(|_| state.draw(kept, rng)).collect();
        state.pass(x, x_norms, &cand_idx, Some(kept));
        let potentials = state.potentials(trials);
        kept = crate::restarts::best_index(&potentials);
        centers.push_row(x.row(cand_idx[kept]));
    }
    centers
}

/// D(x)² of every row under each candidate of the current step, and its chunk sums.
///
/// Layout, block by block (block `b` holds rows `b·BLOCK_ROWS ..`, `len` of them): `dist`
/// holds `trials` runs of `len` values, candidate after candidate; `sums` holds `trials`
/// runs of `CHUNKS_PER_BLOCK` chunk sums. `closest` is D(x)² under the centers chosen so far
/// (refreshed at the start of each pass from the kept candidate's run).
struct SeedState {
    n: usize,
    trials: usize,
    closest: Vec<f64>,
    dist: Vec<f64>,
    sums: Vec<f64>,
}

impl SeedState {
    fn new(n: usize, trials: usize) -> Self {
        let blocks = n.div_ceil(BLOCK_ROWS);
        Self {
            n,
            trials,
            closest: vec![f64::INFINITY; n],
            dist: vec![0.0; n * trials],
            sums: vec![0.0; blocks * CHUNKS_PER_BLOCK * trials],
        }
    }

    /// Row `start` of block `b` and its number of rows.
    fn block(&self, b: usize) -> (usize, usize) {
        let start = b * BLOCK_ROWS;
        (start, (self.n - start).min(BLOCK_ROWS))
    }

    /// One pass: first `closest` takes candidate `kept`'s values of the last pass (if any),
    /// then every row's min(D(x)², ‖x − c‖²) for each candidate row `cand[t]`.
    fn pass(&mut self, x: MatrixView<'_>, x_norms: &[f64], cand: &[usize], kept: Option<usize>) {
        let d = x.n_cols();
        let trials = self.trials;
        debug_assert!(cand.len() <= trials);
        let c_rows: Vec<&[f64]> = cand.iter().map(|&i| x.row(i)).collect();
        let c_norms: Vec<f64> = c_rows.iter().map(|r| sq_norm(r)).collect();
        self.closest
            .par_chunks_mut(BLOCK_ROWS)
            .zip(self.dist.par_chunks_mut(BLOCK_ROWS * trials))
            .zip(self.sums.par_chunks_mut(CHUNKS_PER_BLOCK * trials))
            .enumerate()
            .for_each(|(b, ((closest, dist), sums))| {
                let start = b * BLOCK_ROWS;
                let len = closest.len();
                if let Some(t) = kept {
                    closest.copy_from_slice(&dist[t * len..(t + 1) * len]);
                }
                let xb = x.rows_slice(start, start + len);
                let xn = &x_norms[start..start + len];
                let block = Block {
                    xb,
                    xn,
                    d,
                    cand: &c_rows,
                    c_norms: &c_norms,
                    closest,
                };
                block_distances(&block, dist, sums);
            });
    }

    /// The potential of each candidate of the last pass: its chunk sums added in order.
    fn potentials(&self, count: usize) -> Vec<f64> {
        let mut pot = vec![0.0; count];
        for (b, block) in self
            .sums
            .chunks_exact(CHUNKS_PER_BLOCK * self.trials)
            .enumerate()
        {
            let used = self.block(b).1.div_ceil(CHUNK_ROWS);
            for (t, p) in pot.iter_mut().enumerate() {
                let o = t * CHUNKS_PER_BLOCK;
                *p += block[o..o + used].iter().sum::<f64>();
            }
        }
        pot
    }

    /// Draws a row with probability ∝ its D(x)² under candidate `t` of the last pass
    /// (uniformly when they sum to zero or the sum is not finite).
    fn draw(&self, t: usize, rng: &mut ChaCha8Rng) -> usize {
        let trials = self.trials;
        let blocks = self.n.div_ceil(BLOCK_ROWS);
        let chunk_sums = |b: usize| {
            let o = b * CHUNKS_PER_BLOCK * trials + t * CHUNKS_PER_BLOCK;
            let (_, len) = self.block(b);
            &self.sums[o..o + len.div_ceil(CHUNK_ROWS)]
        };
        let weights = |b: usize| {
            let (start, len) = self.block(b);
            let o = start * trials + t * len;
            &self.dist[o..o + len]
        };
        let total: f64 = (0..blocks).map(|b| chunk_sums(b).iter().sum::<f64>()).sum();
        if total.is_nan() || total <= 0.0 || total.is_infinite() {
            return rng.random_range(0..self.n);
        }
        let target = rng.random::<f64>() * total;
        // The chunk whose running sum first exceeds the target, then the row inside it (if
        // rounding lets the row scan pass the chunk's end, it goes on into the next rows).
        let mut acc = 0.0;
        for b in 0..blocks {
            for (c, &s) in chunk_sums(b).iter().enumerate() {
                if acc + s > target {
                    for bb in b..blocks {
                        let w = weights(bb);
                        let from = if bb == b { c * CHUNK_ROWS } else { 0 };
                        for (i, &wi) in w.iter().enumerate().skip(from) {
                            acc += wi;
                            if acc > target && wi > 0.0 {
                                return bb * BLOCK_ROWS + i;
                            }
                        }
                    }
                    return self.last_positive(t);
                }
                acc += s;
            }
        }
        self.last_positive(t)
    }

    /// The last row with a positive weight under candidate `t` (0 if none).
    fn last_positive(&self, t: usize) -> usize {
        let blocks = self.n.div_ceil(BLOCK_ROWS);
        for b in (0..blocks).rev() {
            let (start, len) = self.block(b);
            let o = start * self.trials + t * len;
            if let Some(i) = self.dist[o..o + len].iter().rposition(|&w| w > 0.0) {
                return start + i;
            }
        }
        0
    }
}

/// The inputs of one block's pass: its rows of X (`xb`, row-major, `d` columns) and their
/// squared norms, the step's candidate rows and their squared norms, and D(x)² under the
/// centers chosen so far.
struct Block<'a> {
    xb: &'a [f64],
    xn: &'a [f64],
    d: usize,
    cand: &'a [&'a [f64]],
    c_norms: &'a [f64],
    closest: &'a [f64],
}

/// min(closest, max(0, ‖x‖² + ‖c‖² − 2 x·c)) into `dist` (one run of rows per candidate) and
/// their sums per chunk of rows into `sums` (one run of chunks per candidate).
fn block_distances(b: &Block, dist: &mut [f64], sums: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            unsafe { block_distances_avx512(b, dist, sums) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { block_distances_avx2(b, dist, sums) };
            return;
        }
    }
    block_distances_body::<SCALAR>(b, dist, sums);
}

/// Which dot-product kernel [`group_distances`] uses: they give the same bits.
const SCALAR: u8 = 0;
const AVX2: u8 = 1;
const AVX512: u8 = 2;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn block_distances_avx512(b: &Block, dist: &mut [f64], sums: &mut [f64]) {
    block_distances_body::<AVX512>(b, dist, sums);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn block_distances_avx2(b: &Block, dist: &mut [f64], sums: &mut [f64]) {
    block_distances_body::<AVX2>(b, dist, sums);
}

/// Chunk by chunk (its rows stay in cache), group by group of candidates.
#[inline(always)]
fn block_distances_body<const ISA: u8>(b: &Block, dist: &mut [f64], sums: &mut [f64]) {
    let Block {
        xb,
        xn,
        d,
        cand,
        c_norms,
        closest,
    } = *b;
    let len = xn.len();
    let group = if ISA == AVX512 { GROUP_AVX512 } else { GROUP };
    for (ci, from) in (0..len).step_by(CHUNK_ROWS).enumerate() {
        let rows = from..(from + CHUNK_ROWS).min(len);
        for g in (0..cand.len()).step_by(group) {
            let ge = (g + group).min(cand.len());
            let args = Group {
                xb,
                xn,
                d,
                cand: &cand[g..ge],
                c_norms: &c_norms[g..ge],
                closest,
                len,
                rows: rows.clone(),
            };
            let dist = &mut dist[g * len..];
            let mut part = [0.0; GROUP_AVX512];
            match ge - g {
                1 => part[..1].copy_from_slice(&group_distances::<1, ISA>(&args, dist)),
                2 => part[..2].copy_from_slice(&group_distances::<2, ISA>(&args, dist)),
                3 => part[..3].copy_from_slice(&group_distances::<3, ISA>(&args, dist)),
                4 => part[..4].copy_from_slice(&group_distances::<4, ISA>(&args, dist)),
                5 => part[..5].copy_from_slice(&group_distances::<5, ISA>(&args, dist)),
                6 => part[..6].copy_from_slice(&group_distances::<6, ISA>(&args, dist)),
                7 => part[..7].copy_from_slice(&group_distances::<7, ISA>(&args, dist)),
                8 => part[..8].copy_from_slice(&group_distances::<8, ISA>(&args, dist)),
                _ => unreachable!("groups hold 1 to {GROUP_AVX512} candidates"),
            }
            for (t, &p) in part[..ge - g].iter().enumerate() {
                sums[(g + t) * CHUNKS_PER_BLOCK + ci] = p;
            }
        }
    }
}

/// The inputs of [`group_distances`]: rows `rows` of a block of `len` rows.
struct Group<'a> {
    xb: &'a [f64],
    xn: &'a [f64],
    d: usize,
    cand: &'a [&'a [f64]],
    c_norms: &'a [f64],
    closest: &'a [f64],
    len: usize,
    rows: std::ops::Range<usize>,
}

/// The values of `T` candidates for the rows of one chunk (candidate `t`'s run starts at
/// `dist[t·len]`), and their sums.
#[inline(always)]
fn group_distances<const T: usize, const ISA: u8>(a: &Group, dist: &mut [f64]) -> [f64; T] {
    let d = a.d;
    let c: [&[f64]; T] = std::array::from_fn(|t| a.cand[t]);
    let cn: [f64; T] = std::array::from_fn(|t| a.c_norms[t]);
    let mut part = [0.0f64; T];
    let ahead = PREFETCH_VALUES.div_ceil(d.max(1));
    for i in a.rows.clone() {
        if let Some(next) = a.xb.get((i + ahead) * d..(i + ahead + 1) * d) {
            prefetch(next);
        }
        let row = &a.xb[i * d..(i + 1) * d];
        let g = match ISA {
            // SAFETY: `ISA` is AVX2 only inside the function compiled with that feature,
            // which runs only after the CPU was checked for it.
            #[cfg(target_arch = "x86_64")]
            AVX2 => unsafe { dots_avx2::<T>(row, &c) },
            // SAFETY: as above, for AVX-512F.
            #[cfg(target_arch = "x86_64")]
            AVX512 => unsafe { dots_avx512::<T>(row, &c) },
            _ => dots::<T>(row, &c),
        };
        for t in 0..T {
            let v = (a.xn[i] + cn[t] - 2.0 * g[t]).max(0.0).min(a.closest[i]);
            dist[t * a.len + i] = v;
            part[t] += v;
        }
    }
    part
}

/// x·c_t for each of the `T` candidates, in `LANES` partial sums: lane l takes coordinates
/// l, l + 8, l + 16, … (the last, partial group of eight padded with 0·0), and the sums are
/// added as ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)). No fused multiply-add:
/// [`dots_avx2`] does the same operations in the same order, so every CPU gives the same
/// bits.
#[inline(always)]
fn dots<const T: usize>(row: &[f64], c: &[&[f64]; T]) -> [f64; T] {
    let d = row.len();
    let mut acc = [[0.0f64; LANES]; T];
    for j in (0..d).step_by(LANES) {
        for t in 0..T {
            for l in 0..LANES {
                let (xv, cv) = if j + l < d {
                    (row[j + l], c[t][j + l])
                } else {
                    (0.0, 0.0)
                };
                acc[t][l] += xv * cv;
            }
        }
    }
    std::array::from_fn(|t| {
        let a = &acc[t];
        ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
    })
}

/// [`dots`] with AVX2: two registers of four lanes per candidate (lanes 0–3 and 4–7).
///
/// # Safety
/// The CPU must support AVX2; every `c[t]` is as long as `row`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn dots_avx2<const T: usize>(row: &[f64], c: &[&[f64]; T]) -> [f64; T] {
    use std::arch::x86_64::*;
    debug_assert!(c.iter().all(|ct| ct.len() == row.len()));
    let d = row.len();
    let mut lo = [_mm256_setzero_pd(); T];
    let mut hi = [_mm256_setzero_pd(); T];
    let mut j = 0;
    while j + LANES <= d {
        // SAFETY: j + 8 ≤ d, the length of `row` and of every `c[t]`.
        let (xl, xh) = unsafe {
            (
                _mm256_loadu_pd(row.as_ptr().add(j)),
                _mm256_loadu_pd(row.as_ptr().add(j + 4)),
            )
        };
        for t in 0..T {
            let (cl, ch) = unsafe {
                (
                    _mm256_loadu_pd(c[t].as_ptr().add(j)),
                    _mm256_loadu_pd(c[t].as_ptr().add(j + 4)),
                )
            };
            lo[t] = _mm256_add_pd(lo[t], _mm256_mul_pd(xl, cl));
            hi[t] = _mm256_add_pd(hi[t], _mm256_mul_pd(xh, ch));
        }
        j += LANES;
    }
    if j < d {
        // Lanes j..d are loaded, the others read as 0 (sign bit of each mask word).
        let rem = (d - j) as i64;
        let ml = _mm256_setr_epi64x(
            -((rem > 0) as i64),
            -((rem > 1) as i64),
            -((rem > 2) as i64),
            -((rem > 3) as i64),
        );
        let mh = _mm256_setr_epi64x(
            -((rem > 4) as i64),
            -((rem > 5) as i64),
            -((rem > 6) as i64),
            0,
        );
        // SAFETY: the masks load only the d − j < 8 coordinates left.
        let (xl, xh) = unsafe {
            (
                _mm256_maskload_pd(row.as_ptr().add(j), ml),
                _mm256_maskload_pd(row.as_ptr().add(j + 4), mh),
            )
        };
        for t in 0..T {
            let (cl, ch) = unsafe {
                (
                    _mm256_maskload_pd(c[t].as_ptr().add(j), ml),
                    _mm256_maskload_pd(c[t].as_ptr().add(j + 4), mh),
                )
            };
            lo[t] = _mm256_add_pd(lo[t], _mm256_mul_pd(xl, cl));
            hi[t] = _mm256_add_pd(hi[t], _mm256_mul_pd(xh, ch));
        }
    }
    std::array::from_fn(|t| sum_of_pairs(_mm256_add_pd(lo[t], hi[t])))
}

/// (v0 + v2) + (v1 + v3): with v = lanes 0–3 plus lanes 4–7, the reduction of [`dots`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn sum_of_pairs(v: std::arch::x86_64::__m256d) -> f64 {
    use std::arch::x86_64::*;
    let w = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
    _mm_cvtsd_f64(w) + _mm_cvtsd_f64(_mm_unpackhi_pd(w, w))
}

/// [`dots`] with AVX-512F: one register of the eight lanes per candidate, reduced as
/// [`dots_avx2`] reduces its two (the upper four lanes added to the lower four, then pairs).
///
/// # Safety
/// The CPU must support AVX-512F; every `c[t]` is as long as `row`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn dots_avx512<const T: usize>(row: &[f64], c: &[&[f64]; T]) -> [f64; T] {
    use std::arch::x86_64::*;
    debug_assert!(c.iter().all(|ct| ct.len() == row.len()));
    let d = row.len();
    let mut acc = [_mm512_setzero_pd(); T];
    let mut j = 0;
    while j + LANES <= d {
        // SAFETY: j + 8 ≤ d, the length of `row` and of every `c[t]`.
        let xv = unsafe { _mm512_loadu_pd(row.as_ptr().add(j)) };
        for t in 0..T {
            let cv = unsafe { _mm512_loadu_pd(c[t].as_ptr().add(j)) };
            acc[t] = _mm512_add_pd(acc[t], _mm512_mul_pd(xv, cv));
        }
        j += LANES;
    }
    if j < d {
        // Lanes j..d are loaded, the others read as 0, as in `dots_avx2`.
        let m: __mmask8 = (1u8 << (d - j)) - 1;
        // SAFETY: the mask loads only the d − j < 8 coordinates left.
        let xv = unsafe { _mm512_maskz_loadu_pd(m, row.as_ptr().add(j)) };
        for t in 0..T {
            let cv = unsafe { _mm512_maskz_loadu_pd(m, c[t].as_ptr().add(j)) };
            acc[t] = _mm512_add_pd(acc[t], _mm512_mul_pd(xv, cv));
        }
    }
    std::array::from_fn(|t| {
        let (low, high) = (
            _mm512_castpd512_pd256(acc[t]),
            _mm512_extractf64x4_pd::<1>(acc[t]),
        );
        sum_of_pairs(_mm256_add_pd(low, high))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::row_sq_norms;
    use crate::restarts::{best_index, draw_weighted, run_rng};

    #[test]
    fn picks_distinct_rows_from_well_separated_groups() {
        // Three tight groups far apart: k-means++ must take one center from each.
        let mut rows = Vec::new();
        for g in 0..3 {
            for i in 0..5 {
                rows.push([100.0 * g as f64 + 0.01 * i as f64, 0.0]);
            }
        }
        let x = RowMatrix::from_rows(&rows);
        for seed in 0..20 {
            let c = kmeans_plus_plus(x.view(), &row_sq_norms(x.view()), 3, &mut run_rng(seed, 0));
            let mut groups: Vec<usize> =
                c.rows().map(|r| (r[0] / 100.0).round() as usize).collect();
            groups.sort();
            assert_eq!(groups, vec![0, 1, 2], "seed {seed}");
        }
    }

    /// Greedy k-means++ written plainly: every distance by a scalar loop, every draw by one
    /// scan of all N weights, every potential by one sum over the rows.
    fn plain_greedy(x: &RowMatrix, k: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
        let n = x.n_rows();
        let trials = 2 + (k as f64).ln().floor() as usize;
        let dist = |a: usize, b: usize| {
            x.row(a)
                .iter()
                .zip(x.row(b))
                .map(|(u, v)| (u - v) * (u - v))
                .sum::<f64>()
        };
        let first = rng.random_range(0..n);
        let mut chosen = vec![first];
        let mut closest: Vec<f64> = (0..n).map(|i| dist(i, first)).collect();
        for _ in 1..k {
            let cand: Vec<usize> = (0..trials).map(|_| draw_weighted(&closest, rng)).collect();
            let updated: Vec<Vec<f64>> = cand
                .iter()
                .map(|&c| (0..n).map(|i| dist(i, c).min(closest[i])).collect())
                .collect();
            let pot: Vec<f64> = updated.iter().map(|u| u.iter().sum()).collect();
            let best = best_index(&pot);
            chosen.push(cand[best]);
            closest = updated[best].clone();
        }
        chosen
    }

    #[test]
    fn equals_the_plain_algorithm_on_exact_data() {
        // Small integer coordinates: every distance and sum is exact in both codes, so they
        // must draw the same rows. N spans three blocks (the last one partial, with a
        // partial chunk), D is not a multiple of the lanes, K gives 5 candidates per step.
        let (n, d) = (2 * BLOCK_ROWS + 300, 11);
        let x = RowMatrix::new(
            n,
            d,
            (0..n * d)
                .map(|i| ((i * 7919 + i / d * 31) % 23) as f64 - 11.0)
                .collect(),
        );
        let norms = row_sq_norms(x.view());
        for seed in 0..4 {
            let got = kmeans_plus_plus(x.view(), &norms, 30, &mut run_rng(seed, 0));
            let want = plain_greedy(&x, 30, &mut run_rng(seed, 0));
            let want = RowMatrix::from_rows(&want.iter().map(|&i| x.row(i)).collect::<Vec<_>>());
            assert_eq!(got.as_slice(), want.as_slice(), "seed {seed}");
        }
    }

    #[test]
    fn every_kernel_gives_the_same_bits() {
        let mut rng = run_rng(3, 0);
        for d in [0, 1, 7, 8, 9, 16, 50, 67] {
            let v: Vec<f64> = (0..9 * d)
                .map(|_| rng.random::<f64>() * 2.0 - 1.0)
                .collect();
            let row = &v[..d];
            let c8: [&[f64]; 8] = std::array::from_fn(|t| &v[(t + 1) * d..(t + 2) * d]);
            let c: [&[f64]; 4] = std::array::from_fn(|t| c8[t]);
            let want = dots::<4>(row, &c);
            let want8 = dots::<8>(row, &c8);
            assert_eq!(want8[..4], want, "the group size changes no bits, d {d}");
            for (t, ct) in c.iter().enumerate() {
                let plain: f64 = row.iter().zip(*ct).map(|(a, b)| a * b).sum();
                assert!((want[t] - plain).abs() <= 1e-13, "d {d}");
            }
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: AVX2 checked just above; the slices have length d.
                    let got = unsafe { dots_avx2::<4>(row, &c) };
                    assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "avx2, d {d}");
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: AVX-512F checked just above; the slices have length d.
                    let got = unsafe { dots_avx512::<8>(row, &c8) };
                    let want = want8.map(f64::to_bits);
                    assert_eq!(got.map(f64::to_bits), want, "avx512, d {d}");
                }
            }
        }
    }

    #[test]
    fn draws_follow_the_weights() {
        // Weights 0, 1, 0, 3 repeated: zero-weight rows are never drawn, and rows of weight
        // 3 come three times as often as rows of weight 1.
        let n = BLOCK_ROWS + 700;
        let x = RowMatrix::new(
            n,
            1,
            (0..n)
                .map(|i| [0.0, 1.0, 0.0, 3.0f64.sqrt()][i % 4])
                .collect(),
        );
        let mut state = SeedState::new(n, 3);
        let zero = (0..n).find(|&i| i % 4 == 0).expect("a zero row");
        state.pass(x.view(), &row_sq_norms(x.view()), &[zero], None);
        let mut rng = run_rng(1, 2);
        let mut counts = [0usize; 4];
        for _ in 0..20_000 {
            let i = state.draw(0, &mut rng);
            assert!(i < n && i % 2 == 1, "row {i}");
            counts[i % 4] += 1;
        }
        let ratio = counts[3] as f64 / counts[1] as f64;
        assert!((ratio - 3.0).abs() < 0.25, "{counts:?}");
        // All weights zero: any row.
        let same = RowMatrix::new(5, 1, vec![2.0; 5]);
        let mut state = SeedState::new(5, 3);
        state.pass(same.view(), &row_sq_norms(same.view()), &[0], None);
        assert!(state.draw(0, &mut rng) < 5);
    }
}
