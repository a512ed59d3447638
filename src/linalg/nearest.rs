//! Nearest row of a small matrix (cluster means) for every row of a large one (data), by
//! GEMM: ‖x − c‖² = ‖x‖² − 2 x·c + ‖c‖², computed `GEMM_ROWS` rows at a time, so memory
//! stays `GEMM_ROWS × K` per thread and the full `N × K` distance matrix never exists.

use super::{BLOCK_ROWS, GEMM_ROWS, gemm_xat};
use crate::MatrixView;
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
        nearest_of_products(
            &buf[..rows * k],
            center_norms,
            &x_norms[start..end],
            &mut out[start..end],
        );
        start = end;
    }
}

/// For each row `i` of `g` (`b × k` products x_i·c_j), the nearest center and its squared
/// distance. Compiled twice — for the baseline target and with AVX2 — and picked at run
/// time: the same operations in the same order (no FMA contraction), so the same bits.
fn nearest_of_products(g: &[f64], center_norms: &[f64], x_norms: &[f64], out: &mut [Nearest]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { nearest_of_products_avx2(g, center_norms, x_norms, out) };
        return;
    }
    nearest_of_products_body(g, center_norms, x_norms, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn nearest_of_products_avx2(g: &[f64], center_norms: &[f64], x_norms: &[f64], out: &mut [Nearest]) {
    nearest_of_products_body(g, center_norms, x_norms, out);
}

#[inline(always)]
fn nearest_of_products_body(g: &[f64], center_norms: &[f64], x_norms: &[f64], out: &mut [Nearest]) {
    let k = center_norms.len();
    for ((gi, &xn), o) in g.chunks_exact(k).zip(x_norms).zip(out.iter_mut()) {
        let (label, best_val) = argmin_shifted(center_norms, gi);
        *o = Nearest {
            label,
            dist: (xn + best_val).max(0.0),
        };
    }
}

/// Independent running minima in `argmin_shifted`: enough for the compiler to keep them in
/// vector registers (`minpd`) with no branch per center.
const LANES: usize = 8;

/// The lowest index `j` minimising `norms[j] − 2·g[j]` (the part of ‖x − c_j‖² that depends
/// on `j`), and that value: the same answer as one scan with strict `<`, found in two
/// passes that vectorise — the minimum over `LANES` running minima, then the first index
/// whose value (computed by the same expression, so bit-equal) equals it. If no value is
/// below +∞ (all NaN or +∞), index 0.
#[inline(always)]
fn argmin_shifted(norms: &[f64], g: &[f64]) -> (usize, f64) {
    debug_assert_eq!(norms.len(), g.len());
    let k = g.len();
    let mut val = [f64::INFINITY; LANES];
    let full = k / LANES * LANES;
    for (nc, gc) in norms[..full]
        .chunks_exact(LANES)
        .zip(g[..full].chunks_exact(LANES))
    {
        for l in 0..LANES {
            let v = nc[l] - 2.0 * gc[l];
            val[l] = if v < val[l] { v } else { val[l] };
        }
    }
    for j in full..k {
        let v = norms[j] - 2.0 * g[j];
        let l = j - full;
        val[l] = if v < val[l] { v } else { val[l] };
    }
    let min = val
        .iter()
        .fold(f64::INFINITY, |m, &v| if v < m { v } else { m });
    if min < f64::INFINITY {
        // First the chunk that holds the minimum (one vector compare per chunk), then the
        // index inside it.
        let mut from = full;
        for (c, (nc, gc)) in norms[..full]
            .chunks_exact(LANES)
            .zip(g[..full].chunks_exact(LANES))
            .enumerate()
        {
            let mut hit = false;
            for l in 0..LANES {
                hit |= nc[l] - 2.0 * gc[l] == min;
            }
            if hit {
                from = c * LANES;
                break;
            }
        }
        for j in from..k {
            if norms[j] - 2.0 * g[j] == min {
                return (j, min);
            }
        }
    }
    (0, norms.first().map_or(f64::NAN, |n| n - 2.0 * g[0]))
}

/// Nearest center for every row of `x`, in parallel over row blocks.
pub fn nearest_rows(
    x: MatrixView<'_>,
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
        let got = nearest_rows(
            x.view(),
            &row_sq_norms(x.view()),
            &c,
            &row_sq_norms(c.view()),
        );
        for (i, g) in got.iter().enumerate() {
            let d: Vec<f64> = c.rows().map(|cr| sq_dist(x.row(i), cr)).collect();
            let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
            assert!((g.dist - min).abs() < 1e-9 * (1.0 + min));
            assert!((d[g.label] - min).abs() < 1e-9 * (1.0 + min));
        }
    }

    #[test]
    fn lane_argmin_matches_a_plain_scan() {
        // Many ties and every length around the lane width: the first minimum must win.
        for k in 1..40 {
            let norms: Vec<f64> = (0..k).map(|j| ((j * 7) % 5) as f64).collect();
            let g: Vec<f64> = (0..k).map(|j| ((j * 3) % 4) as f64 * 0.5).collect();
            let mut want = (0, norms[0] - 2.0 * g[0]);
            for j in 1..k {
                let v = norms[j] - 2.0 * g[j];
                if v < want.1 {
                    want = (j, v);
                }
            }
            assert_eq!(argmin_shifted(&norms, &g), want, "k = {k}");
        }
        assert_eq!(argmin_shifted(&[1.0, 0.0], &[0.0, 0.0]), (1, 0.0));
        assert_eq!(argmin_shifted(&[f64::INFINITY; 3], &[0.0; 3]).0, 0);
    }

    #[test]
    fn no_centers_means_no_label() {
        let x = RowMatrix::from_rows(&[[1.0]]);
        let c = RowMatrix::zeros(0, 1);
        assert_eq!(nearest_rows(x.view(), &[1.0], &c, &[]), vec![Nearest::NONE]);
    }
}
