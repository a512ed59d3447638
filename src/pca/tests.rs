//! PCA against an independent SVD: reconstruction error, subspaces, and argument checks.

use super::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Uniform noise plus a column shift (so centring matters).
fn random(n: usize, d: usize, seed: u64) -> RowMatrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let data = (0..n * d)
        .map(|i| rng.random::<f64>() * 2.0 - 1.0 + (i % d) as f64 * 0.3)
        .collect();
    RowMatrix::new(n, d, data)
}

/// Singular values of X − 1 mᵀ by faer's full SVD of a separately centred copy.
fn reference_singular_values(x: &RowMatrix) -> Vec<f64> {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut m = vec![0.0; d];
    for r in x.rows() {
        for (a, v) in m.iter_mut().zip(r) {
            *a += v / n as f64;
        }
    }
    let xc = faer::Mat::<f64>::from_fn(n, d, |i, j| x.row(i)[j] - m[j]);
    let svd = xc.svd().unwrap();
    let s = svd.S().column_vector();
    (0..n.min(d)).map(|i| s[i]).collect()
}

fn sq_error(a: &RowMatrix, b: &RowMatrix) -> f64 {
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(x, y)| (x - y) * (x - y))
        .sum()
}

/// max |V Vᵀ − I|.
fn orthonormality_error(v: &RowMatrix) -> f64 {
    let mut worst = 0.0f64;
    for i in 0..v.n_rows() {
        for j in 0..v.n_rows() {
            let dot: f64 = v.row(i).iter().zip(v.row(j)).map(|(a, b)| a * b).sum();
            let want = if i == j { 1.0 } else { 0.0 };
            worst = worst.max((dot - want).abs());
        }
    }
    worst
}

#[test]
fn reconstruction_error_is_the_discarded_spectrum() {
    // (N, D, D', method): tall for Svd, wide (4N ≤ D) for Gram.
    for (n, d, k, method) in [
        (60, 20, 6, PcaMethod::Svd),
        (15, 90, 5, PcaMethod::Gram),
        (15, 90, 5, PcaMethod::Svd),
        (40, 40, 40, PcaMethod::Svd),
    ] {
        let x = random(n, d, 7 + n as u64);
        let pca = Pca::params(k).method(method).fit(&x).unwrap();
        assert_eq!(pca.method(), method);
        let s = reference_singular_values(&x);
        let discarded: f64 = s[k..].iter().map(|v| v * v).sum();
        let xhat = pca.inverse_transform(&pca.transform(&x));
        let err = sq_error(&x, &xhat);
        let total: f64 = s.iter().map(|v| v * v).sum();
        // Relative to the discarded part, or to the total when nothing is discarded.
        let scale = if discarded > 0.0 { discarded } else { total };
        assert!(
            (err - discarded).abs() <= 1e-8 * scale,
            "{method:?} N={n} D={d} k={k}: ‖X − X̂‖² = {err}, Σ discarded s² = {discarded}"
        );
        for i in 0..k {
            assert!((pca.singular_values()[i] - s[i]).abs() <= 1e-9 * s[0]);
            let ev = s[i] * s[i] / (n - 1) as f64;
            assert!((pca.explained_variance()[i] - ev).abs() <= 1e-9 * s[0] * s[0]);
        }
        assert!((pca.total_variance() - total / (n - 1) as f64).abs() <= 1e-9 * total);
        assert!(orthonormality_error(pca.components()) < 1e-10);
    }
}

#[test]
fn gram_path_with_d_prime_equal_to_n_stays_orthonormal() {
    // Centred data of N rows have rank N − 1: the last component has zero variance.
    let x = random(10, 60, 3);
    let pca = Pca::params(10).method(PcaMethod::Gram).fit(&x).unwrap();
    assert!(pca.components().as_slice().iter().all(|v| v.is_finite()));
    assert!(orthonormality_error(pca.components()) < 1e-10);
    let xhat = pca.inverse_transform(&pca.transform(&x));
    let total: f64 = reference_singular_values(&x).iter().map(|v| v * v).sum();
    assert!(sq_error(&x, &xhat) <= 1e-20 * total.max(1.0) + 1e-12);
}

#[test]
fn randomized_matches_the_exact_subspace_when_there_is_a_gap() {
    // Rank-5 signal with singular values ≈ 100–500 plus noise of size 0.01: a gap of 1e4.
    let (n, d, k) = (300, 200, 5);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut gauss = || crate::generate::standard_normal(&mut rng);
    let f: Vec<f64> = (0..n * k).map(|_| gauss()).collect();
    let g: Vec<f64> = (0..k * d).map(|_| gauss()).collect();
    let mut data = vec![0.0; n * d];
    for i in 0..n {
        for j in 0..d {
            let mut v = 3.0 + 0.01 * gauss();
            for c in 0..k {
                v += (c + 1) as f64 * f[i * k + c] * g[c * d + j] * 0.1;
            }
            data[i * d + j] = v;
        }
    }
    let x = RowMatrix::new(n, d, data);
    let exact = Pca::params(k).method(PcaMethod::Svd).fit(&x).unwrap();
    let rand = Pca::params(k)
        .method(PcaMethod::Randomized)
        .seed(4)
        .fit(&x)
        .unwrap();
    assert_eq!(rand.method(), PcaMethod::Randomized);
    // Cosines of the principal angles: singular values of V_r V_eᵀ (k × k).
    let mut m = faer::Mat::<f64>::zeros(k, k);
    for i in 0..k {
        for j in 0..k {
            m[(i, j)] = rand
                .components()
                .row(i)
                .iter()
                .zip(exact.components().row(j))
                .map(|(a, b)| a * b)
                .sum();
        }
    }
    let cos = m.singular_values().unwrap();
    let min_cos = cos.iter().copied().fold(f64::INFINITY, f64::min);
    let max_sin = (1.0 - min_cos * min_cos).max(0.0).sqrt();
    assert!(max_sin < 1e-6, "largest principal angle sine {max_sin}");
    for i in 0..k {
        let (a, b) = (rand.singular_values()[i], exact.singular_values()[i]);
        assert!((a - b).abs() <= 1e-8 * b, "s_{i}: {a} vs {b}");
    }
    // Same seed, same result; Auto picks an exact path at this size.
    let again = Pca::params(k)
        .method(PcaMethod::Randomized)
        .seed(4)
        .fit(&x)
        .unwrap();
    assert_eq!(again.components(), rand.components());
    assert_eq!(Pca::params(k).resolve(n, d), PcaMethod::Svd);
    assert_eq!(Pca::params(100).resolve(100, 230_400), PcaMethod::Gram);
    assert_eq!(Pca::params(50).resolve(100_000, 1_000), PcaMethod::Svd);
    assert_eq!(
        Pca::params(50).resolve(100_000, 5_000),
        PcaMethod::Randomized
    );
}

#[test]
fn bad_arguments_are_errors() {
    let x = random(8, 5, 1);
    assert_eq!(
        Pca::params(6).fit(&x).unwrap_err(),
        PcaError::TooManyComponents {
            asked: 6,
            n: 8,
            d: 5,
            max: 5
        }
    );
    let msg = Pca::params(9)
        .fit(&random(8, 20, 1))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("choose D' ≤ min(N, D) = 8"), "{msg}");
    assert_eq!(Pca::params(0).fit(&x).unwrap_err(), PcaError::NoComponents);
    let mut bad = x.clone();
    bad.row_mut(2)[1] = f64::NAN;
    assert_eq!(Pca::params(2).fit(&bad).unwrap_err(), PcaError::NonFinite);
}

#[test]
fn transform_maps_the_mean_to_zero_and_directions_skip_the_mean() {
    let x = random(30, 8, 5);
    let pca = Pca::params(3).fit(&x).unwrap();
    let m = RowMatrix::new(1, 8, pca.mean().to_vec());
    let y = pca.transform(&m);
    assert!(y.as_slice().iter().all(|v| v.abs() < 1e-12));
    let e1 = RowMatrix::from_rows(&[[1.0, 0.0, 0.0]]);
    let dir = pca.inverse_transform_directions(&e1);
    assert_eq!(dir.row(0), pca.components().row(0));
    let pt = pca.inverse_transform(&e1);
    for j in 0..8 {
        assert!((pt.row(0)[j] - dir.row(0)[j] - pca.mean()[j]).abs() < 1e-15);
    }
}

#[test]
fn orthonormalisation_completes_vanishing_rows() {
    // Rows e0, e1 then two zero rows: completed by e2 and e3.
    let mut v = RowMatrix::zeros(4, 4);
    v.row_mut(0)[0] = 1.0;
    v.row_mut(1)[1] = 1.0;
    exact::orthonormalise_rows(&mut v, 2);
    assert!(orthonormality_error(&v) < 1e-15);
    // The missing direction w = (1, …, 1)/√5 leaves every e_j a residual of only 1/√5 < 1/2:
    // the fallback takes the best basis vector, which gives ±w.
    let w = [1.0 / 5f64.sqrt(); 5];
    let mut rows = RowMatrix::zeros(5, 5);
    rows.row_mut(0).copy_from_slice(&w);
    for j in 0..4 {
        rows.row_mut(j + 1)[j] = 1.0;
    }
    exact::orthonormalise_rows(&mut rows, 1);
    let mut v = RowMatrix::zeros(5, 5);
    for i in 0..4 {
        v.row_mut(i).copy_from_slice(rows.row(i + 1));
    }
    exact::orthonormalise_rows(&mut v, 4);
    assert!(orthonormality_error(&v) < 1e-12);
    let c: f64 = v.row(4).iter().zip(&w).map(|(a, b)| a * b).sum();
    assert!((c.abs() - 1.0).abs() < 1e-12, "{c}");
}

#[test]
fn uncentred_projection_is_x_times_the_components() {
    let x = random(30, 8, 5);
    let pca = Pca::params(4).fit(&x).unwrap();
    let y = pca.project_uncentred(&x);
    for i in 0..x.n_rows() {
        for (j, c) in pca.components().rows().enumerate() {
            let want: f64 = x.row(i).iter().zip(c).map(|(a, b)| a * b).sum();
            assert!((y.row(i)[j] - want).abs() < 1e-12 * (1.0 + want.abs()));
        }
    }
}
