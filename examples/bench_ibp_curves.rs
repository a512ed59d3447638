//! Log joint against sampling seconds for madbayes' IBP samplers, every sweep, scored at one
//! fixed setting of the hyperparameters — the madbayes side of `bench/run_ibp_curves.sh`
//! (docs/results.md, "IBP samplers beside PyIBP").
//!
//! ```text
//! cargo run --release --example bench_ibp_curves -- --x X.csv --alpha 1 --sigma-x 0.5
//!     --sigma-a 1 --sweeps 1000 --seed 1 [--kinds collapsed,semi,accelerated]
//!     [--forms defaults,plain] [--clock wall|cpu] --out CURVES.csv
//! ```
//!
//! X is used as given (the driver centres it once for both sides). Each sampler runs one
//! chain on one thread in each form:
//!   defaults  `IbpSampler::params(kind)` as it comes (α, σ_X, σ_A resampled from their
//!             default starts, split–merge and recoding moves, block update);
//!   plain     `.plain()` with α, σ_X, σ_A fixed at the given values (D-V&G's sampler:
//!             single-entry Gibbs from an empty start, no other move) — PyIBP's target;
//!   moves     the defaults' moves with α, σ_X, σ_A fixed at the given values;
//!   prior     as `moves`, started from a draw of the IBP(α) prior (PyIBP's start) instead
//!             of the defaults' start.
//! After every sweep the chain's Z is scored at the given α, σ_X, σ_A (log p(X | Z) +
//! log P([Z]), the quantity PyIBP's `logLike()` reports), so a chain whose own
//! hyperparameters moved is compared on the same scale. `seconds` is the chain's sampling
//! time only, the scoring left out as PyIBP's driver leaves out its `logLike()`: with
//! `--clock wall` (default) the trace's `seconds`; with `--clock cpu` the thread's CPU time
//! (CLOCK_THREAD_CPUTIME_ID) from one callback to the next, less the CPU time of one scoring
//! in the callback — the library evaluates the same quantity for its trace record, on the
//! same Z, inside that interval. CPU time hardly moves when other jobs compete for the
//! cores; wall time counts the spells the chain waits for one. Writes CSV lines
//! `kind,form,sweep,seconds,k,log_joint`.

mod support;

use madbayes::RowMatrix;
use madbayes::ibp::{IbpKind, IbpSampler, collapsed_log_lik, log_ibp_prior};
use std::io::Write;
use support::{Args, Res, thread_cpu_seconds};

fn main() -> Res<()> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let a = Args::parse(&argv)?;
    let x = madbayes::io::read_matrix(std::path::Path::new(&a.get::<String>("x")?))?;
    let alpha: f64 = a.get("alpha")?;
    let sigma_x: f64 = a.get("sigma-x")?;
    let sigma_a: f64 = a.get("sigma-a")?;
    let sweeps: usize = a.get("sweeps")?;
    let seed: u64 = a.get_or("seed", 1)?;
    let kinds: String = a.get_or("kinds", "collapsed,semi,accelerated".to_string())?;
    let forms: String = a.get_or("forms", "defaults,plain".to_string())?;
    let out: String = a.get("out")?;
    let cpu = match a.get_or("clock", "wall".to_string())?.as_str() {
        "wall" => false,
        "cpu" => true,
        other => return Err(format!("--clock: wall or cpu, not {other}").into()),
    };
    let mut w = std::io::BufWriter::new(std::fs::File::create(&out)?);
    writeln!(w, "kind,form,sweep,seconds,k,log_joint")?;
    for kind in kinds.split(',') {
        let k = match kind {
            "collapsed" => IbpKind::Collapsed,
            "semi" => IbpKind::SemiCollapsed,
            "accelerated" => IbpKind::Accelerated,
            other => return Err(format!("unknown kind {other}").into()),
        };
        for form in forms.split(',') {
            let base = IbpSampler::params(k).iterations(sweeps).seed(seed);
            let params = match form {
                "defaults" => base,
                "plain" => base.plain().alpha(alpha).sigma_x(sigma_x).sigma_a(sigma_a),
                "moves" => base.alpha(alpha).sigma_x(sigma_x).sigma_a(sigma_a),
                "prior" => base
                    .alpha(alpha)
                    .sigma_x(sigma_x)
                    .sigma_a(sigma_a)
                    .start_from_prior(true),
                other => return Err(format!("unknown form {other}").into()),
            }
            .check()?;
            let mut rows = Vec::with_capacity(sweeps);
            let (mut cpu_total, mut last_exit) = (0.0, thread_cpu_seconds());
            params.fit_with(x.view(), &mut |rec, z: &RowMatrix| {
                let enter = thread_cpu_seconds();
                let score =
                    collapsed_log_lik(x.view(), z, sigma_x, sigma_a) + log_ibp_prior(z, alpha);
                let exit = thread_cpu_seconds();
                cpu_total += ((enter - last_exit) - (exit - enter)).max(0.0);
                last_exit = exit;
                let seconds = if cpu { cpu_total } else { rec.seconds };
                rows.push((rec.iteration, seconds, rec.k, score));
            })?;
            for (it, s, kk, lj) in &rows {
                writeln!(w, "{kind},{form},{it},{s:.6},{kk},{lj:.4}")?;
            }
            let last = rows.last().expect("at least one sweep");
            eprintln!(
                "{kind} {form}: {sweeps} sweeps in {:.3} s, K = {}, log joint at the fixed \
                 setting {:.1}",
                last.1, last.2, last.3
            );
        }
    }
    Ok(())
}
