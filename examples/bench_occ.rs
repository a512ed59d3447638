//! OCC benchmarks (see `docs/results.md` and `bench/run_occ.sh`).
//!
//! ```text
//! cargo run --release --example bench_occ -- <command> [--key value]...
//!
//! proposals --algo dp|bp --n N --d D --k-true K --sd S --penalty P --blocks LIST --b B
//!           [--seed S] [--data blobs|blocks] [--show-trace true] [--max-iter M]
//!           Blobs generated here (K clusters, centres uniform in [−10, 10]^D, noise sd S),
//!           or with `--data blocks` the block images of `madbayes gen blocks` (4 shapes,
//!           36 pixels, each held with probability 0.5, noise sd S; `--d`, `--k-true` unused);
//!           one OCC fit per number of simulated workers in LIST; for each, the proposals
//!           and rejections of the first iteration and of the whole run, against the bound
//!           P·b + K of Pan et al. (2013, Thm. 3.3) with K the clusters the fit found.
//! timing    --algo dp|bp --n N --d D --k-true K --sd S --penalty P --blocks P --b B
//!           --threads LIST [--reps R] [--max-iter M]
//!           The same data; seconds per iteration of the in-process runner on T threads
//!           (best of R fits), and whether every thread count gave the same answer.
//! ```
//!
//! Every command prints one JSON object per line on stdout.

mod support;

use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::generate::{block_images, gaussian_blobs};
use madbayes::occ::{OccBpMeans, OccDpMeans, OccTrace};
use std::time::Instant;
use support::{Args, Res, list, pool};

/// What one OCC fit gives: its objective, K, iterations, OCC record, labels or Z as bytes
/// (for comparing answers) and objective trace.
struct Outcome {
    objective: f64,
    k: usize,
    n_iter: usize,
    occ: OccTrace,
    answer: Vec<u8>,
    trace: Vec<f64>,
}

/// One OCC fit.
fn fit(
    algo: &str,
    x: &RowMatrix,
    penalty: f64,
    blocks: usize,
    b: usize,
    max_iter: usize,
) -> Res<Outcome> {
    match algo {
        "dp" => {
            let f = OccDpMeans::params(penalty)
                .blocks(blocks)
                .epoch_size(b)
                .max_iter(max_iter)
                .check()?
                .fit_traced(x.view())?;
            let labels: Vec<u8> = f
                .model
                .labels()
                .iter()
                .flat_map(|l| l.to_le_bytes())
                .collect();
            let m = &f.model;
            Ok(Outcome {
                objective: m.objective(),
                k: m.k(),
                n_iter: m.n_iter(),
                trace: m.trace().to_vec(),
                occ: f.occ,
                answer: labels,
            })
        }
        "bp" => {
            let f = OccBpMeans::params(penalty)
                .blocks(blocks)
                .epoch_size(b)
                .max_iter(max_iter)
                .check()?
                .fit_traced(x.view())?;
            let z = f.model.z();
            let bytes: Vec<u8> = z.rows().flatten().copied().collect();
            let m = &f.model;
            Ok(Outcome {
                objective: m.objective(),
                k: m.k(),
                n_iter: m.n_iter(),
                trace: m.trace().to_vec(),
                occ: f.occ,
                answer: bytes,
            })
        }
        other => Err(format!("--algo {other}: expected dp or bp").into()),
    }
}

fn data(a: &Args) -> Res<RowMatrix> {
    let n: usize = a.get("n")?;
    if a.get_or("data", "blobs".to_string())? == "blocks" {
        return Ok(block_images(n, 0.5, a.get_or("sd", 0.5)?, a.get_or("seed", 0)?)?.x);
    }
    let d: usize = a.get_or("d", 16)?;
    let k: usize = a.get("k-true")?;
    let sd: f64 = a.get_or("sd", 1.0)?;
    Ok(gaussian_blobs(n, d, k, 10.0, sd, a.get_or("seed", 0)?).x)
}

fn proposals(a: &Args) -> Res<()> {
    let x = data(a)?;
    let algo = a.str("algo")?;
    let penalty: f64 = a.get("penalty")?;
    let b: usize = a.get("b")?;
    for p in list::<usize>(a.str("blocks")?)? {
        let Outcome {
            objective,
            k,
            n_iter,
            occ,
            trace,
            ..
        } = fit(algo, &x, penalty, p, b, a.get_or("max-iter", 100)?)?;
        let first: (usize, usize) = occ.epochs[0]
            .iter()
            .fold((0, 0), |s, e| (s.0 + e.0, s.1 + e.0 - e.1));
        if a.get_or("show-trace", false)? {
            eprintln!("trace: {trace:?}");
        }
        println!(
            "{{\"cmd\":\"proposals\",\"algo\":\"{algo}\",\"n\":{},\"d\":{},\"blocks\":{p},\"b\":{b},\
             \"penalty\":{penalty},\"k\":{k},\"n_iter\":{n_iter},\"objective\":{objective},\
             \"first_iteration_proposals\":{},\"first_iteration_rejections\":{},\
             \"proposals\":{},\"rejections\":{},\"bound_pb_plus_k\":{}}}",
            x.n_rows(),
            x.n_cols(),
            first.0,
            first.1,
            occ.proposals(),
            occ.rejections(),
            p * b + k
        );
    }
    Ok(())
}

fn timing(a: &Args) -> Res<()> {
    let x = data(a)?;
    let algo = a.str("algo")?;
    let penalty: f64 = a.get("penalty")?;
    let b: usize = a.get("b")?;
    let blocks: usize = a.get("blocks")?;
    let reps: usize = a.get_or("reps", 3)?;
    let max_iter: usize = a.get_or("max-iter", 100)?;
    let mut reference: Option<(u64, Vec<u8>)> = None;
    for threads in list::<usize>(a.str("threads")?)? {
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..reps {
            let t = Instant::now();
            let r = pool(threads)?.install(|| fit(algo, &x, penalty, blocks, b, max_iter))?;
            best = best.min(t.elapsed().as_secs_f64() / r.n_iter as f64);
            last = Some(r);
        }
        let Outcome {
            objective,
            k,
            n_iter,
            answer,
            ..
        } = last.expect("reps ≥ 1");
        let same = match &reference {
            None => {
                reference = Some((objective.to_bits(), answer));
                true
            }
            Some((o, ans)) => *o == objective.to_bits() && *ans == answer,
        };
        println!(
            "{{\"cmd\":\"timing\",\"algo\":\"{algo}\",\"n\":{},\"d\":{},\"blocks\":{blocks},\"b\":{b},\
             \"threads\":{threads},\"k\":{k},\"n_iter\":{n_iter},\"objective\":{objective},\
             \"seconds_per_iteration\":{best},\"same_answer_as_first\":{same}}}",
            x.n_rows(),
            x.n_cols()
        );
    }
    Ok(())
}

fn main() -> Res<()> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = raw.first() else {
        return Err("usage: bench_occ proposals|timing [--key value]...".into());
    };
    let a = Args::parse(&raw[1..])?;
    match cmd.as_str() {
        "proposals" => proposals(&a),
        "timing" => timing(&a),
        other => Err(format!("unknown command {other}").into()),
    }
}
