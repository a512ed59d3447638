//! The refinement by groups of clusters that do not trade rows: each group descends on its
//! own rows, the groups side by side, and one descent over all rows finishes from where the
//! groups ended unless a check proves there is nothing left for it to do.
//!
//! Two clusters are linked unless bounds from their means, radii and sizes prove that
//! neither can take a row from the other and that merging them cannot pay ([`apart`]); the
//! groups are the connected parts of that graph, found once, from the clustering the
//! refinement starts from. A row has no reason to join a cluster of another group, so each
//! group's descent (the exact moves, merges and splits of [`descend`], on the group's rows,
//! copied together while it runs) makes the moves the whole descent would, on data that fit
//! in cache; and a group can be descended from several row orders, the best end kept, which
//! a whole descent cannot do group by group. Which moves a group makes depends on its rows,
//! its clusters and the try alone, so the result is the same for any number of threads.

use super::run::{Descent, DescentConfig, descend};
use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::objective::cluster_means;
use crate::linalg::{sq_dist, sq_dists_from};
use rayon::prelude::*;

/// The groups of the clusters of `labels` (values below `k`): each group its clusters in
/// increasing order, the groups in the order of their first cluster; empty clusters belong
/// to none.
///
/// Two clusters are linked unless [`apart`] proves they are; the groups are the connected
/// parts. Not every pair is scored: the clusters are covered by a few anchors ([`Cover`]),
/// and two anchors' members are passed over together when the triangle inequality puts
/// every pair of them farther apart than [`reach`] allows a link; and a pair already in
/// one part is not scored, since its link would change no part. The parts are those of
/// scoring every pair. On 200 000 × 50 blobs the paper's run hands 5 484 clusters to the
/// refinement at P = 100 and 152 163 at P = 50, where scoring every pair would take
/// 1.5·10⁷ and 1.2·10¹⁰ distances (docs/speed.md §4).
pub(crate) fn cluster_groups(
    x: MatrixView<'_>,
    labels: &[usize],
    k: usize,
    penalty: f64,
) -> Vec<Vec<usize>> {
    groups_with_anchors(x, labels, k, penalty, COVER_MAX_ANCHORS)
}

/// [`cluster_groups`] with at most `max_anchors` anchors (at least one).
fn groups_with_anchors(
    x: MatrixView<'_>,
    labels: &[usize],
    k: usize,
    penalty: f64,
    max_anchors: usize,
) -> Vec<Vec<usize>> {
    let means = cluster_means(x, labels, k);
    let (radius, count) = radii(x, labels, &means);
    let stay = stay_costs(&radius, &count, penalty);
    let live: Vec<usize> = (0..k).filter(|&c| count[c] > 0).collect();
    let reaches: Vec<f64> = (0..k).map(|c| reach(radius[c], stay[c], penalty)).collect();
    let cover = Cover::new(&means, &live, &reaches, penalty, max_anchors);
    let side = |c: usize| Side {
        members: count[c] as f64,
        radius: radius[c],
        stay: stay[c],
    };
    let mut parent: Vec<usize> = (0..k).collect();
    for i in 0..cover.anchors.len() {
        for j in i..cover.anchors.len() {
            if cover.apart(i, j, &means) {
                continue;
            }
            for (ia, &a) in cover.members[i].iter().enumerate() {
                let others = if i == j {
                    &cover.members[j][ia + 1..]
                } else {
                    &cover.members[j][..]
                };
                // The pairs of a with others not yet in its part, scored eight at a time;
                // a pair whose two sides have joined meanwhile links nothing new.
                let mut batch = [0usize; 8];
                let mut len = 0;
                let link = |parent: &mut [usize], batch: &[usize]| {
                    let dists = distances_to(&means, a, batch);
                    for (&b, &sq) in batch.iter().zip(&dists) {
                        let (lo, hi) = (a.min(b), a.max(b));
                        if !apart(sq.sqrt(), side(lo), side(hi), penalty) {
                            let (ra, rb) = (root(parent, a), root(parent, b));
                            parent[ra.max(rb)] = ra.min(rb);
                        }
                    }
                };
                for &b in others {
                    if root(&mut parent, a) == root(&mut parent, b) {
                        continue;
                    }
                    batch[len] = b;
                    len += 1;
                    if len == 8 {
                        link(&mut parent, &batch);
                        len = 0;
                    }
                }
                link(&mut parent, &batch[..len]);
            }
        }
    }
    parts(&mut parent, &live)
}

/// ‖x̄_a − x̄_b‖² for each b of `others` (at most eight): eight at once by
/// [`sq_dists_from`], fewer one by one, the bits of [`sq_dist`] either way (and in either
/// order of a pair, as the differences only change sign).
fn distances_to(means: &RowMatrix, a: usize, others: &[usize]) -> [f64; 8] {
    let from = means.row(a);
    if let Ok(b) = <[usize; 8]>::try_from(others) {
        return sq_dists_from(from, b.map(|b| means.row(b)));
    }
    let mut out = [0.0; 8];
    for (o, &b) in out.iter_mut().zip(others) {
        *o = sq_dist(from, means.row(b));
    }
    out
}

/// The parts of a union-find forest over the clusters, of the clusters `live` (in increasing
/// order): each part its clusters in that order, the parts in the order of their first.
fn parts(parent: &mut [usize], live: &[usize]) -> Vec<Vec<usize>> {
    let mut index = vec![usize::MAX; parent.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &c in live {
        let r = root(parent, c);
        if index[r] == usize::MAX {
            index[r] = groups.len();
            groups.push(Vec::new());
        }
        groups[index[r]].push(c);
    }
    groups
}

/// A distance beyond which a cluster of radius r and stay S (see [`Side`]) is [`apart`] from
/// any other whatever the other's size, radius and stay:
/// max(√(2P′), r + √(2S′)), with P′ and S′ the bounds of [`apart`]'s comparisons. Every
/// weight there is at least ½ (clusters have a member), so at a distance δ above it the merge
/// costs at least δ²/2 > P′, and a move out of the cluster at least (δ − r)²/2 > S′; the
/// move into it is the other cluster's, bounded by the other's reach. So two clusters
/// farther apart than the larger of their reaches are apart.
fn reach(radius: f64, stay: f64, penalty: f64) -> f64 {
    let bound = |v: f64| v * (1.0 + MARGIN) + MARGIN;
    (2.0 * bound(penalty))
        .sqrt()
        .max(radius + (2.0 * bound(stay)).sqrt())
}

/// Anchors that cover the live clusters' means: the anchors are means picked farthest
/// first (Gonzalez 1985: each next anchor the mean farthest from every anchor so far,
/// the lowest index on a tie, starting from the first live cluster), each mean a member of
/// its nearest anchor (the first on a tie). Anchors are added until every mean lies within
/// ½√(2P′) of its anchor, half the least reach there can be, or there are
/// [`COVER_MAX_ANCHORS`] (in tests, fewer). Blobs far apart get anchors of their own before
/// any gets two.
struct Cover {
    /// The anchors' clusters.
    anchors: Vec<usize>,
    /// Each anchor's members, in increasing order (the anchor among them).
    members: Vec<Vec<usize>>,
    /// The largest distance of a member from its anchor.
    spread: Vec<f64>,
    /// The largest reach among the anchor's members.
    reach: Vec<f64>,
}

/// Most anchors of a [`Cover`]: picking them scores every mean against every anchor.
const COVER_MAX_ANCHORS: usize = 1024;

impl Cover {
    fn new(
        means: &RowMatrix,
        live: &[usize],
        reaches: &[f64],
        penalty: f64,
        max_anchors: usize,
    ) -> Cover {
        let mut anchors: Vec<usize> = Vec::new();
        // Per live cluster: its anchor's index and its distance from it.
        let mut near = vec![(0usize, f64::INFINITY); live.len()];
        let enough = 0.5 * reach(0.0, 0.0, penalty);
        if let Some(&first) = live.first() {
            let mut next = first;
            while anchors.len() < max_anchors.max(1) {
                let a = anchors.len();
                anchors.push(next);
                let mut far = (0usize, f64::NEG_INFINITY);
                for (i, &c) in live.iter().enumerate() {
                    let d = sq_dist(means.row(c), means.row(next)).sqrt();
                    if d < near[i].1 {
                        near[i] = (a, d);
                    }
                    if near[i].1 > far.1 {
                        far = (i, near[i].1);
                    }
                }
                if far.1 <= enough {
                    break;
                }
                next = live[far.0];
            }
        }
        let mut members = vec![Vec::new(); anchors.len()];
        let mut spread = vec![0.0f64; anchors.len()];
        let mut most = vec![0.0f64; anchors.len()];
        for (i, &c) in live.iter().enumerate() {
            let (a, d) = near[i];
            members[a].push(c);
            spread[a] = spread[a].max(d);
            most[a] = most[a].max(reaches[c]);
        }
        Cover {
            anchors,
            members,
            spread,
            reach: most,
        }
    }

    /// Whether every member of anchor i is provably farther from every member of anchor j
    /// than the larger of their reaches: ‖a − b‖ ≥ ‖A − B‖ − s_A − s_B by the triangle
    /// inequality, with a margin of 10⁻⁹ of the distances for rounding.
    fn apart(&self, i: usize, j: usize, means: &RowMatrix) -> bool {
        if i == j {
            return false;
        }
        let between = sq_dist(means.row(self.anchors[i]), means.row(self.anchors[j])).sqrt();
        let (si, sj) = (self.spread[i], self.spread[j]);
        let floor = between - si - sj - MARGIN * (between + si + sj);
        floor > self.reach[i].max(self.reach[j]) * (1.0 + MARGIN)
    }
}

/// What [`apart`] needs of a cluster: its member count m, radius r (the largest distance
/// of a member from its mean) and the most a member costs to keep there (S, [`stay_costs`]).
#[derive(Clone, Copy)]
struct Side {
    members: f64,
    radius: f64,
    stay: f64,
}

/// Whether two clusters whose means lie `dist` apart provably cannot trade rows or merge
/// with profit. A row x of cluster a costs at most S_a to keep there, and joining b costs
/// at least m_b/(m_b + 1)·(dist − r_a)², so the move cannot pay when that is above S_a (and
/// the same from b to a); a merge changes J by m_a m_b/(m_a + m_b)·dist² − P. The
/// comparisons keep a margin of 10⁻⁹ of the costs for rounding.
fn apart(dist: f64, a: Side, b: Side, penalty: f64) -> bool {
    let above = |cost: f64, bound: f64| cost > bound * (1.0 + MARGIN) + MARGIN;
    let merge = a.members * b.members / (a.members + b.members) * dist * dist;
    let into_b = b.members / (b.members + 1.0) * (dist - a.radius).max(0.0).powi(2);
    let into_a = a.members / (a.members + 1.0) * (dist - b.radius).max(0.0).powi(2);
    above(merge, penalty) && above(into_b, a.stay) && above(into_a, b.stay)
}

/// The margin of [`apart`]'s comparisons, relative and absolute.
const MARGIN: f64 = 1e-9;

/// The most a member of each cluster costs to keep there: m/(m − 1)·r² (the drop in the sum
/// of squares if its farthest possible member left), or P for a cluster of one (its leaving
/// removes the cluster); 0 for an empty one.
fn stay_costs(radius: &[f64], count: &[usize], penalty: f64) -> Vec<f64> {
    radius
        .iter()
        .zip(count)
        .map(|(&r, &m)| match m {
            0 => 0.0,
            1 => penalty,
            m => m as f64 / (m as f64 - 1.0) * r * r,
        })
        .collect()
}

/// Each cluster's radius (the largest distance of a member from its mean in `means`) and
/// member count.
fn radii(x: MatrixView<'_>, labels: &[usize], means: &RowMatrix) -> (Vec<f64>, Vec<usize>) {
    let k = means.n_rows();
    let mut radius = vec![0.0f64; k];
    let mut count = vec![0usize; k];
    for (n, &c) in labels.iter().enumerate() {
        radius[c] = radius[c].max(sq_dist(x.row(n), means.row(c)));
        count[c] += 1;
    }
    (radius.into_iter().map(f64::sqrt).collect(), count)
}

/// The root of `a` in a union-find forest, halving the path on the way.
fn root(parent: &mut [usize], mut a: usize) -> usize {
    while parent[a] != a {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    a
}

/// Where the groups' descents ended.
pub(crate) struct GroupDescent {
    /// Labels of all rows: the clusters of the first group, then of the second, and so on.
    pub labels: Vec<usize>,
    pub k: usize,
    /// How many clusters each group ended with.
    pub sizes: Vec<usize>,
    /// After step s, the objective had every group made s + 1 sweeps of its kept try (a
    /// group that stopped keeps its last value); as many steps as the longest kept try.
    pub trace: Vec<f64>,
    /// Every kept try stopped because nothing paid, not at its sweep cap.
    pub converged: bool,
}

/// Descends each group on its own rows from `tries` row orders and keeps, per group, the
/// try that ends lowest (ties: the earlier try). Try t visits the group's rows in the order
/// they have in `order` rotated by t/`tries` of their number, backwards when t is odd: try 0
/// is the order itself. The groups' tries run side by side.
pub(crate) fn descend_groups(
    x: MatrixView<'_>,
    labels: &[usize],
    groups: &[Vec<usize>],
    order: &[usize],
    tries: usize,
    cfg: DescentConfig,
) -> GroupDescent {
    assert!(tries >= 1, "at least one try");
    let k = labels.iter().max().map_or(0, |&m| m + 1);
    let (mut group_of, mut local) = (vec![usize::MAX; k], vec![usize::MAX; k]);
    for (g, cs) in groups.iter().enumerate() {
        for (i, &c) in cs.iter().enumerate() {
            group_of[c] = g;
            local[c] = i;
        }
    }
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
    for &n in order {
        rows[group_of[labels[n]]].push(n);
    }
    let jobs: Vec<(usize, usize)> = (0..groups.len())
        .flat_map(|g| (0..tries).map(move |t| (g, t)))
        .collect();
    // Each try's labels come in the order of its group's rows in `order`.
    let ends: Vec<Descent> = jobs
        .par_iter()
        .map(|&(g, t)| {
            let (rs, k_g) = (&rows[g], groups[g].len());
            let visit = try_order(rs.len(), t, tries);
            if rs.len() == x.n_rows() {
                // One group of every row: the data themselves, no copy.
                let all = labels.iter().map(|&c| local[c]).collect();
                let visit: Vec<usize> = visit.into_iter().map(|i| rs[i]).collect();
                let end = descend(x, all, k_g, &visit, cfg);
                let labels = rs.iter().map(|&n| end.labels[n]).collect();
                return Descent { labels, ..end };
            }
            // The group's rows copied together, for the time of the try: row i is rs[i].
            let mut v = Vec::with_capacity(rs.len() * x.n_cols());
            for &n in rs {
                v.extend_from_slice(x.row(n));
            }
            let data = RowMatrix::new(rs.len(), x.n_cols(), v);
            let sub_labels = rs.iter().map(|&n| local[labels[n]]).collect();
            descend(data.view(), sub_labels, k_g, &visit, cfg)
        })
        .collect();
    // Per group, the try that ended lowest; the earlier on a tie.
    let mut ends = ends.into_iter();
    let kept: Vec<Descent> = (0..groups.len())
        .map(|_| {
            let mut best = ends.next().expect("one end per try");
            for end in ends.by_ref().take(tries - 1) {
                if last(&end) < last(&best) {
                    best = end;
                }
            }
            best
        })
        .collect();
    let mut out = vec![0usize; labels.len()];
    let mut offset = 0;
    let steps = kept.iter().map(|e| e.trace.len()).max();
    let mut trace = vec![0.0; steps.unwrap_or(0)];
    let mut converged = true;
    let mut sizes = Vec::with_capacity(kept.len());
    for (rs, end) in rows.iter().zip(&kept) {
        sizes.push(end.k);
        for (&n, &l) in rs.iter().zip(&end.labels) {
            out[n] = offset + l;
        }
        offset += end.k;
        for (s, t) in trace.iter_mut().enumerate() {
            *t += end.trace[s.min(end.trace.len() - 1)];
        }
        converged &= end.converged;
    }
    // Each group's objective counts K_g − 1 penalties, the whole K − 1.
    let extra = (groups.len() as f64 - 1.0) * cfg.penalty;
    for t in &mut trace {
        *t += extra;
    }
    GroupDescent {
        labels: out,
        k: offset,
        sizes,
        trace,
        converged,
    }
}

/// The objective a descent ended at by its own count.
fn last(d: &Descent) -> f64 {
    d.trace.last().copied().unwrap_or(f64::INFINITY)
}

/// The order of try `t` of `tries` over `n` rows (see [`descend_groups`]).
pub(crate) fn try_order(n: usize, t: usize, tries: usize) -> Vec<usize> {
    let shift = n * t / tries.max(1);
    let rotated = (0..n).map(|i| (i + shift) % n);
    if t % 2 == 1 {
        rotated.rev().collect()
    } else {
        rotated.collect()
    }
}

/// Whether no single-row move into a cluster of another group and no merge of two clusters
/// of different groups can lower the collapsed objective: then a state where every group's
/// descent ended (no move, merge or split pays inside it) is one where the whole descent
/// would end too. `labels` are a [`GroupDescent`]'s (the clusters of each group numbered
/// together); `sizes` how many clusters each group has.
///
/// Every pair of clusters of different groups must be [`apart`]. Pairs of groups far apart
/// are passed over together: every row and mean of group g lies within R_g of the group's
/// centre, so every distance across is at least ‖c_g − c_h‖ − R_g − R_h, and the weights
/// are at least ½.
pub(crate) fn settled_across(
    x: MatrixView<'_>,
    labels: &[usize],
    sizes: &[usize],
    penalty: f64,
) -> bool {
    let k: usize = sizes.iter().sum();
    let means = cluster_means(x, labels, k);
    let (radius, count) = radii(x, labels, &means);
    let stay = stay_costs(&radius, &count, penalty);
    let group_of: Vec<usize> = sizes
        .iter()
        .enumerate()
        .flat_map(|(g, &s)| std::iter::repeat_n(g, s))
        .collect();
    // Each group's centre (the mean of its rows), radius and costliest stay.
    let g_count = sizes.len();
    let row_groups: Vec<usize> = labels.iter().map(|&c| group_of[c]).collect();
    let centres = cluster_means(x, &row_groups, g_count);
    let (g_radius, _) = radii(x, &row_groups, &centres);
    let mut g_stay = vec![0.0f64; g_count];
    for c in 0..k {
        g_stay[group_of[c]] = g_stay[group_of[c]].max(stay[c]);
    }
    let starts: Vec<usize> = sizes
        .iter()
        .scan(0, |s, &n| {
            let start = *s;
            *s += n;
            Some(start)
        })
        .collect();
    let side = |c: usize| Side {
        members: count[c] as f64,
        radius: radius[c],
        stay: stay[c],
    };
    for g in 0..g_count {
        for h in g + 1..g_count {
            // Every distance across is at least `gap`, and every weight at least ½: the
            // bounds of [`apart`] for the two groups as a whole.
            let gap = sq_dist(centres.row(g), centres.row(h)).sqrt() - g_radius[g] - g_radius[h];
            let floor = 0.5 * gap.max(0.0).powi(2);
            if gap > 0.0 && floor > g_stay[g].max(g_stay[h]).max(penalty) * (1.0 + MARGIN) + MARGIN
            {
                continue;
            }
            for a in (starts[g]..starts[g] + sizes[g]).filter(|&a| count[a] > 0) {
                for b in (starts[h]..starts[h] + sizes[h]).filter(|&b| count[b] > 0) {
                    let dist = sq_dist(means.row(a), means.row(b)).sqrt();
                    if !apart(dist, side(a), side(b), penalty) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows around `centres`, `per` each, spread by `spread` on a fixed pattern.
    fn blobs(centres: &[[f64; 2]], per: usize, spread: f64) -> RowMatrix {
        let mut v = Vec::new();
        for c in centres {
            for i in 0..per {
                let angle = i as f64 * 2.399_963;
                let r = spread * ((i % 7) as f64 + 1.0) / 7.0;
                v.extend([c[0] + r * angle.cos(), c[1] + r * angle.sin()]);
            }
        }
        RowMatrix::new(centres.len() * per, 2, v)
    }

    /// Clusters that could trade rows share a group, through a chain too: 0 and 2 are
    /// apart, but both near 1. A far cluster is a group of its own, with the one-row cluster
    /// beside it: their balls do not touch, yet the rows of 4 nearest it would join it. An
    /// empty cluster is in no group. Fails if the link ignores the chain, or links by the
    /// balls alone.
    #[test]
    fn groups_are_the_parts_linked_by_possible_trades() {
        // Clusters 0, 1, 2 around x = 0, 1.5, 3 (radius 1), cluster 4 around x = 50, cluster 5
        // one row at x = 52; cluster 3 empty.
        let mut x = blobs(&[[0.0, 0.0], [1.5, 0.0], [3.0, 0.0], [50.0, 0.0]], 14, 1.0);
        x = RowMatrix::new(57, 2, [x.as_slice(), &[52.0, 0.0]].concat());
        let mut labels: Vec<usize> = (0..56).map(|n| [0, 1, 2, 4][n / 14]).collect();
        labels.push(5);
        let groups = cluster_groups(x.view(), &labels, 6, 5.0);
        assert_eq!(groups, vec![vec![0, 1, 2], vec![4, 5]]);
        // Without the chain's middle, 0 and 2 are groups of their own.
        let keep: Vec<usize> = (0..57).filter(|&n| labels[n] != 1).collect();
        let rows: Vec<f64> = keep.iter().flat_map(|&n| x.row(n).to_vec()).collect();
        let y = RowMatrix::new(keep.len(), 2, rows);
        let l: Vec<usize> = keep.iter().map(|&n| labels[n]).collect();
        assert_eq!(
            cluster_groups(y.view(), &l, 6, 5.0),
            vec![vec![0], vec![2], vec![4, 5]]
        );
    }

    /// The groups of every pair scored: the definition that [`cluster_groups`] must meet.
    fn groups_of_all_pairs(
        x: MatrixView<'_>,
        labels: &[usize],
        k: usize,
        penalty: f64,
    ) -> Vec<Vec<usize>> {
        let means = cluster_means(x, labels, k);
        let (radius, count) = radii(x, labels, &means);
        let stay = stay_costs(&radius, &count, penalty);
        let side = |c: usize| Side {
            members: count[c] as f64,
            radius: radius[c],
            stay: stay[c],
        };
        let mut parent: Vec<usize> = (0..k).collect();
        for a in (0..k).filter(|&a| count[a] > 0) {
            for b in (a + 1..k).filter(|&b| count[b] > 0) {
                let dist = sq_dist(means.row(a), means.row(b)).sqrt();
                if !apart(dist, side(a), side(b), penalty) {
                    let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                    parent[ra.max(rb)] = ra.min(rb);
                }
            }
        }
        let live: Vec<usize> = (0..k).filter(|&c| count[c] > 0).collect();
        parts(&mut parent, &live)
    }

    /// The anchors' shortcuts change no group: on blobs at several distances (some near
    /// enough to share a group, most not), split into clusters by the paper's run at three
    /// penalties and with some clusters emptied, the groups equal those of every pair
    /// scored, for 1 to 1 024 anchors. Asserts that the sets have several groups and that
    /// some anchor pairs were passed over. Fails if the reach leaves out the radius or the
    /// stay, if an anchor's spread is left out of the triangle bound, or if a pair is skipped
    /// for any reason other than those two.
    #[test]
    fn anchored_groups_are_those_of_every_pair() {
        use crate::clustering::dp_means::{dp_means_run, random_order};
        use crate::restarts::run_rng;
        let x = crate::generate::gaussian_blobs(1_500, 5, 14, 12.0, 1.0, 11).x;
        let mean = crate::linalg::mean_row(x.view());
        let mut several = 0;
        for (i, penalty) in [4.0, 10.0, 40.0].into_iter().enumerate() {
            let order = random_order(x.n_rows(), &mut run_rng(3, i as u64));
            let run = dp_means_run(x.view(), &mean, penalty, usize::MAX, 10, &order);
            // Clusters 1 and K + 1 left empty: an empty cluster is in no group.
            let k = run.means.n_rows() + 2;
            let labels: Vec<usize> = run
                .labels
                .iter()
                .map(|&c| if c == 0 { 0 } else { c + 1 })
                .collect();
            let expected = groups_of_all_pairs(x.view(), &labels, k, penalty);
            several += usize::from(expected.len() >= 3);
            for anchors in [1, 2, 3, 7, 30, 1024] {
                let got = groups_with_anchors(x.view(), &labels, k, penalty, anchors);
                assert_eq!(got, expected, "P = {penalty}, {anchors} anchors, K = {k}");
            }
        }
        assert!(several >= 2, "the sets must have several groups");
    }

    /// The cover passes over anchor pairs on blobs far apart, and never over an anchor with
    /// itself. Fails if [`Cover::apart`] always answers no (the test above would then pass
    /// by scoring every pair).
    #[test]
    fn far_anchors_are_passed_over() {
        let x = blobs(&[[0.0, 0.0], [40.0, 0.0], [0.0, 40.0]], 14, 1.0);
        let labels: Vec<usize> = (0..42).map(|n| n / 7).collect();
        let k = 6;
        let penalty = 5.0;
        let means = cluster_means(x.view(), &labels, k);
        let (radius, count) = radii(x.view(), &labels, &means);
        let stay = stay_costs(&radius, &count, penalty);
        let reaches: Vec<f64> = (0..k).map(|c| reach(radius[c], stay[c], penalty)).collect();
        let live: Vec<usize> = (0..k).collect();
        let cover = Cover::new(&means, &live, &reaches, penalty, 1024);
        assert_eq!(
            cover.anchors.len(),
            3,
            "one anchor a blob: {:?}",
            cover.anchors
        );
        for i in 0..3 {
            assert!(!cover.apart(i, i, &means));
            for j in (0..3).filter(|&j| j != i) {
                assert!(cover.apart(i, j, &means), "{i} {j}");
            }
        }
    }

    /// The tries' orders: each a permutation; try 0 the order itself, try 1 backwards.
    #[test]
    fn try_orders_are_rotations_and_reversals() {
        assert_eq!(try_order(5, 0, 2), vec![0, 1, 2, 3, 4]);
        assert_eq!(try_order(5, 1, 2), vec![1, 0, 4, 3, 2]);
        assert_eq!(try_order(4, 2, 3), vec![2, 3, 0, 1]);
    }

    /// Far groups are settled; two clusters of different groups that a merge would pay for,
    /// or whose rows could move across, are not. Fails if either check is left out.
    #[test]
    fn settled_across_sees_merges_and_moves() {
        let x = blobs(&[[0.0, 0.0], [40.0, 0.0]], 14, 1.0);
        let labels: Vec<usize> = (0..28).map(|n| n / 14).collect();
        assert!(settled_across(x.view(), &labels, &[1, 1], 5.0));
        // A merge costs 7·40² − P: at P above it, the merge pays.
        assert!(!settled_across(
            x.view(),
            &labels,
            &[1, 1],
            7.0 * 1600.0 + 1.0
        ));
        // Two groups side by side with tiny P: merges do not pay, but rows could move.
        let y = blobs(&[[0.0, 0.0], [1.0, 0.0]], 14, 1.0);
        assert!(!settled_across(y.view(), &labels, &[1, 1], 1e-3));
    }
}
