//! Exact coordinate descent on the collapsed DP-means objective (MAD-Bayes Eq. 9, Alg. 2):
//! J(c) = Σ_k Σ_{n: c_n = k} ‖x_n − x̄_k‖² + (K − 1)·P, x̄_k the empirical mean.
//!
//! A row in cluster a (m_a members) costs m_a/(m_a − 1)·‖x_n − x̄_a‖² to keep there (the
//! drop in the sum of squares if it left), or P when it is alone (its leaving removes a
//! cluster). Joining b costs m_b/(m_b + 1)·‖x_n − x̄_b‖², a new singleton costs P. Every row
//! takes the cheapest option (ties keep it where it is, then favour the lowest cluster
//! index, then an existing cluster over a new one), so J never increases.
//!
//! Merging clusters a and b changes J by m_a m_b/(m_a + m_b)·‖x̄_a − x̄_b‖² − P; the optional
//! merge step applies the best negative merge until none is left, and the optional split
//! step splits a cluster in two (by a short 2-means) when the sum of squares drops by more
//! than P. Sums and counts are kept
//! per cluster, so a move costs O(D) after the O(K D) search.

use super::dense::{
    DENSE_ALWAYS_SLOTS, DENSE_MAX_SLOTS, DENSE_MIN_CLUSTERS, DENSE_RECHECK, DENSE_SHARE,
    DenseSearch, Scored,
};
use super::memo::{ChangeLog, Cheapest, MEMO_KEPT, NO_SLOT, RowMemo};
use crate::MatrixView;
use crate::RowMatrix;
use crate::linalg::{ROWS_AHEAD, axpy, prefetch, prefetch_one, sq_dist, sq_dist4, sq_dists_from};
use rayon::prelude::*;
use std::collections::VecDeque;

/// The partition being optimised, with each cluster's member count, sum and mean.
pub(crate) struct Partition {
    pub labels: Vec<usize>,
    counts: Vec<usize>,
    sums: RowMatrix,
    means: RowMatrix,
    /// Slots of emptied clusters, reused before new slots are appended.
    free: Vec<usize>,
    /// Row bounds that let a sweep pass over rows that cannot move; see [`RowBounds`].
    bounds: RowBounds,
    /// The slots touched, in order, for the rows' memos.
    changes: ChangeLog,
    /// Per row, what its last search learnt (see [`super::memo`]); empty until a search
    /// makes one.
    memos: Vec<RowMemo>,
    /// Whether a memo is read however many touches ago it was made, and the fewest live
    /// clusters for which the dense search makes memos ([`DENSE_MEMO_MIN_CLUSTERS`]):
    /// changed by tests.
    memo_rules: (bool, usize),
    /// How many clusters a memo keeps ([`MEMO_KEPT`]; lowered by tests).
    memo_kept: usize,
    /// The change of J made by the moves, merges and splits so far: each one's exact cost
    /// difference (negative), summed as it is made.
    pub change: f64,
    /// The sweeps' table of distances between means; `None` until the first sweep, after
    /// a merge or split, and while there are more than `table_max_slots` slots.
    table: Option<MeanTable>,
    /// The most cluster slots a table is kept for ([`TABLE_MAX_SLOTS`]; lowered by tests).
    table_max_slots: usize,
    /// How many nearest neighbours of each slot a table sorts ([`SORTED_NEIGHBOURS`];
    /// lowered by tests).
    sorted_neighbours: usize,
    /// The fewest live clusters, the most slots for which a sweep always scores every live
    /// cluster at once ([`DenseSearch`]), and the most for which it does so when the lists
    /// left [`DENSE_SHARE`] of the candidates to be scored ([`DENSE_MIN_CLUSTERS`],
    /// [`DENSE_ALWAYS_SLOTS`], [`DENSE_MAX_SLOTS`]; changed by tests).
    dense_range: (usize, usize, usize),
    /// The share of the other live clusters that the searched rows scored in the last sweep
    /// that walked the table's lists.
    walk_share: Option<f64>,
    /// Sweeps in a row that scored every cluster at once because `walk_share` was high.
    crowded_sweeps: usize,
    /// Per slot: its 2-means was tried by a round of splits and did not pay, and no move,
    /// merge or split has touched the slot since. Its rows and the bits of its sum, hence
    /// of its mean, are then those of that try, and so would be its 2-means: the next round
    /// passes it over ([`Partition::split_while_better`]).
    split_tried: Vec<bool>,
    /// The slots the last round of splits changed (both parts of each split): the next
    /// sweep walks their zones in its new table ([`RowBounds::mark_zone`]) instead of
    /// marking every row.
    split_zones: Vec<usize>,
    /// Clusters a round of splits passed over by `split_tried`.
    #[cfg(test)]
    split_skips: usize,
    /// The rows and the bits of the sum of each slot when it was marked in `split_tried`:
    /// a slot passed over must still hold them.
    #[cfg(test)]
    split_marks: std::collections::HashMap<usize, (Vec<usize>, Vec<u64>)>,
    /// Tables dropped in the middle of a sweep, as openings passed `table_max_slots`.
    #[cfg(test)]
    dropped_tables: usize,
    /// Tables kept from the sweep before, tables rebuilt because they were stale, and
    /// tables kept with the clusters opened in the sweep before put into their lists.
    #[cfg(test)]
    kept_tables: (usize, usize, usize),
    /// Merges made while a table was kept (its merged slot's shift grown).
    #[cfg(test)]
    merged_in_table: usize,
    /// Searches that went on past the end of a neighbour list that left slots out.
    #[cfg(test)]
    tails: usize,
    /// Rows searched by a [`DenseSearch`], and those searches dropped in the middle of a
    /// sweep as openings passed the most slots of `dense_range`.
    #[cfg(test)]
    dense: (usize, usize),
    /// Rows decided by their memos, and rows whose memos could not decide.
    #[cfg(test)]
    recalled: (usize, usize),
}

/// Per-row bounds kept across sweeps (Hamerly's, with the nearest other cluster kept apart
/// as in Elkan's): an upper bound on the distance to the row's own mean, a lower bound on the
/// distance to one other cluster (the nearest when last searched), and a lower bound on the
/// distance to every other cluster. Each was valid when it was set; since then a mean has
/// moved by at most its `travel` since (its displacements summed), and any mean by at most
/// the `drift` since (each move adds the larger of its two means' displacements, a merge the
/// merged mean's). A new cluster (an opening or a split) could be nearer than any bound
/// says, so it resets the lower bounds to 0 (unknown); rows relabeled without a move (merges
/// and splits) lose their upper bound.
struct RowBounds {
    rows: Vec<RowBound>,
    /// Per slot: how far its mean has moved in all, displacements summed.
    travel: Vec<f64>,
    drift: f64,
    /// Counts the moves (each move first advances it); rows and slots are stamped with it.
    clock: u64,
    /// Per slot: the clock when a change of some cluster last made it possible that a row
    /// of this slot no longer stays ([`RowBounds::mark_zone`]).
    marked: Vec<u64>,
    /// The clock when every row last lost that guarantee (a new cluster, a merge, a change
    /// whose zone was not worked out).
    all_marked: u64,
    /// Per slot: an upper bound on the distance of each of its rows to its mean.
    radius: Vec<f64>,
    /// At least every live slot's `radius`.
    radius_max: f64,
    /// At most the smallest member count of any live cluster (so m_b/(m_b + 1) ≥
    /// min_count/(min_count + 1) for every b).
    min_count: usize,
    /// Scratch for [`RowBounds::mark_zone`]: the slots of the list it walks.
    listed: Vec<bool>,
    /// Rows passed over by the bound, and of those without a distance (for the tests).
    #[cfg(test)]
    skipped: (usize, usize),
    /// Rows passed over as settled ([`RowBounds::settled`]), for the tests.
    #[cfg(test)]
    settled_rows: usize,
    /// Zone walks that went on past the end of a list that left slots out, for the tests.
    #[cfg(test)]
    zone_tails: usize,
}

/// The distances between the live means that the sweeps' triangle bounds start from (each
/// slot's nearest [`SORTED_NEIGHBOURS`], and every distance of a slot opened since), with
/// how far each mean has moved since (`shift`, displacements summed): a bound from the table
/// subtracts both shifts, so it holds however stale the table is. A sweep keeps the table of
/// the sweep before unless the searches have paid for its staleness more than a new table
/// costs ([`MeanTable::stale`]) or a split dropped it. The clusters opened in a sweep are
/// scored for every row in that sweep (they have no place in the nearest-first lists yet)
/// and put into the lists before the next ([`MeanTable::fold_opened`]). A merge keeps the
/// table: the merged mean's move is added to its shift, and the emptied slot is passed over
/// where listed. (Measured on 200 000 × 50 blobs at P = 50, one refined run, two threads:
/// merges had dropped 491 tables, 10.1 s of the 53 s of CPU spent in building 873
/// tables; kept, no table turned stale and the run took 26.1 s against 31.8 s, the same
/// objective. Then 138 tables rebuilt for openings: folded instead, 23.3–24.0 s → 20.9–22.2
/// s.)
/// Building it costs O(K² D), more than a sweep whose rows mostly stay once K is in the
/// thousands. (Measured on 200 000 × 50 blobs at P = 150, one refined run, K = 3 317: the
/// former rule, a rebuild once a mean moved by a tenth of the distance between the two
/// closest means, rebuilt the table in nearly every sweep, 0.135 s each, while every
/// searched row scored the same 32 candidates however stale the table; 46.1 s against
/// 34.1 s with the rule of cost, the same moves. Keeping a table with opened clusters
/// costs each searched row a read of a distance per opened cluster, a cache miss: kept for
/// up to 64 opened, the sweeps took twice as long.)
struct MeanTable {
    /// For each slot of the table, its nearest other live slots by δ (the distance between
    /// the two means when the table was built), at most `sorted` of them, nearest first.
    neighbours: Vec<Vec<u32>>,
    /// δ to each of `neighbours[a]`, in the same order: read in order along the list.
    neighbour_between: Vec<Vec<f64>>,
    /// Per slot: whether live slots were left out of its list (each at least as far as the
    /// last one listed).
    tail: Vec<bool>,
    /// Slots opened since the table was built: not in `neighbours` (or there with a stale
    /// place), listed in `opened`.
    fresh: Vec<bool>,
    opened: Vec<usize>,
    /// For each slot of `opened`, in the same order, its distances to every slot, computed
    /// when it was opened, and kept up to date for the slots opened after it: δ between a
    /// slot opened in this sweep and any other.
    opened_between: Vec<Vec<f64>>,
    shift: Vec<f64>,
    max_shift: f64,
    /// Candidates scored per searched row in the table's first sweep.
    first_rate: Option<f64>,
    /// Candidates scored in the later sweeps beyond that rate, summed over the sweeps.
    excess: f64,
}

impl MeanTable {
    /// Whether the searches since the table's first sweep have done more work beyond that
    /// sweep's rate per row than a new table costs, [`REBUILD_COST`] · K² candidates.
    fn stale(&self, k: usize) -> bool {
        self.excess > REBUILD_COST * (k * k) as f64
    }

    /// Puts the slots opened since the table was built into its lists, so that a later
    /// sweep walks them like the others instead of scoring each for every searched row:
    /// each opened slot gets the list of its distances as computed at its opening (and at
    /// the openings after it), and takes its place in every other slot's list by the same
    /// distances, dropping the last of a full list. A reused slot's places from before its
    /// emptying are taken out first. The bounds stay valid: a distance measured at an
    /// opening, less both means' shifts since the table was built (each at least their
    /// moves since that opening; an opened slot's shift counts from its opening), is below
    /// their distance now.
    fn fold_opened(&mut self, counts: &[usize], sorted: usize) {
        let k = counts.len();
        let opened = std::mem::take(&mut self.opened);
        let rows = std::mem::take(&mut self.opened_between);
        self.neighbours.resize(k, Vec::new());
        self.neighbour_between.resize(k, Vec::new());
        self.tail.resize(k, false);
        self.fresh.resize(k, false);
        self.shift.resize(k, 0.0);
        for &j in &opened {
            self.fresh[j] = true;
        }
        let mut near = Vec::new();
        for (&j, row) in opened.iter().zip(&rows) {
            let (list, dists, tail) = nearest_list(&mut near, j, row, counts, sorted);
            (self.neighbours[j], self.neighbour_between[j], self.tail[j]) = (list, dists, tail);
        }
        for a in 0..k {
            if self.fresh[a] {
                continue;
            }
            let (list, dists) = (&mut self.neighbours[a], &mut self.neighbour_between[a]);
            near.clear();
            near.extend(
                dists
                    .iter()
                    .zip(list.iter())
                    .filter(|&(_, &b)| !self.fresh[b as usize])
                    .map(|(&d, &b)| (d, b)),
            );
            let mut tail = self.tail[a];
            for (&j, row) in opened.iter().zip(&rows) {
                if counts[j] == 0 {
                    continue;
                }
                let entry = (row[a], j as u32);
                let at = near.partition_point(|e| list_order(e, &entry).is_lt());
                if at == near.len() && tail {
                    // At least as far as the last listed: left out with the rest.
                    continue;
                }
                near.insert(at, entry);
                if near.len() > sorted {
                    near.pop();
                    tail = true;
                }
            }
            self.tail[a] = tail;
            list.clear();
            dists.clear();
            for &(d, b) in near.iter() {
                list.push(b);
                dists.push(d);
            }
        }
        for &j in &opened {
            self.fresh[j] = false;
        }
    }

    /// Slot a's mean has moved by `by`: its shift grows by that (the table grows to a's slot).
    fn moved(&mut self, a: usize, by: f64) {
        if a >= self.shift.len() {
            self.shift.resize(a + 1, 0.0);
            self.fresh.resize(a + 1, false);
        }
        self.shift[a] += by;
        self.max_shift = self.max_shift.max(self.shift[a]);
    }

    /// Counts a sweep's `work` (candidates scored, plus [`PASS_COST`] for each passed by its
    /// bound) for its `searched` rows.
    fn account(&mut self, searched: usize, work: f64) {
        if searched == 0 {
            return;
        }
        match self.first_rate {
            None => self.first_rate = Some(work / searched as f64),
            Some(rate) => self.excess += (work - rate * searched as f64).max(0.0),
        }
    }
}

/// The order of a [`MeanTable`]'s lists: by distance, then by slot.
fn list_order((di, i): &(f64, u32), (dj, j): &(f64, u32)) -> std::cmp::Ordering {
    di.total_cmp(dj).then(i.cmp(j))
}

/// Slot a's list for a [`MeanTable`] from its distances `row` to every slot: the nearest
/// `sorted` live slots other than a in [`list_order`], their distances, and whether live
/// slots were left out (`near` is room to work in).
fn nearest_list(
    near: &mut Vec<(f64, u32)>,
    a: usize,
    row: &[f64],
    counts: &[usize],
    sorted: usize,
) -> (Vec<u32>, Vec<f64>, bool) {
    near.clear();
    near.extend(
        (0..counts.len())
            .filter(|&b| b != a && counts[b] > 0)
            .map(|b| (row[b], b as u32)),
    );
    let tail = near.len() > sorted;
    if tail {
        near.select_nth_unstable_by(sorted - 1, list_order);
        near.truncate(sorted);
    }
    near.sort_unstable_by(list_order);
    let list: Vec<u32> = near.iter().map(|&(_, b)| b).collect();
    let dists: Vec<f64> = near.iter().map(|&(d, _)| d).collect();
    (list, dists, tail)
}

/// See [`MeanTable`].
const REBUILD_COST: f64 = 0.25;

/// What passing a candidate by its bound costs, against scoring it (a bound from the list
/// read in order, against a distance in D = 50 to a mean that may not be in cache).
const PASS_COST: f64 = 1.0 / 16.0;

/// Up to eight clusters waiting to be scored against one row.
#[derive(Default)]
struct Batch {
    slots: [usize; 8],
    len: usize,
}

impl Batch {
    /// Adds cluster b; true when the eight are there.
    fn push(&mut self, b: usize) -> bool {
        self.slots[self.len] = b;
        self.len += 1;
        self.len == 8
    }

    /// Scores the waiting clusters against row `xn` ([`Batch::each`]), offering each to
    /// `cheapest`, and empties the batch.
    fn offer(&mut self, cheapest: &mut Cheapest, xn: &[f64], means: &RowMatrix, factor: &[f64]) {
        self.each(xn, means, |b, d| cheapest.offer(b, factor[b] * d, d));
    }

    /// Each waiting cluster b and its squared distance d from `xn` to `sink(b, d)`, in the
    /// order they came (eight by [`sq_dists_from`], four by [`sq_dist4`], fewer by
    /// [`sq_dist`]: the same bits); empties the batch.
    #[inline(always)]
    fn each(&mut self, xn: &[f64], means: &RowMatrix, mut sink: impl FnMut(usize, f64)) {
        let mut slots = &self.slots[..self.len];
        if let Ok(eight) = <[usize; 8]>::try_from(slots) {
            let dist = sq_dists_from(xn, eight.map(|b| means.row(b)));
            for (b, d) in eight.into_iter().zip(dist) {
                sink(b, d);
            }
            slots = &[];
        }
        if let [b0, b1, b2, b3, ..] = *slots {
            let dist = sq_dist4([xn; 4], [b0, b1, b2, b3].map(|b| means.row(b)));
            for (b, d) in [b0, b1, b2, b3].into_iter().zip(dist) {
                sink(b, d);
            }
            slots = &slots[4..];
        }
        for &b in slots {
            sink(b, sq_dist(xn, means.row(b)));
        }
        self.len = 0;
    }
}

/// The candidates offered to one row's search with the table: each is passed by its
/// triangle bound or waits in `batch` to be scored, eight at a time; the bounds meanwhile
/// compare with the best cost before them, which can only pass fewer. (A struct with an
/// inlined method rather than a closure: called from four places, the closure was not
/// inlined, and each of the ~30 candidates of a searched row paid a call. One refined
/// DP-means run on 200 000 × 50 blobs at P = 150, one thread: 7.24–7.54 s of CPU against
/// 7.55–7.92 s, the same moves.)
struct Candidates<'a> {
    batch: Batch,
    means: &'a RowMatrix,
    xn: &'a [f64],
    factor: &'a [f64],
    /// The table's shifts.
    shift: &'a [f64],
    /// The distance to the row's own mean plus that mean's shift.
    reach: f64,
    passed: usize,
    scored: usize,
    /// The row's new memo: the scored costs, under a floor lowered by each passed one's
    /// bound on its cost.
    cheapest: Cheapest,
}

impl Candidates<'_> {
    /// Cluster b, at δ_ab from the row's own cluster in the table: passed when joining it
    /// costs at least the best so far, m_b/(m_b + 1)·ℓ² ≥ best with
    /// ℓ = δ_ab − reach − s_b (shrunk by 10⁻¹² of the terms), else scored.
    #[inline(always)]
    fn offer(&mut self, search: &mut Search, b: usize, ab: f64) {
        let (f, s_b, reach) = (self.factor[b], self.shift[b], self.reach);
        let bound = ab - reach - s_b - 1e-12 * (ab + reach + s_b);
        if bound > 0.0 && f * bound * bound >= search.best_cost {
            self.passed += 1;
            search.passed(b, bound);
            self.cheapest.lower_floor(f * bound * bound);
        } else {
            self.scored += 1;
            if self.batch.push(b) {
                self.score(search);
            }
        }
    }

    /// Scores the waiting candidates, for the search and the memo.
    #[inline(always)]
    fn score(&mut self, search: &mut Search) {
        let (factor, cheapest) = (self.factor, &mut self.cheapest);
        self.batch.each(self.xn, self.means, |b, d| {
            let cost = factor[b] * d;
            search.scored(b, cost, d.sqrt());
            cheapest.offer(b, cost, d);
        });
    }

    /// Scores the candidates still waiting.
    fn finish(&mut self, search: &mut Search) {
        self.score(search);
    }
}

/// How many of each slot's nearest neighbours the [`MeanTable`] keeps, sorted; a search that
/// gets past them scores (or passes by the last one's distance) every other live cluster.
/// Listing all K − 1 costs O(K² log K) a table and 12 bytes a pair, most of it for clusters
/// no row reaches. (Measured on 200 000 × 50 blobs at P = 150, one refined run, K up to
/// 2 861, when the rest of each list was kept unsorted: 16 sorted took 134 s, as many
/// searches went on into the rest; 64 took 43.6 s and 256 45.2 s, against 57.1 s with every
/// list sorted. Again on 2026-12-05, two threads, when groups of up to 1 600 clusters built
/// 382 tables at P = 50: 64 took 24.5 s, 128 25.2 s, 256 26.3 s; at P = 100 and 150, and on
/// 20 000 × 50 blobs of σ = 4 at P = 1 000, the three within 0.2 s, the same objectives.)
const SORTED_NEIGHBOURS: usize = 64;

/// Slots the zone walks of one sweep may test per row of the data ([`RowBounds::mark_zone`]);
/// past that, the sweep's remaining changes mark every row. One refined DP-means run on
/// 200 000 × 50 blobs, one thread, at P = 150: 10.0–11.0 s at 2, 4 or 8, 11.0–11.1 s at 16,
/// 11.1–11.2 s at 128, against 12.6–12.7 s for a cap of K/4 walks and every row marked
/// past a list's end (the same moves in all).
const ZONE_TESTS_PER_ROW: usize = 8;

/// The most cluster slots (live or emptied) for which a sweep keeps a [`MeanTable`]: its lists
/// hold 12 bytes per listed neighbour, 3 KB a slot, but building one takes the square of K in
/// time (every distance between two means), and the distances of the clusters opened in a sweep
/// take the square of K in memory at worst (K each). Past this many slots a sweep scores every
/// live cluster for each row its bounds do not settle (the moves are the same: the table only
/// prunes candidates that cannot win). A small penalty can open a cluster for nearly every row:
/// on 40 000 rows of 5 values at P = 10⁻⁶ a table without this bound needed 19 GB, and a
/// default DP-means fit limited to 12 GB aborted ("memory allocation … failed"); without the
/// table it needs what `--plain` needs. Lists of the nearest 256 alone do not pay past it: on
/// 20 000 × 50 overlapping blobs (σ = 4, P = 1 000, 13 000 slots) every searched row went past
/// its list, and a refined run took 84.7 s against 70–72 s without a table.
pub(crate) const TABLE_MAX_SLOTS: usize = 4096;

/// A row's memo is read instead of a search (see [`super::memo`]) only while the touches
/// since it was made number at most `MEMO_MAX_TOUCHES` times the live clusters, in a sweep
/// without a table (at most 1/[`TABLE_MEMO_SHARE`] of them in a sweep with one, where the
/// dense search or the table's walk cost less): the touches are read, and each slot touched
/// is scored again. On 20 000 × 50 blobs with σ = 4 at P = 1 000 (one group of 12 999
/// clusters, two tries on two threads), with an earlier form of the searches that made
/// memos, the refinement took 12.1 s at ½, 10.4 s at 1, 9.9 s at 2 and 10.1 s at 4 or
/// reading every memo (docs/speed.md §4).
const MEMO_MAX_TOUCHES: usize = 2;

/// See [`MEMO_MAX_TOUCHES`]. The dense search scores all the clusters at little more than
/// the cost of scoring a few of them one by one, and the walk scores only those its bounds
/// leave, so a memo pays there only when few have changed. Measured with the dense search
/// alone making memos: a default fit of 200 000 × 50 blobs at P = 50 (groups of up to
/// 1 598 clusters) took 65.3 s at 2, 66.8 s at 1, 66.9 s reading memos up to 2 K touches
/// old, and 69.4 s at 8, against 79.9 s without memos, the same objective.
const TABLE_MEMO_SHARE: usize = 2;

/// The fewest live clusters for which the dense search makes each row it scores a memo. A
/// memo's cheapest three are found in a pass over the costs whose insertions, for a few
/// dozen clusters, cost as much as the search: a default fit of 200 000 × 50 blobs at
/// P = 100 (groups of up to 67 clusters) took 6.6–6.9 s with memos made at any count,
/// against 4.3 s without.
const DENSE_MEMO_MIN_CLUSTERS: usize = 256;

/// One row's bounds (see [`RowBounds`]); 64 bytes, one cache line.
#[derive(Clone, Copy)]
struct RowBound {
    own_upper: f64,
    own_at: f64,
    second_lower: f64,
    second_at: f64,
    rest_lower: f64,
    rest_at: f64,
    /// The clock ([`RowBounds::clock`]) when the row was last decided (searched, or passed
    /// as unable to move).
    visited: u64,
    second: u32,
}

const NO_CLUSTER: u32 = u32::MAX;

/// How many rows ahead a sweep asks for the values of a row it will read (its label and
/// bounds, which say whether it will, are asked for [`ROWS_AHEAD`] rows ahead). One refined
/// DP-means run on 200 000 × 50 blobs, one thread: at λ² = 1 000 (most rows measured
/// against their own mean only) 1.71–1.72 s at 2 rows ahead, 1.57–1.58 s at 4, 1.56–1.58 s
/// at 8; at λ² = 150 (most rows searched) 13.67 / 14.06 s at 2, 13.59 / 13.87 s at 4,
/// 14.88 / 14.02 s at 8.
const VALUES_AHEAD: usize = 4;

/// No merge partner (see [`Partition::merge_while_better`]).
const NO_PARTNER: (f64, usize) = (f64::INFINITY, usize::MAX);

impl RowBound {
    const UNKNOWN: RowBound = RowBound {
        own_upper: f64::INFINITY,
        own_at: 0.0,
        second_lower: 0.0,
        second_at: 0.0,
        rest_lower: 0.0,
        rest_at: 0.0,
        visited: 0,
        second: NO_CLUSTER,
    };
}

/// `bound` less `moved`, both shrunk far beyond the rounding of the sums behind them;
/// +∞ stays +∞ (no cluster to bound).
fn less(bound: f64, moved: f64, scale: f64) -> f64 {
    if bound == f64::INFINITY {
        return f64::INFINITY;
    }
    bound - moved * (1.0 + 1e-9) - 1e-9 * (bound + scale)
}

impl RowBounds {
    fn unknown(n: usize, k: usize) -> Self {
        Self {
            rows: vec![RowBound::UNKNOWN; n],
            travel: vec![0.0; k],
            drift: 0.0,
            clock: 0,
            marked: vec![0; k],
            all_marked: 0,
            radius: vec![0.0; k],
            radius_max: 0.0,
            min_count: 1,
            listed: Vec::new(),
            #[cfg(test)]
            skipped: (0, 0),
            #[cfg(test)]
            settled_rows: 0,
            #[cfg(test)]
            zone_tails: 0,
        }
    }

    /// A new cluster exists: no lower bound holds, and any row may move.
    fn forget(&mut self) {
        self.forget_lower();
        self.all_marked = self.clock;
    }

    /// A new cluster exists: no lower bound holds (which rows may move is left to the
    /// caller).
    fn forget_lower(&mut self) {
        for r in &mut self.rows {
            r.second_lower = 0.0;
            r.rest_lower = 0.0;
        }
    }

    /// Slot j's mean moved by `dist`.
    fn moved(&mut self, j: usize, dist: f64) {
        if self.travel.len() <= j {
            self.travel.resize(j + 1, 0.0);
            self.marked.resize(j + 1, 0);
            self.radius.resize(j + 1, 0.0);
        }
        self.travel[j] += dist;
    }

    /// Whether row n, in slot a, must stay without a search: it stayed when it was last
    /// decided, and no cluster has changed since in a way that could draw it away (see
    /// [`RowBounds::mark_zone`]).
    fn settled(&self, n: usize, a: usize) -> bool {
        let v = self.rows[n].visited;
        self.all_marked < v && self.marked[a] < v
    }

    /// Sets each slot's `radius` from the rows' upper bounds (or, where a row has none,
    /// its distance), and `radius_max`.
    fn measure_radii(&mut self, x: MatrixView<'_>, labels: &[usize], means: &RowMatrix) {
        self.radius.iter_mut().for_each(|r| *r = 0.0);
        for (n, &a) in labels.iter().enumerate() {
            let mut r = self.own_upper(n, a);
            if r == f64::INFINITY {
                r = sq_dist(x.row(n), means.row(a)).sqrt() * (1.0 + 1e-9);
            }
            self.radius[a] = self.radius[a].max(r);
        }
        self.radius_max = self.radius.iter().copied().fold(0.0, f64::max);
    }

    /// Cluster c changed (its mean or its count) at the current clock: marks every slot
    /// with a row that might now prefer joining c to staying, and c itself. A row x of
    /// slot a stays at least as cheaply as S_a = m_a/(m_a − 1)·R_a² (P for a singleton),
    /// R_a its slot's radius, and joining c costs at least m_c/(m_c + 1)·ℓ² with
    /// ℓ = δ_ca − s_c − s_a − R_a ≤ ‖x − x̄_c‖ (the table's distance less both shifts and
    /// the radius); a slot with ℓ > 0 and m_c/(m_c + 1)·ℓ² ≥ S_a is left unmarked. The
    /// walk goes nearest first along c's list and stops once the same bound with the
    /// largest shift and radius, and S = max(P, 2·R_max²), leaves every later slot
    /// unmarked. Past the end of a list that left slots out, each of those is tested with
    /// the list's last distance for δ_ca (none of them is nearer). Without a list for c,
    /// every row is marked.
    /// Returns how many slots it tested.
    fn mark_zone(&mut self, t: &MeanTable, counts: &[usize], c: usize, penalty: f64) -> usize {
        let clock = self.clock;
        self.marked[c] = clock;
        // A slot opened in this sweep has no place in the lists and is not walked: its
        // opening marked every row ([`RowBounds::forget`]), a row is decided once a sweep,
        // and the next sweep's table has it in its lists.
        let m_c = counts[c];
        if m_c == 0 {
            // No row can join an empty cluster.
            return 0;
        }
        if t.fresh[c] || c >= t.neighbours.len() {
            self.all_marked = clock;
            return 0;
        }
        let f_c = m_c as f64 / (m_c as f64 + 1.0);
        let (s_c, r_max) = (t.shift[c], self.radius_max);
        let s_max = penalty.max(2.0 * r_max * r_max) * (1.0 + 1e-9);
        let (list, dists) = (&t.neighbours[c], &t.neighbour_between[c]);
        for (i, (&a, &ca)) in list.iter().zip(dists).enumerate() {
            let far = t.max_shift + r_max;
            let rest = ca - s_c - far - 1e-9 * (ca + s_c + far);
            if rest > 0.0 && f_c * rest * rest >= s_max {
                return i;
            }
            self.mark_if_drawn(t, counts, a as usize, (ca, s_c, f_c), penalty);
        }
        if !t.tail[c] {
            return list.len();
        }
        #[cfg(test)]
        {
            self.zone_tails += 1;
        }
        let last = *dists.last().expect("a list before its tail");
        self.listed.resize(counts.len(), false);
        list.iter().for_each(|&a| self.listed[a as usize] = true);
        for a in 0..counts.len() {
            if a != c && !self.listed[a] {
                self.mark_if_drawn(t, counts, a, (last, s_c, f_c), penalty);
            }
        }
        list.iter().for_each(|&a| self.listed[a as usize] = false);
        list.len() + counts.len()
    }

    /// [`RowBounds::mark_zone`]'s test of slot a against the changed cluster c, at least
    /// `ca` from it in the table, which has moved by `s_c` since and weighs `f_c` =
    /// m_c/(m_c + 1): marks a unless none of its rows can find joining c cheaper than
    /// staying. Empty slots, and slots opened in this sweep (their opening marked every
    /// row), are left alone.
    fn mark_if_drawn(
        &mut self,
        t: &MeanTable,
        counts: &[usize],
        a: usize,
        (ca, s_c, f_c): (f64, f64, f64),
        penalty: f64,
    ) {
        let m_a = counts[a];
        if m_a == 0 || t.fresh[a] {
            return;
        }
        let r_a = self.radius[a];
        let near = t.shift[a] + r_a;
        let lower = ca - s_c - near - 1e-9 * (ca + s_c + near);
        let stay = if m_a == 1 {
            penalty
        } else {
            m_a as f64 / (m_a as f64 - 1.0) * r_a * r_a
        };
        if !(lower > 0.0 && f_c * lower * lower >= stay * (1.0 + 1e-9)) {
            self.marked[a] = self.clock;
        }
    }

    /// A lower bound on row n's distance to every live cluster's mean but its own, now.
    fn other_lower(&self, n: usize) -> f64 {
        let r = &self.rows[n];
        let rest = less(r.rest_lower, self.drift - r.rest_at, self.drift);
        if r.second == NO_CLUSTER {
            return rest;
        }
        let t = self.travel[r.second as usize];
        rest.min(less(r.second_lower, t - r.second_at, t))
    }

    /// An upper bound on row n's distance to its own mean (slot a) now.
    fn own_upper(&self, n: usize, a: usize) -> f64 {
        let r = &self.rows[n];
        let moved = self.travel[a] - r.own_at;
        r.own_upper + moved * (1.0 + 1e-9) + 1e-9 * (r.own_upper + self.travel[a])
    }
}

/// The search of one row's cheapest option in a sweep: the best so far (ties to the lowest
/// index) and, for the row's new bounds, the three smallest distances (or lower bounds) to
/// the clusters seen and a bound on all the clusters the walk did not reach.
struct Search {
    best_cost: f64,
    best: Option<usize>,
    /// The distance to the best so far (not rounded down).
    best_dist: f64,
    /// (distance or its lower bound, slot), smallest first.
    near: [(f64, usize); 3],
    rest: f64,
}

impl Search {
    fn new(stay: f64) -> Self {
        Self {
            best_cost: stay,
            best: None,
            best_dist: f64::INFINITY,
            near: [(f64::INFINITY, usize::MAX); 3],
            rest: f64::INFINITY,
        }
    }

    /// Keeps (`dist_lb`, b) among the three smallest seen, in order, a later one displacing
    /// an earlier only when strictly smaller. Written as selects rather than swaps behind
    /// branches (the same result): which of the three a candidate displaces is a coin toss
    /// when the clusters around a row are nearly equidistant, and mispredicted branches
    /// were most of the scoring's bookkeeping.
    #[inline]
    fn seen(&mut self, b: usize, dist_lb: f64) {
        let [n0, n1, n2] = self.near;
        let new = (dist_lb, b);
        let (below0, below1, below2) = (dist_lb < n0.0, dist_lb < n1.0, dist_lb < n2.0);
        // n0 ≤ n1 ≤ n2, so below0 implies below1 implies below2.
        self.near = [
            if below0 { new } else { n0 },
            if below0 {
                n0
            } else if below1 {
                new
            } else {
                n1
            },
            if below1 {
                n1
            } else if below2 {
                new
            } else {
                n2
            },
        ];
    }

    /// The search of a row whose every live cluster but its own [`DenseSearch`] scored.
    fn from_scored(stay: f64, scored: Scored) -> Self {
        let mut search = Self::new(stay);
        if let Some((b, cost, dist)) = scored.best {
            search.best_cost = cost;
            search.best = Some(b);
            search.best_dist = dist.sqrt();
        }
        // A root orders no two squared distances otherwise (it may make them equal), so
        // these are the nearest that `scored` would keep, but for ties.
        search.near = scored.near.map(|(d, b)| (d.sqrt() * (1.0 - 1e-12), b));
        search
    }

    /// The search of a row whose costs went to `cheapest` (every live cluster but its own,
    /// or a memo's recall): the best and the nearest among those held, and the rest at
    /// least the root of the floor away (joining b costs m_b/(m_b + 1) < 1 times the
    /// squared distance, so that is at least the cost).
    fn from_cheapest(stay: f64, cheapest: &Cheapest) -> Self {
        let mut search = Self::new(stay);
        for (cost, dist, b) in cheapest.held() {
            search.scored(b, cost, dist.sqrt());
        }
        search.rest = cheapest.floor().sqrt() * (1.0 - 1e-12);
        search
    }

    /// Cluster b pruned: its distance is at least `bound`.
    fn passed(&mut self, b: usize, bound: f64) {
        self.seen(b, bound);
    }

    /// Cluster b scored: joining costs `cost`, the distance is `dist`.
    fn scored(&mut self, b: usize, cost: f64, dist: f64) {
        let lower_index = self.best.is_some_and(|best| b < best);
        if cost < self.best_cost || (cost == self.best_cost && lower_index) {
            self.best_cost = cost;
            self.best = Some(b);
            self.best_dist = dist;
        }
        self.seen(b, dist * (1.0 - 1e-12));
    }

    /// The row's new lower bounds once it ends in `home`, having left `left` (at distance
    /// `left_dist`) if it moved: the nearest other cluster and its distance, and a bound on
    /// the distance to every cluster but those two.
    fn other_bounds(&self, home: usize, left: Option<(f64, usize)>) -> ((f64, usize), f64) {
        // The first two of the candidates (the three nearest but `home`, then `left`) in a
        // stable sort by distance (`total_cmp`): one pass in their order, where a later one
        // displaces an earlier only when strictly nearer.
        let candidates = self
            .near
            .iter()
            .copied()
            .filter(|&(_, b)| b != home && b != usize::MAX)
            .chain(left);
        let nearer = |p: (f64, usize), q: Option<(f64, usize)>| {
            q.is_none_or(|q| p.0.total_cmp(&q.0) == std::cmp::Ordering::Less)
        };
        let mut first: Option<(f64, usize)> = None;
        let mut second = None;
        for c in candidates {
            if nearer(c, first) {
                second = first;
                first = Some(c);
            } else if nearer(c, second) {
                second = Some(c);
            }
        }
        // Clusters seen but not among the three nearest are at least as far as the third,
        // and `second` is at most that far (at most one of the three was dropped).
        let rest = second.map_or(self.rest, |o| o.0.min(self.rest));
        (first.unwrap_or((f64::INFINITY, usize::MAX)), rest)
    }
}

impl Partition {
    /// Builds the state for `labels` (any values in `0..k`).
    pub fn new(x: MatrixView<'_>, labels: Vec<usize>, k: usize) -> Self {
        let d = x.n_cols();
        let mut counts = vec![0; k];
        let mut sums = RowMatrix::zeros(k, d);
        for (n, &c) in labels.iter().enumerate() {
            counts[c] += 1;
            axpy(1.0, x.row(n), sums.row_mut(c));
        }
        let mut p = Self {
            labels,
            counts,
            sums,
            means: RowMatrix::zeros(k, d),
            free: Vec::new(),
            bounds: RowBounds::unknown(x.n_rows(), k),
            changes: ChangeLog::default(),
            memos: Vec::new(),
            memo_rules: (false, DENSE_MEMO_MIN_CLUSTERS),
            memo_kept: MEMO_KEPT,
            change: 0.0,
            table: None,
            table_max_slots: TABLE_MAX_SLOTS,
            sorted_neighbours: SORTED_NEIGHBOURS,
            dense_range: (DENSE_MIN_CLUSTERS, DENSE_ALWAYS_SLOTS, DENSE_MAX_SLOTS),
            walk_share: None,
            crowded_sweeps: 0,
            split_tried: vec![false; k],
            split_zones: Vec::new(),
            #[cfg(test)]
            split_skips: 0,
            #[cfg(test)]
            split_marks: Default::default(),
            #[cfg(test)]
            dropped_tables: 0,
            #[cfg(test)]
            kept_tables: (0, 0, 0),
            #[cfg(test)]
            merged_in_table: 0,
            #[cfg(test)]
            tails: 0,
            #[cfg(test)]
            dense: (0, 0),
            #[cfg(test)]
            recalled: (0, 0),
        };
        for j in 0..k {
            if p.counts[j] == 0 {
                p.free.push(j);
            } else {
                p.refresh_mean(j);
            }
        }
        p
    }

    /// Number of non-empty clusters.
    pub fn k(&self) -> usize {
        self.counts.len() - self.free.len()
    }

    /// Sets slot j's mean from its sum and count; returns how far the mean moved.
    fn refresh_mean(&mut self, j: usize) -> f64 {
        self.changes.touch(j);
        let inv = 1.0 / self.counts[j] as f64;
        let (s, m) = (self.sums.row(j), self.means.row_mut(j));
        let mut moved = 0.0;
        for (mi, si) in m.iter_mut().zip(s) {
            let new = si * inv;
            moved += (new - *mi) * (new - *mi);
            *mi = new;
        }
        moved.sqrt()
    }

    /// Moves row n to cluster `to` (`None`: a new cluster) and accounts for the two means'
    /// displacement in the row bounds. Returns the cluster left and how far its mean moved,
    /// the cluster joined and how far its mean moved (0 for a new one).
    fn move_row(
        &mut self,
        x: MatrixView<'_>,
        n: usize,
        to: Option<usize>,
    ) -> ((usize, f64), (usize, f64)) {
        let from = self.labels[n];
        self.bounds.clock += 1;
        self.split_tried[from] = false;
        self.counts[from] -= 1;
        axpy(-1.0, x.row(n), self.sums.row_mut(from));
        let mut from_moved = 0.0;
        if self.counts[from] == 0 {
            self.sums.row_mut(from).fill(0.0);
            self.free.push(from);
            self.changes.touch(from);
        } else {
            from_moved = self.refresh_mean(from);
            self.bounds.min_count = self.bounds.min_count.min(self.counts[from]);
        }
        let (to, opened) = match to {
            Some(b) => (b, false),
            None => {
                // Nothing bounds the distance to a new cluster: every bound is reset.
                self.bounds.forget();
                self.bounds.min_count = 1;
                (self.new_slot(), true)
            }
        };
        self.counts[to] += 1;
        self.split_tried[to] = false;
        axpy(1.0, x.row(n), self.sums.row_mut(to));
        let mut to_moved = self.refresh_mean(to);
        if opened {
            to_moved = 0.0;
        }
        self.bounds.moved(from, from_moved);
        self.bounds.moved(to, to_moved);
        self.bounds.drift += from_moved.max(to_moved);
        self.labels[n] = to;
        ((from, from_moved), (to, to_moved))
    }

    fn new_slot(&mut self) -> usize {
        if let Some(j) = self.free.pop() {
            // A freed slot was left unmarked by the move or merge that emptied it; cleared
            // again so that a new cluster never inherits a mark.
            self.split_tried[j] = false;
            return j;
        }
        let d = self.sums.n_cols();
        self.bounds.moved(self.counts.len(), 0.0);
        self.split_tried.push(false);
        self.counts.push(0);
        self.sums.push_row(&vec![0.0; d]);
        self.means.push_row(&vec![0.0; d]);
        self.counts.len() - 1
    }

    /// One sweep of exact single-row moves over `order`; returns the number of moves.
    ///
    /// Five prunings, none of which changes a decision (proven move for move against the
    /// unpruned sweep by the tests):
    /// - Without a cap on K, a row that stayed when it was last decided, in a cluster that
    ///   has not changed since, is passed over unread unless some cluster changed since in a
    ///   way that could now draw it ([`RowBounds::mark_zone`]: each move marks the slots
    ///   whose rows the two changed clusters might now draw, by the table's distances and
    ///   each slot's radius). Late in a descent a sweep moves a few rows among thousands of
    ///   clusters, and only the rows near them are searched again.
    /// - A row whose bound (see [`RowBounds`]) says that joining any other cluster costs at
    ///   least what staying costs, min_count/(min_count + 1)·ℓ² ≥ stay, and that opening a
    ///   cluster does not pay either, cannot move and is passed over after one distance, to
    ///   its own mean.
    /// - For the other rows, a candidate b is pruned by the triangle inequality: for a row in
    ///   cluster a, ‖x − x̄_b‖ ≥ ‖x̄_a − x̄_b‖ − ‖x − x̄_a‖ ≥ δ_ab − s_a − s_b − ‖x − x̄_a‖ = ℓ,
    ///   where δ_ab is the distance between the two means when the sweep began (or when one
    ///   of them opened) and s_a, s_b how far each has moved since. Joining b costs at least
    ///   m_b/(m_b + 1)·ℓ²; when that bound (ℓ shrunk by 10⁻¹² of the distances, far more
    ///   than their rounding) is not below the cheapest option found so far, b cannot be
    ///   as cheap and is not scored.
    /// - The clusters that existed when the sweep began are visited nearest first (by δ_ab),
    ///   and the walk stops once the bound of the next one, with the largest shift of any
    ///   mean in place of s_b and the smallest m_b, prunes all the rest.
    /// - Before that search, a row's memo of its last search ([`super::memo`]): the cheapest
    ///   three other clusters then and a floor under the rest, read when few clusters have
    ///   been touched since; only the touched ones are scored, and the memo decides when the
    ///   cheapest found is below its floor.
    ///
    /// With [`DENSE_MIN_CLUSTERS`] live clusters or more and at most [`DENSE_ALWAYS_SLOTS`]
    /// slots, a row that the first two do not pass over is scored against every live cluster
    /// at once ([`DenseSearch`]) instead of walking the table; the table then serves the
    /// zones alone. Up to [`DENSE_MAX_SLOTS`] slots so is every row of a sweep after one whose
    /// walks scored at least [`DENSE_SHARE`] of the other clusters per searched row (for at
    /// most [`DENSE_RECHECK`] sweeps before the next walk measures it again).
    ///
    /// Because candidates are not visited in index order, the cheapest is taken with ties to
    /// the lowest index, which is what the index-order scan with a strict `<` picks. A move
    /// costs O(D); an opening O(K D). The smallest distance (or bound) to a cluster other
    /// than the row's final one becomes the row's new bound.
    pub fn sweep(
        &mut self,
        x: MatrixView<'_>,
        order: &[usize],
        penalty: f64,
        k_max: usize,
    ) -> usize {
        let mut table = match self.table.take() {
            Some(t) if t.opened.is_empty() && !t.stale(self.k()) => {
                #[cfg(test)]
                {
                    self.kept_tables.0 += 1;
                }
                Some(t)
            }
            // Clusters opened in the sweep before: put into the lists.
            Some(mut t) if !t.stale(self.k()) && self.counts.len() <= self.table_max_slots => {
                t.fold_opened(&self.counts, self.sorted_neighbours.max(1));
                #[cfg(test)]
                {
                    self.kept_tables.2 += 1;
                }
                Some(t)
            }
            // A stale table, rebuilt as the arm below would, but counted for the tests.
            #[cfg(test)]
            Some(t) if t.opened.is_empty() && self.counts.len() <= self.table_max_slots => {
                self.kept_tables.1 += 1;
                Some(self.mean_table())
            }
            _ if self.counts.len() <= self.table_max_slots => Some(self.mean_table()),
            _ => None,
        };
        #[cfg(test)]
        if let Some(t) = &table {
            self.assert_table_holds(t, "a sweep's table");
        }
        // m_b/(m_b + 1) for live clusters; 0 marks an empty slot (never a candidate).
        let weight = |m: usize| {
            if m == 0 {
                0.0
            } else {
                m as f64 / (m as f64 + 1.0)
            }
        };
        let mut factor: Vec<f64> = self.counts.iter().map(|&m| weight(m)).collect();
        self.bounds.min_count = (0..self.counts.len())
            .filter(|&j| self.counts[j] > 0)
            .map(|j| self.counts[j])
            .min()
            .unwrap_or(1);
        // Rows that cannot have come to prefer another cluster are passed over
        // ([`RowBounds::mark_zone`]); not under a cap on K, where a cluster emptied anywhere
        // can let any row open one.
        let zones = k_max == usize::MAX;
        if zones {
            self.bounds.measure_radii(x, &self.labels, &self.means);
        }
        // The slots the sweep's zone walks may test (two walks per move, each a list's
        // head and, past the end of a list that left slots out, every slot); once spent,
        // the rest of the sweep's changes mark every row. A test costs a few nanoseconds,
        // a row searched again a hundred or more, so this costs a fraction of what marking
        // every row would.
        let mut zone_tests = (ZONE_TESTS_PER_ROW * order.len()).max(4096) as isize;
        // The clusters a round of splits changed since the last sweep: their zones, in
        // this sweep's table.
        for c in std::mem::take(&mut self.split_zones) {
            match &table {
                Some(t) if zones && zone_tests > 0 => {
                    zone_tests -= self.bounds.mark_zone(t, &self.counts, c, penalty) as isize;
                }
                _ => self.bounds.all_marked = self.bounds.clock,
            }
        }
        // Few slots, or lists that leave most candidates to be scored: each searched row is
        // scored against every live cluster at once.
        let (dense_min, dense_always, dense_max) = self.dense_range;
        let live = self.k();
        let crowded = self.walk_share.is_some_and(|s| s >= DENSE_SHARE)
            && self.crowded_sweeps < DENSE_RECHECK;
        let walks = !(live >= dense_min && (self.counts.len() <= dense_always || crowded));
        if walks || self.counts.len() > dense_always {
            self.crowded_sweeps = if walks { 0 } else { self.crowded_sweeps + 1 };
        }
        let mut dense = match walks {
            false => DenseSearch::new(&self.means, dense_max),
            true => None,
        };
        // Whether the dense search makes memos, and how many touches old a memo may be
        // for a search to read it, in this sweep, with a table or without.
        let (any_age, dense_memo_min) = self.memo_rules;
        let dense_memos = live >= dense_memo_min;
        let memo_age = |with_table: bool| match (any_age, with_table) {
            (true, _) => usize::MAX,
            (false, true) => live / TABLE_MEMO_SHARE,
            (false, false) => MEMO_MAX_TOUCHES * live,
        };
        let mut moves = 0;
        // Rows searched and candidates scored with the table (see `MeanTable::stale`).
        let (mut searched, mut scored) = (0usize, 0usize);
        let mut passed = 0usize;
        // Marks the slots of a list while a search scores the rest.
        let mut listed: Vec<bool> = Vec::new();
        for (i, &n) in order.iter().enumerate() {
            // The rows come in a random order: start loading the label and bounds of the row
            // ROWS_AHEAD on (most rows late in a descent are decided by those two alone, in a
            // few nanoseconds: 2 rows ahead was too late for them), and the values of the row
            // VALUES_AHEAD on unless those say it will be passed over unread (its 400 bytes
            // would be loaded for nothing), with the head of its cluster's list in the table
            // (one refined run on 200 000 × 50 blobs at P = 150, one thread: 7.4–8.3 s of CPU
            // against 7.8–8.8 s without, the same moves).
            if let Some(&ahead) = order.get(i + VALUES_AHEAD)
                && !(zones && self.bounds.settled(ahead, self.labels[ahead]))
            {
                prefetch(x.row(ahead));
                // And the head of its cluster's list, which a search walks first.
                if dense.is_none()
                    && let Some(t) = &table
                    && let (Some(list), Some(dists)) = (
                        t.neighbours.get(self.labels[ahead]),
                        t.neighbour_between.get(self.labels[ahead]),
                    )
                {
                    prefetch(&dists[..dists.len().min(32)]);
                    for head in list.iter().take(32).step_by(16) {
                        prefetch_one(head);
                    }
                }
            }
            if let Some(&ahead) = order.get(i + ROWS_AHEAD) {
                prefetch_one(&self.labels[ahead]);
                prefetch_one(&self.bounds.rows[ahead]);
            }
            let a = self.labels[n];
            if zones && self.bounds.settled(n, a) {
                // Nothing that could draw it away has changed since it last stayed.
                self.bounds.rows[n].visited = self.bounds.clock;
                #[cfg(test)]
                {
                    self.bounds.settled_rows += 1;
                    self.assert_stays(x, n, penalty);
                }
                continue;
            }
            let visited = self.bounds.clock;
            let m_a = self.counts[a];
            let m_min = self.bounds.min_count as f64;
            let f_min = m_min / (m_min + 1.0);
            // What staying costs at the given squared distance to the own mean, and whether
            // opening a cluster would then pay.
            let stay_at = |dist: f64| {
                if m_a == 1 {
                    penalty
                } else {
                    m_a as f64 / (m_a as f64 - 1.0) * dist
                }
            };
            let may_open = m_a > 1 && self.k() < k_max;
            let lower = self.bounds.other_lower(n);
            let can_stay = |stay: f64| {
                lower > 0.0
                    && f_min * lower * lower >= stay * (1.0 + 1e-9)
                    && !(may_open && penalty < stay)
            };
            // First without touching the row: its own distance from its upper bound.
            let upper = self.bounds.own_upper(n, a);
            if upper < f64::INFINITY && can_stay(stay_at(upper * upper)) {
                #[cfg(test)]
                {
                    self.bounds.skipped.0 += 1;
                    self.bounds.skipped.1 += 1;
                }
                self.bounds.rows[n].visited = visited;
                continue;
            }
            let to_own = sq_dist(x.row(n), self.means.row(a));
            let stay = stay_at(to_own);
            let to_own = to_own.sqrt();
            if can_stay(stay) {
                #[cfg(test)]
                {
                    self.bounds.skipped.0 += 1;
                }
                let r = &mut self.bounds.rows[n];
                r.own_upper = to_own * (1.0 + 1e-12);
                r.own_at = self.bounds.travel[a];
                r.visited = visited;
                continue;
            }
            let opens = may_open && penalty < stay;
            // The row's memo is read first (see [`super::memo`]); a search makes it a new one
            // (the dense search from `DENSE_MEMO_MIN_CLUSTERS` live clusters).
            let epoch = self.changes.epoch();
            let recalled =
                self.recall_row(n, x.row(n), a, stay, &factor, memo_age(table.is_some()));
            let mut search;
            if let Some(s) = recalled {
                search = s;
            } else if let Some(dense) = &mut dense {
                #[cfg(test)]
                {
                    self.dense.0 += 1;
                }
                let scored = dense.score(x.row(n), a, &factor, stay);
                if dense_memos {
                    let mut cheapest = Cheapest::new(f64::INFINITY);
                    for (b, (&f, &d)) in factor.iter().zip(dense.dists()).enumerate() {
                        if b != a && f > 0.0 {
                            cheapest.offer(b, f * d, d);
                        }
                    }
                    self.set_memo(n, cheapest.memo(epoch, self.memo_kept));
                }
                search = Search::from_scored(stay, scored);
            } else if let Some(t) = &table {
                search = Search::new(stay);
                searched += 1;
                let reach = to_own + t.shift[a];
                let mut score = Candidates {
                    batch: Batch::default(),
                    means: &self.means,
                    xn: x.row(n),
                    factor: &factor,
                    shift: &t.shift,
                    reach,
                    passed: 0,
                    scored: 0,
                    cheapest: Cheapest::new(f64::INFINITY),
                };
                if t.fresh[a] || a >= t.neighbours.len() {
                    // Opened in this sweep: no list of neighbours, every live cluster is scored.
                    let from_a = &t.opened_between[t
                        .opened
                        .iter()
                        .position(|&o| o == a)
                        .expect("an opened slot")];
                    for b in 0..factor.len() {
                        if b != a && factor[b] > 0.0 {
                            score.offer(&mut search, b, from_a[b]);
                        }
                    }
                } else {
                    let (list, dists) = (&t.neighbours[a], &t.neighbour_between[a]);
                    let mut done = false;
                    for (&b, &ab) in list.iter().zip(dists) {
                        // Every cluster from here on is at least as far as δ_ab.
                        let rest = ab - reach - t.max_shift - 1e-12 * (ab + reach + t.max_shift);
                        if rest > 0.0 && f_min * rest * rest >= search.best_cost {
                            search.rest = rest;
                            score.cheapest.lower_floor(f_min * rest * rest);
                            done = true;
                            break;
                        }
                        let b = b as usize;
                        if factor[b] > 0.0 && !t.fresh[b] {
                            score.offer(&mut search, b, ab);
                        }
                    }
                    if !done && t.tail[a] {
                        // The live slots left out of the list, each at least as far as the
                        // last one listed: each is scored or passed by that distance.
                        #[cfg(test)]
                        {
                            self.tails += 1;
                        }
                        let last = *dists.last().expect("a list before its tail");
                        listed.resize(factor.len(), false);
                        list.iter().for_each(|&b| listed[b as usize] = true);
                        for b in 0..factor.len() {
                            if b != a && factor[b] > 0.0 && !t.fresh[b] && !listed[b] {
                                score.offer(&mut search, b, last);
                            }
                        }
                        list.iter().for_each(|&b| listed[b as usize] = false);
                    }
                    for (&b, from_b) in t.opened.iter().zip(&t.opened_between) {
                        if b != a && factor[b] > 0.0 {
                            score.offer(&mut search, b, from_b[a]);
                        }
                    }
                }
                score.finish(&mut search);
                (passed, scored) = (passed + score.passed, scored + score.scored);
                let memo = score.cheapest.memo(epoch, self.memo_kept);
                self.set_memo(n, memo);
            } else {
                // No table (too many slots): every live cluster is scored, eight at a time.
                let xn = x.row(n);
                let mut cheapest = Cheapest::new(f64::INFINITY);
                let mut batch = Batch::default();
                for b in (0..factor.len()).filter(|&b| b != a && factor[b] > 0.0) {
                    if batch.push(b) {
                        batch.offer(&mut cheapest, xn, &self.means, &factor);
                    }
                }
                batch.offer(&mut cheapest, xn, &self.means, &factor);
                search = Search::from_cheapest(stay, &cheapest);
                self.set_memo(n, cheapest.memo(epoch, self.memo_kept));
            }
            let mut best = search.best.map(Some);
            // A singleton moving to a new cluster changes nothing, so only others may open one.
            if opens && penalty < search.best_cost {
                best = Some(None);
            }
            // The row's new bounds, from the state before its move (whose displacements the
            // travel and drift then count).
            let own_left = (to_own * (1.0 - 1e-12), a);
            let (home, own_upper, others) = match best {
                None => (a, to_own * (1.0 + 1e-12), search.other_bounds(a, None)),
                // Joining b, whose mean then moves towards the row (counted by its travel).
                Some(Some(b)) => (
                    b,
                    search.best_dist * (1.0 + 1e-12),
                    search.other_bounds(b, Some(own_left)),
                ),
                Some(None) => (
                    usize::MAX,
                    0.0,
                    search.other_bounds(usize::MAX, Some(own_left)),
                ),
            };
            let ((second_lower, second), rest_lower) = others;
            let second = if second == usize::MAX {
                NO_CLUSTER
            } else {
                second as u32
            };
            let second_at = if second == NO_CLUSTER {
                0.0
            } else {
                self.bounds.travel[second as usize]
            };
            let rest_at = self.bounds.drift;
            let own_at = if home == usize::MAX {
                0.0
            } else {
                self.bounds.travel[home]
            };
            if let Some(to) = best {
                self.change += if to.is_some() {
                    search.best_cost - stay
                } else {
                    penalty - stay
                };
                let ((from, from_moved), (to, to_moved)) = self.move_row(x, n, to);
                let k = self.counts.len();
                factor.resize(k, 0.0);
                factor[from] = weight(self.counts[from]);
                factor[to] = weight(self.counts[to]);
                if let Some(d) = &mut dense
                    && !(d.set(from, self.means.row(from)) && d.set(to, self.means.row(to)))
                {
                    dense = None;
                    #[cfg(test)]
                    {
                        self.dense.1 += 1;
                    }
                }
                if k > self.table_max_slots && table.take().is_some() {
                    #[cfg(test)]
                    {
                        self.dropped_tables += 1;
                    }
                }
                if let Some(t) = &mut table {
                    t.moved(from, from_moved);
                    t.moved(to, to_moved);
                    if best == Some(None) {
                        // The new cluster's distances are exact now; it has not moved since.
                        t.shift[to] = 0.0;
                        self.refresh_opened(t, to);
                    }
                }
                if zones {
                    // The two clusters' radii: the left one's rows are as far as before plus
                    // its mean's displacement; the joined one's, and the row's distance to
                    // its old mean, likewise (a new cluster holds the row at its mean).
                    let r = &mut self.bounds.radius;
                    r[from] = (r[from] + from_moved) * (1.0 + 1e-9);
                    r[to] = if best == Some(None) {
                        0.0
                    } else {
                        (r[to].max(search.best_dist) + to_moved) * (1.0 + 1e-9)
                    };
                    self.bounds.radius_max = self.bounds.radius_max.max(r[from]).max(r[to]);
                    match &table {
                        Some(t) if best != Some(None) && zone_tests > 0 => {
                            let tested = self.bounds.mark_zone(t, &self.counts, from, penalty)
                                + self.bounds.mark_zone(t, &self.counts, to, penalty);
                            zone_tests -= tested as isize;
                        }
                        _ => self.bounds.all_marked = self.bounds.clock,
                    }
                }
                moves += 1;
            }
            let own_at = if home == usize::MAX {
                // A new cluster at the row itself.
                self.bounds.travel[self.labels[n]]
            } else {
                own_at
            };
            self.bounds.rows[n] = RowBound {
                own_upper,
                own_at,
                second_lower,
                second_at,
                rest_lower,
                rest_at,
                visited,
                second,
            };
        }
        if let Some(t) = &mut table {
            t.account(searched, scored as f64 + PASS_COST * passed as f64);
        }
        if walks && searched > 0 {
            self.walk_share =
                Some(scored as f64 / (searched * live.saturating_sub(1).max(1)) as f64);
        }
        self.table = table;
        moves
    }

    /// Row n's search from its memo ([`Partition::recall`]) if it has one made at most
    /// `max_age` touches ago and the memo decides; the row's memo is then renewed.
    fn recall_row(
        &mut self,
        n: usize,
        xn: &[f64],
        a: usize,
        stay: f64,
        factor: &[f64],
        max_age: usize,
    ) -> Option<Search> {
        let memo = *self.memos.get(n)?;
        let epoch = self.changes.epoch();
        let recent = memo.epoch <= epoch && (epoch - memo.epoch) as usize <= max_age;
        if !recent {
            return None;
        }
        let recalled = self.recall(xn, a, stay, factor, &memo);
        #[cfg(test)]
        match recalled {
            Some(_) => self.recalled.0 += 1,
            None => self.recalled.1 += 1,
        }
        let (search, cheapest) = recalled?;
        self.memos[n] = cheapest.memo(epoch, self.memo_kept);
        Some(search)
    }

    /// Row n's memo is now `memo` (the memos made for every row on first use).
    fn set_memo(&mut self, n: usize, memo: RowMemo) {
        if self.memos.is_empty() {
            self.memos = vec![RowMemo::NONE; self.labels.len()];
        }
        self.memos[n] = memo;
    }

    /// The search of row `xn` (in slot a, where staying costs `stay`) from its memo: the
    /// clusters it kept that no change has touched since, at their kept costs, and every
    /// live slot touched since, scored now. It decides exactly when the cheapest of these
    /// is below the memo's floor, which bounds the cost of every other untouched cluster, or
    /// when none is below the cost of staying and neither is the floor; else `None`. With
    /// the search, the row's new memo so far (its floor is the old one's, or lower).
    fn recall(
        &self,
        xn: &[f64],
        a: usize,
        stay: f64,
        factor: &[f64],
        memo: &RowMemo,
    ) -> Option<(Search, Cheapest)> {
        let mut cheapest = Cheapest::new(memo.floor);
        for &(dist, b) in &memo.kept {
            let b = b as usize;
            if b as u32 == NO_SLOT || b == a || self.changes.touched_after(b, memo.epoch) {
                continue;
            }
            cheapest.offer(b, factor[b] * dist, dist);
        }
        let mut batch = Batch::default();
        for b in self.changes.since(memo.epoch) {
            if b != a && factor[b] > 0.0 && batch.push(b) {
                batch.offer(&mut cheapest, xn, &self.means, factor);
            }
        }
        batch.offer(&mut cheapest, xn, &self.means, factor);
        let search = Search::from_cheapest(stay, &cheapest);
        let decided = match search.best {
            Some(_) => search.best_cost < memo.floor,
            None => memo.floor >= stay,
        };
        decided.then_some((search, cheapest))
    }

    /// The table of distances between the live means, built now: each slot's distances by
    /// [`Partition::distances_from`] and its nearest-first list from them, the slots in
    /// parallel (each list depends on its row only, so the bits do not depend on the
    /// threads).
    fn mean_table(&self) -> MeanTable {
        let k0 = self.counts.len();
        let sorted = self.sorted_neighbours.max(1);
        let list_of = |near: &mut Vec<(f64, u32)>, a: usize, row: &[f64]| {
            nearest_list(near, a, row, &self.counts, sorted)
        };
        // Each slot's row of distances is worked out where its list is made, so the K × K
        // distances are never held at once (87 MB at K = 3 300, faulted in afresh for each
        // table once the allocator had returned them).
        let rows: Vec<(Vec<u32>, Vec<f64>, bool)> = (0..k0)
            .into_par_iter()
            .map_init(
                || (Vec::new(), vec![0.0; k0]),
                |(near, row), a| {
                    self.distances_from(a, row);
                    list_of(near, a, row)
                },
            )
            .collect();
        let mut neighbours = Vec::with_capacity(k0);
        let mut neighbour_between = Vec::with_capacity(k0);
        let mut tail = Vec::with_capacity(k0);
        for (list, dists, cut) in rows {
            neighbours.push(list);
            neighbour_between.push(dists);
            tail.push(cut);
        }
        MeanTable {
            neighbours,
            neighbour_between,
            tail,
            fresh: vec![false; k0],
            opened: Vec::new(),
            opened_between: Vec::new(),
            shift: vec![0.0; k0],
            max_shift: 0.0,
            first_rate: None,
            excess: 0.0,
        }
    }

    /// The distances ‖x̄_a − x̄_b‖ from slot a's mean to every slot's (0 to itself) into
    /// `row`: eight at a time ([`sq_dists_from`], the bits of [`sq_dist`]), the rest one by
    /// one. Both orders of a pair give the same bits (the differences only change sign).
    fn distances_from(&self, a: usize, row: &mut [f64]) {
        let from = self.means.row(a);
        let k = row.len();
        let mut chunks = row.chunks_exact_mut(8);
        for (c, out) in chunks.by_ref().enumerate() {
            let b = 8 * c;
            let d = sq_dists_from(from, std::array::from_fn(|i| self.means.row(b + i)));
            for (o, d) in out.iter_mut().zip(d) {
                *o = d.sqrt();
            }
        }
        let rest = k - chunks.into_remainder().len();
        for (b, o) in row.iter_mut().enumerate().skip(rest) {
            *o = sq_dist(from, self.means.row(b)).sqrt();
        }
        row[a] = 0.0;
    }

    /// Slot j was opened (or opened again) in this sweep: its distances to every slot are
    /// computed, kept with the opened slots of `t`, and written into the rows of the slots
    /// opened before it.
    fn refresh_opened(&self, t: &mut MeanTable, j: usize) {
        let k = self.counts.len();
        let mut row = vec![0.0; k];
        for (i, o) in row.iter_mut().enumerate() {
            if i != j {
                *o = sq_dist(self.means.row(i), self.means.row(j)).sqrt();
            }
        }
        for (&o, from_o) in t.opened.iter().zip(&mut t.opened_between) {
            from_o.resize(k, 0.0);
            if o != j {
                from_o[j] = row[o];
            }
        }
        match t.opened.iter().position(|&o| o == j) {
            Some(i) => t.opened_between[i] = row,
            None => {
                t.fresh[j] = true;
                t.opened.push(j);
                t.opened_between.push(row);
            }
        }
    }

    /// Applies the best merge of two clusters while one lowers the objective; returns how
    /// many merges were made. The best is the pair (a < b) of least change, the first in
    /// (a, b) order among equals, which is what a scan of all pairs with a strict `<` picks.
    /// Each slot keeps its best partner among the slots after it, so a merge of a and b
    /// rescores only the pairs with a and the rows whose partner was a or b: O(K D) a merge
    /// instead of the O(K² D) of a scan (the merges after a sweep can number thousands).
    pub fn merge_while_better(&mut self, penalty: f64) -> usize {
        let slots = self.counts.len();
        let mut best: Vec<(f64, usize)> = (0..slots).map(|a| self.partner(a, penalty)).collect();
        let mut merges = 0;
        loop {
            let mut pick: Option<(usize, usize)> = None;
            let mut best_delta = 0.0;
            for (a, &(delta, b)) in best.iter().enumerate() {
                if delta < best_delta {
                    best_delta = delta;
                    pick = Some((a, b));
                }
            }
            let Some((a, b)) = pick else {
                return merges;
            };
            self.merge(a, b, best_delta);
            merges += 1;
            best[b] = NO_PARTNER;
            best[a] = self.partner(a, penalty);
            for c in 0..slots {
                if c == a || self.counts[c] == 0 {
                    continue;
                }
                let partner = best[c].1;
                if partner == a || partner == b {
                    best[c] = self.partner(c, penalty);
                } else if c < a {
                    // Ward's merge cost is reducible: in exact arithmetic the merged cluster
                    // is never a cheaper partner for c than c's kept one, which c's row held
                    // with a and b; this guards ties and rounding.
                    let delta = self.merge_change(c, a, penalty);
                    if delta < best[c].0 || (delta == best[c].0 && a < partner) {
                        best[c] = (delta, a);
                    }
                }
            }
        }
    }

    /// J's change if clusters a < b were merged, m_a m_b/(m_a + m_b)·‖x̄_a − x̄_b‖² − P.
    fn merge_change(&self, a: usize, b: usize, penalty: f64) -> f64 {
        let (ma, mb) = (self.counts[a] as f64, self.counts[b] as f64);
        ma * mb / (ma + mb) * sq_dist(self.means.row(a), self.means.row(b)) - penalty
    }

    /// The live slot b > a whose merge with a changes J least (the first among equals) and
    /// that change; [`NO_PARTNER`] when a is empty or no live slot follows it.
    fn partner(&self, a: usize, penalty: f64) -> (f64, usize) {
        let mut best = NO_PARTNER;
        if self.counts[a] == 0 {
            return best;
        }
        for b in a + 1..self.counts.len() {
            if self.counts[b] > 0 {
                let delta = self.merge_change(a, b, penalty);
                if delta < best.0 {
                    best = (delta, b);
                }
            }
        }
        best
    }

    /// Merges cluster b into a (J changes by `delta`).
    fn merge(&mut self, a: usize, b: usize, delta: f64) {
        self.change += delta;
        // The merged cluster may draw any row.
        self.bounds.clock += 1;
        self.bounds.all_marked = self.bounds.clock;
        for n in 0..self.labels.len() {
            if self.labels[n] == b {
                self.labels[n] = a;
                self.bounds.rows[n].own_upper = f64::INFINITY;
            }
        }
        self.counts[a] += self.counts[b];
        self.counts[b] = 0;
        self.split_tried[a] = false;
        self.split_tried[b] = false;
        let sb = self.sums.row(b).to_vec();
        axpy(1.0, &sb, self.sums.row_mut(a));
        self.sums.row_mut(b).fill(0.0);
        self.free.push(b);
        self.changes.touch(b);
        let moved = self.refresh_mean(a);
        self.bounds.moved(a, moved);
        self.bounds.drift += moved;
        // The table stays: a's mean has moved by `moved` (its bounds subtract that), and b,
        // empty, is passed over wherever it is listed.
        if let Some(t) = &mut self.table {
            t.moved(a, moved);
            #[cfg(test)]
            {
                self.merged_in_table += 1;
            }
        }
    }

    /// Tries to split every cluster in two by a short deterministic 2-means (seeds: the
    /// member farthest from the mean, then the member farthest from that one; ties to the
    /// lowest row) and applies each split that lowers the objective, i.e. whose drop in the
    /// sum of squares exceeds P; each part of a split is then tried in turn, so one call can
    /// cut a cluster into many. Respects `k_max`. Returns the number of splits.
    ///
    /// Cutting the parts at once, before any sweep, rather than one split per cluster per
    /// round with sweeps between, reaches lower objectives in fewer sweeps (docs/defaults.md,
    /// "DP-means: how deep a round splits").
    pub fn split_while_better(&mut self, x: MatrixView<'_>, penalty: f64, k_max: usize) -> usize {
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.counts.len()];
        for (n, &c) in self.labels.iter().enumerate() {
            members[c].push(n);
        }
        // Clusters still to try, in slot order, then the parts of each split as they come.
        let mut queue: VecDeque<(usize, Vec<usize>)> = members.into_iter().enumerate().collect();
        let mut splits = 0;
        while let Some((c, rows)) = queue.pop_front() {
            if rows.len() < 2 || self.k() >= k_max {
                continue;
            }
            #[cfg(test)]
            let state = (
                rows.clone(),
                self.sums.row(c).iter().map(|v| v.to_bits()).collect(),
            );
            if self.split_tried[c] {
                #[cfg(test)]
                {
                    self.split_skips += 1;
                    assert_eq!(self.split_marks.get(&c), Some(&state), "slot {c} changed");
                }
                continue;
            }
            let pays = two_means(x, &rows, self.means.row(c)).filter(|&(_, gain)| gain > penalty);
            let Some((side, gain)) = pays else {
                self.split_tried[c] = true;
                #[cfg(test)]
                self.split_marks.insert(c, state);
                continue;
            };
            self.change += penalty - gain;
            self.split_tried[c] = false;
            let new = self.new_slot();
            let (mut kept, mut moved) = (Vec::new(), Vec::new());
            for (&n, &s) in rows.iter().zip(&side) {
                self.bounds.rows[n].own_upper = f64::INFINITY;
                if s {
                    self.labels[n] = new;
                    self.counts[c] -= 1;
                    self.counts[new] += 1;
                    axpy(-1.0, x.row(n), self.sums.row_mut(c));
                    axpy(1.0, x.row(n), self.sums.row_mut(new));
                    moved.push(n);
                } else {
                    kept.push(n);
                }
            }
            self.refresh_mean(c);
            self.refresh_mean(new);
            self.split_zones.extend([c, new]);
            queue.push_back((c, kept));
            queue.push_back((new, moved));
            splits += 1;
        }
        if splits > 0 {
            // New clusters: no lower bound holds, and the table lacks them. The rows that
            // the changed clusters may draw are marked by the next sweep, from its table.
            self.table = None;
            self.bounds.forget_lower();
        }
        splits
    }

    /// [`Partition::merge_while_better`] choosing by a scan of every pair before each merge
    /// (the former code), for the test that compares the two choices.
    #[cfg(test)]
    fn merge_while_better_scan(&mut self, penalty: f64) -> usize {
        let mut merges = 0;
        loop {
            let live: Vec<usize> = (0..self.counts.len())
                .filter(|&j| self.counts[j] > 0)
                .collect();
            let mut best: Option<(usize, usize)> = None;
            let mut best_delta = 0.0;
            for (i, &a) in live.iter().enumerate() {
                for &b in &live[i + 1..] {
                    let delta = self.merge_change(a, b, penalty);
                    if delta < best_delta {
                        best_delta = delta;
                        best = Some((a, b));
                    }
                }
            }
            let Some((a, b)) = best else {
                return merges;
            };
            self.merge(a, b, best_delta);
            merges += 1;
        }
    }

    /// Labels renumbered `0..K` in slot order, dropping empty slots.
    pub fn compact_labels(&self) -> (Vec<usize>, usize) {
        let mut index = vec![usize::MAX; self.counts.len()];
        let mut k = 0;
        for j in 0..self.counts.len() {
            if self.counts[j] > 0 {
                index[j] = k;
                k += 1;
            }
        }
        (self.labels.iter().map(|&c| index[c]).collect(), k)
    }
}

#[cfg(test)]
impl Partition {
    /// Panics unless every row's bounds hold: the upper bound at least the distance to its
    /// own mean, the lower bound at most the distance to every other live mean.
    fn assert_bounds_hold(&self, x: &RowMatrix, what: &str) {
        for n in 0..self.labels.len() {
            let a = self.labels[n];
            let own = sq_dist(x.row(n), self.means.row(a)).sqrt();
            let upper = self.bounds.own_upper(n, a);
            assert!(
                own <= upper,
                "{what}: row {n} is {own} from its mean, bound {upper}"
            );
            let lower = self.bounds.other_lower(n);
            for b in (0..self.counts.len()).filter(|&b| b != a && self.counts[b] > 0) {
                let d = sq_dist(x.row(n), self.means.row(b)).sqrt();
                assert!(
                    lower <= d,
                    "{what}: row {n} is {d} from cluster {b}, bound {lower}"
                );
            }
        }
    }

    /// What row `xn` of slot a saves by leaving it: P for a singleton, else
    /// m_a/(m_a − 1)·‖x − x̄_a‖².
    fn stay_cost(&self, xn: &[f64], a: usize, penalty: f64) -> f64 {
        let m_a = self.counts[a];
        if m_a == 1 {
            penalty
        } else {
            m_a as f64 / (m_a as f64 - 1.0) * sq_dist(xn, self.means.row(a))
        }
    }

    /// Row n cannot lower the objective by joining another cluster or opening one (no cap on
    /// K): what a row passed over as settled must satisfy, checked against every cluster.
    fn assert_stays(&self, x: MatrixView<'_>, n: usize, penalty: f64) {
        let a = self.labels[n];
        let m_a = self.counts[a];
        let stay = self.stay_cost(x.row(n), a, penalty);
        assert!(
            m_a == 1 || penalty >= stay,
            "settled row {n} would open a cluster"
        );
        for b in (0..self.counts.len()).filter(|&b| b != a && self.counts[b] > 0) {
            let m_b = self.counts[b] as f64;
            let cost = m_b / (m_b + 1.0) * sq_dist(x.row(n), self.means.row(b));
            assert!(cost >= stay, "settled row {n} would join cluster {b}");
        }
    }

    /// Every row is within its slot's radius of its mean (after a sweep that keeps radii).
    fn assert_radii_hold(&self, x: &RowMatrix, what: &str) {
        for n in 0..self.labels.len() {
            let a = self.labels[n];
            let own = sq_dist(x.row(n), self.means.row(a)).sqrt();
            let r = self.bounds.radius[a];
            assert!(
                own <= r,
                "{what}: row {n} is {own} from its mean, radius {r}"
            );
            assert!(
                r <= self.bounds.radius_max,
                "{what}: radius {r} above the largest"
            );
        }
    }

    /// Panics unless table t keeps its promise for every live slot a it lists (not opened
    /// since it was built): a's list in [`list_order`], no slot listed twice, every listed
    /// live slot b with δ_ab − s_a − s_b at most ‖x̄_a − x̄_b‖, and each live slot left out
    /// only from a list marked as cut, at least as far (so bounded) as the last one listed.
    fn assert_table_holds(&self, t: &MeanTable, what: &str) {
        let k = self.counts.len();
        let shift = |b: usize| t.shift.get(b).copied().unwrap_or(0.0);
        let fresh = |b: usize| t.fresh.get(b).copied().unwrap_or(true);
        let holds = |a: usize, b: usize, delta: f64| {
            let dist = sq_dist(self.means.row(a), self.means.row(b)).sqrt();
            delta - shift(a) - shift(b) <= dist + 1e-9 * (dist + delta)
        };
        for a in 0..k.min(t.neighbours.len()) {
            if self.counts[a] == 0 || fresh(a) {
                continue;
            }
            let (list, dists) = (&t.neighbours[a], &t.neighbour_between[a]);
            let entries: Vec<(f64, u32)> =
                dists.iter().copied().zip(list.iter().copied()).collect();
            assert!(
                entries.windows(2).all(|w| list_order(&w[0], &w[1]).is_lt()),
                "{what}: slot {a}'s list out of order"
            );
            let mut listed = vec![false; k];
            for &(delta, b) in &entries {
                let b = b as usize;
                assert!(!listed[b], "{what}: slot {b} twice in slot {a}'s list");
                listed[b] = true;
                if self.counts[b] > 0 && !fresh(b) {
                    assert!(
                        holds(a, b, delta),
                        "{what}: slot {a}'s bound on {b} above it"
                    );
                }
            }
            for b in (0..k).filter(|&b| b != a && self.counts[b] > 0 && !fresh(b) && !listed[b]) {
                assert!(
                    t.tail[a],
                    "{what}: slot {b} left out of slot {a}'s whole list"
                );
                let last = dists.last().copied().unwrap_or(0.0);
                assert!(holds(a, b, last), "{what}: slot {a}'s last bound above {b}");
            }
        }
    }

    /// The sweep without pruning, as it was written before: the reference the pruned sweep
    /// must equal move for move.
    pub fn sweep_unpruned(
        &mut self,
        x: &RowMatrix,
        order: &[usize],
        penalty: f64,
        k_max: usize,
    ) -> usize {
        let mut moves = 0;
        for &n in order {
            let a = self.labels[n];
            let m_a = self.counts[a];
            let stay = self.stay_cost(x.row(n), a, penalty);
            let mut best: Option<Option<usize>> = None;
            let mut best_cost = stay;
            for b in 0..self.counts.len() {
                let m_b = self.counts[b];
                if b == a || m_b == 0 {
                    continue;
                }
                let cost = m_b as f64 / (m_b as f64 + 1.0) * sq_dist(x.row(n), self.means.row(b));
                if cost < best_cost {
                    best_cost = cost;
                    best = Some(Some(b));
                }
            }
            // A singleton moving to a new cluster changes nothing, so only others may open one.
            if m_a > 1 && self.k() < k_max && penalty < best_cost {
                best = Some(None);
            }
            if let Some(to) = best {
                self.move_row(x.view(), n, to);
                moves += 1;
            }
        }
        moves
    }
}

/// Splits `rows` (mean `mean`) in two by at most 20 Lloyd steps from deterministic seeds.
/// Returns which rows go to the second part and the drop in the sum of squares, or `None`
/// when the rows cannot be split (all identical). Distances are taken four at a time
/// ([`distances_to`], the bits of [`sq_dist`]) and every comparison and sum is made in row
/// order, as one distance at a time would.
fn two_means(x: MatrixView<'_>, rows: &[usize], mean: &[f64]) -> Option<(Vec<bool>, f64)> {
    let mut dist = vec![0.0; rows.len()];
    // The first row farthest from `from` (ties to the earlier row).
    let mut farthest = |from: &[f64]| {
        distances_to(x, rows, [from, from], &mut dist, &mut []);
        let mut best = (rows[0], -1.0);
        for (&n, &d) in rows.iter().zip(&dist) {
            if d > best.1 {
                best = (n, d);
            }
        }
        best
    };
    let (a, da) = farthest(mean);
    if da <= 0.0 {
        return None;
    }
    let (b, _) = farthest(x.row(a));
    let mut ca = x.row(a).to_vec();
    let mut cb = x.row(b).to_vec();
    let mut side = vec![false; rows.len()];
    let mut to_a = vec![0.0; rows.len()];
    for _ in 0..20 {
        let mut changed = false;
        distances_to(x, rows, [&cb, &ca], &mut dist, &mut to_a);
        for ((s, &db), &da) in side.iter_mut().zip(&dist).zip(&to_a) {
            let to_b = db < da;
            changed |= to_b != *s;
            *s = to_b;
        }
        (ca, cb) = side_means(x, rows, &side)?;
        if !changed {
            break;
        }
    }
    distances_to(x, rows, [mean, mean], &mut dist, &mut []);
    let before: f64 = dist.iter().sum();
    distances_to(x, rows, [&cb, &ca], &mut dist, &mut to_a);
    let after: f64 = (side.iter().zip(dist.iter().zip(&to_a)))
        .map(|(&s, (&db, &da))| if s { db } else { da })
        .sum();
    Some((side, before - after))
}

/// The means of the rows of `rows` on each side of `side` (false, true), each summed in row
/// order; `None` when a side is empty.
fn side_means(x: MatrixView<'_>, rows: &[usize], side: &[bool]) -> Option<(Vec<f64>, Vec<f64>)> {
    let d = x.n_cols();
    let (mut sa, mut sb) = (vec![0.0; d], vec![0.0; d]);
    let (mut na, mut nb) = (0usize, 0usize);
    for (&n, &s) in rows.iter().zip(side) {
        if s {
            axpy(1.0, x.row(n), &mut sb);
            nb += 1;
        } else {
            axpy(1.0, x.row(n), &mut sa);
            na += 1;
        }
    }
    if na == 0 || nb == 0 {
        return None;
    }
    let mean = |s: Vec<f64>, m: usize| s.into_iter().map(|v| v / m as f64).collect();
    Some((mean(sa, na), mean(sb, nb)))
}

/// ‖x_n − c_0‖² into `first` and, when `second` is not empty, ‖x_n − c_1‖² into `second`, for
/// each row n of `rows` in order: [`sq_dist4`] on four pairs at a time (two rows against both
/// means, or four rows against one), the bits of [`sq_dist`].
fn distances_to(
    x: MatrixView<'_>,
    rows: &[usize],
    [c0, c1]: [&[f64]; 2],
    first: &mut [f64],
    second: &mut [f64],
) {
    if second.is_empty() {
        let mut quads = rows.chunks_exact(4);
        let mut i = 0;
        for q in &mut quads {
            let d = sq_dist4([q[0], q[1], q[2], q[3]].map(|n| x.row(n)), [c0; 4]);
            first[i..i + 4].copy_from_slice(&d);
            i += 4;
        }
        for &n in quads.remainder() {
            first[i] = sq_dist(x.row(n), c0);
            i += 1;
        }
        return;
    }
    let mut pairs = rows.chunks_exact(2);
    let mut i = 0;
    for p in &mut pairs {
        let (r0, r1) = (x.row(p[0]), x.row(p[1]));
        let [d00, d01, d10, d11] = sq_dist4([r0, r0, r1, r1], [c0, c1, c0, c1]);
        (first[i], second[i], first[i + 1], second[i + 1]) = (d00, d01, d10, d11);
        i += 2;
    }
    for &n in pairs.remainder() {
        first[i] = sq_dist(x.row(n), c0);
        second[i] = sq_dist(x.row(n), c1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The pruned sweep makes exactly the moves of the unpruned one, sweep after sweep, with
    /// merges and splits between them (which the row bounds must survive), on random and on
    /// integer data (where costs tie exactly), from random partitions. The bounds must pass
    /// over rows in these runs (without reading them), or the test would not test them; and
    /// every row's bounds must hold after every step. Broken on purpose, each of these fails
    /// it or one of the two tests below: a bound not decayed by the drift or by a mean's
    /// travel (own, nearest other, the cluster left or joined), not reset by an opening or a
    /// split, an upper bound kept through a merge or split relabeling, the merge's
    /// displacement not counted, a shift left out of the triangle bound (either side), the
    /// walk stopped without the largest shift or the smallest count, the walk's bound not
    /// kept, opened clusters not scored or their distances not computed, the table kept
    /// through a split, a table kept through a merge without the merged mean's move in its
    /// shift, ties resolved by a strict `<` alone. Every sweep's table is checked on its
    /// own too ([`Partition::assert_table_holds`]); it fails when openings are folded into
    /// the lists with a reused slot's old place left in, a distance 1 % too large, a full
    /// list not marked cut, an opened slot's own list not marked cut, or the opened slots
    /// still marked as fresh.
    #[test]
    fn pruned_sweeps_move_exactly_as_unpruned_ones() {
        let (mut skipped, mut without_table, mut dropped, mut settled) = (0, 0, 0, 0);
        let (mut tails, mut kept, mut stale, mut zone_tails) = (0, 0, 0, 0);
        let (mut dense_rows, mut dense_dropped) = (0, 0);
        let (mut recalled, mut unrecalled) = (0, 0);
        let (mut merged_in_table, mut folded) = (0, 0);
        for run in 0..190u64 {
            let (seed, dense) = if run < 130 {
                (run, false)
            } else {
                (run - 60, true)
            };
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            // Seeds from 90 on: separated groups of rows (a few clusters each at small
            // penalties), no cap on K, full tables: where rows settle.
            let blobs = seed >= 90;
            let (n, d, k) = if blobs {
                (240, 2, 1 + (seed as usize % 5))
            } else {
                (80, 1 + (seed as usize % 3), 1 + (seed as usize % 7))
            };
            let grid = seed % 2 == 0;
            let v = (0..n * d)
                .map(|i| {
                    if blobs {
                        // Six groups; their spacing, from touching to far apart, by seed.
                        let group = (i / d) % 6;
                        let gap = [5.0, 9.0, 16.0, 40.0][seed as usize % 4];
                        return gap * ((group >> (i % d)) & 1) as f64
                            + 0.6 * gap * (group / 4) as f64
                            + 3.0 * rng.random::<f64>();
                    }
                    let u = 6.0 * rng.random::<f64>();
                    if grid { u.floor() } else { u }
                })
                .collect();
            let x = RowMatrix::new(n, d, v);
            let labels: Vec<usize> = (0..n).map(|_| rng.random_range(0..k)).collect();
            let order: Vec<usize> = (0..n).rev().collect();
            let penalty = [0.5, 2.0, 8.0, 30.0][if blobs { seed / 4 } else { seed } as usize % 4];
            // Under a cap on K, and without one (where settled rows are passed over).
            let k_max = if blobs {
                usize::MAX
            } else {
                [5, 12, usize::MAX][seed as usize / 2 % 3]
            };
            let (mut p, mut q) = (
                Partition::new(x.view(), labels.clone(), k),
                Partition::new(x.view(), labels, k),
            );
            // With a table throughout, never one, or one dropped when openings pass 6 slots.
            if !blobs {
                p.table_max_slots = [TABLE_MAX_SLOTS, 0, 6][seed as usize % 3];
                // Neighbour lists of every other slot, or of only the nearest 1 or 3.
                p.sorted_neighbours = [SORTED_NEIGHBOURS, 1, 3][seed as usize / 3 % 3];
            }
            // Searches by the table's lists only, or else (the second pass over seeds 70 to
            // 129) by scoring every cluster at once: always here, or until openings pass 6
            // slots, or only after a walking sweep scored a quarter of the clusters or more
            // ([`DENSE_SHARE`]; 1 795 of the rows so scored came that way when written).
            p.dense_range = match dense {
                false => (0, 0, 0),
                true => [
                    (0, DENSE_MAX_SLOTS, DENSE_MAX_SLOTS),
                    (0, 6, 6),
                    (0, 0, DENSE_MAX_SLOTS),
                ][seed as usize % 3],
            };
            for round in 0..10 {
                let what = format!("seed {seed} round {round}");
                let moved = sweep_alike(&mut p, &mut q, (&x, &order), (penalty, k_max), &what);
                if p.table.is_none() {
                    without_table += 1;
                }
                if k_max == usize::MAX {
                    p.assert_radii_hold(&x, &format!("seed {seed} round {round}"));
                }
                if moved == 0 {
                    let merged = p.merge_while_better(penalty);
                    assert_eq!(merged, q.merge_while_better(penalty));
                    if merged == 0 {
                        let split = p.split_while_better(x.view(), penalty, k_max);
                        assert_eq!(split, q.split_while_better(x.view(), penalty, k_max));
                    }
                    p.assert_bounds_hold(&x, &format!("seed {seed} after round {round}"));
                }
            }
            skipped += p.bounds.skipped.1;
            settled += p.bounds.settled_rows;
            dropped += p.dropped_tables;
            tails += p.tails;
            zone_tails += p.bounds.zone_tails;
            kept += p.kept_tables.0;
            stale += p.kept_tables.1;
            dense_rows += p.dense.0;
            dense_dropped += p.dense.1;
            recalled += p.recalled.0;
            unrecalled += p.recalled.1;
            merged_in_table += p.merged_in_table;
            folded += p.kept_tables.2;
        }
        eprintln!(
            "merges made with a table kept {merged_in_table}, tables with openings folded \
             {folded}, \
             skipped {skipped}, settled {settled}, sweeps without a table {without_table}, \
             dropped {dropped}, searches past their lists {tails}, zone walks past their \
             lists {zone_tails}, tables kept {kept}, rebuilt as stale {stale}, rows scored \
             against every cluster {dense_rows}, such searches dropped {dense_dropped}, \
             rows decided by their memos {recalled}, not {unrecalled}"
        );
        assert!(
            dense_rows > 1000 && dense_dropped > 5,
            "rows scored against every cluster {dense_rows}, such searches dropped \
             {dense_dropped}"
        );
        assert!(
            settled > 1000,
            "only {settled} rows were passed over as settled"
        );
        assert!(
            kept > 100 && stale > 20,
            "tables kept {kept}, rebuilt as stale {stale}"
        );
        assert!(tails > 1000, "only {tails} searches went past their lists");
        assert!(
            zone_tails > 100,
            "only {zone_tails} zone walks went past their lists"
        );
        assert!(skipped > 1000, "the bounds passed over only {skipped} rows");
        assert!(
            folded > 80,
            "only {folded} tables had their openings folded"
        );
        assert!(
            merged_in_table > 50,
            "only {merged_in_table} merges were made with a table kept"
        );
        assert!(
            recalled > 5000,
            "only {recalled} rows were decided by their memos"
        );
        assert!(
            without_table > 200,
            "only {without_table} sweeps ran without a table"
        );
        assert!(
            dropped >= 4,
            "only {dropped} tables were dropped as clusters opened"
        );
    }

    /// Rows decided by their memos move exactly as full searches (without a table, or by
    /// the dense search) would:
    /// sweeps, merges and splits against the unpruned sweeps, on data of ties (a grid) and
    /// without, with and without a cap on K, from many clusters (so that a memo keeps few
    /// of them and its floor matters). Fails if a touched slot is read from a memo, a
    /// slot emptied or reused keeps its memo's cost, the floor lets a decision through that
    /// an unkept cluster could change, or ties go otherwise than to the lowest slot.
    #[test]
    fn memos_decide_as_full_searches() {
        let (mut recalled, mut unrecalled) = (0, 0);
        for seed in 0..40u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (n, d, k) = (400, 1 + seed as usize % 3, 40 + seed as usize % 60);
            let x = uniform_rows(&mut rng, (n, d), 20.0, seed % 2 == 0);
            let labels: Vec<usize> = (0..n).map(|_| rng.random_range(0..k)).collect();
            let order: Vec<usize> = (0..n).map(|i| (i * 7 + seed as usize) % n).collect();
            let penalty = [0.5, 2.0, 8.0, 30.0][seed as usize / 2 % 4];
            let k_max = if seed % 5 == 4 { k + 5 } else { usize::MAX };
            let (mut p, mut q) = (
                Partition::new(x.view(), labels.clone(), k),
                Partition::new(x.view(), labels, k),
            );
            // Every cluster scored by the dense search, or one at a time without a table.
            p.table_max_slots = 0;
            p.dense_range = match seed % 4 {
                1 => (0, DENSE_MAX_SLOTS, DENSE_MAX_SLOTS),
                _ => (0, 0, 0),
            };
            // Memos read however much has changed since (where the floor decides often).
            // (The dense search makes memos at any number of clusters here.)
            p.memo_rules = (seed % 3 == 0, 0);
            // Memos of the cheapest one, two or three (the floor the next one's cost).
            p.memo_kept = 1 + seed as usize / 3 % 3;
            for round in 0..12 {
                let what = format!("seed {seed} round {round}");
                let moved = sweep_alike(&mut p, &mut q, (&x, &order), (penalty, k_max), &what);
                if moved == 0 {
                    let merged = p.merge_while_better(penalty);
                    assert_eq!(merged, q.merge_while_better(penalty), "{what}");
                    if merged == 0 {
                        let split = p.split_while_better(x.view(), penalty, k_max);
                        assert_eq!(split, q.split_while_better(x.view(), penalty, k_max));
                    }
                }
            }
            recalled += p.recalled.0;
            unrecalled += p.recalled.1;
        }
        eprintln!("rows decided by their memos {recalled}, not {unrecalled}");
        assert!(
            recalled > 5000 && unrecalled > 500,
            "rows decided by their memos {recalled}, not {unrecalled}"
        );
    }

    /// The merges with kept partners are the merges of the scan of every pair: the same
    /// pairs in the same order (the same labels, counts and means, and the same change of J
    /// to the bit), on random and on integer data (where changes tie), from partitions with
    /// empty slots, at penalties that allow a few merges or hundreds.
    #[test]
    fn kept_partners_merge_as_the_scan_of_every_pair() {
        let mut merges = 0;
        for seed in 0..40u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            // Many small clusters (two rows each on average), so that merged means become
            // the best partners of others.
            let (n, d) = (300, 1 + (seed as usize % 3));
            let k = [30, 90, 150, 240][seed as usize % 4];
            let x = uniform_rows(&mut rng, (n, d), 10.0, seed % 2 == 0);
            // Every third slot empty.
            let labels: Vec<usize> = (0..n)
                .map(|_| 3 * rng.random_range(0..k / 3) + rng.random_range(0..2))
                .collect();
            let penalty = [1.0, 10.0, 100.0, 1000.0][(seed as usize / 4) % 4];
            let mut p = Partition::new(x.view(), labels.clone(), k);
            let mut q = Partition::new(x.view(), labels, k);
            let made = p.merge_while_better(penalty);
            assert_eq!(made, q.merge_while_better_scan(penalty), "seed {seed}");
            assert_eq!(p.labels, q.labels, "seed {seed}");
            assert_eq!(p.counts, q.counts, "seed {seed}");
            assert_eq!(p.means, q.means, "seed {seed}");
            assert_eq!(p.change.to_bits(), q.change.to_bits(), "seed {seed}");
            p.assert_bounds_hold(&x, &format!("seed {seed}"));
            merges += made;
        }
        assert!(merges > 1000, "only {merges} merges were compared");
    }

    /// The table, built slot by slot in parallel, lists for each slot its nearest live other
    /// slots, nearest first, with the distance of each pair computed one pair at a time
    /// (bit for bit), as many as it may hold, and says whether it left any out (all at least
    /// as far as the last listed). Fails when a batch of eight's distance lands in the wrong
    /// column, the last columns past the batches are missed, an emptied slot enters the
    /// lists, or a list keeps other than the nearest.
    #[test]
    fn table_rows_are_the_distances_of_each_pair() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("a pool");
        for (n, d, sorted) in [(150, 3, 5), (70, 1, 256), (133, 7, 1)] {
            let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
            let x = RowMatrix::new(n, d, (0..n * d).map(|_| rng.random::<f64>()).collect());
            // One slot per row but every fifth emptied (slots past 64 cross a mirror block).
            let labels: Vec<usize> = (0..n).map(|i| if i % 5 == 4 { i - 1 } else { i }).collect();
            let mut p = Partition::new(x.view(), labels, n);
            p.sorted_neighbours = sorted;
            let live: Vec<usize> = (0..n).filter(|&b| p.counts[b] > 0).collect();
            let t = pool.install(|| p.mean_table());
            for a in 0..n {
                let dist = |b: usize| sq_dist(p.means.row(a), p.means.row(b)).sqrt();
                let mut others: Vec<(f64, usize)> = live
                    .iter()
                    .filter(|&&b| b != a)
                    .map(|&b| (dist(b), b))
                    .collect();
                others.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
                let listed: Vec<(f64, usize)> = (t.neighbours[a].iter())
                    .zip(&t.neighbour_between[a])
                    .map(|(&b, &ab)| (ab, b as usize))
                    .collect();
                let want = &others[..others.len().min(sorted)];
                assert_eq!(listed.len(), want.len(), "slot {a}");
                for ((ab, b), (w, wb)) in listed.iter().zip(want) {
                    assert_eq!((ab.to_bits(), b), (w.to_bits(), wb), "slot {a}");
                }
                assert_eq!(t.tail[a], others.len() > sorted, "slot {a}'s tail");
            }
        }
    }

    /// One call cuts a cluster holding four well-separated groups into the four (each part
    /// of a split is tried again at once), and applies no split that does not pay.
    #[test]
    fn one_split_call_cuts_a_cluster_into_all_the_parts_that_pay() {
        let corners = [[0.0, 0.0], [100.0, 0.0], [0.0, 100.0], [100.0, 100.0]];
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let v: Vec<f64> = (0..200)
            .flat_map(|i| {
                let c = corners[i % 4];
                [c[0] + rng.random::<f64>(), c[1] + rng.random::<f64>()]
            })
            .collect();
        let x = RowMatrix::new(200, 2, v);
        let mut p = Partition::new(x.view(), vec![0; 200], 1);
        let penalty = 50.0;
        let before = crate::clustering::objective::collapsed_dp_means_objective(
            x.view(),
            &p.labels,
            penalty,
        );
        assert_eq!(p.split_while_better(x.view(), penalty, usize::MAX), 3);
        assert_eq!(p.k(), 4);
        for group in 0..4 {
            let label = p.labels[group];
            assert!((group..200).step_by(4).all(|i| p.labels[i] == label));
        }
        let after = crate::clustering::objective::collapsed_dp_means_objective(
            x.view(),
            &p.labels,
            penalty,
        );
        assert!(((before + p.change) - after).abs() < 1e-6 * after);
        // Within a group no split pays P = 50 (its spread is under 1 in each coordinate).
        assert_eq!(p.split_while_better(x.view(), penalty, usize::MAX), 0);
        // k_max stops the cutting.
        let mut q = Partition::new(x.view(), vec![0; 200], 1);
        assert_eq!(q.split_while_better(x.view(), penalty, 3), 2);
    }

    /// Past `TABLE_MAX_SLOTS` slots no table of distances between means is built: its
    /// memory grows as the square of K (a small penalty opens a cluster for nearly every
    /// row), and the moves are the same without it.
    #[test]
    fn no_table_past_its_slot_cap() {
        let (n, d) = (TABLE_MAX_SLOTS + 200, 2);
        let x = RowMatrix::new(n, d, (0..n * d).map(|i| (i * 7919 % 1000) as f64).collect());
        let labels: Vec<usize> = (0..n).collect();
        let order: Vec<usize> = (0..n).collect();
        let mut p = Partition::new(x.view(), labels, n);
        p.sweep(x.view(), &order, 1e-9, usize::MAX);
        assert!(p.table.is_none(), "a table was built for {} slots", n);
        // Below the cap the table stays, through the clusters opened in the sweep.
        let x40 = RowMatrix::new(40, d, x.as_slice()[..40 * d].to_vec());
        let mut q = Partition::new(x40.view(), vec![0; 40], 1);
        assert!(q.sweep(x40.view(), &order[..40], 1e-9, usize::MAX) > 0);
        assert!(q.table.is_some(), "no table for {} slots", q.counts.len());
    }

    /// Sweeps, with a merge between them when a sweep moved nothing, pruned and unpruned;
    /// the labels after every step must agree.
    /// One sweep of `p` (pruned) and of `q` (unpruned) over `order`: the same moves, labels
    /// and means, and `p`'s bounds hold. Returns the moves.
    fn sweep_alike(
        p: &mut Partition,
        q: &mut Partition,
        (x, order): (&RowMatrix, &[usize]),
        (penalty, k_max): (f64, usize),
        what: &str,
    ) -> usize {
        let moved = p.sweep(x.view(), order, penalty, k_max);
        assert_eq!(moved, q.sweep_unpruned(x, order, penalty, k_max), "{what}");
        assert_eq!(p.labels, q.labels, "{what}");
        assert_eq!(p.means, q.means, "{what}");
        p.assert_bounds_hold(x, what);
        moved
    }

    /// n × d values uniform in [0, `scale`), rounded down to whole numbers when `grid`
    /// (where distances and costs tie).
    fn uniform_rows(
        rng: &mut ChaCha8Rng,
        (n, d): (usize, usize),
        scale: f64,
        grid: bool,
    ) -> RowMatrix {
        let v = (0..n * d)
            .map(|_| {
                let u = scale * rng.random::<f64>();
                if grid { u.floor() } else { u }
            })
            .collect();
        RowMatrix::new(n, d, v)
    }

    fn agree_through(x: &RowMatrix, labels: Vec<usize>, k: usize, order: &[usize], penalty: f64) {
        let (mut p, mut q) = (
            Partition::new(x.view(), labels.clone(), k),
            Partition::new(x.view(), labels, k),
        );
        for round in 0..4 {
            let moved = p.sweep(x.view(), order, penalty, 10);
            assert_eq!(
                moved,
                q.sweep_unpruned(x, order, penalty, 10),
                "round {round}"
            );
            assert_eq!(p.labels, q.labels, "round {round}");
            if moved == 0 {
                assert_eq!(p.merge_while_better(penalty), q.merge_while_better(penalty));
            }
        }
    }

    /// Row y (first in the order) stays in its 102-row cluster in sweep 1, where it has no
    /// other cluster to join (bound +∞); row r, after it, opens a cluster 1 away from y, and
    /// in sweep 2 y joins it. A bound not reset by the opening would pass y over.
    /// Rounds of splits that pass over the clusters whose 2-means did not pay and that
    /// nothing has touched since make the descent of rounds that try every cluster: labels,
    /// counts and the objective's change to the bit after every sweep, merge and split
    /// round, on blobs at penalties where splits, merges and moves all happen. A slot passed
    /// over must hold the rows and sum bits it had when marked (checked in
    /// `split_while_better` under test), so the test fails when a move, merge or split
    /// leaves a slot marked as tried.
    #[test]
    fn split_rounds_skip_only_untouched_clusters() {
        use crate::generate::gaussian_blobs;
        let mut skips = 0;
        for (penalty, seed) in [(6.0, 1u64), (12.0, 2), (30.0, 3)] {
            let x = gaussian_blobs(1_500, 4, 12, 6.0, 1.5, seed).x;
            let n = x.n_rows();
            let labels: Vec<usize> = (0..n).map(|i| i % 3).collect();
            let order: Vec<usize> = (0..n).map(|i| (i * 7919) % n).collect();
            let (mut p, mut q) = (
                Partition::new(x.view(), labels.clone(), 3),
                Partition::new(x.view(), labels, 3),
            );
            for step in 0..60 {
                let moved = p.sweep(x.view(), &order, penalty, usize::MAX);
                assert_eq!(moved, q.sweep(x.view(), &order, penalty, usize::MAX));
                if moved == 0 {
                    let merged = p.merge_while_better(penalty);
                    assert_eq!(merged, q.merge_while_better(penalty));
                    if merged == 0 {
                        q.split_tried.iter_mut().for_each(|t| *t = false);
                        let split = p.split_while_better(x.view(), penalty, usize::MAX);
                        assert_eq!(split, q.split_while_better(x.view(), penalty, usize::MAX));
                        if split == 0 {
                            break;
                        }
                    }
                }
                let case = format!("P = {penalty}, step {step}");
                assert_eq!(p.labels, q.labels, "{case}");
                assert_eq!(p.counts, q.counts, "{case}");
                assert_eq!(p.change.to_bits(), q.change.to_bits(), "{case}");
            }
            skips += p.split_skips;
        }
        assert!(skips > 20, "{skips} clusters passed over");
    }

    /// A merge un-marks both slots, and a slot freed by it and reused by a split is tried
    /// afresh: two far-apart groups that no split pays for alone, merged, must be split
    /// again in the next round (and its parts tried, which the check in
    /// `split_while_better` makes fail if either kept its mark).
    #[test]
    fn a_merged_or_reused_slot_is_tried_again() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let rows: Vec<[f64; 2]> = (0..60)
            .map(|i| {
                let centre = if i < 30 { 0.0 } else { 100.0 };
                [
                    centre + rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                ]
            })
            .collect();
        let x = RowMatrix::from_rows(&rows);
        let labels: Vec<usize> = (0..60).map(|i| usize::from(i >= 30)).collect();
        let penalty = 1_000.0;
        let mut p = Partition::new(x.view(), labels, 2);
        assert_eq!(p.split_while_better(x.view(), penalty, usize::MAX), 0);
        assert!(p.split_tried[0] && p.split_tried[1]);
        let delta = p.merge_change(0, 1, penalty);
        p.merge(0, 1, delta);
        assert_eq!(p.split_while_better(x.view(), penalty, usize::MAX), 1);
        assert_eq!(p.k(), 2);
        assert_eq!(p.split_skips, 0);
    }

    /// `two_means` as it was written, one distance at a time: the oracle of the test below.
    fn two_means_one_at_a_time(
        x: MatrixView<'_>,
        rows: &[usize],
        mean: &[f64],
    ) -> Option<(Vec<bool>, f64)> {
        let farthest = |from: &[f64]| {
            let mut best = (rows[0], -1.0);
            for &n in rows {
                let d = sq_dist(x.row(n), from);
                if d > best.1 {
                    best = (n, d);
                }
            }
            best
        };
        let (a, da) = farthest(mean);
        if da <= 0.0 {
            return None;
        }
        let (b, _) = farthest(x.row(a));
        let mut ca = x.row(a).to_vec();
        let mut cb = x.row(b).to_vec();
        let mut side = vec![false; rows.len()];
        for _ in 0..20 {
            let mut changed = false;
            for (i, &n) in rows.iter().enumerate() {
                let to_b = sq_dist(x.row(n), &cb) < sq_dist(x.row(n), &ca);
                changed |= to_b != side[i];
                side[i] = to_b;
            }
            (ca, cb) = side_means(x, rows, &side)?;
            if !changed {
                break;
            }
        }
        let before: f64 = rows.iter().map(|&n| sq_dist(x.row(n), mean)).sum();
        let after: f64 = rows
            .iter()
            .zip(&side)
            .map(|(&n, &s)| sq_dist(x.row(n), if s { &cb } else { &ca }))
            .sum();
        Some((side, before - after))
    }

    /// `two_means` with its distances four at a time makes the split of the one-at-a-time
    /// form, with the same gain to the bit: random and integer data (exact ties), 1 to 37
    /// rows in a scattered order, D = 1, 3, 50, and all-equal rows. Fails when a distance
    /// goes to the wrong mean or row, or the odd row of a pair is left out.
    #[test]
    fn two_means_splits_as_one_distance_at_a_time() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut splits = 0;
        for &d in &[1usize, 3, 50] {
            for integer in [false, true] {
                let n = 80;
                let data: Vec<f64> = (0..n * d)
                    .map(|_| {
                        if integer {
                            f64::from(rng.random_range(0..4u8))
                        } else {
                            rng.random_range(-5.0..5.0)
                        }
                    })
                    .collect();
                let x = RowMatrix::new(n, d, data);
                for len in 1..=37 {
                    let rows: Vec<usize> = (0..len).map(|i| (i * 7 + len) % n).collect();
                    let mut mean = vec![0.0; d];
                    rows.iter().for_each(|&r| axpy(1.0, x.row(r), &mut mean));
                    mean.iter_mut().for_each(|m| *m /= len as f64);
                    let got = two_means(x.view(), &rows, &mean);
                    let want = two_means_one_at_a_time(x.view(), &rows, &mean);
                    splits += usize::from(got.is_some());
                    assert_eq!(
                        got.map(|(s, g)| (s, g.to_bits())),
                        want.map(|(s, g)| (s, g.to_bits())),
                        "D = {d}, integer {integer}, {len} rows"
                    );
                }
            }
        }
        let same = RowMatrix::new(5, 2, vec![1.0; 10]);
        assert!(two_means(same.view(), &[0, 1, 2, 3, 4], &[1.0, 1.0]).is_none());
        assert!(splits > 150, "{splits} splits");
    }

    /// `Search::other_bounds` takes the first two of a stable sort by `total_cmp` without
    /// sorting: checked against the sort on random candidates with ties, −0.0 and +0.0,
    /// infinities and empty places, for every `home` and `left`. Fails when a later equal
    /// candidate displaces an earlier one, or when −0.0 and +0.0 are taken as equal.
    #[test]
    fn other_bounds_are_the_first_two_of_a_stable_sort() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let values = [0.0, -0.0, 1.0, 1.0, 2.5, f64::INFINITY, -1.0];
        let sorted = |s: &Search, home: usize, left: Option<(f64, usize)>| {
            let mut others: Vec<(f64, usize)> = s
                .near
                .iter()
                .copied()
                .filter(|&(_, b)| b != home && b != usize::MAX)
                .chain(left)
                .collect();
            others.sort_by(|p, q| p.0.total_cmp(&q.0));
            let first = others
                .first()
                .copied()
                .unwrap_or((f64::INFINITY, usize::MAX));
            let rest = others.get(1).map_or(s.rest, |o| o.0.min(s.rest));
            (first, rest)
        };
        let bits = |((d, b), r): ((f64, usize), f64)| (d.to_bits(), b, r.to_bits());
        for _ in 0..20_000 {
            let mut s = Search::new(0.0);
            for (slot, near) in s.near.iter_mut().enumerate() {
                *near = if rng.random_range(0..5) == 0 {
                    (f64::INFINITY, usize::MAX)
                } else {
                    (values[rng.random_range(0..values.len())], slot + 1)
                };
            }
            s.rest = values[rng.random_range(0..values.len())];
            let left = (rng.random_range(0..3) > 0)
                .then(|| (values[rng.random_range(0..values.len())], 9));
            for home in [0, 1, 2, 3, usize::MAX] {
                assert_eq!(
                    bits(s.other_bounds(home, left)),
                    bits(sorted(&s, home, left)),
                    "near {:?}, home {home}, left {left:?}",
                    s.near
                );
            }
        }
    }

    /// `Search::seen` keeps the first three of a stable sort of everything seen (the three
    /// empty places first): checked on random sequences with ties, −0.0 beside +0.0 (equal
    /// here) and infinities. Fails when an equal later candidate displaces an earlier one at
    /// any of the three places, or when one lands in the wrong place.
    #[test]
    fn seen_keeps_the_first_three_of_a_stable_sort() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let values = [0.0, -0.0, 1.0, 1.0, 2.5, 3.0, f64::INFINITY];
        for _ in 0..20_000 {
            let mut s = Search::new(0.0);
            let mut all = vec![(f64::INFINITY, usize::MAX); 3];
            for b in 0..rng.random_range(0..9) {
                let v = values[rng.random_range(0..values.len())];
                s.seen(b, v);
                all.push((v, b));
            }
            all.sort_by(|p, q| p.0.partial_cmp(&q.0).expect("no NaN"));
            let bits = |n: &[(f64, usize)]| -> Vec<(u64, usize)> {
                n.iter().map(|&(v, b)| (v.to_bits(), b)).collect()
            };
            assert_eq!(bits(&s.near), bits(&all[..3]), "{all:?}");
        }
    }

    #[test]
    fn an_opening_resets_the_row_bounds() {
        let mut v = vec![10.0, 11.0];
        v.extend(std::iter::repeat_n(0.0, 100));
        let x = RowMatrix::new(v.len(), 1, v);
        let order: Vec<usize> = (0..x.n_rows()).collect();
        agree_through(&x, vec![0; x.n_rows()], 1, &order, 100.0);
    }

    /// Row y = (0.1, 5) sits in a cluster of 100 rows near (0, 10); clusters A and B (100
    /// rows each at (∓1, 0)) are 26.21 and 25.81 away from it squared, so y stays (staying
    /// costs 25.30, joining B 25.55). P = 300 merges B into A; their mean (0, 0) is 25.01
    /// away squared and y joins it (24.89). Without the merge's displacement in the bounds,
    /// y's bounds from sweep 1 would pass it over.
    #[test]
    fn a_merge_moves_the_row_bounds() {
        let mut rows = vec![vec![0.1, 5.0]];
        let mut labels = vec![2];
        for (c, at) in [(0, [-1.0, 0.0]), (1, [1.0, 0.0]), (2, [0.0, 10.055])] {
            for _ in 0..100 {
                rows.push(at.to_vec());
                labels.push(c);
            }
        }
        let x = RowMatrix::from_rows(&rows);
        let order: Vec<usize> = (0..x.n_rows()).collect();
        agree_through(&x, labels, 3, &order, 300.0);
    }
}
