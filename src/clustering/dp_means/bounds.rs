//! The nearest starting mean of every row for DP-means' base passes, with bounds kept across
//! sweeps so that most rows need no search: Hamerly's test (`crate::clustering::mean_shifts`)
//! on a lower bound per *group* of means, in the manner of Yinyang K-means (Ding et al.,
//! "Yinyang K-means: a drop-in replacement of the classic K-means with consistent speedup",
//! ICML 2015).
//!
//! The means are split into G groups (a few K-means iterations on the means themselves). Each
//! row keeps, for every group g, a lower bound ℓ_g on its distance to every mean of g but its
//! own, and one bound ℓ on all of them; when the means move, ℓ_g drops by the largest shift in
//! g and ℓ by the largest of all. The drops are summed per pass and applied to a row only when
//! it is looked at. A row is kept without a search when its direct distance to its own mean
//! is below ℓ (or below half the distance from its mean to the nearest other), else below
//! every ℓ_g; otherwise only the groups whose bound fails are measured, directly, and their
//! bounds renewed. When most of the means would be measured, or the bounds are new, the row
//! goes to the GEMM screen, whose products renew every ℓ_g.
//!
//! Every test has a margin for rounding, so the labels and distances are those of the direct
//! search over all means (ties to the lowest index), bit for bit.

use crate::clustering::mean_shifts::{SLACK, keeps_own};
use crate::linalg::{
    Nearest, ROWS_AHEAD, SCREEN_ROWS, axpy, prefetch, screened_nearest, screened_nearest_with,
    sq_dist, sq_dist4, sq_dists_to,
};
use crate::{MatrixView, RowMatrix};
use std::sync::Mutex;

/// How many rows ahead the group bounds of a row that the one-bound test will not keep are
/// asked for. Those bounds (G values a row, 50 MB for 200 000 rows at G = 31) are read only
/// for the rows that test leaves open, so the hardware's stride prefetch misses them. Measured
/// on 200 000 × 50 blobs, P = 150, one `--plain` run: 3.47–3.66 s before, 3.39–3.53 s at
/// 4, 8 or 16 rows ahead (docs/speed.md §4).
const GROUPS_AHEAD: usize = 8;

/// Means per group, about (Yinyang K-means takes K/10).
const MEANS_PER_GROUP: usize = 10;

/// Most groups: the bounds take G values per row.
const MAX_GROUPS: usize = 64;

/// Most bound values kept in all (N·G ≤ this, 64 MiB).
const MAX_BOUNDS: usize = 1 << 23;

/// A row whose failing groups hold at most 1/`LOCAL_SHARE` of the means measures them
/// directly; else it goes to the GEMM screen (a distance by GEMM costs a few times less).
const LOCAL_SHARE: usize = 6;

/// K-means iterations that group the means.
const GROUPING_ITERATIONS: usize = 5;

/// Per-row bounds against groups of means, kept across the sweeps of one run.
pub(super) struct GroupBounds {
    /// The group of each mean, and each group's means in index order.
    group_of: Vec<usize>,
    members: Vec<Vec<usize>>,
    /// Where each group's means start in the means' group order ([`Self::grouped`]).
    starts: Vec<usize>,
    /// Rows per block (the base pass's blocks, each mapped by one thread at a time).
    block: usize,
    /// Per block, the rows' bounds.
    rows: Vec<Mutex<BlockBounds>>,
    /// The passes since the bounds were renewed for all rows (0 for that pass), and for each,
    /// the sum of the largest shifts in each group since then (`passes × G`, row-major) and of
    /// the largest shifts of all.
    passes: usize,
    drift: Vec<f64>,
    drift_all: Vec<f64>,
    valid: bool,
}

/// The bounds of one block's rows.
#[derive(Default)]
struct BlockBounds {
    /// `rows × G` lower bounds ℓ_g, row-major.
    groups: Vec<f64>,
    /// The lower bound ℓ on the distance to every mean but the own.
    all: Vec<f64>,
    /// The pass at which each row's bounds held as stored.
    since: Vec<u32>,
}

/// The bound of a group with no mean other than the row's own: finite, so that lowering it
/// needs no branch, and its square still far above any distance.
const NO_MEAN: f64 = 1e150;

/// A lower bound `lower` after the means moved by at most `drift` (summed shifts) since it
/// held, less its rounding (no branch, so the loop over groups vectorises).
#[inline(always)]
fn lowered(lower: f64, drift: f64) -> f64 {
    lower - drift - SLACK * (lower + drift)
}

impl GroupBounds {
    /// No bounds yet for `n` rows in blocks of `block`.
    pub fn new(n: usize, block: usize) -> Self {
        GroupBounds {
            group_of: Vec::new(),
            members: Vec::new(),
            starts: Vec::new(),
            block,
            rows: (0..n.div_ceil(block.max(1)))
                .map(|_| Mutex::new(BlockBounds::default()))
                .collect(),
            passes: 0,
            drift: Vec::new(),
            drift_all: Vec::new(),
            valid: false,
        }
    }

    /// Forgets every bound (the means changed in a way no shift describes).
    pub fn reset(&mut self) {
        self.valid = false;
    }

    /// Before a base pass against `means`: when the bounds are not valid, groups the means
    /// and lets the pass renew every row's bounds by the GEMM screen.
    pub fn prepare(&mut self, means: &RowMatrix, n: usize) {
        if self.valid {
            return;
        }
        let k = means.n_rows();
        let groups = k
            .div_ceil(MEANS_PER_GROUP)
            .clamp(1, MAX_GROUPS)
            .min((MAX_BOUNDS / n.max(1)).max(1));
        self.set_groups(group_means(means, groups), groups);
        self.passes = 0;
        self.drift = vec![0.0; groups];
        self.drift_all = vec![0.0];
        for (b, block) in self.rows.iter().enumerate() {
            let rows = self.block.min(n - b * self.block);
            let mut block = block.lock().expect("block lock");
            block.groups.clear();
            block.groups.resize(rows * groups, 0.0);
            block.all.clear();
            block.all.resize(rows, 0.0);
            block.since.clear();
            block.since.resize(rows, 0);
        }
    }

    /// After the means moved from `old` to `new` (same K; the means not `used` are about to be
    /// removed, so their shifts do not count).
    pub fn moved(&mut self, old: &RowMatrix, new: &RowMatrix, used: &[bool]) {
        let inflate = 1.0 + SLACK + (new.n_cols() + 4) as f64 * f64::EPSILON;
        let groups = self.members.len();
        let mut shift = vec![0.0f64; groups];
        for j in (0..new.n_rows()).filter(|&j| used[j]) {
            let s = sq_dist(old.row(j), new.row(j)).sqrt() * inflate;
            let g = self.group_of[j];
            shift[g] = shift[g].max(s);
        }
        // Sums rounded up by far more than their rounding (a few u per pass).
        let up = 1.0 + SLACK;
        let last = self.passes * groups;
        for g in 0..groups {
            let sum = (self.drift[last + g] + shift[g]) * up;
            self.drift.push(sum);
        }
        let max = shift.iter().copied().fold(0.0, f64::max);
        self.drift_all
            .push((self.drift_all[self.passes] + max) * up);
        self.passes += 1;
        self.valid = true;
    }

    /// Keeps the means that are `used`, in order (the others were removed).
    pub fn retain(&mut self, used: &[bool]) {
        let kept = (self.group_of.iter().zip(used))
            .filter(|&(_, &u)| u)
            .map(|(&g, _)| g)
            .collect();
        self.set_groups(kept, self.members.len());
    }

    /// The group of each mean, and from it each group's means.
    fn set_groups(&mut self, group_of: Vec<usize>, groups: usize) {
        self.members = vec![Vec::new(); groups];
        for (j, &g) in group_of.iter().enumerate() {
            self.members[g].push(j);
        }
        self.starts = std::iter::once(0)
            .chain(self.members.iter().scan(0, |end, m| {
                *end += m.len();
                Some(*end)
            }))
            .collect();
        self.group_of = group_of;
    }

    /// `means` in group order: group 0's means in index order, then group 1's, and so on, so
    /// that a group's distances are measured several means at a time from contiguous rows.
    pub fn grouped(&self, means: &RowMatrix) -> RowMatrix {
        let mut out = RowMatrix::zeros(0, means.n_cols());
        for &j in self.members.iter().flatten() {
            out.push_row(means.row(j));
        }
        out
    }
}

/// Splits the means into `groups` groups by a few K-means iterations over the means (seeds
/// evenly spaced by index, direct distances, ties to the lowest index): the group of each.
fn group_means(means: &RowMatrix, groups: usize) -> Vec<usize> {
    let (k, d) = (means.n_rows(), means.n_cols());
    let mut centres = RowMatrix::from_rows(
        &(0..groups)
            .map(|g| means.row(g * k / groups).to_vec())
            .collect::<Vec<_>>(),
    );
    let mut group_of = vec![0; k];
    for _ in 0..GROUPING_ITERATIONS {
        for (j, g) in group_of.iter_mut().enumerate() {
            *g = (0..groups)
                .map(|c| (c, sq_dist(means.row(j), centres.row(c))))
                .fold((0, f64::INFINITY), |b, c| if c.1 < b.1 { c } else { b })
                .0;
        }
        let mut sums = RowMatrix::zeros(groups, d);
        let mut counts = vec![0usize; groups];
        for (j, &g) in group_of.iter().enumerate() {
            axpy(1.0, means.row(j), sums.row_mut(g));
            counts[g] += 1;
        }
        for g in (0..groups).filter(|&g| counts[g] > 0) {
            let inv = 1.0 / counts[g] as f64;
            centres
                .row_mut(g)
                .iter_mut()
                .zip(sums.row(g))
                .for_each(|(c, s)| *c = s * inv);
        }
    }
    group_of
}

/// What a base pass needs of the bounds: the groups' bounds, the means in group order
/// ([`GroupBounds::grouped`]), every row's label (a starting mean) and half the distance from
/// each starting mean to its nearest other.
pub(super) struct Kept<'a> {
    pub bounds: &'a GroupBounds,
    pub grouped: &'a RowMatrix,
    pub labels: &'a [usize],
    pub half_gap: &'a [f64],
}

/// The nearest of `means` (squared norms `m_norms`) for rows `s..e` of `x` (block `b`), into
/// `nearest`: by `kept`'s bounds where they prove it, else by direct distances to the groups
/// whose bounds fail, else by the GEMM screen (every row, without `kept`). Rows are settled in
/// runs of consecutive rows, in order; `settled(c, f)` is called after rows `c..f` are, while
/// they are still in cache. Returns how many distances to means were measured (K for a
/// screened row, one for a kept row).
pub(super) fn nearest_in_block(
    x: MatrixView<'_>,
    (b, s, e): (usize, usize, usize),
    means: &RowMatrix,
    m_norms: &[f64],
    kept: Option<&Kept<'_>>,
    nearest: &mut [Nearest],
    mut settled: impl FnMut(usize, usize, &[Nearest]),
) -> usize {
    let mut prod = Vec::new();
    let Some(kept) = kept else {
        // No bounds: every row to the screen, straight from `x`.
        screened_nearest(x.rows_view(s, e), means.view(), m_norms, |j, _, best| {
            let best = best.expect("at least one mean");
            nearest[j] = Nearest {
                label: best.label,
                dist: best.dist,
            };
        });
        settled(s, e, nearest);
        return (e - s) * means.n_rows();
    };
    let (k, d) = (means.n_rows(), means.n_cols());
    let mut rows = kept.bounds.rows[b].lock().expect("block lock");
    let groups = kept.bounds.members.len();
    let mut screened = Vec::with_capacity(SCREEN_ROWS);
    let mut gathered = Vec::with_capacity(SCREEN_ROWS * d);
    // The screen's lower bounds on a row's squared distance to every mean.
    let mut above = vec![0.0; k];
    let mut found = Vec::with_capacity(groups);
    let mut group_dists = Vec::new();
    let mut own = Vec::with_capacity(SCREEN_ROWS);
    let mut measured = 0;
    for c in (s..e).step_by(SCREEN_ROWS) {
        let f = (c + SCREEN_ROWS).min(e);
        screened.clear();
        gathered.clear();
        if kept.bounds.valid {
            own_distances(x, c..f, means, kept.labels, &mut own);
        }
        for i in c..f {
            if kept.bounds.valid {
                // The row GROUPS_AHEAD on: its group bounds are fetched now when its one bound
                // will not keep it (the test of `row_by_bounds`, repeated).
                let j = i + GROUPS_AHEAD;
                if j < f {
                    let bounds = kept.bounds;
                    let (rj, now) = (j - s, bounds.passes);
                    let since = rows.since[rj] as usize;
                    let all = lowered(
                        rows.all[rj],
                        bounds.drift_all[now] - bounds.drift_all[since],
                    );
                    if !keeps_own(own[j - c], all.max(kept.half_gap[kept.labels[j]]), d) {
                        prefetch(&rows.groups[rj * groups..(rj + 1) * groups]);
                    }
                }
                let scratch = (&mut found, &mut group_dists);
                let dist = own[i - c];
                match row_by_bounds(x.row(i), dist, i, i - s, means, kept, &mut rows, scratch) {
                    ByBounds::Kept(best) => {
                        nearest[i - s] = best;
                        measured += 1;
                        continue;
                    }
                    ByBounds::Searched(best, count) => {
                        nearest[i - s] = best;
                        measured += 1 + count;
                        continue;
                    }
                    ByBounds::ToScreen => {}
                }
            }
            measured += k;
            screened.push(i);
            gathered.extend_from_slice(x.row(i));
        }
        let batch = MatrixView::new(&gathered, screened.len(), d).expect("gathered whole rows");
        screened_nearest_with(
            batch,
            means.view(),
            m_norms,
            &mut prod,
            |j, _, best, screen| {
                let best = best.expect("at least one mean");
                let r = screened[j] - s;
                nearest[r] = Nearest {
                    label: best.label,
                    dist: best.dist,
                };
                // Every group's bound from the screen's.
                screen.dists_above(&mut above);
                let lb = &mut rows.groups[r * groups..(r + 1) * groups];
                for (l, members) in lb.iter_mut().zip(&kept.bounds.members) {
                    let mut low = f64::INFINITY;
                    for &m in members.iter().filter(|&&m| m != best.label) {
                        low = if above[m] < low { above[m] } else { low };
                    }
                    *l = (low.sqrt() * (1.0 - SLACK)).min(NO_MEAN);
                }
                rows.all[r] = smallest(lb);
                rows.since[r] = kept.bounds.passes as u32;
            },
        );
        settled(c, f, &nearest[c - s..f - s]);
    }
    measured
}

/// The direct squared distance of each row `i` in `rows` to its own mean `labels[i]`, into
/// `out` (one per row, in order): [`sq_dist`]'s bits, four rows at a time, each row asked
/// for [`ROWS_AHEAD`] rows before it is read.
fn own_distances(
    x: MatrixView<'_>,
    rows: std::ops::Range<usize>,
    means: &RowMatrix,
    labels: &[usize],
    out: &mut Vec<f64>,
) {
    out.clear();
    let pair = |i: usize| (x.row(i), means.row(labels[i]));
    let mut i = rows.start;
    while i + 4 <= rows.end {
        for a in (i + ROWS_AHEAD..i + ROWS_AHEAD + 4).filter(|&a| a < rows.end) {
            prefetch(x.row(a));
        }
        let p = [pair(i), pair(i + 1), pair(i + 2), pair(i + 3)];
        out.extend(sq_dist4(p.map(|p| p.0), p.map(|p| p.1)));
        i += 4;
    }
    out.extend((i..rows.end).map(|i| sq_dist(pair(i).0, pair(i).1)));
}

/// What the bounds settle for one row.
enum ByBounds {
    /// Its own mean, by the bounds alone.
    Kept(Nearest),
    /// Its nearest mean, measuring directly the groups whose bounds fail (that many means).
    Searched(Nearest, usize),
    /// Too many means to measure directly: the GEMM screen's job.
    ToScreen,
}

/// Scratch space of [`search_groups`]: each searched group's nearest two, and one group's
/// distances.
type Scratch<'s> = (&'s mut Vec<(usize, f64, usize, f64)>, &'s mut Vec<f64>);

/// Row `x` (index `i` in the data, `r` in its block), whose direct squared distance to its own
/// mean is `dist`, by its bounds in `rows`, which are brought up to this pass and renewed where
/// measured.
#[allow(clippy::too_many_arguments)]
fn row_by_bounds(
    x: &[f64],
    dist: f64,
    i: usize,
    r: usize,
    means: &RowMatrix,
    kept: &Kept<'_>,
    rows: &mut BlockBounds,
    scratch: Scratch<'_>,
) -> ByBounds {
    let bounds = kept.bounds;
    let (k, d, groups, now) = (
        means.n_rows(),
        means.n_cols(),
        bounds.members.len(),
        bounds.passes,
    );
    let own = kept.labels[i];
    let since = rows.since[r] as usize;
    let all = lowered(rows.all[r], bounds.drift_all[now] - bounds.drift_all[since]);
    if keeps_own(dist, all.max(kept.half_gap[own]), d) {
        return ByBounds::Kept(Nearest { label: own, dist });
    }
    // The groups' bounds, brought up to this pass.
    let lb = &mut rows.groups[r * groups..(r + 1) * groups];
    let drift_now = &bounds.drift[now * groups..(now + 1) * groups];
    let drift_then = &bounds.drift[since * groups..(since + 1) * groups];
    for ((l, &a), &b) in lb.iter_mut().zip(drift_now).zip(drift_then) {
        *l = lowered(*l, a - b);
    }
    rows.since[r] = now as u32;
    let least = smallest(lb);
    if keeps_own(dist, least, d) {
        rows.all[r] = least;
        return ByBounds::Kept(Nearest { label: own, dist });
    }
    let failing: usize = (0..groups)
        .filter(|&g| !keeps_own(dist, lb[g], d))
        .map(|g| bounds.members[g].len())
        .sum();
    if LOCAL_SHARE * failing > k {
        return ByBounds::ToScreen;
    }
    let best = search_groups(x, kept, own, dist, lb, scratch);
    rows.all[r] = smallest(lb);
    ByBounds::Searched(best, failing)
}

/// The smallest of `values` (at most [`NO_MEAN`]), in four independent running minima that
/// the compiler keeps in vector registers.
#[inline(always)]
fn smallest(values: &[f64]) -> f64 {
    let mut lanes = [NO_MEAN; 4];
    let chunks = values.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..4 {
            lanes[l] = if c[l] < lanes[l] { c[l] } else { lanes[l] };
        }
    }
    let mut least = lanes.iter().copied().fold(NO_MEAN, f64::min);
    for &v in tail {
        least = least.min(v);
    }
    least
}

/// The nearest mean of row `x`, whose own mean `own` is `dist` away, measuring directly only
/// the groups whose bound `lb` fails (the others are provably farther than `own`), and the
/// bounds renewed.
fn search_groups(
    x: &[f64],
    kept: &Kept<'_>,
    own: usize,
    dist: f64,
    lb: &mut [f64],
    (found, dists): Scratch<'_>,
) -> Nearest {
    let d = x.len();
    let (members, starts) = (&kept.bounds.members, &kept.bounds.starts);
    let mut best = Nearest { label: own, dist };
    found.clear();
    for g in (0..lb.len()).filter(|&g| !keeps_own(dist, lb[g], d)) {
        let (mut first, mut at, mut second) = (f64::INFINITY, usize::MAX, f64::INFINITY);
        // The group's means are contiguous in `grouped`, in index order: their distances four
        // at a time (each with `sq_dist`'s bits).
        dists.resize(members[g].len(), 0.0);
        let rows = kept.grouped.rows_slice(starts[g], starts[g + 1]);
        sq_dists_to(rows, x, dists);
        for (&m, &dm) in members[g]
            .iter()
            .zip(dists.iter())
            .filter(|&(&m, _)| m != own)
        {
            if dm < first {
                (second, first, at) = (first, dm, m);
            } else if dm < second {
                second = dm;
            }
            if dm < best.dist || (dm == best.dist && m < best.label) {
                best = Nearest { label: m, dist: dm };
            }
        }
        found.push((g, first, at, second));
    }
    let shrink = 1.0 - SLACK;
    for &(g, first, at, second) in found.iter() {
        let other = if at == best.label { second } else { first };
        lb[g] = (other.sqrt() * shrink).min(NO_MEAN);
    }
    if best.label != own {
        // The former own mean is now one of the others of its group.
        let g = kept.bounds.group_of[own];
        lb[g] = lb[g].min(dist.sqrt() * shrink);
    }
    best
}
