//! Fixed row blocks and a reduction over them that is identical for any thread count.

use rayon::prelude::*;

/// Rows per unit of parallel work that carries partial sums (reductions, mean updates).
pub const BLOCK_ROWS: usize = 4096;

/// Rows per GEMM call inside a block: small enough that the `GEMM_ROWS × K` product stays in
/// cache, large enough for GEMM to run at full speed.
pub const GEMM_ROWS: usize = 256;

/// Calls `f(block_index, start, end)` for every block of `block` rows of `0..n`, in parallel.
pub fn for_each_block<F>(n: usize, block: usize, f: F)
where
    F: Fn(usize, usize, usize) + Sync,
{
    let n_blocks = n.div_ceil(block.max(1));
    (0..n_blocks).into_par_iter().for_each(|b| {
        let start = b * block;
        f(b, start, (start + block).min(n));
    });
}

/// Maps every block of `block` rows of `0..n` to a partial result in parallel, and folds the
/// partials **in block order** on the calling thread.
///
/// Blocks are evaluated in waves of a few per thread, so at most that many partials are alive
/// at once (a partial may be a whole `K × D` sum). Because the fold order is the block order,
/// floating-point sums come out bit-identical for any thread count.
pub fn ordered_block_reduce<T, M, F>(n: usize, block: usize, map: M, mut fold: F)
where
    T: Send,
    M: Fn(usize, usize, usize) -> T + Sync,
    F: FnMut(T),
{
    let block = block.max(1);
    let n_blocks = n.div_ceil(block);
    let wave = 4 * rayon::current_num_threads().max(1);
    let mut first = 0;
    while first < n_blocks {
        let last = (first + wave).min(n_blocks);
        let partials: Vec<T> = (first..last)
            .into_par_iter()
            .map(|b| {
                let start = b * block;
                map(b, start, (start + block).min(n))
            })
            .collect();
        for p in partials {
            fold(p);
        }
        first = last;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_in_block_order() {
        let mut seen = Vec::new();
        ordered_block_reduce(10, 3, |b, s, e| (b, s, e), |p| seen.push(p));
        assert_eq!(seen, vec![(0, 0, 3), (1, 3, 6), (2, 6, 9), (3, 9, 10)]);
        let mut none = 0;
        ordered_block_reduce(0, 3, |_, _, _| (), |_| none += 1);
        assert_eq!(none, 0);
    }
}
