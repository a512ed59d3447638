//! Maximization-expectation IBP, MEIBP (Reed & Ghahramani 2013, "R&G"), for the
//! *nonnegative* linear-Gaussian IBP: X = Z A + E, E_nd ~ N(0, σ_X²), A_kd ~ TN(0, σ_A²) on
//! [0, ∞), Z ~ IBP(α), with at most `k_max` features.
//!
//! q(A) is a product of truncated normals and Z a point estimate. Z starts with each entry 1
//! with probability ½; q(A) starts at a fixed point of step 1 for that Z (step 1 repeated
//! until the bound stops rising, from Φ = the ridge solution (ZᵀZ + (σ_X²/σ_A²) I)⁻¹ ZᵀX
//! clipped at 0, which only makes the sweeps few). One iteration:
//! 1. q(A) update (Eqs. 13–17), feature by feature: ρ_k = 1/(m_k + σ_X²/σ_A²),
//!    μ̃_kd = ρ_k Σ_n z_nk (x_nd − Σ_{k'≠k} z_nk' E\[a_k'd\]), σ̃²_kd = ρ_k σ_X², and the
//!    moments E\[a\], E\[a²\] and entropies of TN(μ̃, σ̃²) ([`super::erfcx::trunc_normal`]);
//!    an inactive feature (m_k = 0) gets the prior TN(0, σ_A²).
//! 2. each row z_n maximizes Eq. 19,
//!    F(z_n) = −(1/2σ_X²) z_n ΦΦᵀ z_nᵀ + z_n·ω_n − log(K_{+∖n} + #new)!, with Φ = E\[A\] and
//!    ω_nk = (Φ_k·x_n + ½ Σ_d (E\[a_kd\]² − E\[a²_kd\]))/σ_X² + ν_k(1) − ν_k(0) + δ_nk with
//!    δ_nk = 1{m_{k∖n} = 0} (η_k − log N!),
//!    ν_k(z) = log(N − m_{k∖n} − z)! + log(m_{k∖n} + z − 1)! (0 when m_{k∖n} = 0 and z = 0) and
//!    η_k = Σ_d [−½ log(πσ_A²/(2α^{2/D})) − E\[a²_kd\]/(2σ_A²) + H(q(a_kd))] (Eq. 12).
//!    The maximization is the local search of R&G §3.6 (initialize with the best single
//!    feature, grow, prune, return the better of the set and its complement), with strict
//!    best-element improvement in place of the (1 + ε/|V|²) factor (F is negative here).
//! 3. if no row changed: remove, one at a time, the feature whose removal from every row
//!    (with q(a_k) back at the prior) raises the bound most, while one does, then update
//!    q(A) again.
//! 4. Stop when no row changed and no feature was removed (or after `max_iter` iterations).
//!
//! Every step is a coordinate-ascent step on the bound of Eq. 10, so it never decreases; the
//! trace reports it with its constant, −(ND/2) log(2πσ_X²) − ‖X‖²/(2σ_X²) − αH_N, i.e. the
//! number R&G's MATLAB code computes (`compute_vlb`; checked equal on the same state to
//! 1e-6, see docs/meibp.md).
//!
//! Why the start and step 3 (issue 11; measured in docs/meibp.md). A feature whose weights
//! are near zero costs the data term almost nothing, so the IBP term ν_k(1) − ν_k(0) =
//! log(m_{k∖n}/(N − 1 − m_{k∖n})) drives its column to all rows or to none. On in every row
//! it costs the bound roughly (D/2)(log(Nσ_A²/σ_X²) − 1) + log N through η_k and the prior,
//! yet a row that left it alone would lose log(N − 1), so no row step removes it; only
//! removing the whole column (step 3, a coordinate-ascent step on column k of Z and q(a_k)
//! together, best gain first) reaches the higher bound. Such features came from the start:
//! q(A) began at the prior, and one sweep of step 1 from there — each feature seeing the
//! features after it at the prior mean σ_A√(2/π) per entry, about K/2 of them per row, which
//! over-explains X many times — sent 17–18 of 20 features to weights below 0.1 on the block
//! images; 5–11 of them ended on in every row. At the fixed point of the start 3–7 of 20 are
//! near zero, and step 3 removes those that get stuck. R&G's code (small random initial
//! q(A), q(A) updated after every changed row, empty features deleted, no step 3) ends with
//! 0–3 such columns on the same data.
//!
//! Cost of an iteration ([`state`]): O(K²D) for each q(A) update, since ZᵀZ and ZᵀX are kept
//! as rows change; one N × D × K GEMM for XΦᵀ (row blocks in parallel, the same bits for
//! any thread count); per row O(K) for ω_n and O(K) per local-search move ([`row`]); and
//! O(K² + D × flipped features) per changed row. The rows run in order (each sees the
//! column sums left by the rows before it), so they are sequential.
//!
//! Two readings of the paper's text, stated: the paper writes the indicator on η_k as
//! 1{m_{k∖n} > 0}; η_k then would not depend on z_n at all, while Eq. 10 adds η_k for each
//! *active* feature, so the term that depends on z_n is 1{m_{k∖n} = 0} η_k. Likewise the
//! −log N! of each active feature's prior term in Eq. 10 depends on z_n only for features
//! that row n would open, so it is added there (η_k − log N! = log(α/N) for a feature whose
//! q is the prior, the log rate of new dishes). A row keeps its current z_n when the local
//! search returns a lower F, so every row step does not decrease F.

mod row;
mod state;
#[cfg(test)]
mod tests;

pub use row::{Extremes, RowObjective};

use super::params::{check_shared, frequency_shift};
use crate::MatrixView;
use crate::RowMatrix;
use crate::error::ParamError;
use crate::error::{FitError, check_data};
use crate::features::BinaryMatrix;
use crate::features::model::assign_rows_shifted;
use crate::model::{Fit, Model, Stop, check_new_rows};
use crate::restarts::Observer;
use crate::restarts::run_rng;
use rand::RngExt;
use state::State;
use std::time::Instant;

/// Entry point: `Meibp::params(k_max)`.
pub struct Meibp;

impl Meibp {
    /// The default iteration cap ([`MeibpParams::max_iter`]); `madbayes fit --algo meibp`
    /// uses it too.
    pub const DEFAULT_MAX_ITER: usize = 100;

    /// MEIBP with at most `k_max` features. Defaults of R&G §4: α = 3,
    /// σ_X = σ_A = 0.75σ (σ the standard deviation of all entries of X, unless given),
    /// at most [`Meibp::DEFAULT_MAX_ITER`] (100) iterations, seed 0 (Z starts with each
    /// entry 1 with probability 1/2).
    pub fn params(k_max: usize) -> MeibpParams {
        MeibpParams {
            k_max,
            alpha: 3.0,
            sigma_x: None,
            sigma_a: None,
            max_iter: Self::DEFAULT_MAX_ITER,
            seed: 0,
        }
    }
}

/// Unchecked parameters of MEIBP (a builder).
#[derive(Clone, Debug)]
pub struct MeibpParams {
    k_max: usize,
    alpha: f64,
    sigma_x: Option<f64>,
    sigma_a: Option<f64>,
    max_iter: usize,
    seed: u64,
}

/// One record per iteration.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeibpTraceRecord {
    /// Iteration, from 1.
    pub iteration: usize,
    /// Seconds of inference since the start (the `each` callbacks of
    /// [`MeibpValidParams::fit_with`] are left out; the `row` callbacks of
    /// [`MeibpValidParams::fit_observing_rows`] are counted).
    pub seconds: f64,
    /// Active features K₊.
    pub k: usize,
    /// The evidence lower bound of Eq. 10 after the iteration, with its constant
    /// −(ND/2) log(2πσ_X²) − ‖X‖²/(2σ_X²) − αH_N (the `vlb` of R&G's MATLAB code).
    pub evidence: f64,
    /// Rows whose z_n changed in the iteration.
    pub changed_rows: usize,
    /// Features removed from every row by the removal step (run when no row changed).
    pub removed_features: usize,
}

/// The result of MEIBP.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Debug)]
pub struct MeibpFit {
    z: BinaryMatrix,
    a: RowMatrix,
    records: Vec<MeibpTraceRecord>,
    neg_evidence: Vec<f64>,
    converged: bool,
    sigma_x: f64,
}

impl MeibpFit {
    /// One record per iteration: K₊, the evidence bound, the rows that changed, the time.
    pub fn records(&self) -> &[MeibpTraceRecord] {
        &self.records
    }
    /// The evidence lower bound (Eq. 10, up to its constant) after the last iteration.
    pub fn evidence(&self) -> f64 {
        self.records.last().map_or(f64::NAN, |r| r.evidence)
    }
    /// The σ_X of the fit (given, or 0.75 × the data's standard deviation).
    pub fn sigma_x(&self) -> f64 {
        self.sigma_x
    }
}

impl Model for MeibpFit {
    /// Z restricted to the active features (`N × K₊`).
    fn z(&self) -> BinaryMatrix {
        self.z.clone()
    }
    /// E_q\[A\] of the active features (`K₊ × D`), nonnegative.
    fn means(&self) -> &RowMatrix {
        &self.a
    }
    /// Minus the evidence lower bound after the last iteration.
    fn objective(&self) -> f64 {
        -self.evidence()
    }
    /// Minus the evidence lower bound after each iteration (non-increasing).
    fn trace(&self) -> &[f64] {
        &self.neg_evidence
    }
    fn n_iter(&self) -> usize {
        self.records.len()
    }
    /// [`Stop::Converged`] when an iteration left Z unchanged (no row changed, no feature
    /// removed) before `max_iter`.
    fn stop(&self) -> Stop {
        if self.converged {
            Stop::Converged
        } else {
            Stop::IterationCap
        }
    }
    /// The most probable z of each new row given E_q\[A\], under noise σ_X and the training
    /// rows' feature frequencies m_k / (N + 1), as for the samplers.
    fn predict_z(&self, x: MatrixView<'_>) -> Result<BinaryMatrix, FitError> {
        check_new_rows(x, self.a.n_cols())?;
        let shift = frequency_shift(&self.z.col_sums(), self.z.n_rows(), self.sigma_x);
        Ok(assign_rows_shifted(x, &self.a, Some(&shift)))
    }
}

impl MeibpParams {
    /// α.
    pub fn alpha(mut self, a: f64) -> Self {
        self.alpha = a;
        self
    }
    /// σ_X (default 0.75σ).
    pub fn sigma_x(mut self, s: f64) -> Self {
        self.sigma_x = Some(s);
        self
    }
    /// σ_A (default 0.75σ).
    pub fn sigma_a(mut self, s: f64) -> Self {
        self.sigma_a = Some(s);
        self
    }
    /// Iteration cap.
    pub fn max_iter(mut self, m: usize) -> Self {
        self.max_iter = m;
        self
    }
    /// Seed of the initial Z (stream 0 of this seed).
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = s;
        self
    }

    /// Checks the rules that hold for any data.
    pub fn check(self) -> Result<MeibpValidParams, ParamError> {
        check_shared(self.alpha, self.sigma_x, self.sigma_a, self.max_iter)?;
        if self.k_max == 0 {
            return Err(ParamError::KZero(0));
        }
        Ok(MeibpValidParams(self))
    }
}

/// MEIBP parameters that passed [`MeibpParams::check`].
#[derive(Clone, Debug)]
pub struct MeibpValidParams(MeibpParams);

impl Fit for MeibpValidParams {
    type Model = MeibpFit;

    /// Runs MEIBP; `observer` hears of every iteration (it may stop before `max_iter`).
    fn fit_observed(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<MeibpFit, FitError> {
        observer.start(self.0.max_iter);
        self.fit_with(x, &mut |_, _, _| observer.run_finished())
    }
}

impl MeibpValidParams {
    /// The IBP concentration α.
    pub fn alpha(&self) -> f64 {
        self.0.alpha
    }

    /// (σ_X, σ_A) used on `x`: the given values, or 0.75 × the data's standard deviation.
    pub fn sigmas(&self, x: MatrixView<'_>) -> (f64, f64) {
        let s = super::params::data_std(x);
        (
            self.0.sigma_x.unwrap_or(0.75 * s),
            self.0.sigma_a.unwrap_or(0.75 * s),
        )
    }

    /// [`fit`](Self::fit), calling `each(record, z, a)` after every iteration with the
    /// active columns of Z and the means of q(A) on them.
    pub fn fit_with(
        &self,
        x: MatrixView<'_>,
        each: &mut dyn FnMut(&MeibpTraceRecord, &RowMatrix, &RowMatrix),
    ) -> Result<MeibpFit, FitError> {
        self.fit_observing_rows(x, each, &mut |_, _| {})
    }

    /// [`fit_with`](Self::fit_with), also calling `row(objective, z_n)` before every row's
    /// local search with that row's objective (Eq. 19, over all `k_max` features) and its
    /// current assignment — for studies of the local search such as R&G's Figure 1.
    pub fn fit_observing_rows(
        &self,
        x: MatrixView<'_>,
        each: &mut dyn FnMut(&MeibpTraceRecord, &RowMatrix, &RowMatrix),
        row: &mut dyn FnMut(&RowObjective<'_>, &[bool]),
    ) -> Result<MeibpFit, FitError> {
        let p = &self.0;
        check_data(x)?;
        let (sx, sa) = self.sigmas(x);
        if !(sx > 0.0 && sa > 0.0) {
            return Err(FitError::Degenerate(
                "the data have zero standard deviation; give sigma-x and sigma-a explicitly".into(),
            ));
        }
        let (n, k) = (x.n_rows(), p.k_max);
        let mut rng = run_rng(p.seed, 0);
        let mut z = vec![vec![false; k]; n];
        for r in z.iter_mut() {
            for v in r.iter_mut() {
                *v = rng.random::<f64>() < 0.5;
            }
        }
        let start = Instant::now();
        let mut outside = 0.0;
        let mut st = State::new(x, z, p.alpha, sx, sa);
        st.start_q();
        let mut trace = Vec::new();
        let mut converged = false;
        for it in 1..=p.max_iter {
            st.update_q();
            let ctx = st.row_context(x);
            let mut changed = 0;
            for i in 0..n {
                if st.update_row(&ctx, x, i, row) {
                    changed += 1;
                }
            }
            drop(ctx);
            st.update_q();
            let mut removed = 0;
            if changed == 0 {
                removed = st.remove_features();
                if removed > 0 {
                    st.update_q();
                }
            }
            let record = MeibpTraceRecord {
                iteration: it,
                seconds: start.elapsed().as_secs_f64() - outside,
                k: st.active().len(),
                evidence: st.evidence(),
                changed_rows: changed,
                removed_features: removed,
            };
            let paused = Instant::now();
            let (zm, am) = st.active_z_and_means();
            each(&record, &zm, &am);
            outside += paused.elapsed().as_secs_f64();
            trace.push(record);
            if changed == 0 && removed == 0 {
                converged = true;
                break;
            }
        }
        let (zm, am) = st.active_z_and_means();
        Ok(MeibpFit {
            z: BinaryMatrix::from_row_matrix(&zm),
            a: am,
            neg_evidence: trace
                .iter()
                .map(|r: &MeibpTraceRecord| -r.evidence)
                .collect(),
            records: trace,
            converged,
            sigma_x: sx,
        })
    }
}

/// Read-back of the parameters, e.g. to show a builder's defaults.
impl MeibpValidParams {
    /// The most features K.
    pub fn k_max(&self) -> usize {
        self.0.k_max
    }
    /// σ_X if given (`None`: 0.75 × the data's standard deviation).
    pub fn sigma_x(&self) -> Option<f64> {
        self.0.sigma_x
    }
    /// σ_A if given (`None`: 0.75 × the data's standard deviation).
    pub fn sigma_a(&self) -> Option<f64> {
        self.0.sigma_a
    }
    /// Iteration cap.
    pub fn max_iter(&self) -> usize {
        self.0.max_iter
    }
    /// Seed of the initial Z.
    pub fn seed(&self) -> u64 {
        self.0.seed
    }
}
