//! The binary assignment matrix Z (`N × K`, one byte per entry) that every model returns
//! (one-hot for clusterings), whose columns the feature algorithms append, drop and merge
//! cheaply. Row `n` is the slice `z_n ∈ {0,1}^K`.

use crate::RowMatrix;

/// A binary `N × K` matrix: row `n` says which of the K clusters or features row `n` of the
/// data holds (entries 0 or 1, one byte each).
///
/// Storage is row-major with a row stride (`cap ≥ K`) that grows by doubling, so appending a
/// column during a sweep costs amortised O(N).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(
        try_from = "crate::serde_forms::BinaryForm",
        into = "crate::serde_forms::BinaryForm"
    )
)]
#[derive(Clone, Debug)]
pub struct BinaryMatrix {
    n: usize,
    k: usize,
    cap: usize,
    data: Vec<u8>,
}

impl BinaryMatrix {
    /// An `n × k` matrix of zeros.
    pub fn zeros(n: usize, k: usize) -> Self {
        let cap = k.max(4);
        Self {
            n,
            k,
            cap,
            data: vec![0; n * cap],
        }
    }

    /// Reads a 0/1 `RowMatrix` (any non-zero value counts as 1).
    pub fn from_row_matrix(z: &RowMatrix) -> Self {
        let mut out = Self::zeros(z.n_rows(), z.n_cols());
        for n in 0..z.n_rows() {
            for (o, &v) in out.row_mut(n).iter_mut().zip(z.row(n)) {
                *o = u8::from(v != 0.0);
            }
        }
        out
    }

    /// The matrix as 0.0/1.0 values.
    pub fn to_row_matrix(&self) -> RowMatrix {
        let mut out = RowMatrix::zeros(self.n, self.k);
        for n in 0..self.n {
            for (o, &v) in out.row_mut(n).iter_mut().zip(self.row(n)) {
                *o = f64::from(v);
            }
        }
        out
    }

    /// Builds a matrix from equal-length rows of 0s and 1s.
    ///
    /// # Panics
    /// When the rows differ in length or hold a value other than 0 or 1.
    #[track_caller]
    pub fn from_rows<R: AsRef<[u8]>>(rows: &[R]) -> Self {
        let k = rows.first().map_or(0, |r| r.as_ref().len());
        let mut z = Self::zeros(rows.len(), k);
        for (n, r) in rows.iter().enumerate() {
            let r = r.as_ref();
            assert_eq!(r.len(), k, "BinaryMatrix::from_rows: ragged rows");
            assert!(
                r.iter().all(|&v| v <= 1),
                "BinaryMatrix::from_rows: entries must be 0 or 1"
            );
            z.row_mut(n).copy_from_slice(r);
        }
        z
    }

    /// The one-hot matrix of a labelling: row n has its 1 in column `labels[n]`.
    ///
    /// # Panics
    /// When a label is not below `k`.
    #[track_caller]
    pub fn one_hot(labels: &[usize], k: usize) -> Self {
        let mut z = Self::zeros(labels.len(), k);
        for (n, &c) in labels.iter().enumerate() {
            z.row_mut(n)[c] = 1;
        }
        z
    }

    /// Number of rows N.
    pub fn n_rows(&self) -> usize {
        self.n
    }

    /// Number of columns K.
    pub fn n_cols(&self) -> usize {
        self.k
    }

    /// Entry (n, k) as a bool.
    #[inline]
    pub fn get(&self, n: usize, k: usize) -> bool {
        self.row(n)[k] != 0
    }

    /// Iterates over the rows.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.n).map(move |i| self.row(i))
    }

    pub(crate) fn n(&self) -> usize {
        self.n
    }

    pub(crate) fn k(&self) -> usize {
        self.k
    }

    /// Row `n` (length K).
    #[inline]
    pub fn row(&self, n: usize) -> &[u8] {
        &self.data[n * self.cap..n * self.cap + self.k]
    }

    /// Rows `s..e`, K bytes each, one after another in `out` (length (e − s)·K): the form
    /// the row steps work on.
    pub(crate) fn pack_rows(&self, s: usize, e: usize, out: &mut [u8]) {
        let k = self.k;
        debug_assert_eq!(out.len(), (e - s) * k);
        if k == self.cap {
            out.copy_from_slice(&self.data[s * k..e * k]);
            return;
        }
        for (n, dst) in (s..e).zip(out.chunks_exact_mut(k.max(1))) {
            copy_short(dst, self.row(n));
        }
    }

    /// The first `packed.len()` (≤ K) entries of row `n` set from `packed`, as
    /// [`BinaryMatrix::pack_rows`] gives them: a sweep's rows over the columns it began with.
    #[inline]
    pub(crate) fn set_row_start(&mut self, n: usize, packed: &[u8]) {
        copy_short(&mut self.row_mut(n)[..packed.len()], packed);
    }

    /// Sets entry (n, k).
    #[inline]
    pub fn set(&mut self, n: usize, k: usize, on: bool) {
        self.row_mut(n)[k] = u8::from(on);
    }

    /// Row `n`, mutable (length K). Write 0 or 1: any other value counts as 1 where entries
    /// are read, but equality compares bytes.
    #[inline]
    pub fn row_mut(&mut self, n: usize) -> &mut [u8] {
        &mut self.data[n * self.cap..n * self.cap + self.k]
    }

    /// Appends an all-zero column and returns its index.
    pub(crate) fn push_col(&mut self) -> usize {
        if self.k == self.cap {
            let cap = 2 * self.cap;
            let mut data = vec![0u8; self.n * cap];
            for n in 0..self.n {
                data[n * cap..n * cap + self.k].copy_from_slice(self.row(n));
            }
            self.cap = cap;
            self.data = data;
        }
        self.k += 1;
        self.k - 1
    }

    /// Column sums m_k.
    pub fn col_sums(&self) -> Vec<usize> {
        let mut m = vec![0usize; self.k];
        for n in 0..self.n {
            for (mk, &v) in m.iter_mut().zip(self.row(n)) {
                *mk += usize::from(v);
            }
        }
        m
    }

    /// Keeps the columns with `keep[k]`, in order.
    pub(crate) fn retain_cols(&mut self, keep: &[bool]) {
        assert_eq!(keep.len(), self.k);
        let cols: Vec<usize> = (0..self.k).filter(|&c| keep[c]).collect();
        for n in 0..self.n {
            let base = n * self.cap;
            for (w, &c) in cols.iter().enumerate() {
                self.data[base + w] = self.data[base + c];
            }
            for v in &mut self.data[base + cols.len()..base + self.k] {
                *v = 0;
            }
        }
        self.k = cols.len();
    }

    /// Column `k` as a vector of N bytes.
    pub fn col(&self, k: usize) -> Vec<u8> {
        (0..self.n).map(|n| self.row(n)[k]).collect()
    }
}

/// `dst = src` for slices of equal length. Z's rows are a few bytes long, for which a call
/// to `memcpy` costs more than the copy: up to 16 bytes are copied as two words that may
/// overlap (the usual short-copy method), so no call is made.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let len = dst.len();
    assert_eq!(len, src.len(), "copy_short: lengths differ");
    match len {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[len / 2] = src[len / 2];
            dst[len - 1] = src[len - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[len - 4..].copy_from_slice(&src[len - 4..]);
        }
        8..=16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[len - 8..].copy_from_slice(&src[len - 8..]);
        }
        _ => dst.copy_from_slice(src),
    }
}

/// Equal when the shapes and every entry agree (whatever the spare capacity of each row).
impl PartialEq for BinaryMatrix {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n && self.k == other.k && self.rows().eq(other.rows())
    }
}

impl Eq for BinaryMatrix {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packed rows and rows set from them are Z's rows, whatever K and the spare capacity;
    /// setting the start of a row leaves the rest of it, and the spare capacity, as they were
    /// (a pushed column starts empty).
    #[test]
    fn rows_packed_and_set_back_are_the_rows() {
        for k in 0..=20 {
            for grown in [false, true] {
                let n = 5;
                let mut z = BinaryMatrix::zeros(n, if grown { 0 } else { k });
                if grown {
                    (0..k).for_each(|_| {
                        z.push_col();
                    });
                }
                for i in 0..n {
                    for c in 0..k {
                        z.set(i, c, (i * 7 + c * 3) % 4 == 1);
                    }
                }
                let mut packed = vec![9u8; (n - 1) * k];
                z.pack_rows(1, n, &mut packed);
                let want: Vec<u8> = (1..n).flat_map(|i| z.row(i).to_vec()).collect();
                assert_eq!(packed, want, "k = {k}");
                let mut back = BinaryMatrix::zeros(n, 0);
                (0..k).for_each(|_| {
                    back.push_col();
                });
                for i in 1..n {
                    back.set_row_start(i, &packed[(i - 1) * k..i * k]);
                }
                for i in 1..n {
                    assert_eq!(back.row(i), z.row(i), "k = {k}, row {i}");
                }
                assert!(back.row(0).iter().all(|&v| v == 0));
                let c = back.push_col();
                assert!((0..n).all(|i| back.row(i)[c] == 0), "k = {k}");
                back.set(2, c, true);
                back.set_row_start(2, &packed[..k]);
                assert_eq!(&back.row(2)[..k], z.row(1), "k = {k}");
                assert_eq!(
                    back.row(2)[c],
                    1,
                    "k = {k}: the entry past the start was changed"
                );
            }
        }
    }

    #[test]
    fn columns_grow_and_shrink() {
        let mut z = BinaryMatrix::zeros(3, 0);
        for c in 0..9 {
            let k = z.push_col();
            assert_eq!(k, c);
            z.row_mut(c % 3)[k] = 1;
        }
        assert_eq!(z.k(), 9);
        assert_eq!(z.col_sums(), vec![1; 9]);
        assert_eq!(z.row(1), &[0, 1, 0, 0, 1, 0, 0, 1, 0]);
        let keep: Vec<bool> = (0..9).map(|c| c % 3 != 0).collect();
        z.retain_cols(&keep);
        assert_eq!(z.k(), 6);
        assert_eq!(z.row(0), &[0; 6]);
        assert_eq!(z.row(1), &[1, 0, 1, 0, 1, 0]);
        let back = BinaryMatrix::from_row_matrix(&z.to_row_matrix());
        assert_eq!(back.to_row_matrix(), z.to_row_matrix());
        // Equality ignores the spare capacity: `z` grew to a stride of 16, `back` has 6.
        assert_eq!(back, z);
        let mut other = back.clone();
        other.set(0, 5, true);
        assert_ne!(other, z);
        assert_eq!(back.col(0), vec![0, 1, 0]);
    }
}
