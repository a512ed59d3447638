//! What collapsed BP-means carries from row to row so that a row's model costs
//! O(K·D + K³) instead of a fresh K × K solve with D right-hand sides: M = ZᵀZ, B = ZᵀX,
//! C = B Bᵀ and, while M is non-singular, M⁻¹, all kept up to date by rank-one updates
//! (Sherman–Morrison) as rows change.
//!
//! For row n with current value u (as 0/1 numbers), removing it gives
//! M₋⁻¹ = M⁻¹ + (M⁻¹u)(M⁻¹u)ᵀ / (1 − uᵀM⁻¹u), B₋x_n = B x_n − u‖x_n‖² and
//! C₋ = C − (B x_n)uᵀ − u(B x_n)ᵀ + ‖x_n‖² u uᵀ; then Â₋x_n = M₋⁻¹B₋x_n and
//! Â₋Â₋ᵀ = M₋⁻¹ C₋ M₋⁻¹. When 1 − uᵀM⁻¹u is tiny (row n alone carries a direction, so M₋
//! is singular) or M itself is singular, the row falls back to the dependent-column solve of
//! [`RowModel::new`]. Everything is recomputed from Z at the start of every sweep, so
//! rounding cannot drift across sweeps.

use super::row::RowModel;
use crate::MatrixView;
use crate::RowMatrix;
use crate::features::lstsq::{normal_equations, solve_normal};
use crate::features::zmat::BinaryMatrix;
use crate::linalg::{axpy, dot};

/// Below this, 1 − uᵀM⁻¹u counts as zero (M₋ singular).
const SINGULAR_DOWNDATE: f64 = 1e-9;

/// M, B, C and M⁻¹ of the current Z (see the module documentation).
pub(crate) struct NormalState {
    k: usize,
    m: Vec<f64>,
    b: RowMatrix,
    c: Vec<f64>,
    inv: Option<Vec<f64>>,
}

/// Row n removed: what the next row model and the update after it need.
pub(crate) struct RowRemoved {
    u: Vec<f64>,
    bx: Vec<f64>,
    xx: f64,
    c_minus: Vec<f64>,
    inv_minus: Option<Vec<f64>>,
}

impl NormalState {
    /// From scratch: M = ZᵀZ, B = ZᵀX, C = B Bᵀ, M⁻¹ when M is non-singular.
    pub fn new(x: MatrixView<'_>, z: &BinaryMatrix) -> Self {
        let (m, b) = normal_equations(x, z);
        let k = z.k();
        let mut c = vec![0.0; k * k];
        for i in 0..k {
            for j in 0..=i {
                let v = dot(b.row(i), b.row(j));
                c[i * k + j] = v;
                c[j * k + i] = v;
            }
        }
        let inv = inverse(&m, k);
        Self { k, m, b, c, inv }
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// Takes row `x` with value `z` out (without changing the state) and builds its model.
    pub fn remove_row(&self, x: &[f64], z: &[u8], penalty: f64) -> (RowModel, RowRemoved) {
        let k = self.k;
        let u: Vec<f64> = z.iter().map(|&v| f64::from(v)).collect();
        let bx: Vec<f64> = self.b.rows().map(|r| dot(r, x)).collect();
        let xx = dot(x, x);
        let mut c_minus = self.c.clone();
        for i in 0..k {
            for j in 0..k {
                c_minus[i * k + j] += -bx[i] * u[j] - u[i] * bx[j] + xx * u[i] * u[j];
            }
        }
        let inv_minus = self.inv.as_ref().and_then(|inv| {
            let mu = mat_vec(inv, &u, k);
            let den = 1.0 - dot(&u, &mu);
            (den > SINGULAR_DOWNDATE).then(|| {
                let mut out = inv.clone();
                for i in 0..k {
                    for j in 0..k {
                        out[i * k + j] += mu[i] * mu[j] / den;
                    }
                }
                out
            })
        });
        let model = match &inv_minus {
            Some(w) => {
                let bxm: Vec<f64> = (0..k).map(|i| bx[i] - u[i] * xx).collect();
                let g = mat_vec(w, &bxm, k);
                let wc = mat_mul(w, &c_minus, k);
                let gm = mat_mul(&wc, w, k);
                let mut m_minus = self.m.clone();
                for i in 0..k {
                    for j in 0..k {
                        m_minus[i * k + j] -= u[i] * u[j];
                    }
                }
                let occupied = (0..k).map(|i| m_minus[i * k + i] > 0.0).collect();
                RowModel::from_inverse(g, gm, xx, w.clone(), occupied, penalty)
            }
            None => RowModel::new(x, z, &self.m, &self.b, penalty),
        };
        let removed = RowRemoved {
            u,
            bx,
            xx,
            c_minus,
            inv_minus,
        };
        (model, removed)
    }

    /// Row `x` changed from the removed value to `new` (same K): M, B, C, M⁻¹ updated.
    pub fn replace_row(&mut self, x: &[f64], removed: RowRemoved, new: &[u8]) {
        let k = self.k;
        let v: Vec<f64> = new.iter().map(|&b| f64::from(b)).collect();
        let RowRemoved {
            u,
            bx,
            xx,
            c_minus,
            inv_minus,
        } = removed;
        // B₋x, then C = C₋ + (B₋x)vᵀ + v(B₋x)ᵀ + ‖x‖² v vᵀ.
        let bxm: Vec<f64> = (0..k).map(|i| bx[i] - u[i] * xx).collect();
        self.c = c_minus;
        for i in 0..k {
            for j in 0..k {
                self.c[i * k + j] += bxm[i] * v[j] + v[i] * bxm[j] + xx * v[i] * v[j];
            }
        }
        for i in 0..k {
            for j in 0..k {
                self.m[i * k + j] += v[i] * v[j] - u[i] * u[j];
            }
            let s = v[i] - u[i];
            if s != 0.0 {
                axpy(s, x, self.b.row_mut(i));
            }
        }
        self.inv = match inv_minus {
            Some(w) => {
                let wv = mat_vec(&w, &v, k);
                let den = 1.0 + dot(&v, &wv);
                let mut out = w;
                for i in 0..k {
                    for j in 0..k {
                        out[i * k + j] -= wv[i] * wv[j] / den;
                    }
                }
                Some(out)
            }
            None => inverse(&self.m, k),
        };
    }

    /// Appends the singleton column {n} for row `x` whose (already stored) value is `z`
    /// without the new column.
    pub fn push_singleton(&mut self, x: &[f64], z: &[u8]) {
        let k = self.k;
        let k1 = k + 1;
        let bx: Vec<f64> = self.b.rows().map(|r| dot(r, x)).collect();
        let xx = dot(x, x);
        let grow = |old: &[f64], edge: &dyn Fn(usize) -> f64, corner: f64| {
            let mut out = vec![0.0; k1 * k1];
            for p in 0..k {
                out[p * k1..p * k1 + k].copy_from_slice(&old[p * k..(p + 1) * k]);
                out[p * k1 + k] = edge(p);
                out[k * k1 + p] = edge(p);
            }
            out[k * k1 + k] = corner;
            out
        };
        self.m = grow(&self.m, &|p| f64::from(z[p]), 1.0);
        self.c = grow(&self.c, &|p| bx[p], xx);
        self.b.push_row(x);
        self.k = k1;
        self.inv = inverse(&self.m, k1);
    }
}

/// M⁻¹ for a symmetric positive definite M (`k × k`), `None` when a column is dependent.
fn inverse(m: &[f64], k: usize) -> Option<Vec<f64>> {
    let mut eye = RowMatrix::zeros(k, k);
    (0..k).for_each(|i| eye.row_mut(i)[i] = 1.0);
    let ls = solve_normal(m, eye);
    ls.dependent.is_empty().then(|| ls.a.into_vec())
}

fn mat_vec(a: &[f64], v: &[f64], k: usize) -> Vec<f64> {
    (0..k).map(|i| dot(&a[i * k..(i + 1) * k], v)).collect()
}

fn mat_mul(a: &[f64], b: &[f64], k: usize) -> Vec<f64> {
    let mut out = vec![0.0; k * k];
    for i in 0..k {
        for p in 0..k {
            let aip = a[i * k + p];
            if aip != 0.0 {
                axpy(aip, &b[p * k..(p + 1) * k], &mut out[i * k..(i + 1) * k]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The carried state matches a fresh one after every change of a long random walk, and
    /// the row models built from it match the direct solve.
    #[test]
    fn rank_one_updates_match_fresh_solves() {
        let (n, d, k) = (40, 5, 4);
        let x = RowMatrix::new(
            n,
            d,
            (0..n * d)
                .map(|i| ((i * 37 % 23) as f64) / 5.0 - 2.0)
                .collect(),
        );
        let mut z = BinaryMatrix::zeros(n, k);
        for i in 0..n {
            for c in 0..k {
                z.row_mut(i)[c] = u8::from((i * 7 + c * 5) % 3 == 0 || i == c);
            }
        }
        let mut state = NormalState::new(x.view(), &z);
        let (mut checked, mut by_inverse) = (0, 0);
        for step in 0..400 {
            let i = (step * 13) % n;
            let old = z.row(i).to_vec();
            let (model, removed) = state.remove_row(x.row(i), &old, 0.5);
            let direct = RowModel::new(x.row(i), &old, &state.m, &state.b, 0.5);
            by_inverse += usize::from(removed.inv_minus.is_some());
            for mask in 0u8..(1 << k) {
                let cand: Vec<u8> = (0..k).map(|c| (mask >> c) & 1).collect();
                let (a, b) = (model.cost(&cand), direct.cost(&cand));
                assert!(
                    (a - b).abs() <= 1e-8 * (1.0 + b.abs()),
                    "step {step}: {a} vs {b}"
                );
            }
            let mut new = old.clone();
            new[step % k] ^= 1;
            state.replace_row(x.row(i), removed, &new);
            z.row_mut(i).copy_from_slice(&new);
            let fresh = NormalState::new(x.view(), &z);
            for (a, b) in state.c.iter().zip(&fresh.c) {
                assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()));
            }
            assert_eq!(state.m, fresh.m);
            if let (Some(a), Some(b)) = (&state.inv, &fresh.inv) {
                for (p, q) in a.iter().zip(b) {
                    assert!((p - q).abs() <= 1e-8 * (1.0 + q.abs()), "step {step}");
                }
                checked += 1;
            } else {
                assert_eq!(state.inv.is_some(), fresh.inv.is_some(), "step {step}");
            }
        }
        assert!(
            checked > 300,
            "only {checked} steps had an inverse to compare"
        );
        assert!(
            by_inverse > 300,
            "only {by_inverse} row models came from the inverse"
        );
    }
}
