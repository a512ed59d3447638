//! The three IBP samplers draw from the right posterior: on N = 3 rows, D = 2, fixed α and
//! σ's, the exact posterior over equivalence classes [Z] is enumerated (all multisets of
//! non-zero column histories with K ≤ 12; the mass the enumeration puts on K = 12 is below
//! 1e-6, so the truncated tail is negligible), and long chains must reproduce P(K = k) (total
//! variation distance) and two marginals: P(rows 0 and 1 share a feature) and P(row 2 holds
//! no feature).
//!
//! Tolerances: 200 000 sweeps after 2 000 of burn-in. The Monte Carlo standard error (SE) of
//! every estimated probability is measured by batch means (100 batches of 2 000 sweeps) and
//! must be below 0.002 (the chain mixes); each estimate must then lie within 5 SE + 0.001 of
//! the exact value (the 0.001 absorbs the error of the SE estimate itself), and the total
//! variation distance between the empirical and exact laws of K must be below 0.01. A chain
//! that favours shared features by 0.01 in P(share) — the size of the biases these tests
//! caught during development — fails by more than 5 SE.

use madbayes::RowMatrix;
use madbayes::ibp::{IbpKind, IbpSampler, collapsed_log_lik, log_ibp_prior};

const ALPHA: f64 = 1.0;
const SIGMA_X: f64 = 0.4;
const SIGMA_A: f64 = 1.0;
const N: usize = 3;
const K_MAX: usize = 12;
const BURN: usize = 2_000;
const SAMPLES: usize = 200_000;

fn data() -> RowMatrix {
    RowMatrix::from_rows(&[[1.0, 0.2], [0.9, 1.1], [0.1, 1.0]])
}

fn z_of_masks(masks: &[u32]) -> RowMatrix {
    let mut z = RowMatrix::zeros(N, masks.len());
    for (k, &m) in masks.iter().enumerate() {
        for i in 0..N {
            z.row_mut(i)[k] = f64::from((m >> i) & 1);
        }
    }
    z
}

/// All multisets (non-decreasing sequences) of histories 1..=7 with at most K_MAX elements.
fn classes(prefix: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
    out.push(prefix.clone());
    if prefix.len() == K_MAX {
        return;
    }
    let start = prefix.last().copied().unwrap_or(1);
    for h in start..(1 << N) {
        prefix.push(h);
        classes(prefix, out);
        prefix.pop();
    }
}

/// Statistics of one class: (K, rows 0 and 1 share a feature, row 2 holds none).
fn stats_of_masks(masks: &[u32]) -> (usize, bool, bool) {
    let share = masks.iter().any(|&m| m & 0b011 == 0b011);
    let empty2 = masks.iter().all(|&m| m & 0b100 == 0);
    (masks.len(), share, empty2)
}

fn stats_of_z(z: &RowMatrix) -> (usize, bool, bool) {
    let masks: Vec<u32> = (0..z.n_cols())
        .map(|k| (0..N).map(|i| u32::from(z.row(i)[k] != 0.0) << i).sum())
        .filter(|&m| m != 0)
        .collect();
    stats_of_masks(&masks)
}

struct Exact {
    p_k: Vec<f64>,
    share: f64,
    empty2: f64,
}

fn exact() -> Exact {
    let x = data();
    let mut all = Vec::new();
    classes(&mut Vec::new(), &mut all);
    let logp: Vec<f64> = all
        .iter()
        .map(|m| {
            let z = z_of_masks(m);
            log_ibp_prior(&z, ALPHA) + collapsed_log_lik(&x, &z, SIGMA_X, SIGMA_A)
        })
        .collect();
    let max = logp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = logp.iter().map(|l| (l - max).exp()).collect();
    let total: f64 = w.iter().sum();
    let mut e = Exact {
        p_k: vec![0.0; K_MAX + 1],
        share: 0.0,
        empty2: 0.0,
    };
    for (m, wi) in all.iter().zip(&w) {
        let p = wi / total;
        let (k, share, empty2) = stats_of_masks(m);
        e.p_k[k] += p;
        if share {
            e.share += p;
        }
        if empty2 {
            e.empty2 += p;
        }
    }
    println!("exact posterior mass at K = {K_MAX}: {:.2e}", e.p_k[K_MAX]);
    assert!(e.p_k[K_MAX] < 1e-6, "truncation mass {}", e.p_k[K_MAX]);
    e
}

/// Mean and batch-means standard error of a 0/1 series.
fn mean_and_se(v: &[bool]) -> (f64, f64) {
    let mean = v.iter().filter(|&&b| b).count() as f64 / v.len() as f64;
    let batches = 100;
    let len = v.len() / batches;
    let bm: Vec<f64> = v
        .chunks(len)
        .take(batches)
        .map(|c| c.iter().filter(|&&b| b).count() as f64 / c.len() as f64)
        .collect();
    let var = bm.iter().map(|b| (b - mean) * (b - mean)).sum::<f64>() / (batches - 1) as f64;
    (mean, (var / batches as f64).sqrt())
}

fn check_sampler(kind: IbpKind, window: usize, seed: u64) {
    let ex = exact();
    let x = data();
    let params = IbpSampler::params(kind)
        .alpha(ALPHA)
        .sigma_x(SIGMA_X)
        .sigma_a(SIGMA_A)
        .window(window)
        .iterations(BURN + SAMPLES)
        .seed(seed)
        .check()
        .unwrap();
    let mut k_series = Vec::with_capacity(SAMPLES);
    let mut share = Vec::with_capacity(SAMPLES);
    let mut empty2 = Vec::with_capacity(SAMPLES);
    params
        .fit_with(&x, &mut |rec, z| {
            if rec.iteration > BURN {
                let (k, s, e) = stats_of_z(z);
                k_series.push(k);
                share.push(s);
                empty2.push(e);
            }
        })
        .unwrap();
    let mut tv = 0.0;
    for k in 0..=K_MAX + 1 {
        let hit: Vec<bool> = k_series.iter().map(|&v| v == k).collect();
        let (p, se) = mean_and_se(&hit);
        let exact = ex.p_k.get(k).copied().unwrap_or(0.0);
        tv += 0.5 * (p - exact).abs();
        assert!(se < 0.002, "{kind:?}: SE of P(K = {k}) is {se}");
        assert!(
            (p - exact).abs() < 5.0 * se + 0.001,
            "{kind:?} W={window}: P(K = {k}) = {p} vs exact {exact} (SE {se})"
        );
    }
    let (ps, se_s) = mean_and_se(&share);
    let (pe, se_e) = mean_and_se(&empty2);
    println!(
        "{kind:?} W={window}: TV(K) = {tv:.4}; P(share01) = {ps:.4} (exact {:.4}, SE {se_s:.4}); \
         P(row 2 empty) = {pe:.4} (exact {:.4}, SE {se_e:.4}); exact P(K) = {:?}",
        ex.share,
        ex.empty2,
        ex.p_k
            .iter()
            .map(|p| (p * 1e4).round() / 1e4)
            .collect::<Vec<_>>()
    );
    assert!(
        se_s < 0.002 && se_e < 0.002,
        "chain mixes too slowly for the bounds"
    );
    assert!(tv < 0.01, "{kind:?} W={window}: TV distance of K {tv}");
    assert!(
        (ps - ex.share).abs() < 5.0 * se_s + 0.001,
        "{kind:?} W={window}: P(share) {ps} vs {} (SE {se_s})",
        ex.share
    );
    assert!(
        (pe - ex.empty2).abs() < 5.0 * se_e + 0.001,
        "{kind:?} W={window}: P(row 2 empty) {pe} vs {} (SE {se_e})",
        ex.empty2
    );
}

#[test]
fn collapsed_gibbs_samples_the_exact_posterior() {
    check_sampler(IbpKind::Collapsed, 1, 1);
}

#[test]
fn semi_collapsed_gibbs_samples_the_exact_posterior() {
    check_sampler(IbpKind::SemiCollapsed, 1, 2);
}

#[test]
fn accelerated_gibbs_samples_the_exact_posterior() {
    check_sampler(IbpKind::Accelerated, 1, 3);
}

#[test]
fn accelerated_gibbs_with_windows_of_two_samples_the_exact_posterior() {
    check_sampler(IbpKind::Accelerated, 2, 4);
}
