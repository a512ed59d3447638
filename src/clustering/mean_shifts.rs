//! Hamerly's bounds (G. Hamerly, "Making k-means even faster", SDM 2010), shared by the
//! bounded assignment passes of Lloyd's iterations and of DP-means' sweeps: a row whose own
//! mean is provably nearer than every other mean keeps its label without its distances to
//! the other means being computed.
//!
//! Each row keeps a lower bound ℓ on its (Euclidean) distance to every mean but its own. When
//! the means move by δ_j, ℓ drops by max_{j ≠ own} δ_j (triangle inequality). A pass computes
//! the row's distance d to its own mean directly and keeps the label when d < max(ℓ, s_own),
//! where s_j is half the distance from mean j to its nearest other mean.
//!
//! Every quantity carries a margin for its rounding (the direct distances, the shifts and the
//! bounds' updates), so a row keeps its label only when the direct search over all means
//! ([`direct_nearest`](crate::linalg::direct_nearest), ties to the lowest index) would give
//! the same: a bounded pass gives the unbounded pass's labels and distances bit for bit.

use crate::RowMatrix;
use crate::linalg::sq_dist;

/// Relative slack taken off every bound at each update, far above the rounding of the update
/// itself (a few u = 2⁻⁵³ of the operands), so the stored bounds stay below the exact ones.
pub(crate) const SLACK: f64 = 1e-12;

/// How far the means moved in one update: bounds on the exact shifts.
pub(crate) struct Shifts {
    /// Largest shift, its mean, and the second largest.
    max: f64,
    argmax: usize,
    second: f64,
}

impl Shifts {
    /// Nothing moved.
    pub fn none() -> Self {
        Shifts {
            max: 0.0,
            argmax: usize::MAX,
            second: 0.0,
        }
    }

    /// The update from `old` to `new` means (same K and D), over the means `j` with
    /// `counted(j)` (the others are about to be removed, so no row's bound needs them).
    pub fn between(old: &RowMatrix, new: &RowMatrix, counted: impl Fn(usize) -> bool) -> Self {
        debug_assert_eq!(old.n_rows(), new.n_rows());
        let inflate = 1.0 + SLACK + (new.n_cols() + 4) as f64 * f64::EPSILON;
        let mut out = Shifts::none();
        for j in (0..new.n_rows()).filter(|&j| counted(j)) {
            let shift = sq_dist(old.row(j), new.row(j)).sqrt() * inflate;
            if shift > out.max {
                (out.second, out.max, out.argmax) = (out.max, shift, j);
            } else if shift > out.second {
                out.second = shift;
            }
        }
        out
    }

    /// A lower bound on the distance to every mean but `own`, after the update, from one
    /// before it.
    pub fn lowered(&self, lower: f64, own: usize) -> f64 {
        let drop = if own == self.argmax {
            self.second
        } else {
            self.max
        };
        if lower.is_infinite() || drop == 0.0 {
            return lower;
        }
        lower - drop - SLACK * (lower + drop)
    }
}

/// Half the distance from each mean to its nearest other one, less the rounding of its
/// computation; computed only while K² ≤ 16·N (the K²·D cost stays below a few passes over
/// the rows), else 0 (no bound). +∞ for a lone mean.
pub(crate) fn half_gaps(means: &RowMatrix, n: usize) -> Vec<f64> {
    let k = means.n_rows();
    if k * k > 16 * n.max(1) {
        return vec![0.0; k];
    }
    let shrink = 1.0 - SLACK - (means.n_cols() + 4) as f64 * f64::EPSILON;
    let mut nearest = vec![f64::INFINITY; k];
    for a in 0..k {
        for b in a + 1..k {
            let d = sq_dist(means.row(a), means.row(b));
            nearest[a] = nearest[a].min(d);
            nearest[b] = nearest[b].min(d);
        }
    }
    nearest
        .into_iter()
        .map(|d| 0.5 * d.sqrt() * shrink)
        .collect()
}

/// Whether a row whose direct squared distance to its own mean is `dist_own` (by `sq_dist`,
/// over `d` columns) is provably nearer to it than to any mean at least `bound` away (a lower
/// bound on the exact distance; a bound lowered below 0 proves nothing): the margin covers the
/// rounding of the direct distances (≤ (D + 2)·u relative each) and of the bound's square, and
/// leaves a strict gap, so the direct search would keep the label too, ties included.
pub(crate) fn keeps_own(dist_own: f64, bound: f64, d: usize) -> bool {
    let margin = 8.0 * (d + 4) as f64 * f64::EPSILON;
    bound > 0.0 && dist_own * (1.0 + margin) < bound * bound
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowered_bounds_stay_below_the_exact_distances() {
        // Row at the origin, own mean 0 at (1, 0), others at (3, 0) and (0, −4).
        let old = RowMatrix::from_rows(&[[1.0, 0.0], [3.0, 0.0], [0.0, -4.0]]);
        let new = RowMatrix::from_rows(&[[1.5, 0.0], [2.0, 0.0], [0.0, -4.0]]);
        let lower = 3.0 * (1.0 - SLACK);
        let s = Shifts::between(&old, &new, |_| true);
        let got = s.lowered(lower, 0);
        // The nearest other is now 2 away; the bound dropped by the largest shift, 1.
        assert!(got <= 2.0 && got > 1.99, "{got}");
        // Own mean moved most: the others' bound drops by the second largest shift only.
        assert!(s.lowered(lower, 1) > 2.49);
        // A mean not counted does not lower anyone's bound.
        let s = Shifts::between(&old, &new, |j| j != 1);
        assert!(s.lowered(lower, 2) > 2.49);
    }

    #[test]
    fn half_gaps_and_the_keep_test() {
        let m = RowMatrix::from_rows(&[[0.0, 0.0], [4.0, 0.0], [0.0, 10.0]]);
        let g = half_gaps(&m, 10);
        assert!(g[0] < 2.0 && g[0] > 1.999 && g[1] == g[0]);
        assert!(g[2] < 5.0 && g[2] > 4.999, "its nearest is mean 0, 10 away");
        assert!(keeps_own(3.9, 2.0, 2));
        assert!(!keeps_own(4.0, 2.0, 2), "a tie is not kept");
        assert!(!keeps_own(1.0, -2.0, 2), "a negative bound proves nothing");
        // More than 16 pairs of means per row: no gap computed.
        let five = RowMatrix::from_rows(&[[0.0], [1.0], [2.0], [3.0], [4.0]]);
        assert_eq!(half_gaps(&five, 1), vec![0.0; 5]);
    }
}
