//! Fixed row blocks and a reduction over them that is identical for any thread count.

use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    let threads = rayon::current_num_threads().max(1);
    // One block, or one thread: map and fold in turn, without rayon's set-up (the same
    // partials folded in the same order).
    if threads == 1 || n_blocks <= 1 {
        for b in 0..n_blocks {
            let start = b * block;
            fold(map(b, start, (start + block).min(n)));
        }
        return;
    }
    let wave = 4 * threads;
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

/// [`ordered_block_reduce`] without rounds: each thread claims the next block as soon as it
/// is free, and the thread that finds the next block in order mapped folds it (under a lock,
/// in block order, while the other threads keep mapping). No thread waits at the end of a
/// round nor while a fold runs; a thread waits only when `4 × threads` blocks are mapped
/// or being mapped beyond the last one folded (so at most that many partials are alive),
/// spinning with `yield_now`, so it does no other rayon work meanwhile (this happens when
/// folds are slower than maps, e.g. in a BP-means sweep that opens many features).
/// The fold order is the block order, so results are bit-identical for any thread count.
pub fn ordered_block_stream<T, M, F>(n: usize, block: usize, map: M, mut fold: F)
where
    T: Send,
    M: Fn(usize, usize, usize) -> T + Sync,
    F: FnMut(T) + Send,
{
    let block = block.max(1);
    let n_blocks = n.div_ceil(block);
    let threads = rayon::current_num_threads().max(1);
    let run = |b: usize| {
        let start = b * block;
        map(b, start, (start + block).min(n))
    };
    if threads == 1 || n_blocks <= 1 {
        (0..n_blocks).for_each(|b| fold(run(b)));
        return;
    }
    let window = 4 * threads;
    let claimed = AtomicUsize::new(0);
    let folded = AtomicUsize::new(0);
    let ready: Mutex<BTreeMap<usize, T>> = Mutex::new(BTreeMap::new());
    let folder = Mutex::new(fold);
    // Folds the mapped blocks that come next in order, unless another thread is folding
    // (that one re-checks after letting go of the fold, so no mapped block is left behind).
    let drain = || {
        loop {
            let Ok(mut f) = folder.try_lock() else {
                return;
            };
            loop {
                let next = folded.load(Ordering::Acquire);
                let Some(p) = ready.lock().expect("ready blocks").remove(&next) else {
                    break;
                };
                f(p);
                folded.store(next + 1, Ordering::Release);
            }
            drop(f);
            let next = folded.load(Ordering::Acquire);
            if !ready.lock().expect("ready blocks").contains_key(&next) {
                return;
            }
        }
    };
    (0..threads).into_par_iter().with_max_len(1).for_each(|_| {
        loop {
            let c = claimed.load(Ordering::Acquire);
            if c >= n_blocks {
                break;
            }
            if c >= folded.load(Ordering::Acquire) + window {
                drain();
                std::thread::yield_now();
                continue;
            }
            if claimed
                .compare_exchange(c, c + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            let p = run(c);
            ready.lock().expect("ready blocks").insert(c, p);
            drain();
        }
    });
    drain();
    debug_assert_eq!(folded.load(Ordering::Acquire), n_blocks);
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

    #[test]
    fn streams_in_block_order_on_any_pool() {
        for threads in [1, 2, 3, 5] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for (n, block) in [(0, 3), (10, 3), (1000, 7), (5, 10)] {
                let mut seen = Vec::new();
                pool.install(|| {
                    ordered_block_stream(
                        n,
                        block,
                        |b, s, e| {
                            // Uneven work, so blocks finish out of order.
                            let spin: usize = (0..(b * 7919 % 13) * 1000).sum();
                            (b, s, e, spin)
                        },
                        |(b, s, e, _)| seen.push((b, s, e)),
                    )
                });
                let want: Vec<_> = (0..n.div_ceil(block))
                    .map(|b| (b, b * block, (b * block + block).min(n)))
                    .collect();
                assert_eq!(seen, want, "{threads} threads, n {n}, block {block}");
            }
        }
    }
}
