//! The binary feature matrix Z held by the samplers, stored by column (features are dropped
//! and appended constantly), with the column sums m_k kept alongside.

use crate::RowMatrix;

/// `N × K` binary matrix stored as K columns of length N, plus the column sums m_k.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Feats {
    n: usize,
    cols: Vec<Vec<u8>>,
    m: Vec<usize>,
}

impl Feats {
    /// N rows, no feature.
    pub fn empty(n: usize) -> Self {
        Self {
            n,
            cols: Vec::new(),
            m: Vec::new(),
        }
    }

    /// Z from a matrix whose non-zero entries count as 1; columns no row holds are left out.
    pub fn from_matrix(z: &RowMatrix) -> Self {
        let n = z.n_rows();
        let mut feats = Self::empty(n);
        for c in 0..z.n_cols() {
            let col: Vec<u8> = (0..n).map(|i| u8::from(z.row(i)[c] != 0.0)).collect();
            let m = col.iter().map(|&v| usize::from(v)).sum();
            if m > 0 {
                feats.cols.push(col);
                feats.m.push(m);
            }
        }
        feats
    }

    /// N, the number of rows.
    pub fn n(&self) -> usize {
        self.n
    }

    pub fn k(&self) -> usize {
        self.cols.len()
    }

    /// m_k, the number of rows holding feature k.
    pub fn m(&self, k: usize) -> usize {
        self.m[k]
    }

    /// Column k: entry n is 1 when row n holds feature k, else 0.
    pub fn col(&self, k: usize) -> &[u8] {
        &self.cols[k]
    }

    pub fn get(&self, n: usize, k: usize) -> bool {
        self.cols[k][n] != 0
    }

    pub fn set(&mut self, n: usize, k: usize, on: bool) {
        let old = self.cols[k][n] != 0;
        if old != on {
            self.cols[k][n] = u8::from(on);
            if on {
                self.m[k] += 1;
            } else {
                self.m[k] -= 1;
            }
        }
    }

    /// Row n as 0.0/1.0 values in `out` (resized to K).
    pub fn row_into(&self, n: usize, out: &mut Vec<f64>) {
        out.clear();
        out.extend(self.cols.iter().map(|c| f64::from(c[n])));
    }

    /// Removes feature k.
    pub fn remove(&mut self, k: usize) {
        self.cols.remove(k);
        self.m.remove(k);
    }

    /// Appends a feature held by row n alone.
    pub fn push_singleton(&mut self, n: usize) {
        let mut c = vec![0u8; self.n];
        c[n] = 1;
        self.cols.push(c);
        self.m.push(1);
    }

    /// Appends a feature held by the rows where `col` is non-zero (at least one).
    pub fn push_col(&mut self, col: Vec<u8>) {
        debug_assert_eq!(col.len(), self.n);
        let m = col.iter().filter(|&&v| v != 0).count();
        debug_assert!(m > 0, "a feature no row holds");
        self.cols
            .push(col.into_iter().map(|v| u8::from(v != 0)).collect());
        self.m.push(m);
    }

    /// Z as a 0.0/1.0 matrix.
    pub fn to_row_matrix(&self) -> RowMatrix {
        let k = self.k();
        let mut z = RowMatrix::zeros(self.n, k);
        for (c, col) in self.cols.iter().enumerate() {
            for (i, &v) in col.iter().enumerate() {
                z.row_mut(i)[c] = f64::from(v);
            }
        }
        z
    }
}
