//! Small dense helpers for the `K × K` matrices of the IBP samplers (row-major `Vec<f64>`).
//!
//! K (the number of features) stays small — tens at most — so these are plain loops, in a
//! fixed order, like the Cholesky of `features::lstsq`: the same inputs give the same bits on
//! any machine and any thread count. Also the standard-normal draw used by the samplers
//! (Box–Muller on a ChaCha8 stream).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Lower Cholesky factor L of a symmetric positive-definite `k × k` matrix (A = L Lᵀ), or
/// `None` when a pivot is not positive.
pub(crate) fn cholesky(a: &[f64], k: usize) -> Option<Vec<f64>> {
    let mut l = Vec::new();
    cholesky_into(a, k, &mut l).then_some(l)
}

/// [`cholesky`] into `l` (resized to `k × k`); false when a pivot is not positive.
pub(crate) fn cholesky_into(a: &[f64], k: usize, l: &mut Vec<f64>) -> bool {
    debug_assert_eq!(a.len(), k * k);
    l.clear();
    l.resize(k * k, 0.0);
    for j in 0..k {
        let mut s = a[j * k + j];
        for p in 0..j {
            s -= l[j * k + p] * l[j * k + p];
        }
        if s.is_nan() || s <= 0.0 {
            return false;
        }
        let ljj = s.sqrt();
        l[j * k + j] = ljj;
        for i in j + 1..k {
            let mut v = a[i * k + j];
            for p in 0..j {
                v -= l[i * k + p] * l[j * k + p];
            }
            l[i * k + j] = v / ljj;
        }
    }
    true
}

/// log det A = 2 Σ_i log L_ii from the Cholesky factor of A.
pub(crate) fn chol_logdet(l: &[f64], k: usize) -> f64 {
    (0..k).map(|i| l[i * k + i].ln()).sum::<f64>() * 2.0
}

/// Forward substitution: B (`k × d`) ← L⁻¹ B.
pub(crate) fn forward(l: &[f64], k: usize, b: &mut [f64], d: usize) {
    for i in 0..k {
        for p in 0..i {
            let f = l[i * k + p];
            if f != 0.0 {
                for c in 0..d {
                    b[i * d + c] -= f * b[p * d + c];
                }
            }
        }
        let inv = 1.0 / l[i * k + i];
        b[i * d..(i + 1) * d].iter_mut().for_each(|v| *v *= inv);
    }
}

/// Backward substitution: B (`k × d`) ← L⁻ᵀ B.
pub(crate) fn backward(l: &[f64], k: usize, b: &mut [f64], d: usize) {
    for i in (0..k).rev() {
        for p in i + 1..k {
            let f = l[p * k + i];
            if f != 0.0 {
                for c in 0..d {
                    b[i * d + c] -= f * b[p * d + c];
                }
            }
        }
        let inv = 1.0 / l[i * k + i];
        b[i * d..(i + 1) * d].iter_mut().for_each(|v| *v *= inv);
    }
}

/// B ← A⁻¹ B for A = L Lᵀ.
pub(crate) fn chol_solve(l: &[f64], k: usize, b: &mut [f64], d: usize) {
    forward(l, k, b, d);
    backward(l, k, b, d);
}

/// A⁻¹ for A = L Lᵀ (symmetric, `k × k`).
pub(crate) fn chol_inverse(l: &[f64], k: usize) -> Vec<f64> {
    let mut inv = identity(k, 1.0);
    chol_solve(l, k, &mut inv, k);
    // Symmetrise: both triangles hold the same value up to rounding.
    for i in 0..k {
        for j in 0..i {
            let v = 0.5 * (inv[i * k + j] + inv[j * k + i]);
            inv[i * k + j] = v;
            inv[j * k + i] = v;
        }
    }
    inv
}

/// `s · I_k`.
pub(crate) fn identity(k: usize, s: f64) -> Vec<f64> {
    let mut m = vec![0.0; k * k];
    for i in 0..k {
        m[i * k + i] = s;
    }
    m
}

/// Removes row and column `idx` from a `k × k` matrix.
pub(crate) fn remove_index(a: &[f64], k: usize, idx: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity((k - 1) * (k - 1));
    for i in (0..k).filter(|&i| i != idx) {
        for j in (0..k).filter(|&j| j != idx) {
            out.push(a[i * k + j]);
        }
    }
    out
}

/// diag(A, s · I_j): a `k × k` matrix grown by `j` rows and columns.
pub(crate) fn grow_diag(a: &[f64], k: usize, j: usize, s: f64) -> Vec<f64> {
    let kk = k + j;
    let mut out = vec![0.0; kk * kk];
    for i in 0..k {
        out[i * kk..i * kk + k].copy_from_slice(&a[i * k..(i + 1) * k]);
    }
    for i in k..kk {
        out[i * kk + i] = s;
    }
    out
}

/// out = A z for a `k × k` matrix A.
pub(crate) fn matvec(a: &[f64], k: usize, z: &[f64], out: &mut [f64]) {
    for i in 0..k {
        let row = &a[i * k..(i + 1) * k];
        out[i] = row.iter().zip(z).map(|(p, q)| p * q).sum();
    }
}

/// One draw from N(0, 1) (Box–Muller; the second value of the pair is discarded so every draw
/// uses exactly two uniforms).
pub(crate) fn std_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Mean and one draw of the Gaussian with precision P (`k × k`) and information vector `h`
/// (`k × d`, one column per data dimension): every column c is N(P⁻¹ h_c, P⁻¹), independent
/// across c. With P = L Lᵀ the draw is P⁻¹h + L⁻ᵀ ε, ε ~ N(0, I), since
/// Cov(L⁻ᵀ ε) = L⁻ᵀ L⁻¹ = P⁻¹. Returns `None` when P is not positive definite.
pub(crate) fn draw_information(
    p: &[f64],
    h: &[f64],
    k: usize,
    d: usize,
    rng: &mut ChaCha8Rng,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let l = cholesky(p, k)?;
    let mut mean = h.to_vec();
    chol_solve(&l, k, &mut mean, d);
    let mut eps: Vec<f64> = (0..k * d).map(|_| std_normal(rng)).collect();
    backward(&l, k, &mut eps, d);
    let draw = mean.iter().zip(&eps).map(|(m, e)| m + e).collect();
    Some((mean, draw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restarts::run_rng;

    #[test]
    fn cholesky_inverse_and_logdet() {
        let a = vec![4.0, 2.0, 0.4, 2.0, 3.0, 0.5, 0.4, 0.5, 2.0];
        let l = cholesky(&a, 3).unwrap();
        let inv = chol_inverse(&l, 3);
        for i in 0..3 {
            for j in 0..3 {
                let v: f64 = (0..3).map(|p| a[i * 3 + p] * inv[p * 3 + j]).sum();
                assert!((v - f64::from(u8::from(i == j))).abs() < 1e-12);
            }
        }
        // det by cofactor expansion
        let det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6])
            + a[2] * (a[3] * a[7] - a[4] * a[6]);
        assert!((chol_logdet(&l, 3) - det.ln()).abs() < 1e-12);
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
    }

    #[test]
    fn remove_and_grow() {
        let a: Vec<f64> = (0..9).map(f64::from).collect();
        assert_eq!(remove_index(&a, 3, 1), vec![0.0, 2.0, 6.0, 8.0]);
        let g = grow_diag(&[1.0], 1, 2, 5.0);
        assert_eq!(g, vec![1.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 5.0]);
    }

    #[test]
    fn normal_draws_have_unit_moments() {
        let mut rng = run_rng(7, 0);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| std_normal(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        // standard errors: 1/sqrt(n) ≈ 0.0022 for the mean, sqrt(2/n) ≈ 0.0032 for the variance
        assert!(mean.abs() < 0.012, "mean {mean}");
        assert!((var - 1.0).abs() < 0.016, "var {var}");
    }

    #[test]
    fn information_draw_moments() {
        // P = [[2, 1], [1, 2]] → Σ = [[2, −1], [−1, 2]] / 3; h = (1, 0) → mean = (2, −1) / 3.
        let p = [2.0, 1.0, 1.0, 2.0];
        let h = [1.0, 0.0];
        let mut rng = run_rng(3, 1);
        let n = 100_000;
        let (mut s0, mut s1, mut s01, mut s00) = (0.0, 0.0, 0.0, 0.0);
        for _ in 0..n {
            let (mean, x) = draw_information(&p, &h, 2, 1, &mut rng).unwrap();
            assert!((mean[0] - 2.0 / 3.0).abs() < 1e-12 && (mean[1] + 1.0 / 3.0).abs() < 1e-12);
            s0 += x[0];
            s1 += x[1];
            s00 += (x[0] - 2.0 / 3.0).powi(2);
            s01 += (x[0] - 2.0 / 3.0) * (x[1] + 1.0 / 3.0);
        }
        let nf = n as f64;
        assert!((s0 / nf - 2.0 / 3.0).abs() < 0.02);
        assert!((s1 / nf + 1.0 / 3.0).abs() < 0.02);
        assert!((s00 / nf - 2.0 / 3.0).abs() < 0.02);
        assert!((s01 / nf + 1.0 / 3.0).abs() < 0.02);
    }
}
