//! OCC BP-means (Pan et al. 2013, Alg. 4): objective ‖X − Z A‖²_F + K·P (MAD-Bayes Eq. 6), the
//! paper's BP-means sweep cut into epochs.
//!
//! * Row step ([`bp_row`], shared by the worker, the validator and the serial replay): from
//!   the row's z at the start of the iteration (zero on features opened since), one pass of
//!   flips k = 1..K against G = A Aᵀ and g = A x_n (a flip only when it strictly lowers the
//!   row's error), then the residual r = x_n − z_n A computed directly.
//! * Worker ([`bp_propose`]): the row step against the A of the epoch's start; a row whose
//!   ‖r‖² > P (strict) proposes (below the cap K_max).
//! * Validator ([`bp_validate`]): proposals in block order, then row order; each takes the row
//!   step again against A extended by the features accepted earlier in the epoch (so its flips
//!   over them are the serial sweep's "greedy subtraction"), and if still ‖r‖² > P its
//!   residual is accepted as a new feature held by that row.
//! * Update: drop empty features and all but the first of identical columns of Z, then
//!   A = (ZᵀZ)⁻¹ZᵀX from [`FeatureStats`] summed per block and over blocks in block order
//!   (dependent columns of a singular ZᵀZ get zero means). Stop when Z stops changing.
//!
//! Every quantity of a decision (g_k = a_k · x, G_ij = a_i · a_j, the flips' running G z, the
//! residual) is computed by the same expression in the same order by every party, so the
//! distributed decisions are those of the serial sweep bit for bit.

use super::params::{OccBpMeansValidParams, OccParams};
use super::{OccFit, OccTrace};
use crate::error::{FitError, check_data};
use crate::features::BinaryMatrix;
use crate::features::FeatureModel;
use crate::features::bp_means::clean_columns_mask_from_gram;
use crate::features::kernels::{flip_pass, gz_on, ones_of};
use crate::features::lstsq::{NormalSums, solve_normal};
use crate::features::model::FeatureRun;
use crate::features::objective::row_residual;
use crate::linalg::dot;
use crate::{MatrixView, RowMatrix};
use rayon::prelude::*;
use std::ops::Range;

/// The features A with their Gram matrix G = A Aᵀ (each entry one dot product, so extending
/// A extends G with the same bits a fresh computation would give).
#[derive(Clone, Debug)]
pub(super) struct Features {
    a: RowMatrix,
    g: Vec<f64>,
}

impl Features {
    pub(super) fn new(a: RowMatrix) -> Self {
        let mut f = Self {
            a: RowMatrix::zeros(0, a.n_cols()),
            g: Vec::new(),
        };
        for row in a.rows() {
            f.push(row);
        }
        f
    }

    pub(super) fn k(&self) -> usize {
        self.a.n_rows()
    }

    /// Appends a feature and its row and column of G.
    pub(super) fn push(&mut self, row: &[f64]) {
        let k = self.k();
        let mut g = vec![0.0; (k + 1) * (k + 1)];
        for i in 0..k {
            g[i * (k + 1)..i * (k + 1) + k].copy_from_slice(&self.g[i * k..(i + 1) * k]);
        }
        for i in 0..k {
            let v = dot(row, self.a.row(i));
            g[i * (k + 1) + k] = v;
            g[k * (k + 1) + i] = v;
        }
        g[k * (k + 1) + k] = dot(row, row);
        self.g = g;
        self.a.push_row(row);
    }
}

/// The row step (module documentation): `z` (the row's entries over the first `z.len()`
/// features, zero beyond) becomes the row's new z over all of `f`'s features; returns the
/// residual r = x − z A and ‖r‖².
pub(super) fn bp_row(x: &[f64], z: &mut Vec<u8>, f: &Features) -> (Vec<f64>, f64) {
    let k = f.k();
    z.resize(k, 0);
    let g: Vec<f64> = f.a.rows().map(|a| dot(a, x)).collect();
    let mut on = Vec::with_capacity(k);
    ones_of(z, &mut on);
    let mut h = vec![0.0; k];
    gz_on(&on, &f.g, &mut h);
    flip_pass(z, &g, &f.g, &mut h);
    let mut r = vec![0.0; x.len()];
    let e = row_residual(x, z, &f.a, &mut r);
    (r, e)
}

/// The worker step's result for one block's rows of one epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct BpProposals {
    /// Each row's z after its row step (over the epoch's K features).
    pub z: Vec<Vec<u8>>,
    /// Which rows propose (‖r‖² > P below the cap).
    pub proposes: Vec<bool>,
}

/// The worker step: each row of `rows`, from its z at the start of the iteration
/// (`z_start`, zero beyond its length), against the epoch's features `a`.
///
/// # Panics
/// When `z_start` does not have one row per row of `rows`.
#[track_caller]
pub fn bp_propose(
    rows: MatrixView<'_>,
    z_start: &[Vec<u8>],
    a: MatrixView<'_>,
    penalty: f64,
    k_max: usize,
) -> BpProposals {
    assert_eq!(rows.n_rows(), z_start.len(), "one z per row");
    let f = Features::new(a.to_owned());
    let mut out = BpProposals {
        z: Vec::with_capacity(rows.n_rows()),
        proposes: Vec::with_capacity(rows.n_rows()),
    };
    for (x, z0) in rows.rows().zip(z_start) {
        let mut z = z0.clone();
        let (_, e) = bp_row(x, &mut z, &f);
        out.proposes.push(f.k() < k_max && e > penalty);
        out.z.push(z);
    }
    out
}

/// The validator's decisions for one epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct BpValidation {
    /// The accepted features, in validation order (indices K, K + 1, … after the epoch's K).
    pub accepted: RowMatrix,
    /// For each block and each of its proposing rows (in row order), the row's z over all
    /// features (the epoch's and the accepted ones).
    pub z: Vec<Vec<Vec<u8>>>,
}

/// The serial validation of one epoch: for each block in order, its proposing rows
/// (`rows[b]`, with their z at the start of the iteration `z_start[b]`), against the epoch's
/// features `a` (module documentation).
///
/// # Panics
/// When a block's rows and z disagree in number.
#[track_caller]
pub fn bp_validate(
    rows: &[MatrixView<'_>],
    z_start: &[&[Vec<u8>]],
    a: MatrixView<'_>,
    penalty: f64,
    k_max: usize,
) -> BpValidation {
    let k0 = a.n_rows();
    let mut f = Features::new(a.to_owned());
    let mut z_out = Vec::with_capacity(rows.len());
    for (block, zs) in rows.iter().zip(z_start) {
        assert_eq!(block.n_rows(), zs.len(), "one z per proposing row");
        let mut out = Vec::with_capacity(block.n_rows());
        for (x, z0) in block.rows().zip(zs.iter()) {
            let mut z = z0.clone();
            let (r, e) = bp_row(x, &mut z, &f);
            if f.k() < k_max && e > penalty {
                f.push(&r);
                z.push(1);
            }
            out.push(z);
        }
        z_out.push(out);
    }
    let accepted = RowMatrix::new(
        f.k() - k0,
        a.n_cols(),
        f.a.as_slice()[k0 * a.n_cols()..].to_vec(),
    );
    BpValidation { accepted, z: z_out }
}

/// Sufficient statistics of a feature allocation: ZᵀZ (`K × K`, row-major) and ZᵀX (`K × D`).
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureStats {
    /// ZᵀZ, row-major.
    pub ztz: Vec<f64>,
    /// ZᵀX.
    pub ztx: RowMatrix,
}

impl FeatureStats {
    /// The statistics of `rows` with their `z` (each padded with zeros to `k`), in row order.
    ///
    /// # Panics
    /// When the lengths disagree or a z is longer than `k`.
    #[track_caller]
    pub fn of_rows(rows: MatrixView<'_>, z: &[Vec<u8>], k: usize) -> Self {
        assert_eq!(rows.n_rows(), z.len(), "one z per row");
        let mut zb = vec![0u8; z.len() * k];
        for (i, zi) in z.iter().enumerate() {
            zb[i * k..i * k + zi.len()].copy_from_slice(zi);
        }
        let s = NormalSums::of_block(rows.as_slice(), &zb, k, rows.n_cols());
        Self {
            ztz: s.ztz,
            ztx: s.ztx,
        }
    }

    /// Adds another block's statistics (same K and D).
    pub fn add(&mut self, other: &FeatureStats) {
        for (a, b) in self.ztz.iter_mut().zip(&other.ztz) {
            *a += b;
        }
        crate::linalg::axpy(1.0, other.ztx.as_slice(), self.ztx.as_mut_slice());
    }

    /// The columns kept (non-empty, first of identical ones) and A = (ZᵀZ)⁻¹ZᵀX over them.
    pub fn solve(&self) -> (Vec<bool>, RowMatrix) {
        let k = self.ztx.n_rows();
        let keep = clean_columns_mask_from_gram(&self.ztz, k);
        let mut s = NormalSums {
            ztz: self.ztz.clone(),
            ztx: self.ztx.clone(),
        };
        s.retain(&keep);
        (keep, solve_normal(&s.ztz, s.ztx).a)
    }
}

/// Entry point: `OccBpMeans::params(penalty)`; also the marker of its [`OccParams`].
#[derive(Clone, Copy, Debug)]
pub struct OccBpMeans;

impl OccBpMeans {
    /// OCC BP-means with penalty P (defaults in [`OccParams`]). The run starts from one feature, the
    /// mean of X, held by every row.
    pub fn params(penalty: f64) -> OccParams<OccBpMeans> {
        OccParams::new(penalty)
    }
}

impl OccBpMeansValidParams {
    /// Runs OCC BP-means on `x`, recording the serial-equivalent order of every iteration.
    pub fn fit_traced(&self, x: MatrixView<'_>) -> Result<OccFit<FeatureModel>, FitError> {
        check_data(x)?;
        let n = x.n_rows();
        let blocks = self.block_ranges(n)?;
        let k_max = self.k_cap();
        // One feature held by every row, at the mean of X (from the statistics of that Z).
        let mut z: Vec<Vec<u8>> = vec![vec![1]; n];
        let (_, mut a) = block_stats(x, &blocks, &z, 1).solve();
        let mut occ = OccTrace::default();
        let mut trace = Vec::new();
        let mut converged = false;
        let mut n_iter = 0;
        let epochs = self.epochs(&blocks);
        while n_iter < self.max_iter() {
            n_iter += 1;
            let start = z.clone();
            let mut order = Vec::with_capacity(n);
            let mut log = Vec::with_capacity(epochs);
            for e in 0..epochs {
                let windows = self.windows(&blocks, e);
                let steps: Vec<BpProposals> = windows
                    .par_iter()
                    .map(|w| {
                        bp_propose(
                            x.rows_view(w.start, w.end),
                            &start[w.clone()],
                            a.view(),
                            self.penalty,
                            k_max,
                        )
                    })
                    .collect();
                // The proposing rows of each block, their rows of X and starting z.
                let proposers: Vec<Vec<usize>> = windows
                    .iter()
                    .zip(&steps)
                    .map(|(w, s)| {
                        w.clone()
                            .zip(&s.proposes)
                            .filter(|(_, p)| **p)
                            .map(|(i, _)| i)
                            .collect()
                    })
                    .collect();
                let rows: Vec<RowMatrix> = proposers
                    .iter()
                    .map(|p| {
                        let mut m = RowMatrix::zeros(0, x.n_cols());
                        p.iter().for_each(|&i| m.push_row(x.row(i)));
                        m
                    })
                    .collect();
                let z0: Vec<Vec<Vec<u8>>> = proposers
                    .iter()
                    .map(|p| p.iter().map(|&i| start[i].clone()).collect())
                    .collect();
                let views: Vec<MatrixView<'_>> = rows.iter().map(RowMatrix::view).collect();
                let z0_refs: Vec<&[Vec<u8>]> = z0.iter().map(Vec::as_slice).collect();
                let v = bp_validate(&views, &z0_refs, a.view(), self.penalty, k_max);
                for (w, s) in windows.iter().zip(&steps) {
                    for (i, (zi, p)) in w.clone().zip(s.z.iter().zip(&s.proposes)) {
                        if !p {
                            z[i] = zi.clone();
                            order.push(i);
                        }
                    }
                }
                for (p, zs) in proposers.iter().zip(&v.z) {
                    for (&i, zi) in p.iter().zip(zs) {
                        z[i] = zi.clone();
                        order.push(i);
                    }
                }
                log.push((proposers.iter().map(Vec::len).sum(), v.accepted.n_rows()));
                for f in v.accepted.rows() {
                    a.push_row(f);
                }
            }
            occ.orders.push(order);
            occ.epochs.push(log);
            let (keep, new_a) = block_stats(x, &blocks, &z, a.n_rows()).solve();
            for zi in &mut z {
                zi.resize(keep.len(), 0);
                let mut w = 0;
                for c in 0..keep.len() {
                    if keep[c] {
                        zi[w] = zi[c];
                        w += 1;
                    }
                }
                zi.truncate(w);
            }
            a = new_a;
            trace.push(objective(x, &blocks, &z, &a, self.penalty));
            let same = z == start;
            if same {
                converged = true;
                break;
            }
        }
        let mut zm = BinaryMatrix::zeros(n, a.n_rows());
        for (i, zi) in z.iter().enumerate() {
            zm.row_mut(i).copy_from_slice(zi);
        }
        let objective = *trace.last().expect("at least one iteration");
        let run = FeatureRun {
            z: zm,
            a,
            objective,
            n_iter,
            converged,
            trace,
        };
        Ok(OccFit {
            model: FeatureModel::from_parts(run, 0, vec![objective]),
            occ,
        })
    }
}

/// [`FeatureStats`] of every block (in parallel), added in block order.
fn block_stats(
    x: MatrixView<'_>,
    blocks: &[Range<usize>],
    z: &[Vec<u8>],
    k: usize,
) -> FeatureStats {
    let parts: Vec<FeatureStats> = blocks
        .par_iter()
        .map(|b| FeatureStats::of_rows(x.rows_view(b.start, b.end), &z[b.clone()], k))
        .collect();
    let mut total = FeatureStats {
        ztz: vec![0.0; k * k],
        ztx: RowMatrix::zeros(k, x.n_cols()),
    };
    for p in &parts {
        total.add(p);
    }
    total
}

/// ‖X − Z A‖²_F + K·P, summed per block in row order and over blocks in block order.
fn objective(
    x: MatrixView<'_>,
    blocks: &[Range<usize>],
    z: &[Vec<u8>],
    a: &RowMatrix,
    penalty: f64,
) -> f64 {
    let parts: Vec<f64> = blocks
        .par_iter()
        .map(|b| {
            let mut r = vec![0.0; x.n_cols()];
            b.clone()
                .map(|i| row_residual(x.row(i), &z[i], a, &mut r))
                .sum::<f64>()
        })
        .collect();
    parts.iter().sum::<f64>() + a.n_rows() as f64 * penalty
}
