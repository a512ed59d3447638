//! The nearest mean within reach of the penalty, for a sweep's base pass over many means.
//!
//! In a DP-means sweep (MAD-Bayes Eq. 3) a row joins its nearest mean only when that lies
//! within P (squared distance); past P it opens a cluster, whichever mean is nearest. So the
//! base pass needs a row's nearest mean exactly only when it lies within P, and otherwise
//! only the fact that none does. The means are put under anchors (a sample of them, each
//! mean under its nearest), and a row measures only the members of the anchors it could
//! reach: by the triangle inequality a member c of anchor A lies at least
//! ‖x − A‖ − s_A from x, s_A the largest distance of a member from A, so when that exceeds
//! √P no member of A is within P. At a small penalty the first sweep opens a cluster at
//! nearly every row, and the second sweep's base pass would score each row against all of
//! them: on 200 000 × 50 blobs at P = 50, 152 163 means.

use crate::MatrixView;
use crate::RowMatrix;
use crate::linalg::{
    BLOCK_ROWS, Nearest, ordered_block_reduce, row_sq_norms, screened_nearest,
    screened_nearest_with, sq_norm,
};

/// Most anchors: every row is measured against each by GEMM.
const REACH_ANCHORS: usize = 1024;

/// The means under anchors; see the module's documentation.
pub(super) struct Reach {
    anchors: RowMatrix,
    anchor_norms: Vec<f64>,
    /// Per anchor, its members.
    members: Vec<Members>,
    /// Per anchor: a row farther than the root of this (squared) from it reaches none of its
    /// members within P.
    limit: Vec<f64>,
    penalty: f64,
    /// How many means are under the anchors.
    len: usize,
}

/// The means under one anchor, in increasing index, and the largest distance of one from
/// the anchor.
struct Members {
    means: RowMatrix,
    norms: Vec<f64>,
    index: Vec<usize>,
    spread: f64,
}

impl Reach {
    /// The anchors of `means` (at least two) and their members. The anchors are means
    /// spread evenly over the indices: a sweep opens its clusters in the run's random row
    /// order, so these are a sample of the data.
    pub fn new(means: MatrixView<'_>, penalty: f64) -> Reach {
        let (k, d) = (means.n_rows(), means.n_cols());
        assert!(k >= 2, "at least two means");
        let a = REACH_ANCHORS.min(k);
        let mut anchors = RowMatrix::zeros(0, d);
        for j in 0..a {
            anchors.push_row(means.row(j * k / a));
        }
        let anchor_norms = row_sq_norms(anchors.view());
        let members = (0..a)
            .map(|_| Members {
                means: RowMatrix::zeros(0, d),
                norms: Vec::new(),
                index: Vec::new(),
                spread: 0.0,
            })
            .collect();
        let mut reach = Reach {
            anchors,
            anchor_norms,
            members,
            limit: vec![0.0; a],
            penalty,
            len: 0,
        };
        reach.add(means);
        reach
    }

    /// How many means are under the anchors (indices `0..len`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Puts `means` under the anchors, as the means of indices `len..len + means.n_rows()`:
    /// each under its nearest anchor (the direct search's, ties to the lowest), found in
    /// parallel over blocks of means.
    pub fn add(&mut self, means: MatrixView<'_>) {
        let mut under = Vec::with_capacity(means.n_rows());
        ordered_block_reduce(
            means.n_rows(),
            BLOCK_ROWS,
            |_, s, e| {
                let mut near = Vec::with_capacity(e - s);
                screened_nearest(
                    means.rows_view(s, e),
                    self.anchors.view(),
                    &self.anchor_norms,
                    |_, _, best| {
                        let best = best.expect("at least two anchors");
                        near.push((best.label, best.dist));
                    },
                );
                near
            },
            |near| under.extend(near),
        );
        for (c, &(g, dist)) in under.iter().enumerate() {
            let m = &mut self.members[g];
            m.means.push_row(means.row(c));
            m.norms.push(sq_norm(means.row(c)));
            m.index.push(self.len + c);
            m.spread = m.spread.max(dist.sqrt());
        }
        self.len += means.n_rows();
        // s_A + √P, widened by 10⁻⁹ (far beyond the rounding of the distances behind it).
        for (limit, m) in self.limit.iter_mut().zip(&self.members) {
            *limit = ((m.spread + self.penalty.sqrt()) * (1.0 + 1e-9)).powi(2);
        }
    }

    /// For each row of `rows`: its nearest mean (the direct search's label and distance, bit
    /// for bit) when that lies within P, else [`Nearest::NONE`]. Returns how many row-to-mean
    /// distances it measured, the anchors' included.
    pub fn nearest_within(&self, rows: MatrixView<'_>, out: &mut [Nearest]) -> usize {
        let (b, d) = (rows.n_rows(), rows.n_cols());
        debug_assert_eq!(out.len(), b);
        out.fill(Nearest::NONE);
        let a = self.anchors.n_rows();
        // Per anchor, the rows that may reach a member: the screen's lower bound on the
        // squared distance to the anchor (within the GEMM's rounding) not past its limit.
        let mut need: Vec<Vec<u32>> = vec![Vec::new(); a];
        let mut above = vec![0.0; a];
        let mut prod = Vec::new();
        screened_nearest_with(
            rows,
            self.anchors.view(),
            &self.anchor_norms,
            &mut prod,
            |i, _, _, screen| {
                screen.dists_above(&mut above);
                for (g, (&lb, &limit)) in above.iter().zip(&self.limit).enumerate() {
                    if lb <= limit {
                        need[g].push(i as u32);
                    }
                }
            },
        );
        let mut measured = b * a;
        let mut gathered = Vec::new();
        for (m, rows_g) in self.members.iter().zip(&need) {
            if rows_g.is_empty() {
                continue;
            }
            gathered.clear();
            for &i in rows_g {
                gathered.extend_from_slice(rows.row(i as usize));
            }
            let batch = MatrixView::new(&gathered, rows_g.len(), d).expect("gathered whole rows");
            measured += rows_g.len() * m.index.len();
            screened_nearest(batch, m.means.view(), &m.norms, |j, _, best| {
                let best = best.expect("an anchor has its own mean");
                let (label, dist) = (m.index[best.label], best.dist);
                let o = &mut out[rows_g[j] as usize];
                if dist < o.dist || (dist == o.dist && label < o.label) {
                    *o = Nearest { label, dist };
                }
            });
        }
        for o in out.iter_mut() {
            if o.dist > self.penalty {
                *o = Nearest::NONE;
            }
        }
        measured
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::gaussian_blobs;
    use crate::linalg::direct_nearest;

    /// Within P, the direct search's nearest mean bit for bit; past P none, and then the
    /// direct search's nearest is past P too. On blobs at penalties that leave most rows
    /// beyond every mean or most within one, on data with ties (a grid), and with two
    /// means. Fails if an anchor is passed over that a row could reach, or a tie between
    /// anchors goes to the higher index.
    #[test]
    fn the_nearest_within_reach_is_the_direct_searchs() {
        for (n, k_means, penalty, grid) in [
            (3_000, 2_000, 0.3, false),
            (3_000, 2_000, 2.0, false),
            (2_000, 1_500, 1.0, true),
            (500, 2, 50.0, false),
        ] {
            let blobs = gaussian_blobs(n + k_means, 4, 12, 8.0, 1.5, 3).x;
            let v: Vec<f64> = (blobs.as_slice().iter())
                .map(|&v| if grid { (2.0 * v).round() } else { v })
                .collect();
            let all = RowMatrix::new(n + k_means, 4, v);
            let x = all.rows_view(0, n);
            let means = RowMatrix::new(k_means, 4, all.as_slice()[4 * n..].to_vec());
            let reach = Reach::new(means.view(), penalty);
            let mut out = vec![Nearest::NONE; n];
            let measured = reach.nearest_within(x, &mut out);
            let (mut within, mut beyond) = (0, 0);
            for (i, o) in out.iter().enumerate() {
                let (label, dist) = direct_nearest(x.row(i), means.view()).unwrap();
                if dist <= penalty {
                    within += 1;
                    assert_eq!(
                        (o.label, o.dist.to_bits()),
                        (label, dist.to_bits()),
                        "row {i}"
                    );
                } else {
                    beyond += 1;
                    assert_eq!(*o, Nearest::NONE, "row {i}");
                }
            }
            let case = format!("N {n}, K {k_means}, P {penalty}");
            eprintln!("{case}: within {within}, beyond {beyond}, measured {measured}");
            assert!(within > 0 && beyond > 0, "{case}");
            // The members measured, the anchors' distances aside.
            let members = measured - n * REACH_ANCHORS.min(k_means);
            if k_means > 2 {
                assert!(
                    4 * members < n * k_means,
                    "{case}: the anchors pass over little"
                );
            }
        }
    }
}
