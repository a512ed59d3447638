//! Maximization-expectation IBP, MEIBP (Reed & Ghahramani 2013, "R&G"), for the
//! *nonnegative* linear-Gaussian IBP: X = Z A + E, E_nd ~ N(0, σ_X²), A_kd ~ TN(0, σ_A²) on
//! [0, ∞), Z ~ IBP(α), with at most `k_max` features.
//!
//! q(A) is a product of truncated normals and Z a point estimate. One iteration:
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
//! 3. Stop when Z did not change (or after `max_iter` iterations).
//!
//! Two readings of the paper's text, stated: the paper writes the indicator on η_k as
//! 1{m_{k∖n} > 0}; η_k then would not depend on z_n at all, while Eq. 10 adds η_k for each
//! *active* feature, so the term that depends on z_n is 1{m_{k∖n} = 0} η_k. Likewise the
//! −log N! of each active feature's prior term in Eq. 10 depends on z_n only for features
//! that row n would open, so it is added there (η_k − log N! = log(α/N) for a feature whose
//! q is the prior, the log rate of new dishes). A row keeps its current z_n when the local
//! search returns a lower F, so every row step does not decrease F.

use super::erfcx::{TruncNormal, trunc_normal};
use super::model::ln_factorial_table;
use super::params::IbpParamError;
use crate::RowMatrix;
use crate::error::{FitError, check_data};
use crate::restarts::run_rng;
use rand::RngExt;
use std::time::Instant;

/// Entry point: `Meibp::params(k_max)`.
pub struct Meibp;

impl Meibp {
    /// MEIBP with at most `k_max` features. Defaults of R&G §4: α = 3,
    /// σ_X = σ_A = 0.75σ (σ the standard deviation of all entries of X, unless given),
    /// at most 100 iterations, seed 0 (Z starts with each entry 1 with probability 1/2).
    pub fn params(k_max: usize) -> MeibpParams {
        MeibpParams {
            k_max,
            alpha: 3.0,
            sigma_x: None,
            sigma_a: None,
            max_iter: 100,
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
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeibpTraceRecord {
    /// Iteration, from 1.
    pub iteration: usize,
    /// Seconds since the start.
    pub seconds: f64,
    /// Active features K₊.
    pub k: usize,
    /// The evidence lower bound of Eq. 10 (up to its constant) after the iteration.
    pub evidence: f64,
    /// Rows whose z_n changed in the iteration.
    pub changed_rows: usize,
}

/// The result of MEIBP.
#[derive(Clone, Debug)]
pub struct MeibpFit {
    z: RowMatrix,
    a: RowMatrix,
    trace: Vec<MeibpTraceRecord>,
    converged: bool,
}

impl MeibpFit {
    /// Z restricted to the active features (`N × K₊`).
    pub fn z(&self) -> &RowMatrix {
        &self.z
    }
    /// E_q\[A\] of the active features (`K₊ × D`), nonnegative.
    pub fn a(&self) -> &RowMatrix {
        &self.a
    }
    /// K₊.
    pub fn k(&self) -> usize {
        self.z.n_cols()
    }
    /// One record per iteration.
    pub fn trace(&self) -> &[MeibpTraceRecord] {
        &self.trace
    }
    /// Whether an iteration left Z unchanged before `max_iter`.
    pub fn converged(&self) -> bool {
        self.converged
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
    pub fn check(self) -> Result<MeibpValidParams, IbpParamError> {
        let positive = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(IbpParamError::NotPositive { name, value: v })
            }
        };
        positive("alpha", self.alpha)?;
        if let Some(s) = self.sigma_x {
            positive("sigma-x", s)?;
        }
        if let Some(s) = self.sigma_a {
            positive("sigma-a", s)?;
        }
        if self.max_iter == 0 {
            return Err(IbpParamError::NoIterations);
        }
        if self.k_max == 0 {
            return Err(IbpParamError::ZeroKMax);
        }
        Ok(MeibpValidParams(self))
    }
}

/// MEIBP parameters that passed [`MeibpParams::check`].
#[derive(Clone, Debug)]
pub struct MeibpValidParams(MeibpParams);

impl MeibpValidParams {
    /// The IBP concentration α.
    pub fn alpha(&self) -> f64 {
        self.0.alpha
    }

    /// (σ_X, σ_A) used on `x`: the given values, or 0.75 × the data's standard deviation.
    pub fn sigmas(&self, x: &RowMatrix) -> (f64, f64) {
        let s = super::params::data_std(x);
        (
            self.0.sigma_x.unwrap_or(0.75 * s),
            self.0.sigma_a.unwrap_or(0.75 * s),
        )
    }

    /// Runs MEIBP on `x`.
    pub fn fit(&self, x: &RowMatrix) -> Result<MeibpFit, FitError> {
        self.fit_with(x, &mut |_, _, _| {})
    }

    /// [`fit`](Self::fit), calling `each(record, z, a)` after every iteration with the
    /// active columns of Z and the means of q(A) on them.
    pub fn fit_with(
        &self,
        x: &RowMatrix,
        each: &mut dyn FnMut(&MeibpTraceRecord, &RowMatrix, &RowMatrix),
    ) -> Result<MeibpFit, FitError> {
        let p = &self.0;
        check_data(x)?;
        let (sx, sa) = self.sigmas(x);
        if !(sx > 0.0 && sa > 0.0) {
            return Err(FitError::TooFewRows(
                "the data have zero standard deviation; give sigma-x and sigma-a explicitly".into(),
            ));
        }
        let (n, k) = (x.n_rows(), p.k_max);
        let mut rng = run_rng(p.seed, 0);
        let mut z = vec![vec![false; k]; n];
        for row in z.iter_mut() {
            for v in row.iter_mut() {
                *v = rng.random::<f64>() < 0.5;
            }
        }
        let mut st = State::new(x, z, p.alpha, sx, sa);
        let start = Instant::now();
        let mut trace = Vec::new();
        let mut converged = false;
        for it in 1..=p.max_iter {
            st.update_q(x);
            let mut changed = 0;
            for i in 0..n {
                if st.update_row(x, i) {
                    changed += 1;
                }
            }
            st.update_q(x);
            let record = MeibpTraceRecord {
                iteration: it,
                seconds: start.elapsed().as_secs_f64(),
                k: st.active().len(),
                evidence: st.evidence(x),
                changed_rows: changed,
            };
            let (zm, am) = st.active_z_and_means(x.n_cols());
            each(&record, &zm, &am);
            trace.push(record);
            if changed == 0 {
                converged = true;
                break;
            }
        }
        let (zm, am) = st.active_z_and_means(x.n_cols());
        Ok(MeibpFit {
            z: zm,
            a: am,
            trace,
            converged,
        })
    }
}

/// The MEIBP state: Z (`N × k_max`), q(A) and the column sums.
pub(crate) struct State {
    pub z: Vec<Vec<bool>>,
    pub q: Vec<TruncNormal>,
    m: Vec<usize>,
    alpha: f64,
    sx: f64,
    sa: f64,
    lf: Vec<f64>,
}

impl State {
    /// The active columns of Z (as 0/1 numbers) and the means of q(A) on them.
    fn active_z_and_means(&self, d: usize) -> (RowMatrix, RowMatrix) {
        let active = self.active();
        let n = self.z.len();
        let mut zm = RowMatrix::zeros(n, active.len());
        let mut am = RowMatrix::zeros(active.len(), d);
        for (j, &c) in active.iter().enumerate() {
            for i in 0..n {
                zm.row_mut(i)[j] = f64::from(u8::from(self.z[i][c]));
            }
            for t in 0..d {
                am.row_mut(j)[t] = self.q[c * d + t].mean;
            }
        }
        (zm, am)
    }

    pub fn new(x: &RowMatrix, z: Vec<Vec<bool>>, alpha: f64, sx: f64, sa: f64) -> Self {
        let k = z.first().map_or(0, Vec::len);
        let d = x.n_cols();
        let mut m = vec![0; k];
        for row in &z {
            for (c, &v) in row.iter().enumerate() {
                m[c] += usize::from(v);
            }
        }
        let prior = trunc_normal(0.0, sa);
        Self {
            lf: ln_factorial_table(x.n_rows().max(k) + 1),
            z,
            q: vec![prior; k * d],
            m,
            alpha,
            sx,
            sa,
        }
    }

    fn k(&self) -> usize {
        self.m.len()
    }

    pub fn active(&self) -> Vec<usize> {
        (0..self.k()).filter(|&c| self.m[c] > 0).collect()
    }

    /// Eqs. 14–17, feature by feature in order.
    pub fn update_q(&mut self, x: &RowMatrix) {
        let (n, d, k) = (x.n_rows(), x.n_cols(), self.k());
        let r = (self.sx / self.sa).powi(2);
        for c in 0..k {
            let rho = 1.0 / (self.m[c] as f64 + r);
            let mut acc = vec![0.0; d];
            for i in 0..n {
                if !self.z[i][c] {
                    continue;
                }
                for (t, a) in acc.iter_mut().enumerate() {
                    let mut v = x.row(i)[t];
                    for c2 in 0..k {
                        if c2 != c && self.z[i][c2] {
                            v -= self.q[c2 * d + t].mean;
                        }
                    }
                    *a += v;
                }
            }
            let s = (rho * self.sx * self.sx).sqrt();
            for t in 0..d {
                self.q[c * d + t] = trunc_normal(rho * acc[t], s);
            }
        }
    }

    /// η_k of Eq. 12.
    fn eta(&self, c: usize, d: usize) -> f64 {
        let sa2 = self.sa * self.sa;
        let base = -0.5 * (std::f64::consts::PI * sa2 / 2.0).ln() + self.alpha.ln() / d as f64;
        (0..d)
            .map(|t| {
                let q = &self.q[c * d + t];
                base - q.second / (2.0 * sa2) + q.entropy
            })
            .sum()
    }

    /// The row objective (Eq. 19 with the readings of the module documentation), without
    /// its constant, for the set `on` of row n.
    fn row_objective(&self, on: &[bool], g: &[f64], omega: &[f64], m_minus: &[usize]) -> f64 {
        let k = on.len();
        let mut f = 0.0;
        let mut new = 0;
        for a in 0..k {
            if !on[a] {
                continue;
            }
            f += omega[a];
            for b in 0..k {
                if on[b] {
                    f -= 0.5 * g[a * k + b];
                }
            }
            if m_minus[a] == 0 {
                new += 1;
            }
        }
        let k_plus_minus = m_minus.iter().filter(|&&m| m > 0).count();
        f - self.lf[k_plus_minus + new]
    }

    /// Re-optimizes row `i` by the local search; returns whether z_i changed.
    pub fn update_row(&mut self, x: &RowMatrix, i: usize) -> bool {
        let (n, d, k) = (x.n_rows(), x.n_cols(), self.k());
        let s2 = self.sx * self.sx;
        let m_minus: Vec<usize> = (0..k)
            .map(|c| self.m[c] - usize::from(self.z[i][c]))
            .collect();
        // G = ΦΦᵀ/σ_X² and ω_i.
        let mut g = vec![0.0; k * k];
        for a in 0..k {
            for b in 0..k {
                g[a * k + b] = (0..d)
                    .map(|t| self.q[a * d + t].mean * self.q[b * d + t].mean)
                    .sum::<f64>()
                    / s2;
            }
        }
        let lf = &self.lf;
        let nu = |m: usize, z: usize| -> f64 {
            if m == 0 && z == 0 {
                0.0
            } else {
                lf[n - m - z] + lf[m + z - 1]
            }
        };
        let omega: Vec<f64> = (0..k)
            .map(|c| {
                let mut w = 0.0;
                for t in 0..d {
                    let q = &self.q[c * d + t];
                    w += q.mean * x.row(i)[t] + 0.5 * (q.mean * q.mean - q.second);
                }
                w /= s2;
                w += nu(m_minus[c], 1) - nu(m_minus[c], 0);
                if m_minus[c] == 0 {
                    w += self.eta(c, d) - lf[n];
                }
                w
            })
            .collect();
        let f = |on: &[bool]| self.row_objective(on, &g, &omega, &m_minus);
        let (best, best_v) = local_search(k, &f);
        let now = self.z[i].clone();
        if best == now || best_v <= f(&now) {
            return false;
        }
        for c in 0..k {
            if best[c] != now[c] {
                if best[c] {
                    self.m[c] += 1;
                } else {
                    self.m[c] -= 1;
                }
            }
        }
        self.z[i] = best;
        true
    }

    /// Eq. 10 up to its constant: Σ_n \[−½ z_n ΦΦᵀ z_nᵀ + z_n·ξ_n\]/σ_X² − log K₊!
    /// + Σ_{active k} \[log((N − m_k)! (m_k − 1)!/N!) + η_k\].
    pub fn evidence(&self, x: &RowMatrix) -> f64 {
        let (n, d, k) = (x.n_rows(), x.n_cols(), self.k());
        let s2 = self.sx * self.sx;
        let mut f = 0.0;
        for i in 0..n {
            let on: Vec<usize> = (0..k).filter(|&c| self.z[i][c]).collect();
            for &a in &on {
                for t in 0..d {
                    let q = &self.q[a * d + t];
                    f += (q.mean * x.row(i)[t] + 0.5 * (q.mean * q.mean - q.second)) / s2;
                }
                for &b in &on {
                    let gab: f64 = (0..d)
                        .map(|t| self.q[a * d + t].mean * self.q[b * d + t].mean)
                        .sum();
                    f -= 0.5 * gab / s2;
                }
            }
        }
        let active = self.active();
        f -= self.lf[active.len()];
        for &c in &active {
            let m = self.m[c];
            f += self.lf[n - m] + self.lf[m - 1] - self.lf[n] + self.eta(c, d);
        }
        f
    }
}

/// The local search of R&G §3.6 maximizing a set function `f` over subsets of {0, …, k−1}
/// (as 0/1 masks): start from the best singleton, add the element that raises f most while
/// one does, remove the element whose removal raises f most (then grow again), until
/// neither helps; return the better of the set and its complement, with its value. Strict
/// improvement replaces the paper's (1 + ε/|V|²) factor; taking the best element rather
/// than any improving one found the optimum in 129 instead of 87 of the 240 test rows.
pub(crate) fn local_search(k: usize, f: &dyn Fn(&[bool]) -> f64) -> (Vec<bool>, f64) {
    let mut set = vec![false; k];
    if k == 0 {
        return (set, f(&[]));
    }
    let first = (0..k)
        .map(|c| {
            let mut s = vec![false; k];
            s[c] = true;
            (f(&s), c)
        })
        .fold((f64::NEG_INFINITY, 0), |b, v| if v.0 > b.0 { v } else { b });
    set[first.1] = true;
    let mut cur = first.0;
    loop {
        let mut moved = false;
        // grow: add the element that raises f most, while one does
        loop {
            let mut best: Option<(f64, usize)> = None;
            for c in 0..k {
                if !set[c] {
                    set[c] = true;
                    let v = f(&set);
                    set[c] = false;
                    if v > cur && best.is_none_or(|b| v > b.0) {
                        best = Some((v, c));
                    }
                }
            }
            match best {
                Some((v, c)) => {
                    set[c] = true;
                    cur = v;
                    moved = true;
                }
                None => break,
            }
        }
        // prune the element whose removal raises f most (if any), then grow again
        let mut best: Option<(f64, usize)> = None;
        for c in 0..k {
            if set[c] {
                set[c] = false;
                let v = f(&set);
                set[c] = true;
                if v > cur && best.is_none_or(|b| v > b.0) {
                    best = Some((v, c));
                }
            }
        }
        if let Some((v, c)) = best {
            set[c] = false;
            cur = v;
            moved = true;
        }
        if !moved {
            break;
        }
    }
    let comp: Vec<bool> = set.iter().map(|&b| !b).collect();
    let vc = f(&comp);
    if vc > cur { (comp, vc) } else { (set, cur) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restarts::run_rng;

    fn state(n: usize, d: usize, k: usize, seed: u64) -> (RowMatrix, State) {
        let mut rng = run_rng(seed, 3);
        let x = RowMatrix::new(
            n,
            d,
            (0..n * d).map(|_| rng.random::<f64>() * 2.0).collect(),
        );
        let z = (0..n)
            .map(|_| (0..k).map(|_| rng.random::<f64>() < 0.4).collect())
            .collect();
        let mut st = State::new(&x, z, 2.0, 0.5, 1.0);
        st.update_q(&x);
        (x, st)
    }

    #[test]
    fn row_objective_differences_equal_evidence_differences() {
        // Changing row i by any set changes Eq. 10 by the change of the row objective
        // (q fixed), so the row objective is the right function to maximize.
        let (x, st) = state(6, 3, 4, 1);
        let i = 2;
        let base = st.evidence(&x);
        let k = 4;
        let n = 6;
        let d = 3;
        let s2 = st.sx * st.sx;
        let m_minus: Vec<usize> = (0..k).map(|c| st.m[c] - usize::from(st.z[i][c])).collect();
        let mut g = vec![0.0; k * k];
        for a in 0..k {
            for b in 0..k {
                g[a * k + b] = (0..d)
                    .map(|t| st.q[a * d + t].mean * st.q[b * d + t].mean)
                    .sum::<f64>()
                    / s2;
            }
        }
        let lf = &st.lf;
        let nu = |m: usize, z: usize| {
            if m == 0 && z == 0 {
                0.0
            } else {
                lf[n - m - z] + lf[m + z - 1]
            }
        };
        let omega: Vec<f64> = (0..k)
            .map(|c| {
                let mut w = 0.0;
                for t in 0..d {
                    let q = &st.q[c * d + t];
                    w += q.mean * x.row(i)[t] + 0.5 * (q.mean * q.mean - q.second);
                }
                w / s2 + nu(m_minus[c], 1) - nu(m_minus[c], 0)
                    + if m_minus[c] == 0 {
                        st.eta(c, d) - lf[n]
                    } else {
                        0.0
                    }
            })
            .collect();
        let f0 = st.row_objective(&st.z[i], &g, &omega, &m_minus);
        for mask in 0..(1u32 << k) {
            let on: Vec<bool> = (0..k).map(|c| (mask >> c) & 1 == 1).collect();
            let mut other = State {
                z: st.z.clone(),
                q: st.q.clone(),
                m: st.m.clone(),
                alpha: st.alpha,
                sx: st.sx,
                sa: st.sa,
                lf: st.lf.clone(),
            };
            for c in 0..k {
                if other.z[i][c] != on[c] {
                    if on[c] {
                        other.m[c] += 1;
                    } else {
                        other.m[c] -= 1;
                    }
                }
            }
            other.z[i] = on.clone();
            let de = other.evidence(&x) - base;
            let df = st.row_objective(&on, &g, &omega, &m_minus) - f0;
            assert!((de - df).abs() < 1e-9, "mask {mask}: {de} vs {df}");
        }
    }

    #[test]
    fn evidence_never_decreases_over_row_and_q_steps() {
        let (x, mut st) = state(20, 4, 6, 2);
        let mut prev = st.evidence(&x);
        for _ in 0..5 {
            for i in 0..20 {
                st.update_row(&x, i);
                let e = st.evidence(&x);
                assert!(
                    e >= prev - 1e-9,
                    "row step lowered the evidence: {prev} → {e}"
                );
                prev = e;
            }
            st.update_q(&x);
            let e = st.evidence(&x);
            assert!(
                e >= prev - 1e-9,
                "q update lowered the evidence: {prev} → {e}"
            );
            prev = e;
        }
    }

    #[test]
    fn local_search_meets_the_one_third_guarantee_and_often_the_optimum() {
        // Rows of random states with K = 8 (the quadratic part of Eq. 19 with ω = Φx/σ_X²,
        // plus the −log K₊! term): the local-search value must be at least
        // F_min + (F* − F_min)/3 (R&G Eq. 22), F* and F_min by brute force over 2^8 sets.
        let mut exact = 0;
        let mut near = 0;
        let mut total = 0;
        for seed in 0..20 {
            let (x, st) = state(12, 3, 8, 100 + seed);
            let k = 8;
            let n = 12;
            let d = 3;
            let s2 = st.sx * st.sx;
            for i in 0..n {
                let m_minus: Vec<usize> =
                    (0..k).map(|c| st.m[c] - usize::from(st.z[i][c])).collect();
                let mut g = vec![0.0; k * k];
                for a in 0..k {
                    for b in 0..k {
                        g[a * k + b] = (0..d)
                            .map(|t| st.q[a * d + t].mean * st.q[b * d + t].mean)
                            .sum::<f64>()
                            / s2;
                    }
                }
                let omega: Vec<f64> = (0..k)
                    .map(|c| {
                        (0..d)
                            .map(|t| st.q[c * d + t].mean * x.row(i)[t])
                            .sum::<f64>()
                            / s2
                    })
                    .collect();
                let f = |on: &[bool]| st.row_objective(on, &g, &omega, &m_minus);
                let (mut fmax, mut fmin) = (f64::NEG_INFINITY, f64::INFINITY);
                for mask in 0..(1u32 << k) {
                    let on: Vec<bool> = (0..k).map(|c| (mask >> c) & 1 == 1).collect();
                    let v = f(&on);
                    fmax = fmax.max(v);
                    fmin = fmin.min(v);
                }
                let (_, v) = local_search(k, &f);
                assert!(v >= fmin + (fmax - fmin) / 3.0 - 1e-9, "{v} {fmin} {fmax}");
                total += 1;
                if v >= fmax - 1e-9 {
                    exact += 1;
                }
                if v >= fmin + 0.95 * (fmax - fmin) - 1e-9 {
                    near += 1;
                }
            }
        }
        println!(
            "local search: optimum in {exact} of {total} rows, within 95% in {near} of {total}"
        );
        // Measured on these fixed states: 129 and 220 of 240 (R&G report about 70% and
        // 99.9% on their data with K = 12); the bounds guard against a regression.
        assert!(
            exact * 10 >= total * 4,
            "optimum in only {exact} of {total}"
        );
        assert!(
            near * 100 >= total * 85,
            "within 95% in only {near} of {total}"
        );
    }
}
