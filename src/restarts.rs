//! Random restarts: R independent runs in parallel, the best one kept.
//!
//! Run `i` draws only from [`run_rng`]`(seed, i)`, a ChaCha8 stream fixed by the seed and the
//! run index, and the winner is the lowest objective with ties going to the lowest index. So the
//! result is the same whatever the number of threads or the order in which runs finish.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// The random stream of run `run` under `seed`: portable and independent of scheduling.
pub fn run_rng(seed: u64, run: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(run);
    rng
}

/// Shuffles `v` uniformly (Fisher–Yates from the end, one `random_range(0..=i)` per step),
/// drawing only from `rng`.
pub fn shuffle<T>(v: &mut [T], rng: &mut ChaCha8Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
}

/// A uniformly random permutation of `0..n` ([`shuffle`] of the identity).
pub fn random_permutation(n: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    shuffle(&mut order, rng);
    order
}

/// Draws an index with probability ∝ `weights` (uniformly when they sum to zero).
pub fn draw_weighted(weights: &[f64], rng: &mut ChaCha8Rng) -> usize {
    let total: f64 = weights.iter().sum();
    if total.is_nan() || total <= 0.0 || total.is_infinite() {
        return rng.random_range(0..weights.len());
    }
    let target = rng.random::<f64>() * total;
    let mut acc = 0.0;
    for (i, &w) in weights.iter().enumerate() {
        acc += w;
        if acc > target && w > 0.0 {
            return i;
        }
    }
    // Rounding left `target` beyond the last partial sum: take the last positive weight.
    weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)
}

/// Observes a fit while it runs (for progress bars). Every method has an empty default.
pub trait Observer: Sync {
    /// Called once before the runs start, with their number.
    fn start(&self, _runs: usize) {}
    /// Called when one run has finished.
    fn run_finished(&self) {}
}

/// An observer that does nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {}

/// What every single run reports, whatever the algorithm.
pub trait RunOutcome: Send {
    /// The run's final objective (lower is better).
    fn objective(&self) -> f64;
}

/// The best of several runs, and the objective of every run (in run order).
#[derive(Clone, Debug)]
pub struct Best<T> {
    /// The winning run.
    pub best: T,
    /// Index of the winning run.
    pub best_run: usize,
    /// Final objective of each run, indexed by run.
    pub run_objectives: Vec<f64>,
}

/// Runs `run(i, rng_i)` for `i in 0..runs` in parallel on the current rayon pool and keeps the
/// lowest objective (ties: lowest `i`). A NaN objective never wins over a number.
///
/// # Panics
/// When `runs == 0` (validated parameters never allow it).
pub fn best_of_runs<T, F>(runs: usize, seed: u64, observer: &dyn Observer, run: F) -> Best<T>
where
    T: RunOutcome,
    F: Fn(usize, &mut ChaCha8Rng) -> T + Sync,
{
    let outcomes = all_runs(runs, seed, observer, run);
    let run_objectives: Vec<f64> = outcomes.iter().map(RunOutcome::objective).collect();
    let best_run = best_index(&run_objectives);
    let best = outcomes.into_iter().nth(best_run).expect("index in range");
    Best {
        best,
        best_run,
        run_objectives,
    }
}

/// Runs `run(i, rng_i)` for `i in 0..runs` in parallel on the current rayon pool and returns
/// every outcome, in run order (the same on any pool size).
///
/// # Panics
/// When `runs == 0` (validated parameters never allow it).
pub fn all_runs<T, F>(runs: usize, seed: u64, observer: &dyn Observer, run: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, &mut ChaCha8Rng) -> T + Sync,
{
    assert!(runs > 0, "a fit needs at least one run");
    observer.start(runs);
    (0..runs)
        .into_par_iter()
        .map(|i| {
            let mut rng = run_rng(seed, i as u64);
            let out = run(i, &mut rng);
            observer.run_finished();
            out
        })
        .collect()
}

/// Index of the lowest value, ties to the lowest index, NaN last.
pub fn best_index(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate().skip(1) {
        let b = values[best];
        if v < b || (b.is_nan() && !v.is_nan()) {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    struct Obj(f64);
    impl RunOutcome for Obj {
        fn objective(&self) -> f64 {
            self.0
        }
    }

    #[test]
    fn ties_go_to_the_lowest_index_and_nan_loses() {
        assert_eq!(best_index(&[3.0, 1.0, 1.0, 2.0]), 1);
        assert_eq!(best_index(&[f64::NAN, 5.0, 4.0]), 2);
        assert_eq!(best_index(&[7.0]), 0);
    }

    #[test]
    fn the_same_runs_come_out_on_any_pool_size() {
        let go = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                best_of_runs(37, 11, &Silent, |_, rng| Obj(rng.random::<f64>())).run_objectives
            })
        };
        let one = go(1);
        assert_eq!(one, go(2));
        assert_eq!(one, go(3));
        // Streams differ between runs and between seeds.
        assert_ne!(one[0], one[1]);
        let other_seed =
            best_of_runs(2, 12, &Silent, |_, rng| Obj(rng.random::<f64>())).run_objectives;
        assert_ne!(one[0], other_seed[0]);
    }
}
