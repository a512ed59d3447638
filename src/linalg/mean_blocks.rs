//! A few means laid out to be scored against one row all at once: the means in blocks of
//! eight, each block column by column (the eight values of column j together), so one pass
//! over the row gives eight distances, the eight sums in the lanes of one vector.
//!
//! Each distance is summed by the operations and in the order of [`super::sq_dist`] (four
//! running sums over the columns 4q + l, then (s₀ + s₁) + (s₂ + s₃), then the last D mod 4
//! squared differences in order; no FMA), lane for lane, so the bits are `sq_dist`'s. Where
//! the batches of [`super::sq_dists_from`] pair two means in a register and add each mean's
//! four sums one at a time, here every operation serves eight means and nothing is
//! shuffled or stored between the columns and the sums.

use crate::RowMatrix;

/// Means in blocks of eight, column by column (see the module's comment). Slot j is lane
/// j mod 8 of block j / 8; lanes past the last slot hold zeros.
pub struct MeanBlocks {
    d: usize,
    slots: usize,
    /// Block b, column c, lane l at `(b·d + c)·8 + l`.
    values: Vec<f64>,
}

impl MeanBlocks {
    /// The rows of `means`, one slot each.
    pub fn new(means: &RowMatrix) -> Self {
        let (k, d) = (means.n_rows(), means.n_cols());
        let mut blocks = Self {
            d,
            slots: k,
            values: vec![0.0; k.div_ceil(8) * 8 * d],
        };
        for j in 0..k {
            blocks.set(j, means.row(j));
        }
        blocks
    }

    /// How many slots are laid out.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Slot j's values become `mean`; slots past the last are added (zeros between).
    pub fn set(&mut self, j: usize, mean: &[f64]) {
        assert_eq!(mean.len(), self.d, "a mean of {} values", self.d);
        if j >= self.slots {
            self.slots = j + 1;
            self.values.resize(self.slots.div_ceil(8) * 8 * self.d, 0.0);
        }
        let (b, l) = (j / 8, j % 8);
        let block = &mut self.values[b * 8 * self.d..(b + 1) * 8 * self.d];
        for (column, &v) in block.chunks_exact_mut(8).zip(mean) {
            column[l] = v;
        }
    }

    /// ‖x − m_j‖² for every slot j into `out[j]` (`out` holds at least the slots rounded up
    /// to eight; the entries past the last slot are the distances to zeros), with the bits
    /// of [`super::sq_dist`]`(x, m_j)`.
    pub fn sq_dists(&self, x: &[f64], out: &mut [f64]) {
        assert_eq!(x.len(), self.d, "a row of {} values", self.d);
        let out = &mut out[..self.slots.div_ceil(8) * 8];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU supports AVX-512F (checked just above).
                return unsafe { sq_dists_avx512(&self.values, x, out) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { sq_dists_avx2(&self.values, x, out) };
            }
        }
        sq_dists_body(&self.values, x, out);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn sq_dists_avx512(values: &[f64], x: &[f64], out: &mut [f64]) {
    sq_dists_body(values, x, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sq_dists_avx2(values: &[f64], x: &[f64], out: &mut [f64]) {
    sq_dists_body(values, x, out);
}

/// Every block against `x`, its eight distances into the block's eight entries of `out`.
#[inline(always)]
fn sq_dists_body(values: &[f64], x: &[f64], out: &mut [f64]) {
    let d = x.len();
    if d == 0 {
        out.fill(0.0);
        return;
    }
    let whole = d / 4 * 4;
    for (block, dist) in values.chunks_exact(8 * d).zip(out.chunks_exact_mut(8)) {
        let (head, tail) = block.split_at(8 * whole);
        let mut acc = [[0.0f64; 8]; 4];
        for (columns, xq) in head.chunks_exact(32).zip(x.chunks_exact(4)) {
            for (l, sum) in acc.iter_mut().enumerate() {
                let column = &columns[8 * l..8 * l + 8];
                for (s, &m) in sum.iter_mut().zip(column) {
                    let e = xq[l] - m;
                    *s += e * e;
                }
            }
        }
        let mut s: [f64; 8] =
            std::array::from_fn(|t| (acc[0][t] + acc[1][t]) + (acc[2][t] + acc[3][t]));
        for (column, &xj) in tail.chunks_exact(8).zip(&x[whole..]) {
            for (s, &m) in s.iter_mut().zip(column) {
                let e = xj - m;
                *s += e * e;
            }
        }
        dist.copy_from_slice(&s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::sq_dist;

    /// Values with full mantissas, so that any other order of the sums would show.
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 11) as f64 / (1u64 << 53) as f64 * 7.0 - 3.0
            })
            .collect()
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn distances_have_the_bits_of_sq_dist() {
        for d in [0, 1, 3, 4, 5, 8, 50, 51, 103] {
            for k in [1, 7, 8, 9, 33] {
                let means = RowMatrix::new(k, d, values(k * d, (d * 100 + k) as u64));
                let x = values(d, 7 + d as u64);
                let blocks = MeanBlocks::new(&means);
                let mut out = vec![f64::NAN; k.div_ceil(8) * 8];
                blocks.sq_dists(&x, &mut out);
                // The other forms of the kernel, whichever one `sq_dists` took on this CPU.
                let mut plain = vec![f64::NAN; out.len()];
                sq_dists_body(&blocks.values, &x, &mut plain);
                assert_eq!(bits(&plain), bits(&out), "portable form, d {d} k {k}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut wide = vec![f64::NAN; out.len()];
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    unsafe { sq_dists_avx2(&blocks.values, &x, &mut wide) };
                    assert_eq!(bits(&wide), bits(&out), "AVX2 form, d {d} k {k}");
                }
                for j in 0..k {
                    let want = sq_dist(&x, means.row(j));
                    assert_eq!(out[j].to_bits(), want.to_bits(), "d {d} k {k} slot {j}");
                }
                for (j, &o) in out.iter().enumerate().skip(k) {
                    let zeros = vec![0.0; d];
                    assert_eq!(o.to_bits(), sq_dist(&x, &zeros).to_bits(), "pad {j}");
                }
            }
        }
    }

    #[test]
    fn set_changes_one_slot_and_adds_past_the_last() {
        let (k, d) = (9, 6);
        let mut means = RowMatrix::new(k, d, values(k * d, 1));
        let mut blocks = MeanBlocks::new(&means);
        let new = values(d, 2);
        blocks.set(3, &new);
        means.row_mut(3).copy_from_slice(&new);
        let far = values(d, 3);
        blocks.set(17, &far);
        assert_eq!(blocks.slots(), 18);
        let x = values(d, 4);
        let mut out = vec![0.0; 24];
        blocks.sq_dists(&x, &mut out);
        for j in 0..k {
            assert_eq!(
                out[j].to_bits(),
                sq_dist(&x, means.row(j)).to_bits(),
                "slot {j}"
            );
        }
        let zeros = vec![0.0; d];
        for j in k..17 {
            assert_eq!(out[j].to_bits(), sq_dist(&x, &zeros).to_bits(), "slot {j}");
        }
        assert_eq!(out[17].to_bits(), sq_dist(&x, &far).to_bits());
    }
}
