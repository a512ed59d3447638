//! The serialized forms of the types whose invariants a deserializer must check (feature
//! `serde`): a matrix's length must match its shape, a binary matrix holds only 0s and 1s,
//! and a Mahalanobis model's covariances must be positive definite (their Cholesky factors
//! are rebuilt, not stored).

use crate::RowMatrix;
use crate::clustering::{Clustering, MahalanobisClustering};
use crate::features::BinaryMatrix;
use serde::{Deserialize, Serialize};

/// [`RowMatrix`] as stored: its shape and its values row after row.
#[derive(Deserialize)]
pub(crate) struct MatrixForm {
    n_rows: usize,
    n_cols: usize,
    data: Vec<f64>,
}

impl TryFrom<MatrixForm> for RowMatrix {
    type Error = String;

    fn try_from(f: MatrixForm) -> Result<Self, String> {
        match f.n_rows.checked_mul(f.n_cols) {
            Some(len) if len == f.data.len() => Ok(RowMatrix::new(f.n_rows, f.n_cols, f.data)),
            _ => Err(format!(
                "a {} × {} matrix needs {} values, found {}",
                f.n_rows,
                f.n_cols,
                f.n_rows.saturating_mul(f.n_cols),
                f.data.len()
            )),
        }
    }
}

/// [`BinaryMatrix`] as stored: its shape and one string of `0`/`1` per row.
#[derive(Serialize, Deserialize)]
pub(crate) struct BinaryForm {
    n_rows: usize,
    n_cols: usize,
    rows: Vec<String>,
}

impl From<BinaryMatrix> for BinaryForm {
    fn from(z: BinaryMatrix) -> Self {
        let rows = z
            .rows()
            .map(|r| r.iter().map(|&v| if v != 0 { '1' } else { '0' }).collect())
            .collect();
        Self {
            n_rows: z.n_rows(),
            n_cols: z.n_cols(),
            rows,
        }
    }
}

impl TryFrom<BinaryForm> for BinaryMatrix {
    type Error = String;

    fn try_from(f: BinaryForm) -> Result<Self, String> {
        if f.rows.len() != f.n_rows {
            return Err(format!(
                "a binary matrix of {} rows holds {} rows",
                f.n_rows,
                f.rows.len()
            ));
        }
        let mut z = BinaryMatrix::zeros(f.n_rows, f.n_cols);
        for (n, row) in f.rows.iter().enumerate() {
            if row.len() != f.n_cols {
                return Err(format!(
                    "row {n} of a binary matrix of {} columns has {} entries",
                    f.n_cols,
                    row.len()
                ));
            }
            for (k, c) in row.bytes().enumerate() {
                match c {
                    b'0' => {}
                    b'1' => z.set(n, k, true),
                    _ => return Err(format!("row {n} of a binary matrix holds {:?}", c as char)),
                }
            }
        }
        Ok(z)
    }
}

/// [`MahalanobisClustering`] as stored: the clustering, the covariances, P and φ.
#[derive(Serialize, Deserialize)]
pub(crate) struct MahalanobisForm {
    clustering: Clustering,
    covariances: Vec<RowMatrix>,
    penalty: f64,
    phi: f64,
}

impl From<MahalanobisClustering> for MahalanobisForm {
    fn from(m: MahalanobisClustering) -> Self {
        let (clustering, covariances, penalty, phi) = m.into_parts();
        Self {
            clustering,
            covariances,
            penalty,
            phi,
        }
    }
}

impl TryFrom<MahalanobisForm> for MahalanobisClustering {
    type Error = String;

    fn try_from(f: MahalanobisForm) -> Result<Self, String> {
        MahalanobisClustering::from_parts(f.clustering, f.covariances, f.penalty, f.phi)
    }
}
