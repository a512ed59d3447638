//! A dense binary feature-allocation matrix Z (`N × K`, one byte per entry) whose columns can
//! be appended, dropped and merged cheaply. Row `n` is the slice `z_n ∈ {0,1}^K`.

use crate::RowMatrix;

/// Binary `N × K` matrix, row-major with a row stride (`cap ≥ K`) that grows by doubling, so
/// appending a column during a sweep costs amortised O(N).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ZMat {
    n: usize,
    k: usize,
    cap: usize,
    data: Vec<u8>,
}

impl ZMat {
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

    pub fn n(&self) -> usize {
        self.n
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// Row `n` (length K).
    #[inline]
    pub fn row(&self, n: usize) -> &[u8] {
        &self.data[n * self.cap..n * self.cap + self.k]
    }

    /// Row `n`, mutable (length K).
    #[inline]
    pub fn row_mut(&mut self, n: usize) -> &mut [u8] {
        &mut self.data[n * self.cap..n * self.cap + self.k]
    }

    /// Appends an all-zero column and returns its index.
    pub fn push_col(&mut self) -> usize {
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
    pub fn retain_cols(&mut self, keep: &[bool]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_grow_and_shrink() {
        let mut z = ZMat::zeros(3, 0);
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
        let back = ZMat::from_row_matrix(&z.to_row_matrix());
        assert_eq!(back.to_row_matrix(), z.to_row_matrix());
        assert_eq!(back.col(0), vec![0, 1, 0]);
    }
}
