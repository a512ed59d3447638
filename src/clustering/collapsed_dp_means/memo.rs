//! What a row's last full search learnt, kept so that a later search of the same row need
//! score only the clusters that have changed since.
//!
//! Joining cluster b costs m_b/(m_b + 1)·‖x_n − x̄_b‖² (MAD-Bayes Eq. 9), a function of b's
//! count and mean alone. A cluster that no move, merge or split has touched since a row was
//! scored against it holds the same count and the same bits of its mean, so the row's cost
//! of joining it is the same to the bit. A row's memo keeps the cheapest few costs of its
//! last full search and a floor under the costs of all the others; the [`ChangeLog`] lists
//! the slots touched since. Scoring the touched slots and reading the rest from the memo
//! then decides the row exactly whenever the cheapest option found is below the floor
//! (`Partition::sweep`, which falls back to the full search otherwise).
//!
//! Late in a descent only a few clusters change per sweep. Where a sweep has more cluster
//! slots than the table of distances between means is kept for, every row that its bounds
//! do not settle would be scored against every live cluster; with a table, the dense search
//! scores them all too, and the walk of the table's lists scores those its triangle bounds
//! leave (the floor then also lies under each passed cluster's bound on its cost).

/// How many of the cheapest other clusters a [`RowMemo`] keeps.
pub(super) const MEMO_KEPT: usize = 3;

/// The slots touched (a count or a mean changed, including an emptied or reused slot), in
/// order. The epoch is the number of touches so far; a slot's stamp is the epoch just after
/// its last touch.
#[derive(Default)]
pub(super) struct ChangeLog {
    /// Per slot: the epoch just after its last touch (0: never touched).
    stamp: Vec<u64>,
    /// Every touch, in order.
    log: Vec<u32>,
}

impl ChangeLog {
    /// Slot j changed.
    pub fn touch(&mut self, j: usize) {
        if self.stamp.len() <= j {
            self.stamp.resize(j + 1, 0);
        }
        self.log.push(j as u32);
        self.stamp[j] = self.log.len() as u64;
    }

    /// The touches so far.
    pub fn epoch(&self) -> u64 {
        self.log.len() as u64
    }

    /// Whether slot j has been touched after epoch `since`.
    pub fn touched_after(&self, j: usize, since: u64) -> bool {
        self.stamp.get(j).is_some_and(|&s| s > since)
    }

    /// The slots touched after epoch `since`, each once (in the order of their last touch).
    pub fn since(&self, since: u64) -> impl Iterator<Item = usize> + '_ {
        let from = since as usize;
        self.log[from..]
            .iter()
            .enumerate()
            .filter(move |&(i, &j)| self.stamp[j as usize] == (from + i + 1) as u64)
            .map(|(_, &j)| j as usize)
    }
}

/// One row's memo: the squared distances to its [`MEMO_KEPT`] cheapest other clusters when
/// last scored (cheapest first by cost, ties to the lower slot), and a floor under the cost
/// of every other cluster not touched since, all as of epoch `epoch`.
#[derive(Clone, Copy)]
pub(super) struct RowMemo {
    pub epoch: u64,
    pub kept: [(f64, u32); MEMO_KEPT],
    pub floor: f64,
}

/// No slot in a place of [`RowMemo::kept`].
pub(super) const NO_SLOT: u32 = u32::MAX;

impl RowMemo {
    /// No memo: every search is full.
    pub const NONE: RowMemo = RowMemo {
        epoch: u64::MAX,
        kept: [(f64::INFINITY, NO_SLOT); MEMO_KEPT],
        floor: f64::NEG_INFINITY,
    };
}

/// The cheapest [`MEMO_KEPT`] of the costs offered, in (cost, slot) order, and the smallest
/// cost of those not kept: a new [`RowMemo`] as its search goes. One more than the kept are
/// held, the last place's cost being that smallest one, so that most offers, dearer than
/// all of them, cost one comparison.
pub(super) struct Cheapest {
    /// (cost, squared distance, slot), cheapest first.
    held: [(f64, f64, u32); MEMO_KEPT + 1],
    /// A floor under the costs of clusters never offered.
    floor: f64,
}

impl Cheapest {
    /// Starts with nothing held, under `floor` (+∞ for a full search; the old memo's floor
    /// when the untouched clusters not kept are known only by it).
    pub fn new(floor: f64) -> Self {
        Self {
            held: [(f64::INFINITY, f64::INFINITY, NO_SLOT); MEMO_KEPT + 1],
            floor,
        }
    }

    /// Offers slot b at squared distance `dist` and cost `cost`.
    #[inline]
    pub fn offer(&mut self, b: usize, cost: f64, dist: f64) {
        if cost > self.held[MEMO_KEPT].0 {
            return;
        }
        let new = (cost, dist, b as u32);
        let before =
            |p: &(f64, f64, u32), q: &(f64, f64, u32)| p.0 < q.0 || (p.0 == q.0 && p.2 < q.2);
        if !before(&new, &self.held[MEMO_KEPT]) {
            return;
        }
        let mut i = MEMO_KEPT;
        while i > 0 && before(&new, &self.held[i - 1]) {
            self.held[i] = self.held[i - 1];
            i -= 1;
        }
        self.held[i] = new;
    }

    /// Lowers the floor to `cost`, a lower bound on the cost of a cluster never offered.
    pub fn lower_floor(&mut self, cost: f64) {
        self.floor = self.floor.min(cost);
    }

    /// The held clusters, cheapest first: (cost, squared distance, slot).
    pub fn held(&self) -> impl Iterator<Item = (f64, f64, usize)> + '_ {
        self.held
            .iter()
            .filter(|h| h.2 != NO_SLOT)
            .map(|&(cost, dist, b)| (cost, dist, b as usize))
    }

    /// A floor under the cost of every cluster not held: the last held one's, or the
    /// floor it started under if lower.
    pub fn floor(&self) -> f64 {
        self.floor.min(self.held[MEMO_KEPT].0)
    }

    /// The memo of a search made at `epoch`: the cheapest `keep` (at most [`MEMO_KEPT`];
    /// fewer in the tests, where a low floor decides often), the next one's cost as the
    /// floor (or the floor it started under, if lower).
    pub fn memo(&self, epoch: u64, keep: usize) -> RowMemo {
        RowMemo {
            epoch,
            kept: std::array::from_fn(|i| match i < keep {
                true => (self.held[i].1, self.held[i].2),
                false => (f64::INFINITY, NO_SLOT),
            }),
            floor: self.floor.min(self.held[keep].0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots touched since an epoch, once each, in the order of their last touch; none
    /// before the first touch. Fails if a slot touched twice is listed twice or dropped.
    #[test]
    fn the_log_lists_each_slot_touched_since_once() {
        let mut log = ChangeLog::default();
        for j in [4, 1, 4, 7, 1, 2] {
            log.touch(j);
        }
        assert_eq!(log.epoch(), 6);
        assert_eq!(log.since(0).collect::<Vec<_>>(), vec![4, 7, 1, 2]);
        assert_eq!(log.since(2).collect::<Vec<_>>(), vec![4, 7, 1, 2]);
        assert_eq!(log.since(3).collect::<Vec<_>>(), vec![7, 1, 2]);
        assert_eq!(log.since(6).count(), 0);
        assert!(log.touched_after(1, 4) && !log.touched_after(4, 3));
        assert!(!log.touched_after(3, 0) && !log.touched_after(99, 0));
    }

    /// The kept three are the cheapest by (cost, slot) and the floor the cheapest of the
    /// rest, whatever order the offers come in. Fails if a tie goes to the higher slot or
    /// an evicted cost is not counted in the floor.
    #[test]
    fn the_cheapest_are_kept_and_the_rest_floored() {
        let offers = [(5, 3.0), (2, 1.0), (9, 3.0), (1, 3.0), (7, 0.5), (3, 4.0)];
        for rot in 0..offers.len() {
            let mut c = Cheapest::new(f64::INFINITY);
            for i in 0..offers.len() {
                let (b, cost) = offers[(i + rot) % offers.len()];
                c.offer(b, cost, 10.0 * cost);
            }
            let memo = c.memo(8, MEMO_KEPT);
            assert_eq!(
                memo.kept,
                [(5.0, 7), (10.0, 2), (30.0, 1)],
                "rotation {rot}"
            );
            assert_eq!(memo.floor, 3.0, "rotation {rot}");
        }
        let mut c = Cheapest::new(2.0);
        c.offer(0, 1.0, 1.0);
        assert_eq!(c.memo(0, MEMO_KEPT).floor, 2.0);
        assert_eq!(c.memo(0, MEMO_KEPT).kept[1], (f64::INFINITY, NO_SLOT));
    }
}
