//! `meibp-local-search`: Reed & Ghahramani (2013) Figure 1 — how often the §3.6 local search
//! finds the optimum of the row objective (Eq. 19), or comes within 95% of it, against brute
//! force over all 2^K rows, and how often a uniformly random row does; beside them, MEIBP's
//! actual row step, the better of the search's row and the row's current assignment.

use crate::support::{Args, Res};
use madbayes::generate::{meibp_factors, nonnegative_linear_gaussian};
use madbayes::ibp::Meibp;
use madbayes::restarts::run_rng;
use rand::RngExt;
use std::time::Instant;

/// Counts over the optimizations of one data set.
#[derive(Default)]
struct Tally {
    total: usize,
    ls_opt: usize,
    ls_95: usize,
    rand_opt: usize,
    rand_95: usize,
    /// MEIBP's row step: the better of the local search and the row's current assignment.
    step_opt: usize,
    step_95: usize,
    /// min over rows of (F_ls − F_n0)/(F* − F_n0), the empirical constant of Eq. 22.
    worst_ratio: f64,
    fits: usize,
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, var.sqrt())
}

/// One data set: MEIBP fits (k_max = K, seeds 1, 2, …, each from a random Z) whose every row
/// optimization is scored, until `per_k · K` optimizations.
fn one_data_set(a: &Args, k: usize, data_seed: u64) -> Res<Tally> {
    let n: usize = a.get_or("n", 500)?;
    let d: usize = a.get_or("d", 50)?;
    let p: f64 = a.get_or("p", 0.5)?;
    let sx: f64 = a.get_or("sigma-x", 1.0)?;
    let sa: f64 = a.get_or("sigma-a", 1.0)?;
    let alpha: f64 = a.get_or("alpha", 3.0)?;
    let per_k: usize = a.get_or("per-k", 1000)?;
    let x = match a.get_or("data", "tn".to_string())?.as_str() {
        "tn" => nonnegative_linear_gaussian(n, d, k, p, sa, sx, data_seed)?.x,
        "factors" => meibp_factors(n, d, k, p, sx, data_seed)?.x,
        other => return Err(format!("unknown --data {other} (tn | factors)").into()),
    };
    let want = per_k * k;
    let mut t = Tally {
        worst_ratio: f64::INFINITY,
        ..Tally::default()
    };
    let mut rng = run_rng(data_seed, 1);
    while t.total < want {
        t.fits += 1;
        let params = Meibp::params(k)
            .sigma_x(sx)
            .sigma_a(sa)
            .alpha(alpha)
            .seed(t.fits as u64)
            .check()?;
        params.fit_observing_rows(x.view(), &mut |_, _, _| {}, &mut |obj, current| {
            if t.total >= want {
                return;
            }
            let ex = obj.extremes();
            let range = ex.max - ex.min;
            let tol = 1e-9 * (1.0 + ex.max.abs());
            let (_, v) = obj.local_search();
            let random: Vec<bool> = (0..k).map(|_| rng.random::<f64>() < 0.5).collect();
            let r = obj.value(&random);
            let step = v.max(obj.value(current));
            t.total += 1;
            t.ls_opt += usize::from(v >= ex.max - tol);
            t.ls_95 += usize::from(v - ex.min >= 0.95 * range - tol);
            t.rand_opt += usize::from(r >= ex.max - tol);
            t.rand_95 += usize::from(r - ex.min >= 0.95 * range - tol);
            t.step_opt += usize::from(step >= ex.max - tol);
            t.step_95 += usize::from(step - ex.min >= 0.95 * range - tol);
            if range > tol {
                t.worst_ratio = t.worst_ratio.min((v - ex.min) / range);
            }
        })?;
        if t.fits > 1000 {
            return Err("fewer row optimizations than asked after 1000 fits".into());
        }
    }
    Ok(t)
}

pub fn cmd_local_search(a: &Args) -> Res<()> {
    let ks: Vec<usize> = crate::list(&a.get_or("ks", "2,3,4,5,6,7,8,9,10,11,12".to_string())?)?;
    let sets: u64 = a.get_or("datasets", 10)?;
    let seed: u64 = a.get_or("seed", 1)?;
    for &k in &ks {
        if !(1..=20).contains(&k) {
            return Err(format!("K = {k}: brute force needs 1 ≤ K ≤ 20").into());
        }
        let t0 = Instant::now();
        let tallies: Vec<Tally> = (0..sets)
            .map(|j| one_data_set(a, k, seed + j))
            .collect::<Res<_>>()?;
        let frac = |f: &dyn Fn(&Tally) -> usize| -> (f64, f64) {
            let v: Vec<f64> = tallies
                .iter()
                .map(|t| f(t) as f64 / t.total as f64)
                .collect();
            mean_sd(&v)
        };
        let (lo, lo_sd) = frac(&|t| t.ls_opt);
        let (l95, l95_sd) = frac(&|t| t.ls_95);
        let (ro, ro_sd) = frac(&|t| t.rand_opt);
        let (r95, r95_sd) = frac(&|t| t.rand_95);
        let (so, _) = frac(&|t| t.step_opt);
        let (s95, _) = frac(&|t| t.step_95);
        let total: usize = tallies.iter().map(|t| t.total).sum();
        let ls_95_misses: usize = tallies.iter().map(|t| t.total - t.ls_95).sum();
        let worst = tallies
            .iter()
            .map(|t| t.worst_ratio)
            .fold(f64::INFINITY, f64::min);
        let fits: usize = tallies.iter().map(|t| t.fits).sum();
        println!(
            "{{\"cmd\":\"meibp-local-search\",\"k\":{k},\"datasets\":{sets},\"optimizations\":{total},\
\"fits\":{fits},\"ls_optimum\":{lo:.4},\"ls_optimum_sd\":{lo_sd:.4},\"ls_within95\":{l95:.5},\
\"ls_within95_sd\":{l95_sd:.5},\"ls_within95_misses\":{ls_95_misses},\"random_optimum\":{ro:.4},\
\"random_optimum_sd\":{ro_sd:.4},\"random_within95\":{r95:.4},\"random_within95_sd\":{r95_sd:.4},\
\"ls_worst_normalized\":{worst:.4},\"step_optimum\":{so:.4},\"step_within95\":{s95:.5},\"seconds\":{:.2}}}",
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
