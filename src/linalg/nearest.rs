//! Nearest row of a small matrix (cluster means) for every row of a large one (data), by
//! GEMM: ‖x − c‖² = ‖x‖² − 2 x·c + ‖c‖², computed `GEMM_ROWS` rows at a time, so memory
//! stays `GEMM_ROWS × K` per thread and the full `N × K` distance matrix never exists.

use super::{BLOCK_ROWS, GEMM_ROWS, gemm_xat};
use crate::RowMatrix;
use rayon::prelude::*;

/// The nearest center of one row and its squared distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nearest {
    /// Index of the nearest center (lowest index on ties); `usize::MAX` when there is none.
    pub label: usize,
    /// Squared Euclidean distance to it, clamped at 0; `+∞` when there is no center.
    pub dist: f64,
}

impl Nearest {
    /// The answer when there are no centers at all.
    pub const NONE: Nearest = Nearest {
        label: usize::MAX,
        dist: f64::INFINITY,
    };
}

/// Nearest center for each of the `b` rows in `xb` (row-major `b × d`), whose squared norms
/// are `x_norms`. `buf` is scratch space, grown as needed.
pub fn nearest_rows_in_block(
    xb: &[f64],
    x_norms: &[f64],
    centers: &RowMatrix,
    center_norms: &[f64],
    buf: &mut Vec<f64>,
    out: &mut [Nearest],
) {
    let b = x_norms.len();
    let (k, d) = (centers.n_rows(), centers.n_cols());
    debug_assert_eq!(out.len(), b);
    debug_assert_eq!(xb.len(), b * d);
    if k == 0 {
        out.fill(Nearest::NONE);
        return;
    }
    let mut start = 0;
    while start < b {
        let end = (start + GEMM_ROWS).min(b);
        let rows = end - start;
        buf.resize(rows * k, 0.0);
        gemm_xat(&mut buf[..rows * k], &xb[start * d..end * d], rows, centers);
        for i in 0..rows {
            let g = &buf[i * k..(i + 1) * k];
            let mut best = 0;
            let mut best_val = center_norms[0] - 2.0 * g[0];
            for j in 1..k {
                let v = center_norms[j] - 2.0 * g[j];
                if v < best_val {
                    best_val = v;
                    best = j;
                }
            }
            out[start + i] = Nearest {
                label: best,
                dist: (x_norms[start + i] + best_val).max(0.0),
            };
        }
        start = end;
    }
}

/// Nearest center for every row of `x`, in parallel over row blocks.
pub fn nearest_rows(
    x: &RowMatrix,
    x_norms: &[f64],
    centers: &RowMatrix,
    center_norms: &[f64],
) -> Vec<Nearest> {
    let d = x.n_cols();
    let mut out = vec![Nearest::NONE; x.n_rows()];
    out.par_chunks_mut(BLOCK_ROWS)
        .enumerate()
        .for_each_init(Vec::new, |buf, (bi, o)| {
            let start = bi * BLOCK_ROWS;
            let end = start + o.len();
            nearest_rows_in_block(
                &x.as_slice()[start * d..end * d],
                &x_norms[start..end],
                centers,
                center_norms,
                buf,
                o,
            );
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{row_sq_norms, sq_dist};

    #[test]
    fn agrees_with_direct_distances() {
        // 600 rows so that more than one GEMM chunk is used.
        let x = RowMatrix::new(
            600,
            3,
            (0..1800).map(|i| ((i * 37 % 101) as f64) / 10.0).collect(),
        );
        let c = RowMatrix::from_rows(&[[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [9.0, 0.0, 1.0]]);
        let got = nearest_rows(&x, &row_sq_norms(&x), &c, &row_sq_norms(&c));
        for (i, g) in got.iter().enumerate() {
            let d: Vec<f64> = c.rows().map(|cr| sq_dist(x.row(i), cr)).collect();
            let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
            assert!((g.dist - min).abs() < 1e-9 * (1.0 + min));
            assert!((d[g.label] - min).abs() < 1e-9 * (1.0 + min));
        }
    }

    #[test]
    fn no_centers_means_no_label() {
        let x = RowMatrix::from_rows(&[[1.0]]);
        let c = RowMatrix::zeros(0, 1);
        assert_eq!(nearest_rows(&x, &[1.0], &c, &[]), vec![Nearest::NONE]);
    }
}
