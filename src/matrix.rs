//! A dense, row-major matrix of `f64`: the one data layout every algorithm reads.
//!
//! Rows are data points, so a point is one contiguous slice and a block of points is a
//! contiguous row-major block that GEMM can read in place. `as_faer` views it as a
//! `faer::MatRef` without copying.

use faer::MatRef;

/// An owned `n_rows × n_cols` matrix stored row after row.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "crate::serde_forms::MatrixForm"))]
#[derive(Clone, Debug, PartialEq)]
pub struct RowMatrix {
    n_rows: usize,
    n_cols: usize,
    data: Vec<f64>,
}

impl RowMatrix {
    /// Wraps `data` (row-major, `n_rows * n_cols` values).
    ///
    /// # Panics
    /// When `data.len() != n_rows * n_cols` (a programming error, not bad input).
    #[track_caller]
    pub fn new(n_rows: usize, n_cols: usize, data: Vec<f64>) -> Self {
        assert_eq!(
            data.len(),
            n_rows * n_cols,
            "RowMatrix::new: {} values do not fill {n_rows} × {n_cols}",
            data.len()
        );
        Self {
            n_rows,
            n_cols,
            data,
        }
    }

    /// An all-zero matrix.
    pub fn zeros(n_rows: usize, n_cols: usize) -> Self {
        Self::new(n_rows, n_cols, vec![0.0; n_rows * n_cols])
    }

    /// Builds a matrix from equal-length rows.
    ///
    /// # Panics
    /// When the rows differ in length.
    #[track_caller]
    pub fn from_rows<R: AsRef<[f64]>>(rows: &[R]) -> Self {
        let n_cols = rows.first().map_or(0, |r| r.as_ref().len());
        let mut data = Vec::with_capacity(rows.len() * n_cols);
        for r in rows {
            assert_eq!(
                r.as_ref().len(),
                n_cols,
                "RowMatrix::from_rows: ragged rows"
            );
            data.extend_from_slice(r.as_ref());
        }
        Self::new(rows.len(), n_cols, data)
    }

    /// Copies any faer matrix into row-major storage.
    pub fn from_faer(m: MatRef<'_, f64>) -> Self {
        let (n, d) = (m.nrows(), m.ncols());
        let mut data = Vec::with_capacity(n * d);
        for i in 0..n {
            for j in 0..d {
                data.push(m[(i, j)]);
            }
        }
        Self::new(n, d, data)
    }

    /// Number of rows (data points).
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns (dimensions).
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Row `i` as a slice.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.n_cols..(i + 1) * self.n_cols]
    }

    /// Row `i` as a mutable slice.
    #[inline]
    pub fn row_mut(&mut self, i: usize) -> &mut [f64] {
        &mut self.data[i * self.n_cols..(i + 1) * self.n_cols]
    }

    /// Rows `start..end` as one contiguous row-major slice.
    #[inline]
    pub fn rows_slice(&self, start: usize, end: usize) -> &[f64] {
        &self.data[start * self.n_cols..end * self.n_cols]
    }

    /// All values, row after row.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// All values, row after row, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        &mut self.data
    }

    /// Gives the storage back.
    pub fn into_vec(self) -> Vec<f64> {
        self.data
    }

    /// A faer view of the same memory (no copy).
    pub fn as_faer(&self) -> MatRef<'_, f64> {
        MatRef::from_row_major_slice(&self.data, self.n_rows, self.n_cols)
    }

    /// Iterates over the rows.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[f64]> + '_ {
        (0..self.n_rows).map(move |i| self.row(i))
    }

    /// A borrowed view of the whole matrix.
    pub fn view(&self) -> MatrixView<'_> {
        MatrixView {
            n_rows: self.n_rows,
            n_cols: self.n_cols,
            data: &self.data,
        }
    }

    /// A borrowed view of rows `start..end`.
    ///
    /// # Panics
    /// When the range is not within `0..n_rows`.
    #[track_caller]
    pub fn rows_view(&self, start: usize, end: usize) -> MatrixView<'_> {
        self.view().rows_view(start, end)
    }

    /// Appends one row.
    ///
    /// # Panics
    /// When `row.len() != n_cols`.
    #[track_caller]
    pub fn push_row(&mut self, row: &[f64]) {
        assert_eq!(row.len(), self.n_cols, "RowMatrix::push_row: wrong length");
        self.data.extend_from_slice(row);
        self.n_rows += 1;
    }

    /// Keeps only the rows for which `keep[i]` is true, in order.
    pub fn retain_rows(&mut self, keep: &[bool]) {
        assert_eq!(keep.len(), self.n_rows);
        let d = self.n_cols;
        let mut w = 0;
        for (r, &k) in keep.iter().enumerate() {
            if k {
                if w != r {
                    self.data.copy_within(r * d..(r + 1) * d, w * d);
                }
                w += 1;
            }
        }
        self.data.truncate(w * d);
        self.n_rows = w;
    }
}

/// A borrowed `n_rows × n_cols` matrix stored row after row: data a caller already holds
/// (a NumPy array, a memory map, a block of a larger matrix) read without a copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatrixView<'a> {
    n_rows: usize,
    n_cols: usize,
    data: &'a [f64],
}

impl<'a> MatrixView<'a> {
    /// Views `data` as `n_rows × n_cols`, row-major; `None` when the length does not match.
    pub fn new(data: &'a [f64], n_rows: usize, n_cols: usize) -> Option<Self> {
        (n_rows.checked_mul(n_cols) == Some(data.len())).then_some(Self {
            n_rows,
            n_cols,
            data,
        })
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &'a [f64] {
        &self.data[i * self.n_cols..(i + 1) * self.n_cols]
    }

    /// Rows `start..end` as one slice.
    pub fn rows_slice(&self, start: usize, end: usize) -> &'a [f64] {
        &self.data[start * self.n_cols..end * self.n_cols]
    }

    /// All values, row after row.
    pub fn as_slice(&self) -> &'a [f64] {
        self.data
    }

    /// A `faer` view of the same values, for GEMM.
    pub fn as_faer(&self) -> MatRef<'a, f64> {
        MatRef::from_row_major_slice(self.data, self.n_rows, self.n_cols)
    }

    /// Iterates over the rows.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &'a [f64]> + 'a {
        let (d, data) = (self.n_cols, self.data);
        (0..self.n_rows).map(move |i| &data[i * d..(i + 1) * d])
    }

    /// The view of rows `start..end`.
    ///
    /// # Panics
    /// When the range is not within `0..n_rows`.
    #[track_caller]
    pub fn rows_view(&self, start: usize, end: usize) -> MatrixView<'a> {
        assert!(
            start <= end && end <= self.n_rows,
            "rows {start}..{end} of {}",
            self.n_rows
        );
        MatrixView {
            n_rows: end - start,
            n_cols: self.n_cols,
            data: &self.data[start * self.n_cols..end * self.n_cols],
        }
    }

    /// An owned copy.
    pub fn to_owned(&self) -> RowMatrix {
        RowMatrix::new(self.n_rows, self.n_cols, self.data.to_vec())
    }
}

impl<'a> From<&'a RowMatrix> for MatrixView<'a> {
    fn from(m: &'a RowMatrix) -> Self {
        m.view()
    }
}
