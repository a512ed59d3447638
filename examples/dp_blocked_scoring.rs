//! Scoring a cluster's rows together (issue 14, target 4), apart from the sweep: the scoring
//! of one sweep's searches done row by row, as `Partition::sweep` does it, against the same
//! scoring done cluster by cluster with one GEMM. (Inside the sweep, with the distances
//! computed ahead this way, a refined run took 10–27 % longer: docs/speed.md §4 tells why.)
//!
//! ```text
//! dp_blocked_scoring --x file.f64 --n N --d D --penalty P [--cut C] [--reps R] [--labels cache.bin]
//! ```
//! The file holds N × D little-endian f64, row after row (as `bench/compare_dp_pdc.py` writes
//! them). The clustering is a default DP-means fit at P (one run, seed 0), kept in `--labels`
//! if given so later calls skip the fit. Each cluster a's candidates are the clusters whose
//! means lie within `C` of its mean (20 by default): on 200 000 × 50 blobs at P = 150 they
//! are a's siblings, 32.1 a row, as many as a refined run's sweeps after its deep round of
//! splits score (32.1 a searched row), where a cluster's searched rows nearly always score the
//! same set (docs/speed.md §4, "2026-11-28, 02:36–03:43 UTC").
//!
//! - **Row by row**: each row (the one four on asked for ahead, as the sweep does) its
//!   distance to its own mean, then its candidates eight at a time
//!   by `sq_dists_from`, each kept by the cost m_b/(m_b + 1)·d² against the best so far and
//!   among the three nearest (its square root taken), as `Search::scored` does.
//! - **Row by row, the kernel alone**: the same distances, each kept only by its cost
//!   against the best so far (no nearest three, no square roots): what any exact search of
//!   these candidates, one row at a time with this kernel, at least does.
//! - **Cluster by cluster**: the cluster's rows and its own and candidates' means gathered,
//!   one GEMM of the two, each distance from ‖x‖² + ‖m‖² − 2x·m, then the same bookkeeping.
//!
//! Both visit the clusters in label order. It prints the best of `R` passes of each (5 by
//! default), the GEMM side's time for gathering and multiplying alone, and how many rows end
//! with a different best cluster or nearest cluster (the expanded form rounds differently).

mod support;

use madbayes::clustering::DpMeans;
use madbayes::linalg::{gemm_xat, prefetch, sq_dist, sq_dists_from, sq_norm};
use madbayes::{Fit, RowMatrix};
use std::time::Instant;
use support::{Args, Res, read_f64};

/// One row's search: the best cost so far and its cluster, and the three nearest seen.
struct Search {
    best_cost: f64,
    best: usize,
    near: [(f64, usize); 3],
}

impl Search {
    fn new(stay: f64, home: usize) -> Self {
        Self {
            best_cost: stay,
            best: home,
            near: [(f64::INFINITY, usize::MAX); 3],
        }
    }

    /// Cluster b at squared distance `dd`, joining it costing `cost`.
    #[inline(always)]
    fn scored(&mut self, b: usize, cost: f64, dd: f64) {
        if cost < self.best_cost {
            self.best_cost = cost;
            self.best = b;
        }
        let dist = dd.sqrt() * (1.0 - 1e-12);
        let [n0, n1, n2] = self.near;
        let new = (dist, b);
        let (below0, below1, below2) = (dist < n0.0, dist < n1.0, dist < n2.0);
        self.near = [
            if below0 { new } else { n0 },
            if below0 {
                n0
            } else if below1 {
                new
            } else {
                n1
            },
            if below1 {
                n1
            } else if below2 {
                new
            } else {
                n2
            },
        ];
    }

    fn outcome(&self) -> (usize, usize) {
        (self.best, self.near[0].1)
    }
}

/// The labels of a default fit at `penalty` (one run, seed 0), from `cache` when it holds them.
fn labels_of(x: &RowMatrix, penalty: f64, cache: Option<&str>) -> Vec<usize> {
    if let Some(bytes) = cache.and_then(|c| std::fs::read(c).ok())
        && bytes.len() == 8 * x.n_rows()
    {
        return bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as usize)
            .collect();
    }
    let params = DpMeans::params(penalty).restarts(1).seed(0).check();
    let fit = params.expect("valid parameters").fit(x).expect("the fit");
    let labels = fit.labels().to_vec();
    if let Some(c) = cache {
        let bytes: Vec<u8> = labels
            .iter()
            .flat_map(|&l| (l as u64).to_le_bytes())
            .collect();
        std::fs::write(c, bytes).expect("the labels cache is written");
    }
    labels
}

fn main() -> Res<()> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let args = Args::parse(&raw)?;
    let (path, n, d): (&str, usize, usize) = (args.str("x")?, args.get("n")?, args.get("d")?);
    let penalty: f64 = args.get("penalty")?;
    let cut: f64 = args.get_or("cut", 20.0)?;
    let reps: usize = args.get_or("reps", 5)?;
    let cache: Option<&str> = if args.has("labels") {
        Some(args.str("labels")?)
    } else {
        None
    };
    let x = read_f64(path, n, d)?;
    let labels = labels_of(&x, penalty, cache);

    let k = labels.iter().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (i, &l) in labels.iter().enumerate() {
        members[l].push(i);
    }
    let mut sums = vec![0.0; k * d];
    for (i, &l) in labels.iter().enumerate() {
        for (s, v) in sums[l * d..(l + 1) * d].iter_mut().zip(x.row(i)) {
            *s += v;
        }
    }
    for (a, rows) in members.iter().enumerate() {
        sums[a * d..(a + 1) * d]
            .iter_mut()
            .for_each(|s| *s /= rows.len() as f64);
    }
    let means = RowMatrix::new(k, d, sums);
    let count = |b: usize| members[b].len() as f64;
    let factor: Vec<f64> = (0..k).map(|b| count(b) / (count(b) + 1.0)).collect();
    let candidates: Vec<Vec<usize>> = (0..k)
        .map(|a| {
            (0..k)
                .filter(|&b| b != a && sq_dist(means.row(a), means.row(b)) < cut * cut)
                .collect()
        })
        .collect();
    let scored: usize = (0..k).map(|a| members[a].len() * candidates[a].len()).sum();
    println!("K {k}, candidates per row {:.1}", scored as f64 / n as f64);

    // Row by row; with `full` false only the kernel and the cheapest cost, the least any
    // exact search of these candidates does with this kernel.
    let by_rows = |full: bool| {
        let mut outcome = vec![(0, 0); n];
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            let t = Instant::now();
            for (a, rows) in members.iter().enumerate() {
                let cands = &candidates[a];
                for (r, &i) in rows.iter().enumerate() {
                    // The row four on asked for ahead, as the sweep does.
                    if let Some(&ahead) = rows.get(r + 4) {
                        prefetch(x.row(ahead));
                    }
                    let xn = x.row(i);
                    let stay = count(a) / (count(a) - 1.0) * sq_dist(xn, means.row(a));
                    let mut search = Search::new(stay, a);
                    let mut keep = |b: usize, dd: f64| {
                        if full {
                            search.scored(b, factor[b] * dd, dd);
                        } else if factor[b] * dd < search.best_cost {
                            search.best_cost = factor[b] * dd;
                            search.best = b;
                        }
                    };
                    let mut eights = cands.chunks_exact(8);
                    for e in &mut eights {
                        let e: [usize; 8] = e.try_into().expect("eight");
                        let dist = sq_dists_from(xn, e.map(|b| means.row(b)));
                        e.into_iter().zip(dist).for_each(|(b, dd)| keep(b, dd));
                    }
                    for &b in eights.remainder() {
                        keep(b, sq_dist(xn, means.row(b)));
                    }
                    outcome[i] = search.outcome();
                }
            }
            best = f64::min(best, t.elapsed().as_secs_f64());
        }
        (best, outcome)
    };
    let (best_rows, row_by_row) = by_rows(true);
    let (best_kernel, _) = by_rows(false);

    let x_sq: Vec<f64> = (0..n).map(|i| sq_norm(x.row(i))).collect();
    let m_sq: Vec<f64> = (0..k).map(|b| sq_norm(means.row(b))).collect();
    let mut by_cluster = vec![(0, 0); n];
    let (mut best_blocks, mut best_gemm) = (f64::INFINITY, 0.0);
    let (mut xb, mut dots) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let t = Instant::now();
        let mut gemm = 0.0;
        for (a, rows) in members.iter().enumerate() {
            let t_gemm = Instant::now();
            let cols: Vec<usize> = std::iter::once(a)
                .chain(candidates[a].iter().copied())
                .collect();
            let mut picked = Vec::with_capacity(cols.len() * d);
            cols.iter()
                .for_each(|&b| picked.extend_from_slice(means.row(b)));
            let picked = RowMatrix::new(cols.len(), d, picked);
            xb.clear();
            rows.iter().for_each(|&i| xb.extend_from_slice(x.row(i)));
            dots.resize(rows.len() * cols.len(), 0.0);
            gemm_xat(&mut dots, &xb, rows.len(), &picked);
            gemm += t_gemm.elapsed().as_secs_f64();
            for (r, &i) in rows.iter().enumerate() {
                let dr = &dots[r * cols.len()..(r + 1) * cols.len()];
                let dd = |t: usize, b: usize| (x_sq[i] + m_sq[b] - 2.0 * dr[t]).max(0.0);
                let mut search = Search::new(count(a) / (count(a) - 1.0) * dd(0, a), a);
                for (t, &b) in cols.iter().enumerate().skip(1) {
                    let dist = dd(t, b);
                    search.scored(b, factor[b] * dist, dist);
                }
                by_cluster[i] = search.outcome();
            }
        }
        let e = t.elapsed().as_secs_f64();
        if e < best_blocks {
            (best_blocks, best_gemm) = (e, gemm);
        }
    }
    let differ = row_by_row
        .iter()
        .zip(&by_cluster)
        .filter(|(p, q)| p != q)
        .count();
    let per = |s: f64| (s * 1e3, s * 1e9 / n as f64, s * 1e9 / scored as f64);
    let (r, b) = (per(best_rows), per(best_blocks));
    println!(
        "row by row: {:.1} ms, {:.0} ns a row, {:.2} ns a candidate",
        r.0, r.1, r.2
    );
    let kern = per(best_kernel);
    println!(
        "row by row, the kernel and the cheapest cost alone: {:.1} ms, {:.0} ns a row, {:.2} ns a candidate",
        kern.0, kern.1, kern.2
    );
    println!(
        "cluster by cluster: {:.1} ms ({:.1} ms gathering and GEMM), {:.0} ns a row, {:.2} ns a candidate",
        b.0,
        best_gemm * 1e3,
        b.1,
        b.2
    );
    println!(
        "ratio {:.2}; rows with another best or nearest cluster: {differ}",
        best_blocks / best_rows
    );
    Ok(())
}
