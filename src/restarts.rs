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
/// lowest objective (ties: lowest `i`). A NaN objective never wins over a number. Only the
/// best run so far is held (per worker), not every run: memory does not grow with `runs`.
///
/// # Panics
/// When `runs == 0` (validated parameters never allow it).
pub fn best_of_runs<T, F>(runs: usize, seed: u64, observer: &dyn Observer, run: F) -> Best<T>
where
    T: RunOutcome,
    F: Fn(usize, &mut ChaCha8Rng) -> T + Sync,
{
    assert!(runs > 0, "a fit needs at least one run");
    observer.start(runs);
    let kept = (0..runs)
        .into_par_iter()
        .map(|i| {
            let mut rng = run_rng(seed, i as u64);
            let out = run(i, &mut rng);
            observer.run_finished();
            (i, out)
        })
        .fold(Kept::default, |kept, (i, out)| kept.add(i, out))
        .reduce(Kept::default, Kept::merge);
    let mut run_objectives = vec![f64::NAN; runs];
    for &(i, v) in &kept.objectives {
        run_objectives[i] = v;
    }
    let (best_run, best) = kept.best.expect("at least one run");
    Best {
        best,
        best_run,
        run_objectives,
    }
}

/// The runs of [`best_of_runs`] seen by one worker (or merged): every objective, and the best
/// run among them.
struct Kept<T> {
    objectives: Vec<(usize, f64)>,
    best: Option<(usize, T)>,
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Self {
            objectives: Vec::new(),
            best: None,
        }
    }
}

impl<T: RunOutcome> Kept<T> {
    fn add(mut self, i: usize, out: T) -> Self {
        self.objectives.push((i, out.objective()));
        self.best = Some(match self.best {
            Some(b) if !beats((i, out.objective()), (b.0, b.1.objective())) => b,
            _ => (i, out),
        });
        self
    }

    fn merge(mut self, other: Self) -> Self {
        self.objectives.extend(other.objectives);
        self.best = match (self.best, other.best) {
            (Some(a), Some(b)) => Some(if beats((b.0, b.1.objective()), (a.0, a.1.objective())) {
                b
            } else {
                a
            }),
            (a, b) => a.or(b),
        };
        self
    }
}

/// Whether run `(i, v)` (index, objective) wins over run `(j, w)`: the lower objective, a
/// number over NaN, and on a tie the lower index — the order [`best_index`] keeps, whatever
/// order the runs are compared in.
fn beats((i, v): (usize, f64), (j, w): (usize, f64)) -> bool {
    match (v.is_nan(), w.is_nan()) {
        (false, true) => true,
        (true, false) => false,
        (false, false) if v != w => v < w,
        _ => i < j,
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

    /// The best run kept while the runs go by is the one [`best_index`] picks from all their
    /// objectives, with ties, NaN and any pool size.
    #[test]
    fn the_kept_run_is_the_best_index_of_all() {
        let values = [4.0, f64::NAN, 2.0, 3.0, 2.0, f64::NAN, 1.5, 1.5, 9.0];
        for n in 1..=values.len() {
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let best = pool.install(|| best_of_runs(n, 0, &Silent, |i, _| Obj(values[i])));
                assert_eq!(best.best_run, best_index(&values[..n]), "n {n}");
                assert_eq!(best.best.0.to_bits(), values[best.best_run].to_bits());
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&best.run_objectives), bits(&values[..n]));
            }
        }
        let nans = best_of_runs(3, 0, &Silent, |_, _| Obj(f64::NAN));
        assert_eq!(nans.best_run, 0);
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
