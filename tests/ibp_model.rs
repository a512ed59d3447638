//! The IBP model functions against independent direct computations: the collapsed likelihood
//! against the explicit Gaussian density of each column of X, and the log prior of [Z]
//! against the probabilities of the Indian buffet process computed customer by customer.

use madbayes::RowMatrix;
use madbayes::ibp::{a_posterior, collapsed_log_lik, log_ibp_prior};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// log N(x; 0, C) by a textbook Cholesky written here (independent of the crate).
fn log_gauss(x: &[f64], c: &[f64]) -> f64 {
    let n = x.len();
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = c[i * n + j];
            for p in 0..j {
                s -= l[i * n + p] * l[j * n + p];
            }
            l[i * n + j] = if i == j { s.sqrt() } else { s / l[j * n + j] };
        }
    }
    let mut y = x.to_vec();
    for i in 0..n {
        for p in 0..i {
            y[i] -= l[i * n + p] * y[p];
        }
        y[i] /= l[i * n + i];
    }
    let logdet: f64 = (0..n).map(|i| 2.0 * l[i * n + i].ln()).sum();
    let quad: f64 = y.iter().map(|v| v * v).sum();
    -0.5 * (n as f64 * (2.0 * std::f64::consts::PI).ln() + logdet + quad)
}

#[test]
fn collapsed_likelihood_equals_explicit_gaussian_density() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (n, d) = (5, 3);
    let x = RowMatrix::new(
        n,
        d,
        (0..n * d)
            .map(|_| rng.random::<f64>() * 3.0 - 1.5)
            .collect(),
    );
    let zs = [
        RowMatrix::zeros(n, 0),
        RowMatrix::from_rows(&[[1.0], [0.0], [1.0], [1.0], [0.0]]),
        // duplicate columns, a zero column, a column that is the sum of two others
        RowMatrix::from_rows(&[
            [1.0, 1.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 0.0, 0.0, 1.0],
            [1.0, 1.0, 0.0, 1.0, 1.0],
            [0.0, 0.0, 0.0, 0.0, 0.0],
        ]),
        RowMatrix::from_rows(&[
            [1.0, 0.0, 1.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0],
            [0.0, 0.0, 1.0],
        ]),
    ];
    for (sx, sa) in [(0.5, 1.0), (0.1, 2.0), (1.3, 0.4)] {
        for z in &zs {
            let k = z.n_cols();
            // Column d of X is N(0, σ_A² Z Zᵀ + σ_X² I).
            let mut c = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    let zz: f64 = (0..k).map(|t| z.row(i)[t] * z.row(j)[t]).sum();
                    c[i * n + j] = sa * sa * zz + if i == j { sx * sx } else { 0.0 };
                }
            }
            let direct: f64 = (0..d)
                .map(|col| {
                    let xc: Vec<f64> = (0..n).map(|i| x.row(i)[col]).collect();
                    log_gauss(&xc, &c)
                })
                .sum();
            let got = collapsed_log_lik(x.view(), z, sx, sa);
            assert!(
                (got - direct).abs() < 1e-10 * direct.abs().max(1.0),
                "K = {k}, σ = ({sx}, {sa}): {got} vs {direct}"
            );
        }
    }
}

#[test]
fn posterior_mean_of_a_solves_the_ridge_normal_equations() {
    let x = RowMatrix::from_rows(&[[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [0.0, 1.0]]);
    let z = RowMatrix::from_rows(&[[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 1.0]]);
    let (sx, sa) = (0.5, 1.5);
    let post = a_posterior(x.view(), &z, sx, sa);
    // (ZᵀZ + r I) μ = ZᵀX and Σ (ZᵀZ + r I) = σ_X² I.
    let r = (sx / sa) * (sx / sa);
    for i in 0..2 {
        let m_row: Vec<f64> = (0..2)
            .map(|j| {
                let g: f64 = (0..4).map(|t| z.row(t)[i] * z.row(t)[j]).sum();
                g + if i == j { r } else { 0.0 }
            })
            .collect();
        for c in 0..2 {
            let lhs: f64 = (0..2).map(|j| m_row[j] * post.mean.row(j)[c]).sum();
            let rhs: f64 = (0..4).map(|t| z.row(t)[i] * x.row(t)[c]).sum();
            assert!((lhs - rhs).abs() < 1e-12);
        }
        for c in 0..2 {
            let v: f64 = (0..2).map(|j| post.cov.row(c)[j] * m_row[j]).sum();
            let want = if c == i { sx * sx } else { 0.0 };
            assert!((v - want).abs() < 1e-12);
        }
    }
}

fn z_of_masks(n: usize, masks: &[u32]) -> RowMatrix {
    let mut z = RowMatrix::zeros(n, masks.len());
    for (k, &m) in masks.iter().enumerate() {
        for i in 0..n {
            z.row_mut(i)[k] = f64::from((m >> i) & 1);
        }
    }
    z
}

/// P([Z]) for every class with at most `k_cap` features, by running the buffet process
/// customer by customer: customer i (1-based) takes each existing dish with probability
/// m_k/i and then Poisson(α/i) new dishes. Classes are keyed by their sorted column histories.
fn buffet_class_probabilities(n: usize, alpha: f64, k_cap: usize) -> BTreeMap<Vec<u32>, f64> {
    let mut states: BTreeMap<Vec<u32>, f64> = BTreeMap::new();
    states.insert(Vec::new(), 1.0);
    for i in 0..n {
        let cust = (i + 1) as f64;
        let lambda = alpha / cust;
        let mut next: BTreeMap<Vec<u32>, f64> = BTreeMap::new();
        for (cols, p) in &states {
            let k = cols.len();
            for take in 0..(1u32 << k) {
                let mut q = *p;
                let mut new_cols = cols.clone();
                for (c, col) in new_cols.iter_mut().enumerate() {
                    let m = f64::from(col.count_ones());
                    if (take >> c) & 1 == 1 {
                        q *= m / cust;
                        *col |= 1 << i;
                    } else {
                        q *= 1.0 - m / cust;
                    }
                }
                let mut pois = (-lambda).exp();
                for j in 0..=(k_cap - k) {
                    let mut s = new_cols.clone();
                    s.extend(std::iter::repeat_n(1u32 << i, j));
                    s.sort_unstable();
                    *next.entry(s).or_default() += q * pois;
                    pois *= lambda / (j + 1) as f64;
                }
            }
        }
        states = next;
    }
    states
}

#[test]
fn log_prior_equals_buffet_process_probabilities() {
    for (n, alpha) in [(3, 1.3), (4, 0.7)] {
        let k_cap = 6;
        let probs = buffet_class_probabilities(n, alpha, k_cap);
        let mut total = 0.0;
        for (cols, p) in &probs {
            let got = log_ibp_prior(&z_of_masks(n, cols), alpha).exp();
            assert!(
                (got - p).abs() < 1e-12 * p.max(1e-300) + 1e-300,
                "N = {n}, class {cols:?}: formula {got} vs buffet {p}"
            );
            total += got;
        }
        // The classes with K ≤ 6 hold P(Poisson(α H_N) ≤ 6) of the prior mass.
        let lam = alpha * (1..=n).map(|j| 1.0 / j as f64).sum::<f64>();
        let mut pk = (-lam).exp();
        let mut want = 0.0;
        for k in 0..=k_cap {
            want += pk;
            pk *= lam / (k + 1) as f64;
        }
        assert!((total - want).abs() < 1e-12, "N = {n}: {total} vs {want}");
    }
}

#[test]
fn log_prior_ignores_column_order_and_zero_columns() {
    let z = RowMatrix::from_rows(&[[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]);
    let zp = RowMatrix::from_rows(&[
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
        [0.0, 1.0, 1.0, 0.0],
    ]);
    assert!((log_ibp_prior(&z, 2.0) - log_ibp_prior(&zp, 2.0)).abs() < 1e-14);
}
