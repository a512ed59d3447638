//! The search of one row among few clusters: every live cluster scored at once.
//!
//! A sweep with few cluster slots ([`DENSE_MIN_CLUSTERS`] live to [`DENSE_ALWAYS_SLOTS`]),
//! or with up to [`DENSE_MAX_SLOTS`] after a sweep whose walks left most candidates to be
//! scored ([`DENSE_SHARE`]), keeps the means in [`MeanBlocks`] and scores each row it
//! searches against all of them in one pass, where otherwise it walks the table's lists and
//! scores the candidates their triangle bounds leave, eight at a time. The distances have the bits of `sq_dist`, and the
//! cheapest option is taken by the same rule (strict `<` from the cost of staying, ties to
//! the lowest slot), so the moves are those of the walk.
//!
//! This is for the groups of the refinement (`super::groups`): a few dozen clusters, all near
//! each other, whose sweeps search most of their rows and whose bounds leave nearly every
//! cluster to be scored. In one refined DP-means run on 200 000 × 50 blobs at λ² = 150 (100
//! groups of up to 34 clusters, two tries each, one thread), the groups' sweeps visited
//! 24.4 million rows, searched 19.9 million and scored 23 candidates per searched row,
//! passing none by its bound; the run took 8.0–8.2 s with the walk and 4.1–4.3 s with this
//! search, the same moves.

use crate::RowMatrix;
use crate::linalg::MeanBlocks;

/// The most cluster slots (live or emptied) for which a sweep always scores each searched
/// row against every live cluster at once.
pub(super) const DENSE_ALWAYS_SLOTS: usize = 64;

/// The most cluster slots for which a sweep scores each searched row against every live
/// cluster at once when the last sweep that walked the table's lists scored at least
/// [`DENSE_SHARE`] of the other live clusters per searched row (and not for more than
/// [`DENSE_RECHECK`] sweeps in a row). As many as the table is kept for
/// (`TABLE_MAX_SLOTS`), past which a sweep scores every live cluster by other means. Raised
/// from 512 on 2026-12-05: on 200 000 × 50 blobs at P = 50, whose groups hold up
/// to 1 598 clusters, a default fit took 78.4–83.5 s against 106.2 s, the same objective; on
/// the σ = 4 blobs (20 000 × 50) at P = 1 000 and 500 the same times and objectives
/// (docs/speed.md §4).
pub(super) const DENSE_MAX_SLOTS: usize = 4096;

/// See [`DENSE_MAX_SLOTS`]. Where the clusters overlap, the walk scores a large share of
/// them: a refined DP-means run on the first 20 000 rows of 200 000 × 50 blobs with σ = 4 at
/// P = 3 000 (one group of 260 clusters) scored 0.34–0.49 of the others per searched row in
/// its sweeps (up to 0.9 after a round of splits), and took 2.03–2.10 s of CPU on one thread
/// walking, 1.36–1.39 s with this share. Where they do not, it scores few: on 8 000 × 50
/// blobs of 15 clusters (σ = 3, P = 1 000; groups of 89–105 clusters) 0.13–0.16 once the
/// first sweeps are past, where scoring every cluster made the run take 1.33× as long. (A
/// share of 1/6 took that set there; 0.2, 0.25 and 0.3 gave the σ = 4 set 0.78–0.82 s on two
/// threads, against 1.21–1.23 s walking.)
pub(super) const DENSE_SHARE: f64 = 0.25;

/// See [`DENSE_MAX_SLOTS`]: a sweep after this many that scored every cluster at once on
/// the strength of [`DENSE_SHARE`] walks the lists again and measures the share anew, as it
/// falls over a descent (the 8 000-row set above: 0.28 and 0.57 in its first two sweeps,
/// then 0.13–0.15). At 8 the σ = 4 run above took 1.27–1.29 s and the 8 000-row one 0.153 s
/// of CPU, against 1.36–1.39 s and 0.147–0.160 s at 4, and 0.137–0.146 s walking.
pub(super) const DENSE_RECHECK: usize = 4;

/// The fewest live clusters, when a sweep begins, for which it scores each searched row
/// against every live cluster at once. With fewer the table's bounds leave one or two
/// candidates to score, and a pass over a whole block of eight costs more. (One refined
/// DP-means run on 200 000 × 50 blobs, one thread, where the groups hold two or three
/// clusters at λ² = 1 000 and up to some thirty at 150: at 1 000, 1.21–1.24 s with no
/// fewest, 1.15–1.18 s at 4, 1.14–1.18 s at 8, 1.16–1.18 s at 12, 1.18–1.19 s at 16; at 150,
/// 4.23–4.31 s whatever the fewest, the same moves in all.)
pub(super) const DENSE_MIN_CLUSTERS: usize = 8;

/// Where a row stands among all the live clusters but its own.
pub(super) struct Scored {
    /// The cheapest cluster to join, if joining it costs less than staying: (slot, cost,
    /// squared distance). Ties go to the lowest slot.
    pub best: Option<(usize, f64, f64)>,
    /// The three nearest (squared distance, slot), nearest first, ties to the lower slot;
    /// (∞, `usize::MAX`) where there are fewer.
    pub near: [(f64, usize); 3],
}

/// The means in [`MeanBlocks`] and the scratch of the searches.
pub(super) struct DenseSearch {
    blocks: MeanBlocks,
    /// The most slots it takes.
    max_slots: usize,
    /// Squared distances to every slot (and the padding to a multiple of eight).
    dists: Vec<f64>,
}

impl DenseSearch {
    /// For the means of all slots, or `None` past `max_slots` slots (at most
    /// [`DENSE_MAX_SLOTS`]).
    pub fn new(means: &RowMatrix, max_slots: usize) -> Option<Self> {
        let max_slots = max_slots.min(DENSE_MAX_SLOTS);
        (means.n_rows() <= max_slots).then(|| {
            let padded = means.n_rows().div_ceil(8) * 8;
            Self {
                blocks: MeanBlocks::new(means),
                max_slots,
                dists: vec![0.0; padded],
            }
        })
    }

    /// Slot j's mean is now `mean` (j may be a new slot). Returns false past its most
    /// slots, when the search must be dropped.
    pub fn set(&mut self, j: usize, mean: &[f64]) -> bool {
        if j >= self.max_slots {
            return false;
        }
        self.blocks.set(j, mean);
        let padded = self.blocks.slots().div_ceil(8) * 8;
        self.dists.resize(padded, 0.0);
        true
    }

    /// The squared distances of the last row scored to every slot (and the padding).
    pub fn dists(&self) -> &[f64] {
        &self.dists
    }

    /// Row `xn` of cluster `a`, which costs `stay` to keep there: joining slot b costs
    /// `factor[b]` (m_b/(m_b + 1); 0 for an empty slot, which cannot be joined) times the
    /// squared distance. `factor` has one entry per slot.
    pub fn score(&mut self, xn: &[f64], a: usize, factor: &[f64], stay: f64) -> Scored {
        debug_assert_eq!(factor.len(), self.blocks.slots());
        self.blocks.sq_dists(xn, &mut self.dists);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { choose_avx512(&self.dists, a, factor, stay) };
        }
        choose(&self.dists, a, factor, stay)
    }
}

/// [`DenseSearch::score`] once the squared distances are in `dists` (the padding past the
/// slots included): in index order, the cheapest option by strict `<` from `stay`, and the
/// three nearest, a later one displacing an earlier only when strictly nearer.
fn choose(dists: &[f64], a: usize, factor: &[f64], stay: f64) -> Scored {
    let (mut best, mut best_cost) = (None, stay);
    let mut near = [(f64::INFINITY, usize::MAX); 3];
    for (b, (&f, &d)) in factor.iter().zip(dists).enumerate() {
        if b == a || f <= 0.0 {
            continue;
        }
        if f * d < best_cost {
            best_cost = f * d;
            best = Some((b, best_cost, d));
        }
        if let Some(i) = near.iter().position(|&(v, _)| d < v) {
            near.copy_within(i..2, i + 1);
            near[i] = (d, b);
        }
    }
    Scored { best, near }
}

/// [`choose`] by AVX-512F: up to 64 slots by [`choose_part`], more in parts of 64 merged in
/// slot order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn choose_avx512(dists: &[f64], a: usize, factor: &[f64], stay: f64) -> Scored {
    if dists.len() <= 64 {
        return choose_part(dists, a, factor, stay);
    }
    let (mut best, mut best_cost) = (None, stay);
    let mut near = [(f64::INFINITY, usize::MAX); 3];
    for (c, part) in dists.chunks(64).enumerate() {
        let lo = 64 * c;
        let f = &factor[lo..(lo + 64).min(factor.len())];
        let got = choose_part(part, a.wrapping_sub(lo), f, best_cost);
        // A later part's cheapest wins only when strictly cheaper, its near ones only when
        // strictly nearer: the order of the scan over all slots.
        if let Some((b, cost, d)) = got.best {
            (best, best_cost) = (Some((lo + b, cost, d)), cost);
        }
        for (d, b) in got.near.into_iter().filter(|&(_, b)| b != usize::MAX) {
            if let Some(i) = near.iter().position(|&(v, _)| d < v) {
                near.copy_within(i..2, i + 1);
                near[i] = (d, lo + b);
            }
        }
    }
    Scored { best, near }
}

/// [`choose_blocks`] for the number of blocks of eight in `dists` (one to eight).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn choose_part(dists: &[f64], a: usize, factor: &[f64], stay: f64) -> Scored {
    match dists.len() / 8 {
        1 => choose_blocks::<1>(dists, a, factor, stay),
        2 => choose_blocks::<2>(dists, a, factor, stay),
        3 => choose_blocks::<3>(dists, a, factor, stay),
        4 => choose_blocks::<4>(dists, a, factor, stay),
        5 => choose_blocks::<5>(dists, a, factor, stay),
        6 => choose_blocks::<6>(dists, a, factor, stay),
        7 => choose_blocks::<7>(dists, a, factor, stay),
        _ => choose_blocks::<8>(dists, a, factor, stay),
    }
}

/// [`choose`] over `B` blocks of eight slots held in registers (`a` may lie past them: the
/// row's own slot is in another part of [`choose_avx512`]): the costs (+∞ for the row's own
/// slot, the slots that cannot be joined and the padding), then the cheapest and
/// the three nearest, each the first place of the smallest value ([`first_smallest`]), the
/// nearest taken out before the next is sought. The values compared are `choose`'s
/// products and distances, so the answer is `choose`'s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn choose_blocks<const B: usize>(dists: &[f64], a: usize, factor: &[f64], stay: f64) -> Scored {
    use std::arch::x86_64::{
        _CMP_GT_OQ, _mm512_cmp_pd_mask, _mm512_loadu_pd, _mm512_mask_blend_pd, _mm512_mask_mov_pd,
        _mm512_mask_mul_pd, _mm512_maskz_loadu_pd, _mm512_set1_pd, _mm512_setzero_pd,
    };
    let slots = factor.len();
    assert!(slots <= 8 * B && dists.len() == 8 * B);
    let inf = _mm512_set1_pd(f64::INFINITY);
    // The one lane of block q that holds slot j, or none.
    let lane = |j: usize, q: usize| if j / 8 == q { 1u8 << (j % 8) } else { 0 };
    let mut costs = [inf; B];
    let mut near_d = [inf; B];
    for q in 0..B {
        let lanes = ((1u16 << slots.saturating_sub(8 * q).min(8)) - 1) as u8;
        // SAFETY: the mask keeps the lanes below `slots`, within `factor`; the masked-off
        // lanes read nothing. Entries 8q..8q + 8 are within `dists` (asserted).
        let (f, d) = unsafe {
            (
                _mm512_maskz_loadu_pd(lanes, factor.as_ptr().wrapping_add(8 * q)),
                _mm512_loadu_pd(dists.as_ptr().add(8 * q)),
            )
        };
        let open = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(f, _mm512_setzero_pd()) & !lane(a, q);
        costs[q] = _mm512_mask_mul_pd(inf, open, f, d);
        near_d[q] = _mm512_mask_blend_pd(open, inf, d);
    }
    let (cheapest, b) = first_smallest(&costs);
    let best = (cheapest < stay).then(|| (b, cheapest, dists[b]));
    let mut near = [(f64::INFINITY, usize::MAX); 3];
    for slot in &mut near {
        let (d, b) = first_smallest(&near_d);
        if d == f64::INFINITY {
            break;
        }
        *slot = (d, b);
        for (q, v) in near_d.iter_mut().enumerate() {
            *v = _mm512_mask_mov_pd(*v, lane(b, q), inf);
        }
    }
    Scored { best, near }
}

/// The smallest value of the blocks `v` (no NaN) and the first slot holding it (block q,
/// lane l is slot 8q + l), or (+∞, `usize::MAX`) if every value is +∞.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn first_smallest<const B: usize>(v: &[std::arch::x86_64::__m512d; B]) -> (f64, usize) {
    use std::arch::x86_64::{
        _CMP_EQ_OQ, _mm512_cmp_pd_mask, _mm512_min_pd, _mm512_reduce_min_pd, _mm512_set1_pd,
    };
    let least = _mm512_reduce_min_pd(
        v.iter()
            .fold(_mm512_set1_pd(f64::INFINITY), |m, &x| _mm512_min_pd(m, x)),
    );
    if least == f64::INFINITY {
        return (least, usize::MAX);
    }
    let target = _mm512_set1_pd(least);
    let at = v.iter().enumerate().fold(0u64, |bits, (q, &x)| {
        bits | (u64::from(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(x, target)) << (8 * q))
    });
    (least, at.trailing_zeros() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::sq_dist;

    /// The sequential scan that the search replaces: strict `<` in index order.
    fn scan(x: &[f64], means: &RowMatrix, a: usize, factor: &[f64], stay: f64) -> Scored {
        let mut best: Option<(usize, f64, f64)> = None;
        let mut best_cost = stay;
        let mut near = [(f64::INFINITY, usize::MAX); 3];
        for b in (0..factor.len()).filter(|&b| b != a && factor[b] > 0.0) {
            let d = sq_dist(x, means.row(b));
            if factor[b] * d < best_cost {
                best_cost = factor[b] * d;
                best = Some((b, best_cost, d));
            }
            if let Some(i) = near.iter().position(|&(v, _)| d < v) {
                near.copy_within(i..2, i + 1);
                near[i] = (d, b);
            }
        }
        Scored { best, near }
    }

    #[test]
    fn the_search_is_the_sequential_scan() {
        // Means on a coarse grid, so that many distances tie exactly; some slots empty; from
        // one slot to the most, so every number of blocks is taken.
        let d = 5;
        let mut s = 12345u64;
        let mut next = |m: u64| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) % m
        };
        let mut moved = 0;
        for k in [
            1,
            2,
            7,
            8,
            9,
            16,
            21,
            33,
            47,
            56,
            63,
            64,
            65,
            100,
            129,
            200,
            700,
            DENSE_MAX_SLOTS,
        ] {
            let means = RowMatrix::new(k, d, (0..k * d).map(|_| next(3) as f64).collect());
            let factor: Vec<f64> = (0..k)
                .map(|_| match next(4) {
                    0 => 0.0,
                    m => m as f64 / (m as f64 + 1.0),
                })
                .collect();
            let mut search = DenseSearch::new(&means, DENSE_MAX_SLOTS).expect("few slots");
            for _ in 0..300 {
                let x: Vec<f64> = (0..d).map(|_| next(3) as f64).collect();
                let a = next(k as u64) as usize;
                let stay = next(6) as f64;
                let want = scan(&x, &means, a, &factor, stay);
                let got = search.score(&x, a, &factor, stay);
                assert_eq!(got.best, want.best, "k {k}, row {x:?} in {a}, stay {stay}");
                assert_eq!(got.near, want.near, "k {k}, row {x:?} in {a}");
                // The portable form, on the distances the search left in place.
                let plain = choose(&search.dists, a, &factor, stay);
                assert_eq!((plain.best, plain.near), (want.best, want.near), "k {k}");
                moved += usize::from(want.best.is_some());
            }
        }
        assert!(moved > 1000, "the rows must often move: {moved}");
    }

    #[test]
    fn new_slots_are_scored_and_too_many_drop_the_search() {
        let means = RowMatrix::new(3, 2, vec![0.0, 0.0, 5.0, 0.0, 9.0, 9.0]);
        let mut search = DenseSearch::new(&means, DENSE_MAX_SLOTS).expect("few slots");
        assert!(search.set(11, &[1.0, 0.0]));
        let mut factor = vec![0.5; 3];
        factor.resize(12, 0.0);
        factor[11] = 0.5;
        let got = search.score(&[1.5, 0.0], 0, &factor, 10.0);
        // Slot 11 at 0.25, slot 1 at 12.25, slot 2 at 56.25 + 81; slot 0 is the row's own.
        assert_eq!(got.best, Some((11, 0.125, 0.25)));
        assert_eq!(got.near, [(0.25, 11), (12.25, 1), (137.25, 2)]);
        assert!(!search.set(DENSE_MAX_SLOTS, &[0.0, 0.0]));
        let many = RowMatrix::zeros(DENSE_MAX_SLOTS + 1, 2);
        assert!(DenseSearch::new(&many, DENSE_MAX_SLOTS + 1).is_none());
        assert!(DenseSearch::new(&means, 2).is_none());
    }
}
