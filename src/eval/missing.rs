//! The missing-entry protocol of Doshi-Velez & Ghahramani (2009, §6): a number of single
//! entries X_nd, scattered over the whole matrix, are hidden from the sampler during
//! inference ("approximately 100D" of them in the paper), with no row and no column hidden
//! entirely. A sampler imputes them as it goes; the hidden values are then predicted from
//! the state and scored (see `ibp::ColumnPosteriors`).

use crate::MatrixView;
use crate::RowMatrix;
use crate::restarts::run_rng;
use rand::RngExt;
use thiserror::Error;

/// Why the entries cannot be hidden.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum MissingError {
    /// Every row and every column must keep a visible entry.
    #[error(
        "cannot hide {count} of the {n} × {d} entries this way (scattered, every row and column keeping a visible entry); ask for at most {max}"
    )]
    TooMany {
        /// Entries asked for.
        count: usize,
        /// Rows.
        n: usize,
        /// Columns.
        d: usize,
        /// The most the scattered draw is sure to reach, N·D − N − D + 1.
        max: usize,
    },
    /// Nothing to hide.
    #[error("the number of hidden entries must be at least 1")]
    Zero,
}

/// A set of hidden entries of an `N × D` matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct HiddenEntries {
    n: usize,
    d: usize,
    /// Row-major mask: true where hidden.
    mask: Vec<bool>,
    /// The hidden (row, column) pairs in row-major order.
    entries: Vec<(usize, usize)>,
}

impl HiddenEntries {
    /// Hides `count` entries drawn uniformly among those whose hiding leaves every row and
    /// every column a visible entry: the entries are visited in a uniformly random order
    /// and each is hidden unless it is the last visible one of its row or column. Draws from
    /// stream `u64::MAX − 1` of `seed`, so the split does not depend on the thread count.
    pub fn scattered(n: usize, d: usize, count: usize, seed: u64) -> Result<Self, MissingError> {
        if count == 0 {
            return Err(MissingError::Zero);
        }
        // The greedy pass below always reaches this many: when it ends, each visible entry
        // is the only visible one of its row or of its column, so the visible entries form
        // stars covering the N + D rows and columns, at most N + D − 1 entries.
        // N·D − N − D + 1 = (N − 1)(D − 1), written so that it cannot underflow.
        let max = n.saturating_sub(1) * d.saturating_sub(1);
        if count > max {
            return Err(MissingError::TooMany { count, n, d, max });
        }
        let mut rng = run_rng(seed, u64::MAX - 1);
        let mut order: Vec<usize> = (0..n * d).collect();
        let mut row_left = vec![d; n];
        let mut col_left = vec![n; d];
        let mut mask = vec![false; n * d];
        let mut hidden = 0;
        let mut i = 0;
        while hidden < count {
            let j = rng.random_range(i..n * d);
            order.swap(i, j);
            let e = order[i];
            let (r, c) = (e / d, e % d);
            if row_left[r] > 1 && col_left[c] > 1 {
                mask[e] = true;
                row_left[r] -= 1;
                col_left[c] -= 1;
                hidden += 1;
            }
            i += 1;
        }
        let entries = (0..n * d)
            .filter(|&e| mask[e])
            .map(|e| (e / d, e % d))
            .collect();
        Ok(Self {
            n,
            d,
            mask,
            entries,
        })
    }

    /// Rows of the matrix.
    pub fn n_rows(&self) -> usize {
        self.n
    }

    /// Columns of the matrix.
    pub fn n_cols(&self) -> usize {
        self.d
    }

    /// Whether entry (n, d) is hidden.
    pub fn is_hidden(&self, n: usize, d: usize) -> bool {
        self.mask[n * self.d + d]
    }

    /// The hidden entries, row-major.
    pub fn entries(&self) -> &[(usize, usize)] {
        &self.entries
    }

    /// Number of hidden entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is hidden (never, for a set made by [`scattered`](Self::scattered)).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A copy of `x` with each hidden entry replaced by the mean of its column's visible
    /// entries (the hidden values of `x` are not read).
    pub fn fill_column_means(&self, x: MatrixView<'_>) -> RowMatrix {
        let (n, d) = (x.n_rows(), x.n_cols());
        assert_eq!((n, d), (self.n, self.d), "mask shape");
        let mut sums = vec![0.0; d];
        let mut counts = vec![0usize; d];
        for i in 0..n {
            for (c, v) in x.row(i).iter().enumerate() {
                if !self.is_hidden(i, c) {
                    sums[c] += v;
                    counts[c] += 1;
                }
            }
        }
        let mut work = x.to_owned();
        for &(r, c) in &self.entries {
            work.row_mut(r)[c] = sums[c] / counts[c].max(1) as f64;
        }
        work
    }

    /// The visible entries of `x`, row-major.
    pub fn visible_values(&self, x: MatrixView<'_>) -> Vec<f64> {
        assert_eq!((x.n_rows(), x.n_cols()), (self.n, self.d), "mask shape");
        x.as_slice()
            .iter()
            .zip(&self.mask)
            .filter(|(_, h)| !**h)
            .map(|(v, _)| *v)
            .collect()
    }

    /// The hidden rows of each column: `by_column()[d]` lists the n with (n, d) hidden.
    pub fn by_column(&self) -> Vec<Vec<usize>> {
        let mut cols = vec![Vec::new(); self.d];
        for &(r, c) in &self.entries {
            cols[c].push(r);
        }
        cols
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_the_count_and_keeps_every_row_and_column_visible() {
        for (n, d, count) in [(50, 10, 200), (5, 4, 12), (3, 3, 4), (2, 6, 5), (7, 2, 6)] {
            let h = HiddenEntries::scattered(n, d, count, 3).unwrap();
            assert_eq!(h.len(), count);
            for r in 0..n {
                assert!((0..d).any(|c| !h.is_hidden(r, c)), "row {r} all hidden");
            }
            for c in 0..d {
                assert!((0..n).any(|r| !h.is_hidden(r, c)), "column {c} all hidden");
            }
            let per_col: usize = h.by_column().iter().map(Vec::len).sum();
            assert_eq!(per_col, count);
        }
        // 3 × 3 allows 4, not 5; one row allows nothing (each column would lose its only entry).
        assert!(HiddenEntries::scattered(1, 6, 1, 1).is_err());
        assert!(matches!(
            HiddenEntries::scattered(3, 3, 5, 1),
            Err(MissingError::TooMany { max: 4, .. })
        ));
        assert_eq!(
            HiddenEntries::scattered(3, 3, 0, 1),
            Err(MissingError::Zero)
        );
    }

    #[test]
    fn filling_and_visible_values_skip_the_hidden_entries() {
        let x = RowMatrix::from_rows(&[[1.0, 10.0], [3.0, 20.0], [5.0, 60.0]]);
        let h = HiddenEntries::scattered(3, 2, 2, 5).unwrap();
        let mut poisoned = x.clone();
        for &(r, c) in h.entries() {
            poisoned.row_mut(r)[c] = f64::NAN;
        }
        let filled = h.fill_column_means(poisoned.view());
        for &(r, c) in h.entries() {
            let vis: Vec<f64> = (0..3)
                .filter(|&i| !h.is_hidden(i, c))
                .map(|i| x.row(i)[c])
                .collect();
            let want = vis.iter().sum::<f64>() / vis.len() as f64;
            assert_eq!(filled.row(r)[c], want);
        }
        let v = h.visible_values(poisoned.view());
        assert_eq!(v.len(), 4);
        assert!(v.iter().all(|a| a.is_finite()));
    }

    #[test]
    fn same_seed_same_entries() {
        let a = HiddenEntries::scattered(40, 9, 100, 7).unwrap();
        let b = HiddenEntries::scattered(40, 9, 100, 7).unwrap();
        let c = HiddenEntries::scattered(40, 9, 100, 8).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
