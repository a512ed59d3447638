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
use crate::linalg::sq_dist;
use rayon::prelude::*;

/// Groups are looked for only in a clustering of at most this many clusters: linking scores
/// every pair of clusters.
pub(crate) const GROUPS_MAX_CLUSTERS: usize = 4096;

/// The groups of the clusters of `labels` (values below `k`): each group its clusters in
/// increasing order, the groups in the order of their first cluster; empty clusters belong
/// to none.
pub(crate) fn cluster_groups(
    x: MatrixView<'_>,
    labels: &[usize],
    k: usize,
    penalty: f64,
) -> Vec<Vec<usize>> {
    let means = cluster_means(x, labels, k);
    let (radius, count) = radii(x, labels, &means);
    let stay = stay_costs(&radius, &count, penalty);
    let mut parent: Vec<usize> = (0..k).collect();
    for a in (0..k).filter(|&a| count[a] > 0) {
        for b in (a + 1..k).filter(|&b| count[b] > 0) {
            let dist = sq_dist(means.row(a), means.row(b)).sqrt();
            let side = |c: usize| Side {
                members: count[c] as f64,
                radius: radius[c],
                stay: stay[c],
            };
            if !apart(dist, side(a), side(b), penalty) {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut index = vec![usize::MAX; k];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for c in (0..k).filter(|&c| count[c] > 0) {
        let r = root(&mut parent, c);
        if index[r] == usize::MAX {
            index[r] = groups.len();
            groups.push(Vec::new());
        }
        groups[index[r]].push(c);
    }
    groups
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
