//! The held-out protocol after Reed & Ghahramani (2013, §5): a fraction of the rows become
//! test rows, and a random fifth of each test row's entries is hidden. A method learns from
//! the training rows only; then for each test row it infers z from the visible entries and
//! predicts the hidden ones.
//!
//! For the hard-assignment methods the prediction is z A on the hidden columns, with
//! z = argmin_z ‖x_V − z A_V‖² over the visible columns V (features: exactly over all 2^K
//! values while K ≤ 12, coordinate descent above; clusters: the nearest mean on V). The
//! log-likelihood needs a noise level the hard methods do not have: σ_X² is taken as the
//! maximum-likelihood value on the training rows, ‖X_train − Z A‖²_F / (N_train · D), the
//! small-variance limit's σ² read back from the fit.

use crate::RowMatrix;
use crate::features::kernels::{best_row_exact, descend_row};
use crate::linalg::{dot, gemm_xat};
use crate::restarts::run_rng;
use rand::RngExt;
use thiserror::Error;

/// Largest K for which the test rows' z is found by enumeration.
const EXACT_MAX_K: usize = 12;

/// Why a split cannot be made.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum HoldoutError {
    /// The fraction must lie strictly between 0 and 1.
    #[error("holdout fraction must be strictly between 0 and 1, got {0}; pass e.g. --holdout 0.1")]
    Fraction(f64),
    /// Both sides of the split need rows, and test rows need a visible and a hidden entry.
    #[error(
        "a holdout of {fraction} leaves {train} training and {test} test rows of {d} columns; it needs at least one of each and D ≥ 2"
    )]
    TooSmall {
        /// The fraction asked for.
        fraction: f64,
        /// Training rows it would leave.
        train: usize,
        /// Test rows it would leave.
        test: usize,
        /// Columns.
        d: usize,
    },
}

/// Which rows are held out, and which entries of each are hidden.
#[derive(Clone, Debug, PartialEq)]
pub struct Holdout {
    /// Training rows, ascending.
    pub train_rows: Vec<usize>,
    /// Test rows, ascending.
    pub test_rows: Vec<usize>,
    /// For each test row (same order), its hidden columns, ascending: ⌈D/5⌉ of them (at
    /// most D − 1), drawn uniformly.
    pub hidden: Vec<Vec<usize>>,
}

impl Holdout {
    /// Splits `n` rows of `d` columns: round(fraction · n) test rows drawn uniformly, then
    /// the hidden columns of each; all from stream `u64::MAX` of `seed`, so the split does
    /// not depend on the thread count and never shares a stream with a restart.
    pub fn new(n: usize, d: usize, fraction: f64, seed: u64) -> Result<Self, HoldoutError> {
        if !(fraction > 0.0 && fraction < 1.0) {
            return Err(HoldoutError::Fraction(fraction));
        }
        let test = (fraction * n as f64).round() as usize;
        if test == 0 || test >= n || d < 2 {
            return Err(HoldoutError::TooSmall {
                fraction,
                train: n - test.min(n),
                test,
                d,
            });
        }
        let mut rng = run_rng(seed, u64::MAX);
        let mut rows: Vec<usize> = (0..n).collect();
        for i in 0..test {
            let j = rng.random_range(i..n);
            rows.swap(i, j);
        }
        let mut test_rows = rows[..test].to_vec();
        test_rows.sort_unstable();
        let mut train_rows = rows[test..].to_vec();
        train_rows.sort_unstable();
        let n_hidden = d.div_ceil(5).min(d - 1);
        let hidden = test_rows
            .iter()
            .map(|_| {
                let mut cols: Vec<usize> = (0..d).collect();
                for i in 0..n_hidden {
                    let j = rng.random_range(i..d);
                    cols.swap(i, j);
                }
                let mut h = cols[..n_hidden].to_vec();
                h.sort_unstable();
                h
            })
            .collect();
        Ok(Self {
            train_rows,
            test_rows,
            hidden,
        })
    }

    /// The training rows of `x`, in order.
    pub fn train(&self, x: &RowMatrix) -> RowMatrix {
        rows_of(x, &self.train_rows)
    }

    /// Scores `predict` (which returns a test row's hidden entries, in the order of its
    /// hidden columns, from the row and those columns) against the true hidden values:
    /// [`PredictiveAverage`] with one sample.
    pub fn score(
        &self,
        x: &RowMatrix,
        sigma_x: f64,
        predict: impl FnMut(&[f64], &[usize]) -> Vec<f64>,
    ) -> HeldOutScore {
        let mut avg = PredictiveAverage::new(self, x);
        avg.add(sigma_x, predict)
    }
}

/// The posterior predictive of the hidden entries averaged over samples (a chain's retained
/// sweeps): for each test row, p(x_hidden) ≈ (1/S) Σ_s Π_c N(x_c | prediction_s,c, σ_s²),
/// and the L2 error of the averaged prediction. With one sample it is that sample's score.
pub struct PredictiveAverage<'a> {
    holdout: &'a Holdout,
    x: &'a RowMatrix,
    samples: usize,
    /// Per test row: log Σ_s p_s(hidden entries), and Σ_s of the predictions.
    log_sum: Vec<f64>,
    pred_sum: Vec<Vec<f64>>,
    last_sigma: f64,
}

impl<'a> PredictiveAverage<'a> {
    /// No samples yet.
    pub fn new(holdout: &'a Holdout, x: &'a RowMatrix) -> Self {
        Self {
            holdout,
            x,
            samples: 0,
            log_sum: vec![f64::NEG_INFINITY; holdout.test_rows.len()],
            pred_sum: holdout.hidden.iter().map(|h| vec![0.0; h.len()]).collect(),
            last_sigma: f64::NAN,
        }
    }

    /// Adds one sample (its noise level and its predictions); returns that sample's own
    /// score.
    pub fn add(
        &mut self,
        sigma_x: f64,
        mut predict: impl FnMut(&[f64], &[usize]) -> Vec<f64>,
    ) -> HeldOutScore {
        let var = sigma_x * sigma_x;
        let log_norm = -0.5 * (std::f64::consts::TAU * var).ln();
        let (mut sq, mut ll, mut entries) = (0.0, 0.0, 0usize);
        for (t, (&r, hid)) in self
            .holdout
            .test_rows
            .iter()
            .zip(&self.holdout.hidden)
            .enumerate()
        {
            let pred = predict(self.x.row(r), hid);
            let mut row_ll = 0.0;
            for ((&c, p), acc) in hid.iter().zip(&pred).zip(self.pred_sum[t].iter_mut()) {
                let e = self.x.row(r)[c] - p;
                sq += e * e;
                row_ll += log_norm - e * e / (2.0 * var);
                *acc += p;
                entries += 1;
            }
            ll += row_ll;
            self.log_sum[t] = log_add(self.log_sum[t], row_ll);
        }
        self.samples += 1;
        self.last_sigma = sigma_x;
        HeldOutScore {
            l2: sq / entries as f64,
            loglik: ll / entries as f64,
            sigma_x,
            entries,
        }
    }

    /// Samples added so far.
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// The averaged score: mean log predictive density and mean squared error of the
    /// averaged prediction, per hidden entry (`sigma_x` is that of the last sample).
    pub fn score(&self) -> HeldOutScore {
        let s = self.samples.max(1) as f64;
        let (mut sq, mut ll, mut entries) = (0.0, 0.0, 0usize);
        for (t, (&r, hid)) in self
            .holdout
            .test_rows
            .iter()
            .zip(&self.holdout.hidden)
            .enumerate()
        {
            ll += self.log_sum[t] - s.ln();
            for (&c, p) in hid.iter().zip(&self.pred_sum[t]) {
                let e = self.x.row(r)[c] - p / s;
                sq += e * e;
                entries += 1;
            }
        }
        HeldOutScore {
            l2: sq / entries as f64,
            loglik: ll / entries as f64,
            sigma_x: self.last_sigma,
            entries,
        }
    }
}

/// log(e^a + e^b), exact when either is −∞.
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// The scores of one model on the hidden entries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeldOutScore {
    /// Mean squared error per hidden entry.
    pub l2: f64,
    /// Mean Gaussian log-density per hidden entry, N(x | prediction, σ_X²).
    pub loglik: f64,
    /// The σ_X used.
    pub sigma_x: f64,
    /// Number of hidden entries scored.
    pub entries: usize,
}

fn rows_of(x: &RowMatrix, rows: &[usize]) -> RowMatrix {
    let mut data = Vec::with_capacity(rows.len() * x.n_cols());
    for &r in rows {
        data.extend_from_slice(x.row(r));
    }
    RowMatrix::new(rows.len(), x.n_cols(), data)
}

/// The visible columns of a row with `hidden` columns (ascending) among `d`.
fn visible(d: usize, hidden: &[usize]) -> Vec<usize> {
    let mut h = hidden.iter().peekable();
    (0..d)
        .filter(|c| {
            if h.peek() == Some(&c) {
                h.next();
                false
            } else {
                true
            }
        })
        .collect()
}

/// Features: z = argmin ‖x_V − z A_V‖² on the visible columns, then (z A) on `hidden`.
pub fn predict_hidden_features(a: &RowMatrix, row: &[f64], hidden: &[usize]) -> Vec<f64> {
    let k = a.n_rows();
    let vis = visible(row.len(), hidden);
    let av: Vec<Vec<f64>> = a
        .rows()
        .map(|r| vis.iter().map(|&c| r[c]).collect())
        .collect();
    let xv: Vec<f64> = vis.iter().map(|&c| row[c]).collect();
    let g: Vec<f64> = av.iter().map(|r| dot(r, &xv)).collect();
    let mut gm = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..=i {
            let v = dot(&av[i], &av[j]);
            gm[i * k + j] = v;
            gm[j * k + i] = v;
        }
    }
    let mut z = vec![0u8; k];
    if k <= EXACT_MAX_K {
        best_row_exact(&g, &gm, &mut z);
    } else {
        descend_row(&mut z, &g, &gm, 4 * k + 8);
    }
    hidden
        .iter()
        .map(|&c| (0..k).filter(|&j| z[j] != 0).map(|j| a.row(j)[c]).sum())
        .collect()
}

/// [`predict_hidden_features`] for many rows under one A, with the per-row work cut down.
/// Up to K = 12 (exact search over all z) the Gram matrix AAᵀ is formed once (one GEMM)
/// and each row's Gram matrix over its visible columns V is AAᵀ less the outer products of
/// its few hidden columns H: A_V A_Vᵀ = AAᵀ − A_H A_Hᵀ, O(K²|H|) instead of O(K²|V|). Above
/// that the same coordinate descent (z from 0, k = 0..K in turn, a flip only when it
/// strictly lowers ‖x_V − z A_V‖², until a pass flips nothing) runs on the residual
/// e = x_V − z A_V instead of a Gram matrix: O(|V|) per coordinate and per flip, so no
/// K × K matrix is built per row. The z found is the same up to rounding (ties aside).
pub struct FeaturePredictor<'a> {
    a: &'a RowMatrix,
    /// AAᵀ when K ≤ 12, else empty.
    gram: Vec<f64>,
    /// ‖a_k‖² for each feature.
    norms: Vec<f64>,
}

impl<'a> FeaturePredictor<'a> {
    /// Prepares the predictions for `a` (`K × D`).
    pub fn new(a: &'a RowMatrix) -> Self {
        let k = a.n_rows();
        let mut gram = Vec::new();
        if k <= EXACT_MAX_K {
            gram = vec![0.0; k * k];
            gemm_xat(&mut gram, a.as_slice(), k, a);
        }
        let norms = a.rows().map(|r| dot(r, r)).collect();
        Self { a, gram, norms }
    }

    /// The hidden entries of `row` (its `hidden` columns, ascending) predicted from the rest.
    pub fn predict(&self, row: &[f64], hidden: &[usize]) -> Vec<f64> {
        let a = self.a;
        let k = a.n_rows();
        let z = if k <= EXACT_MAX_K {
            self.exact_z(row, hidden)
        } else {
            self.descend_z(row, hidden)
        };
        hidden
            .iter()
            .map(|&c| (0..k).filter(|&j| z[j] != 0).map(|j| a.row(j)[c]).sum())
            .collect()
    }

    fn exact_z(&self, row: &[f64], hidden: &[usize]) -> Vec<u8> {
        let a = self.a;
        let k = a.n_rows();
        let g: Vec<f64> = a
            .rows()
            .map(|r| dot(r, row) - hidden.iter().map(|&c| r[c] * row[c]).sum::<f64>())
            .collect();
        let mut gm = self.gram.clone();
        for &c in hidden {
            for i in 0..k {
                let ai = a.row(i)[c];
                if ai != 0.0 {
                    for j in 0..k {
                        gm[i * k + j] -= ai * a.row(j)[c];
                    }
                }
            }
        }
        let mut z = vec![0u8; k];
        best_row_exact(&g, &gm, &mut z);
        z
    }

    fn descend_z(&self, row: &[f64], hidden: &[usize]) -> Vec<u8> {
        let a = self.a;
        let k = a.n_rows();
        // Residual over all columns, kept at 0 on the hidden ones so that full-length dot
        // products read only V.
        let mut e = row.to_vec();
        let clear = |e: &mut [f64]| hidden.iter().for_each(|&c| e[c] = 0.0);
        clear(&mut e);
        let norms_v: Vec<f64> = (0..k)
            .map(|j| self.norms[j] - hidden.iter().map(|&c| a.row(j)[c].powi(2)).sum::<f64>())
            .collect();
        let mut z = vec![0u8; k];
        for _ in 0..4 * k + 8 {
            let mut flips = 0;
            for j in 0..k {
                let ae = dot(a.row(j), &e);
                let delta = if z[j] == 0 {
                    norms_v[j] - 2.0 * ae
                } else {
                    norms_v[j] + 2.0 * ae
                };
                if delta < 0.0 {
                    let sign = if z[j] == 0 { -1.0 } else { 1.0 };
                    e.iter_mut().zip(a.row(j)).for_each(|(v, w)| *v += sign * w);
                    clear(&mut e);
                    z[j] ^= 1;
                    flips += 1;
                }
            }
            if flips == 0 {
                break;
            }
        }
        z
    }
}

/// Clusters: the mean nearest to the row on the visible columns, read on `hidden` (ties to
/// the lowest index).
pub fn predict_hidden_cluster(means: &RowMatrix, row: &[f64], hidden: &[usize]) -> Vec<f64> {
    let vis = visible(row.len(), hidden);
    let mut best = (0, f64::INFINITY);
    for (j, m) in means.rows().enumerate() {
        let d: f64 = vis.iter().map(|&c| (row[c] - m[c]) * (row[c] - m[c])).sum();
        if d < best.1 {
            best = (j, d);
        }
    }
    hidden.iter().map(|&c| means.row(best.0)[c]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_sizes_and_hidden_columns() {
        let h = Holdout::new(50, 12, 0.2, 3).unwrap();
        assert_eq!(h.test_rows.len(), 10);
        assert_eq!(h.train_rows.len(), 40);
        let mut all: Vec<usize> = h.train_rows.iter().chain(&h.test_rows).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..50).collect::<Vec<_>>());
        for hid in &h.hidden {
            assert_eq!(hid.len(), 3); // ⌈12/5⌉
            assert!(hid.windows(2).all(|w| w[0] < w[1]) && hid[2] < 12);
        }
        assert_eq!(h, Holdout::new(50, 12, 0.2, 3).unwrap());
        assert_ne!(h, Holdout::new(50, 12, 0.2, 4).unwrap());
    }

    #[test]
    fn the_predictor_agrees_with_the_direct_prediction() {
        let mut rng = run_rng(4, 0);
        for (k, d) in [(3, 15), (20, 15), (60, 200)] {
            let rows = 40;
            let a = RowMatrix::new(
                k,
                d,
                (0..k * d).map(|_| rng.random::<f64>() - 0.5).collect(),
            );
            let fast = FeaturePredictor::new(&a);
            let h = Holdout::new(rows, d, 0.5, 9).unwrap();
            let x = RowMatrix::new(
                rows,
                d,
                (0..rows * d).map(|_| rng.random::<f64>()).collect(),
            );
            for (&r, hid) in h.test_rows.iter().zip(&h.hidden) {
                let want = predict_hidden_features(&a, x.row(r), hid);
                let got = fast.predict(x.row(r), hid);
                for (u, v) in want.iter().zip(&got) {
                    assert!((u - v).abs() < 1e-9, "K = {k}: {u} vs {v}");
                }
            }
        }
    }

    #[test]
    fn impossible_splits_are_refused() {
        assert_eq!(
            Holdout::new(10, 4, 0.0, 0),
            Err(HoldoutError::Fraction(0.0))
        );
        assert!(matches!(
            Holdout::new(10, 4, 1.0, 0),
            Err(HoldoutError::Fraction(_))
        ));
        assert!(matches!(
            Holdout::new(10, 4, f64::NAN, 0),
            Err(HoldoutError::Fraction(_))
        ));
        assert!(matches!(
            Holdout::new(3, 4, 0.1, 0),
            Err(HoldoutError::TooSmall { .. })
        ));
        assert!(matches!(
            Holdout::new(10, 1, 0.5, 0),
            Err(HoldoutError::TooSmall { .. })
        ));
    }

    #[test]
    fn exact_features_predict_hidden_entries_exactly() {
        // Row = a_0 + a_2; the visible columns identify z uniquely.
        let a = RowMatrix::from_rows(&[
            [1.0, 0.0, 2.0, 0.0, 1.0],
            [0.0, 3.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0, 1.0, 5.0],
        ]);
        let row = [1.0, 0.0, 3.0, 1.0, 6.0];
        assert_eq!(predict_hidden_features(&a, &row, &[2, 4]), vec![3.0, 6.0]);
        let means = RowMatrix::from_rows(&[[0.0; 5], [1.0, 0.0, 3.0, 1.0, 6.0]]);
        assert_eq!(predict_hidden_cluster(&means, &row, &[4]), vec![6.0]);
    }

    #[test]
    fn averaging_two_samples_mixes_their_densities() {
        let x = RowMatrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]);
        let h = Holdout {
            train_rows: vec![0],
            test_rows: vec![1],
            hidden: vec![vec![0]],
        };
        let mut avg = PredictiveAverage::new(&h, &x);
        let a = avg.add(1.0, |_, _| vec![2.0]); // error 1
        let b = avg.add(1.0, |_, _| vec![3.0]); // error 0
        let dens = |e: f64| (-0.5 * e * e).exp() / std::f64::consts::TAU.sqrt();
        assert!((a.loglik - dens(1.0).ln()).abs() < 1e-12);
        assert!((b.loglik - dens(0.0).ln()).abs() < 1e-12);
        let s = avg.score();
        assert!((s.loglik - (0.5 * (dens(1.0) + dens(0.0))).ln()).abs() < 1e-12);
        // The averaged prediction is 2.5: error 0.5.
        assert!((s.l2 - 0.25).abs() < 1e-12);
        assert_eq!(avg.samples(), 2);
    }

    #[test]
    fn score_is_the_gaussian_density_of_the_errors() {
        let x = RowMatrix::from_rows(&[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let h = Holdout {
            train_rows: vec![0, 1],
            test_rows: vec![2],
            hidden: vec![vec![1]],
        };
        // Prediction 5.5 for the true 6.0: error 0.5.
        let s = h.score(&x, 0.5, |_, hid| vec![5.5; hid.len()]);
        assert_eq!(s.entries, 1);
        assert!((s.l2 - 0.25).abs() < 1e-15);
        let want = -0.5 * (std::f64::consts::TAU * 0.25f64).ln() - 0.25 / (2.0 * 0.25);
        assert!((s.loglik - want).abs() < 1e-12);
    }
}
