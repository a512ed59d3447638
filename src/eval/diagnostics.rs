//! Convergence diagnostics across several chains, after Vehtari, Gelman, Simpson, Carpenter
//! & Bürkner (2021), "Rank-normalization, folding, and localization: an improved R̂ for
//! assessing convergence of MCMC", *Bayesian Analysis* 16(2) — the quantities Stan and ArviZ
//! report:
//!
//! * chains are **split** in halves (a chain that drifts then disagrees with itself);
//! * draws are **rank-normalized**: all M·N draws pooled and ranked (ties share their mean
//!   rank r), z = Φ⁻¹((r − 3/8)/(S + 1/4)) with S = M·N (Blom's offsets), so heavy tails and
//!   a constant shift between chains cannot hide each other;
//! * **R̂** = max(R̂ of z, R̂ of the folded draws |θ − median| rank-normalized), each the classic
//!   √(var⁺/W) with W the mean within-chain variance, B/N the variance of the chain means and
//!   var⁺ = (N − 1)/N · W + B/N (§4.1, Eqs. 3–4 of the paper); below 1.01 is the paper's
//!   threshold for trusting the chains;
//! * **bulk ESS** = the effective sample size of z (§4.2, Eq. 10–11: the multi-chain
//!   autocorrelation ρ̂_t = 1 − (W − mean_m s²_m ρ̂_{t,m}) / var⁺, summed by Geyer's initial
//!   positive and monotone sequence, ESS = S / τ̂);
//! * **tail ESS** = the smaller ESS of the indicators θ ≤ q₅% and θ ≥ q₉₅% (§4.3).
//!
//! A quantity constant over every draw has nothing to mix: its R̂ is 1 and its ESS S. One
//! constant within each (split) chain but not across them has R̂ = +∞ and an ESS of about one
//! draw per chain.

/// R̂ and the effective sample sizes of one scalar quantity over several chains.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Diagnostics {
    /// Rank-normalized split R̂ (the larger of bulk and folded).
    pub rhat: f64,
    /// Effective sample size of the bulk (rank-normalized split chains).
    pub ess_bulk: f64,
    /// Effective sample size of the 5% and 95% tails (the smaller).
    pub ess_tail: f64,
}

/// R̂ above this says the chains disagree (Vehtari et al. 2021, §4).
pub const RHAT_THRESHOLD: f64 = 1.01;

/// The diagnostics of `chains` (one `Vec` of draws per chain, in draw order). Chains of
/// unequal length are cut to the shortest; with fewer than 4 draws per chain, or draws that
/// never vary, R̂ is 1 and both ESS equal the number of draws.
pub fn diagnostics(chains: &[Vec<f64>]) -> Diagnostics {
    let n = chains.iter().map(Vec::len).min().unwrap_or(0);
    let total = (n * chains.len()) as f64;
    let trivial = Diagnostics {
        rhat: 1.0,
        ess_bulk: total,
        ess_tail: total,
    };
    if n < 4 || chains.is_empty() {
        return trivial;
    }
    let split = split_chains(chains, n);
    let all: Vec<f64> = split.iter().flatten().copied().collect();
    let first = all[0];
    if all.iter().all(|&v| v == first) {
        return trivial;
    }
    let z = rank_normalize(&split);
    let median = quantile(&all, 0.5);
    let folded: Vec<Vec<f64>> = split
        .iter()
        .map(|c| c.iter().map(|v| (v - median).abs()).collect())
        .collect();
    let rhat = classic_rhat(&z).max(classic_rhat(&rank_normalize(&folded)));
    let ess_bulk = ess(&z);
    let (q05, q95) = (quantile(&all, 0.05), quantile(&all, 0.95));
    let below: Vec<Vec<f64>> = split
        .iter()
        .map(|c| c.iter().map(|&v| f64::from(u8::from(v <= q05))).collect())
        .collect();
    let above: Vec<Vec<f64>> = split
        .iter()
        .map(|c| c.iter().map(|&v| f64::from(u8::from(v >= q95))).collect())
        .collect();
    Diagnostics {
        rhat,
        ess_bulk,
        ess_tail: ess(&below).min(ess(&above)),
    }
}

/// Each chain's first `n` draws cut into two halves (the middle draw dropped when n is odd).
fn split_chains(chains: &[Vec<f64>], n: usize) -> Vec<Vec<f64>> {
    let half = n / 2;
    chains
        .iter()
        .flat_map(|c| [c[..half].to_vec(), c[n - half..n].to_vec()])
        .collect()
}

/// Blom's normal scores of the pooled ranks, chain by chain.
fn rank_normalize(chains: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut pooled: Vec<(f64, usize)> = chains
        .iter()
        .flatten()
        .copied()
        .enumerate()
        .map(|(i, v)| (v, i))
        .collect();
    let s = pooled.len();
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank = vec![0.0; s];
    let mut i = 0;
    while i < s {
        let mut j = i;
        while j + 1 < s && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        // Ranks i + 1 ..= j + 1 tie: each gets their mean.
        let r = (i + j) as f64 / 2.0 + 1.0;
        for p in &pooled[i..=j] {
            rank[p.1] = r;
        }
        i = j + 1;
    }
    let mut out = Vec::with_capacity(chains.len());
    let mut at = 0;
    for c in chains {
        out.push(
            (at..at + c.len())
                .map(|k| normal_quantile((rank[k] - 0.375) / (s as f64 + 0.25)))
                .collect(),
        );
        at += c.len();
    }
    out
}

/// Means and unbiased variances of each chain. A chain whose draws are all equal has
/// exactly that mean and variance 0: the rounding of a sum of equal values must not give it
/// a variance of 10⁻³² that would turn an infinite R̂ into a finite 10¹⁴.
fn moments(chains: &[Vec<f64>]) -> (Vec<f64>, Vec<f64>) {
    let n = chains[0].len() as f64;
    let constant = |c: &[f64]| c.iter().all(|&v| v == c[0]);
    let means: Vec<f64> = chains
        .iter()
        .map(|c| {
            if constant(c) {
                c[0]
            } else {
                c.iter().sum::<f64>() / n
            }
        })
        .collect();
    let vars = chains
        .iter()
        .zip(&means)
        .map(|(c, m)| {
            if constant(c) {
                0.0
            } else {
                c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0)
            }
        })
        .collect();
    (means, vars)
}

/// (W, var⁺) of equal-length chains.
fn within_and_pooled(chains: &[Vec<f64>]) -> (f64, f64) {
    let (m, n) = (chains.len() as f64, chains[0].len() as f64);
    let (means, vars) = moments(chains);
    let w = vars.iter().sum::<f64>() / m;
    let grand = means.iter().sum::<f64>() / m;
    let b_over_n = if m > 1.0 {
        means.iter().map(|x| (x - grand) * (x - grand)).sum::<f64>() / (m - 1.0)
    } else {
        0.0
    };
    (w, (n - 1.0) / n * w + b_over_n)
}

/// √(var⁺ / W); 1 when no chain varies, +∞ when no chain varies but they differ.
fn classic_rhat(chains: &[Vec<f64>]) -> f64 {
    let (w, var_plus) = within_and_pooled(chains);
    if w <= 0.0 {
        return if var_plus > 0.0 { f64::INFINITY } else { 1.0 };
    }
    (var_plus / w).sqrt()
}

/// Autocovariance of one chain at lags 0..n (biased, divided by n), by direct sums.
fn autocovariance(c: &[f64]) -> Vec<f64> {
    let n = c.len();
    let mean = c.iter().sum::<f64>() / n as f64;
    let d: Vec<f64> = c.iter().map(|v| v - mean).collect();
    (0..n)
        .map(|t| {
            d[..n - t]
                .iter()
                .zip(&d[t..])
                .map(|(a, b)| a * b)
                .sum::<f64>()
                / n as f64
        })
        .collect()
}

/// Multi-chain effective sample size of equal-length chains (Vehtari et al. 2021, Eqs. 10–11):
/// ρ̂_0 = 1 and ρ̂_t = 1 − (W − mean_m γ̂_{t,m}) / var⁺ with γ̂ the chains' autocovariances
/// (divided by n); pairs ρ̂_{2k} + ρ̂_{2k+1} are summed while positive (Geyer's initial positive
/// sequence), made non-increasing (initial monotone sequence), and
/// τ̂ = −1 + 2 Σ_{t < T} ρ̂_t + ρ̂_T (the paper's estimate with the last even term, which
/// reduces the variance for antithetic chains), bounded below by 1/log₁₀ S; ESS = S / τ̂.
/// Chains that never move but differ (W = 0 < var⁺) have ρ̂_t = 1 at every lag: about one
/// draw per two (split) chains.
fn ess(chains: &[Vec<f64>]) -> f64 {
    let (m, n) = (chains.len(), chains[0].len());
    let s = (m * n) as f64;
    let (w, var_plus) = within_and_pooled(chains);
    if var_plus <= 0.0 {
        return s;
    }
    let acov: Vec<Vec<f64>> = chains.iter().map(|c| autocovariance(c)).collect();
    let rho_at = |t: usize| -> f64 {
        let mean_acov = acov.iter().map(|a| a[t]).sum::<f64>() / m as f64;
        1.0 - (w - mean_acov) / var_plus
    };
    let mut rho = vec![0.0; n];
    rho[0] = 1.0;
    rho[1] = rho_at(1);
    let (mut even, mut odd) = (1.0, rho[1]);
    let mut t = 0;
    while t + 5 < n && even + odd > 0.0 {
        t += 2;
        even = rho_at(t);
        odd = rho_at(t + 1);
        if even + odd >= 0.0 {
            rho[t] = even;
            rho[t + 1] = odd;
        }
    }
    let max_t = t;
    if even > 0.0 {
        rho[max_t] = even;
    }
    // Initial monotone sequence over the pairs.
    let mut t = 0;
    while t + 4 <= max_t {
        t += 2;
        let before = rho[t - 2] + rho[t - 1];
        if rho[t] + rho[t + 1] > before {
            rho[t] = before / 2.0;
            rho[t + 1] = rho[t];
        }
    }
    let tau = (-1.0 + 2.0 * rho[..max_t].iter().sum::<f64>() + rho[max_t]).max(1.0 / s.log10());
    s / tau
}

/// The `p` quantile of `values` (linear interpolation between order statistics, as R's
/// type 7 and NumPy's default).
fn quantile(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// Φ⁻¹(p) for p in (0, 1): Acklam's rational approximation (relative error below 1.2e-9),
/// refined by one Halley step on Φ(x) − p with Φ from the complementary error function.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    const LOW: f64 = 0.02425;
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let x = if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    };
    // One Halley step: e = Φ(x) − p, u = e √(2π) e^{x²/2}.
    let e = normal_cdf(x) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// Φ(x) = erfc(−x/√2)/2, with erfc from the scaled complementary error function.
pub fn normal_cdf(x: f64) -> f64 {
    let y = -x / std::f64::consts::SQRT_2;
    let erfc = if y >= 0.0 {
        (-y * y).exp() * crate::ibp::erfcx::erfcx(y)
    } else {
        2.0 - (-y * y).exp() * crate::ibp::erfcx::erfcx(-y)
    };
    erfc / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A standard normal draw (Box–Muller).
    fn normal(rng: &mut ChaCha8Rng) -> f64 {
        let u1 = 1.0 - rng.random::<f64>();
        let u2 = rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// `m` independent AR(1) chains x_t = φ x_{t−1} + √(1 − φ²) ε_t from the stationary law,
    /// each shifted by `shift[c]`.
    fn ar1(m: usize, n: usize, phi: f64, shift: &[f64], seed: u64) -> Vec<Vec<f64>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..m)
            .map(|c| {
                let mut x = normal(&mut rng);
                (0..n)
                    .map(|_| {
                        x = phi * x + (1.0 - phi * phi).sqrt() * normal(&mut rng);
                        x + shift[c]
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_normal_quantile_inverts_the_cdf() {
        for &p in &[
            1e-12, 1e-6, 0.001, 0.02, 0.02425, 0.1, 0.3, 0.5, 0.77, 0.975, 0.999999,
        ] {
            let x = normal_quantile(p);
            assert!(
                (normal_cdf(x) - p).abs() <= 1e-14 * p.max(1e-3),
                "p = {p}: Φ({x}) = {}",
                normal_cdf(x)
            );
        }
        assert!(normal_quantile(0.5).abs() < 1e-15);
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-12);
        assert!((normal_cdf(1.0) - 0.8413447460685429).abs() < 1e-15);
    }

    #[test]
    fn independent_chains_of_one_ar1_process_agree_and_have_its_ess() {
        // φ = 0.5: τ = (1 + φ)/(1 − φ) = 3, so S draws are worth S/3 independent ones.
        let (m, n, phi) = (4, 2000, 0.5);
        let mut bulk = Vec::new();
        for seed in 0..10 {
            let d = diagnostics(&ar1(m, n, phi, &[0.0; 4], seed));
            assert!(d.rhat < RHAT_THRESHOLD, "seed {seed}: R̂ = {}", d.rhat);
            bulk.push(d.ess_bulk);
            assert!(d.ess_tail > 0.0 && d.ess_tail <= (m * n) as f64 * 1.5);
        }
        let mean = bulk.iter().sum::<f64>() / bulk.len() as f64;
        let want = (m * n) as f64 * (1.0 - phi) / (1.0 + phi);
        assert!(
            (mean / want - 1.0).abs() < 0.1,
            "mean bulk ESS {mean}, theory {want}"
        );
        // Independent draws (φ = 0): ESS near S.
        let d = diagnostics(&ar1(m, n, 0.0, &[0.0; 4], 99));
        assert!((d.ess_bulk / (m * n) as f64 - 1.0).abs() < 0.1, "{d:?}");
    }

    #[test]
    fn chains_stuck_at_different_values_are_flagged() {
        // One chain shifted by one marginal standard deviation.
        let d = diagnostics(&ar1(4, 1000, 0.5, &[0.0, 0.0, 0.0, 1.0], 3));
        assert!(d.rhat > 1.1, "R̂ = {}", d.rhat);
        // Chains that never move, at different values: R̂ infinite, and about one effective
        // draw per chain, not one per draw (S, as when W = 0 returned early). The values are ones whose normal scores, summed
        // over a chain, do not give back the score (the rounding once made R̂ 7·10¹⁴).
        for stuck in [
            vec![vec![5.0; 100], vec![7.0; 100]],
            vec![
                vec![3.0; 999],
                vec![1.0; 999],
                vec![2.0; 999],
                vec![3.0; 999],
            ],
            vec![vec![0.1; 37], vec![0.2; 37], vec![0.1; 37]],
        ] {
            let d = diagnostics(&stuck);
            assert_eq!(d.rhat, f64::INFINITY, "{d:?}");
            let chains = stuck.len() as f64;
            assert!(
                d.ess_bulk < 2.0 * chains && d.ess_tail < 2.0 * chains,
                "{d:?}"
            );
        }
        // A chain that drifts: split R̂ sees it even with a single chain.
        let drift: Vec<f64> = (0..1000).map(|t| t as f64 / 100.0).collect();
        assert!(diagnostics(&[drift]).rhat > 1.5);
        // Different spreads only (the folded R̂): same centre, one chain 4× wider.
        let mut c = ar1(4, 1000, 0.0, &[0.0; 4], 5);
        c[3].iter_mut().for_each(|v| *v *= 4.0);
        assert!(diagnostics(&c).rhat > 1.05);
    }

    /// Chains from a 64-bit linear congruential generator (the same integers in any language):
    /// x_t = φ x_{t−1} + (u_t − ½), plus a shift per chain.
    fn lcg_chains(m: usize, n: usize, phi: f64, seed: u64, shift: &[f64]) -> Vec<Vec<f64>> {
        let mut state = seed;
        (0..m)
            .map(|c| {
                let mut x = 0.0;
                (0..n)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                        x = phi * x + (u - 0.5);
                        x + shift[c]
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_same_values_as_arviz() {
        // Reference values: ArviZ 0.23.4 (Python 3.11, NumPy 2), `az.rhat(a, method="rank")`,
        // `az.ess(a, method="bulk")`, `az.ess(a, method="tail")` on the same LCG chains
        // (computed once outside the repository; the chains are integer arithmetic, so both
        // sides see identical draws).
        type Case<'a> = (usize, usize, f64, u64, &'a [f64], [f64; 3]);
        let cases: [Case; 4] = [
            (
                4,
                500,
                0.7,
                1,
                &[0.0; 4],
                [1.0037820472094638, 406.9246781577833, 733.4259276177279],
            ),
            (
                4,
                500,
                0.7,
                2,
                &[0.0, 0.0, 0.0, 0.3],
                [1.0558197699368843, 79.77935144479433, 606.3658116593967],
            ),
            (
                2,
                101,
                0.2,
                3,
                &[0.0; 2],
                [1.007747053487661, 108.57601406685627, 149.9021431232024],
            ),
            (
                3,
                400,
                -0.3,
                4,
                &[0.0; 3],
                [1.0003591909464193, 2074.9165682273006, 1153.760947848838],
            ),
        ];
        for (m, n, phi, seed, shift, want) in cases {
            let d = diagnostics(&lcg_chains(m, n, phi, seed, shift));
            let got = [d.rhat, d.ess_bulk, d.ess_tail];
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g / w - 1.0).abs() < 1e-9,
                    "seed {seed}: got {got:?}, ArviZ {want:?}"
                );
            }
        }
    }

    #[test]
    fn constant_and_short_chains_are_trivial() {
        let d = diagnostics(&[vec![2.0; 50], vec![2.0; 50]]);
        assert_eq!(
            d,
            Diagnostics {
                rhat: 1.0,
                ess_bulk: 100.0,
                ess_tail: 100.0
            }
        );
        assert_eq!(diagnostics(&[vec![1.0, 2.0, 3.0]]).rhat, 1.0);
        assert_eq!(diagnostics(&[]).ess_bulk, 0.0);
    }
}
