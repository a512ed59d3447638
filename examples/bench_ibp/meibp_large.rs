//! `meibp-large`: MEIBP's per-iteration time and progress on Reed & Ghahramani's (2013, §5)
//! large synthetic set, without the CLI's per-iteration log p(X, Z).

use crate::support::{Args, Res};
use madbayes::Model;
use madbayes::generate::meibp_factors;
use madbayes::ibp::Meibp;
use std::time::Instant;

pub fn cmd_meibp_large(a: &Args) -> Res<()> {
    let n: usize = a.get_or("n", 100_000)?;
    let d: usize = a.get_or("d", 1000)?;
    let k: usize = a.get_or("k", 50)?;
    let p: f64 = a.get_or("p", 0.4)?;
    let iterations: usize = a.get_or("iterations", 10)?;
    let seed: u64 = a.get_or("seed", 1)?;
    let threads: usize = a.get_or("threads", 1)?;
    let t0 = Instant::now();
    let x = meibp_factors(n, d, k, p, 1.0, seed)?.x;
    let gen_s = t0.elapsed().as_secs_f64();
    let params = Meibp::params(k).max_iter(iterations).seed(seed).check()?;
    let (sx, sa) = params.sigmas(x.view());
    println!(
        "{{\"cmd\":\"meibp-large\",\"n\":{n},\"d\":{d},\"k_max\":{k},\"p\":{p},\"sigma_x\":{sx:.5},\
\"sigma_a\":{sa:.5},\"alpha\":{},\"threads\":{threads},\"generate_s\":{gen_s:.2}}}",
        params.alpha()
    );
    let pool = crate::support::pool(threads)?;
    let mut prev = 0.0;
    let fit = pool.install(|| {
        params.fit_with(x.view(), &mut |r, _, _| {
            println!(
                "{{\"iteration\":{},\"seconds\":{:.3},\"iteration_s\":{:.3},\"k\":{},\
\"evidence\":{:.6e},\"changed_rows\":{}}}",
                r.iteration,
                r.seconds,
                r.seconds - prev,
                r.k,
                r.evidence,
                r.changed_rows
            );
            prev = r.seconds;
        })
    })?;
    println!(
        "{{\"converged\":{},\"iterations\":{},\"k\":{}}}",
        fit.converged(),
        fit.records().len(),
        fit.k()
    );
    Ok(())
}
