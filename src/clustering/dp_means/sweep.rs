//! One run of DP-means (Kulis & Jordan 2012; MAD-Bayes Eq. 3 and §3.1).
//!
//! Objective: Σ_n ‖x_n − a_{c_n}‖² + (K − 1)·P. Start with one cluster at the mean of X.
//! Each sweep visits the rows in the run's order; a row joins its nearest mean unless that
//! mean is farther than P (squared distance, strict `>`), in which case it opens a new cluster
//! at itself (never beyond `k_max`). After the sweep each mean becomes its members' mean and
//! empty clusters are dropped. Stop when a sweep changes no label.
//!
//! Means do not move during a sweep; they only get added. So the nearest of the means that
//! exist when a sweep begins is found for all rows first, by GEMM over contiguous row blocks
//! in parallel (the same pass as K-means). The rows are then visited in order, in waves: the
//! nearest of the clusters opened earlier in the sweep is found for a wave's rows by GEMM, in
//! parallel (skipped while none has been opened, as in most sweeps after the first); only
//! the clusters opened during the wave itself are checked row by row. Without waves, every
//! cluster opened in the first sweep (all K of them, starting from one) would be checked row
//! by row for the rest of that sweep. The first sweep has no base pass at its start (its one
//! mean is left by most rows); once a wave opens few clusters, a delayed base pass against
//! all clusters so far takes over, so the remaining rows are not gathered in visiting order.
//!
//! Every nearest-mean decision is the direct search's (`sq_dist`, ties to the lowest index):
//! the GEMM searches go through [`screened_nearest`], which measures directly the means that
//! rounding could make the nearest. From the third sweep on, the base pass keeps bounds
//! ([`super::bounds`]): a row whose own mean is provably nearer than every other passes
//! without a search (most rows, once few change cluster). A sweep that opens a cluster leaves
//! no bound behind: the rows visited before the opening never saw it.

use super::bounds::{GroupBounds, Kept, nearest_in_block};
use super::params::large_data;
use super::reach::Reach;
use crate::MatrixView;
use crate::RowMatrix;
use crate::clustering::mean_shifts::half_gaps;
use crate::clustering::model::ClusterRun;
use crate::clustering::objective::{BlockSums, dp_means_objective};
use crate::linalg::{
    BLOCK_ROWS, Nearest, axpy, ordered_block_reduce, prefetch_one, row_sq_norms, screened_nearest,
    sq_dists_to,
};

/// Most rows in one wave of a sweep. Within a wave, the nearest of the clusters opened before
/// the wave began is found in parallel by GEMM; clusters opened during the wave are checked
/// row by row. Waves start at `FIRST_WAVE_ROWS` and double up to this size, so the
/// many clusters opened early in the first sweep soon join the GEMM. The schedule depends on
/// row positions only (not on the thread count), which fixes which distances are computed
/// which way: the result is the same for any number of threads. (Labels and distances are
/// the direct search's either way, so the size changes no answer, only the time: rows checked
/// one by one against a wave's own openings cost more than the GEMM's share, and two blocks
/// keep both threads busy. On 200 000 × 50 blobs, two threads, default fits: at P = 100
/// (5 484 clusters opened in the first sweep) 4.19–4.23 s against 4.33–4.46 s at 8 blocks
/// and 4.50–4.51 s at one; at P = 50 (152 163 opened) 106.2 s against 115.4 s; at P = 150
/// and 1 000 within 2 %; docs/speed.md §4.)
const WAVE_ROWS: usize = 2 * BLOCK_ROWS;

/// How far ahead of the row being visited the next rows' data are prefetched.
const VISIT_AHEAD: usize = 16;

/// Rows in the first wave of a sweep.
const FIRST_WAVE_ROWS: usize = 256;

/// The first sweep runs its delayed base pass once a wave opened fewer clusters than
/// 1/`DELAYED_BASE_RATIO` of its rows (and at least half the rows remain).
const DELAYED_BASE_RATIO: usize = 64;

/// Runs DP-means sweeps over the rows in `order` (a permutation of `0..N`), starting from
/// one cluster at `start` (the mean of X, [`mean_row`](crate::linalg::mean_row); given because callers have it).
///
/// Every row has a *provisional* label, found in parallel: its nearest starting mean (the
/// base pass), or in the first sweep its nearest of the clusters that existed when its wave
/// began. Cluster sums are accumulated by provisional label in those parallel passes and
/// corrected in the in-order visit only for rows whose final label differs, so the new means
/// need no pass of their own. The first sweep starts from the single mean of X, which most
/// rows leave: it is searched like a cluster opened during the sweep, with no base pass.
///
/// The labels are those of the plain sequential algorithm with direct distances, bit for bit.
pub fn dp_means_run(
    x: MatrixView<'_>,
    start: &[f64],
    penalty: f64,
    k_max: usize,
    max_iter: usize,
    order: &[usize],
) -> ClusterRun {
    dp_means_run_with(x, start, penalty, k_max, max_iter, order, true, 0).0
}

/// [`dp_means_run`] as the start of a refinement: the sweeps stop once one changes fewer
/// than N/[`refine_start_share`] labels (or at the sweep cap), since the refinement's exact
/// sweeps then finish the descent; the run is then not converged, and its means are its
/// clusters' means. Until that sweep, the run is [`dp_means_run`]'s, bit for bit.
pub fn dp_means_refinement_start(
    x: MatrixView<'_>,
    start: &[f64],
    penalty: f64,
    k_max: usize,
    max_iter: usize,
    order: &[usize],
) -> ClusterRun {
    let stop_below = x.n_rows() / refine_start_share(x.n_rows(), x.n_cols());
    dp_means_run_with(x, start, penalty, k_max, max_iter, order, true, stop_below).0
}

/// A run that will be refined ([`dp_means_refinement_start`]) stops once a sweep changes
/// fewer than N/`REFINE_START_SHARE` labels. The paper's sweeps move fewer and fewer rows
/// for a long tail: on 200 000 × 50 blobs at P = 150 (one thread) 12 sweeps took 0.82 s and
/// changed all but a few thousand rows, the next 96 took 1.87 s, and the refinement's exact
/// sweeps then still moved 3 711 rows in their first sweep (docs/defaults.md, "DP-means:
/// where the refinement starts").
pub const REFINE_START_SHARE: usize = 100;

/// On data of more than [`REFINE_EVERY_RUN_MAX_VALUES`](super::REFINE_EVERY_RUN_MAX_VALUES) values, where the refinement goes by
/// groups of clusters, a run to be refined stops once a sweep changes fewer than
/// N/`LARGE_DATA_START_SHARE` labels. There the groups' exact sweeps finish what is left for
/// less than the paper's sweeps would cost. On 200 000 × 50 blobs at P = 100 the run now
/// stops after two sweeps where N/100 took ten, of which the third (the first with bounds,
/// set up over 5 484 means) alone took 1.6 s, a fifth of the fit; over eight large data sets
/// the refined objectives moved both ways, by −0.008 % to +0.011 % on average
/// (docs/defaults.md, "DP-means: where the refinement starts").
pub const LARGE_DATA_START_SHARE: usize = 2;

/// The share of [`dp_means_refinement_start`] for N × D data: [`REFINE_START_SHARE`], or
/// [`LARGE_DATA_START_SHARE`] on data of more than [`REFINE_EVERY_RUN_MAX_VALUES`](super::REFINE_EVERY_RUN_MAX_VALUES) values.
pub fn refine_start_share(n: usize, d: usize) -> usize {
    if large_data(n, d) {
        LARGE_DATA_START_SHARE
    } else {
        REFINE_START_SHARE
    }
}

/// [`dp_means_run`], with bounds in the base passes from the third sweep on (the second
/// sweep's is often the last, when it changes no label) or (`bounded = false`) a search of
/// every row: the same run bit for bit. The sweeps also stop once one changes fewer than
/// `stop_below` labels (0: only when none changes). Also returns how many row-to-mean
/// distances the base passes measured, over all sweeps.
#[allow(clippy::too_many_arguments)]
fn dp_means_run_with(
    x: MatrixView<'_>,
    start: &[f64],
    penalty: f64,
    k_max: usize,
    max_iter: usize,
    order: &[usize],
    bounded: bool,
    stop_below: usize,
) -> (ClusterRun, usize) {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut means = RowMatrix::from_rows(&[start]);
    let mut labels = vec![0usize; n];
    let mut trace = Vec::new();
    let mut converged = false;
    let mut n_iter = 0;
    // Σ‖x_n − a_{c_n}‖² of the last sweep's starting labels, computed exactly (base pass).
    let mut base_cost = None;
    // Bounds on each row's distance to the clusters other than its own.
    let mut bounds = GroupBounds::new(n, BLOCK_ROWS);
    let mut measured = 0;
    while n_iter < max_iter {
        n_iter += 1;
        // The means at the start of the sweep (indices 0..k0 are searched for all rows at
        // once, in row-index order), then every cluster opened during it.
        let mut current = means;
        let k0 = if n_iter == 1 { 0 } else { current.n_rows() };
        let with_bounds = bounded && n_iter >= 3;
        let mut acc = ClusterSums::zeros(current.n_rows(), d);
        let mut base = if k0 > 0 {
            let (half_gap, grouped) = if with_bounds {
                bounds.prepare(&current, n);
                (half_gaps(&current, n), bounds.grouped(&current))
            } else {
                (Vec::new(), RowMatrix::zeros(0, d))
            };
            let kept = with_bounds.then_some(Kept {
                bounds: &bounds,
                grouped: &grouped,
                labels: &labels,
                half_gap: &half_gap,
            });
            let pass = match kept {
                None if k_max == usize::MAX && k0 >= REACH_MIN_MEANS => {
                    reach_base_pass(x, &current, penalty)
                }
                _ => None,
            };
            let pass = pass.unwrap_or_else(|| base_pass(x, &current, None, kept.as_ref()));
            acc.add_partial(&pass.sums);
            base_cost = Some(pass.cost);
            measured += pass.measured;
            pass.nearest
        } else {
            base_cost = None;
            vec![Nearest::NONE; n]
        };
        let mut changed = 0usize;
        let mut sweep_cost = 0.0;
        // Settles row `r` whose best so far is `best` (clusters before `from` searched) and
        // whose sums went to cluster `provisional`; asks early for the label of the row
        // visited `ahead`, if given.
        let mut visit = |current: &mut RowMatrix,
                         acc: &mut ClusterSums,
                         (r, ahead): (usize, Option<usize>),
                         from: usize,
                         mut best: Nearest,
                         provisional: usize| {
            if let Some(a) = ahead {
                prefetch_one(&labels[a]);
            }
            // Clusters opened after `from` was fixed: checked row by row, in index order,
            // up to 64 at a time (`sq_dists_to`, the bits of `sq_dist`).
            let (xr, k_now) = (x.row(r), current.n_rows());
            let mut dists = [0.0; 64];
            for start in (from..k_now).step_by(64) {
                let end = (start + 64).min(k_now);
                let out = &mut dists[..end - start];
                sq_dists_to(current.rows_slice(start, end), xr, out);
                for (i, &dist) in out.iter().enumerate() {
                    if dist < best.dist {
                        best = Nearest {
                            label: start + i,
                            dist,
                        };
                    }
                }
            }
            if best.dist > penalty && current.n_rows() < k_max {
                best = Nearest {
                    label: current.n_rows(),
                    dist: 0.0,
                };
                current.push_row(x.row(r));
            }
            if best.label != provisional {
                acc.moved(x.row(r), provisional, best.label);
            }
            if labels[r] != best.label {
                labels[r] = best.label;
                changed += 1;
            }
            sweep_cost += best.dist;
        };
        // `base` covers clusters 0..k_base. In the first sweep (no base pass) it starts empty
        // and is filled once, by a delayed base pass, when the rows opening clusters thin out.
        let mut k_base = k0;
        let (mut opened_in_wave, mut last_wave_rows) = (0, 0);
        let mut wave_start = 0;
        let mut wave_len = FIRST_WAVE_ROWS;
        // The anchors of the first sweep's waves, and whether they spare enough to keep.
        let mut wave_reach: Option<Reach> = None;
        let mut reach_pays = true;
        while wave_start < n {
            let k_snap = current.n_rows();
            if k_base == 0
                && wave_start > 0
                && 2 * (n - wave_start) >= n
                && DELAYED_BASE_RATIO * opened_in_wave < last_wave_rows
            {
                // Few openings in the last wave and at least half the rows still to visit: one
                // contiguous pass against all clusters so far replaces gathering the rest of
                // the rows; the sums of the rows not yet visited move to it.
                let mut visited = vec![false; n];
                order[..wave_start].iter().for_each(|&r| visited[r] = true);
                let pass = base_pass(x, &current, Some(&visited), None);
                measured += pass.measured;
                acc.add_partial(&pass.sums);
                base = pass.nearest;
                k_base = k_snap;
            }
            let wave_end = (wave_start + wave_len).min(n);
            wave_len = (2 * wave_len).min(WAVE_ROWS);
            if k_snap == k_base {
                // Nothing opened since the base search: it is complete. The rows come in a
                // random order: the label and base result of the row `VISIT_AHEAD` on are asked for
                // early, so that each row does not wait for memory.
                let rows = &order[wave_start..wave_end];
                for (v, &r) in rows.iter().enumerate() {
                    let ahead = rows.get(v + VISIT_AHEAD).copied();
                    if let Some(a) = ahead {
                        prefetch_one(&base[a]);
                    }
                    visit(
                        &mut current,
                        &mut acc,
                        (r, ahead),
                        k_base,
                        base[r],
                        base[r].label,
                    );
                }
                opened_in_wave = current.n_rows() - k_snap;
                last_wave_rows = wave_end - wave_start;
                wave_start = wave_end;
                continue;
            }
            // Parallel, by GEMM: nearest of the clusters opened so far in this sweep, and (in
            // the first sweep, which has no base pass) the sums by that label. Before the
            // first sweep's delayed base pass, past `REACH_WAVE_MIN_MEANS` clusters, the nearest
            // within P alone, by anchors ([`Reach`]) kept over the sweep and given each wave's
            // openings, while they spare three quarters of the distances.
            let by_reach = k_base == 0 && k_max == usize::MAX && k_snap >= REACH_WAVE_MIN_MEANS;
            let reach = match &mut wave_reach {
                Some(r) if by_reach => {
                    let from = r.len();
                    r.add(current.rows_view(from, k_snap));
                    Some(&*r)
                }
                None if by_reach && reach_pays => {
                    let all = current.rows_view(0, k_snap);
                    Some(&*wave_reach.insert(Reach::new(all, penalty)))
                }
                _ => None,
            };
            let (opened, opened_norms) = match reach {
                Some(_) => (RowMatrix::zeros(0, d), Vec::new()),
                None => {
                    let opened = RowMatrix::new(
                        k_snap - k_base,
                        d,
                        current.rows_slice(k_base, k_snap).to_vec(),
                    );
                    let norms = row_sq_norms(opened.view());
                    (opened, norms)
                }
            };
            let mut wave_measured = 0;
            ordered_block_reduce(
                wave_end - wave_start,
                BLOCK_ROWS,
                |_, s, e| {
                    let rows = &order[wave_start + s..wave_start + e];
                    let mut xb = Vec::with_capacity(rows.len() * d);
                    for &r in rows {
                        xb.extend_from_slice(x.row(r));
                    }
                    let mut nearest = vec![Nearest::NONE; rows.len()];
                    let batch = MatrixView::new(&xb, rows.len(), d).expect("gathered whole rows");
                    let measured = match reach {
                        Some(r) => r.nearest_within(batch, &mut nearest),
                        None => {
                            screened_nearest(batch, opened.view(), &opened_norms, |j, _, best| {
                                let best = best.expect("at least one opened cluster");
                                nearest[j] = Nearest {
                                    label: best.label,
                                    dist: best.dist,
                                };
                            });
                            rows.len() * opened.n_rows()
                        }
                    };
                    // The better of the two searches (ties to the older cluster).
                    for (&r, o) in rows.iter().zip(nearest.iter_mut()) {
                        let b = base[r];
                        *o = if o.dist < b.dist {
                            Nearest {
                                label: k_base + o.label,
                                dist: o.dist,
                            }
                        } else {
                            b
                        };
                    }
                    // (A row with no cluster within P has none: it opens one when visited.)
                    let sums = (k_base == 0).then(|| {
                        let mut part = BlockSums::new(k_snap, d);
                        for (row, o) in xb.chunks_exact(d.max(1)).zip(&nearest) {
                            if o.label != usize::MAX {
                                part.add(row, o.label);
                            }
                        }
                        part
                    });
                    (rows, nearest, sums, measured)
                },
                // In order: the clusters opened during this wave, then settle.
                |(rows, nearest, sums, measured)| {
                    wave_measured += measured;
                    if let Some(part) = &sums {
                        acc.add_block(part);
                    }
                    for (&r, &best) in rows.iter().zip(&nearest) {
                        let provisional = if k_base == 0 {
                            best.label
                        } else {
                            base[r].label
                        };
                        visit(&mut current, &mut acc, (r, None), k_snap, best, provisional);
                    }
                },
            );
            if reach.is_some() && 4 * wave_measured > (wave_end - wave_start) * k_snap {
                // The anchors spared too little: the full GEMM for the rest of the sweep.
                reach_pays = false;
                wave_reach = None;
            }
            opened_in_wave = current.n_rows() - k_snap;
            last_wave_rows = wave_end - wave_start;
            wave_start = wave_end;
        }
        let k_now = current.n_rows();
        trace.push(sweep_cost + (k_now as f64 - 1.0) * penalty);
        if changed == 0 {
            means = current;
            converged = true;
            break;
        }
        means = acc.into_means(k_now);
        let used = clusters_used(&labels, k_now);
        if !with_bounds || k_now > k0 {
            // No bounds this sweep, or a cluster opened that the rows visited before it were
            // never compared with.
            bounds.reset();
        } else {
            bounds.moved(&current, &means, &used);
            bounds.retain(&used);
        }
        drop_empty_clusters(&mut labels, &mut means);
        if changed < stop_below {
            break;
        }
    }
    // A converged sweep kept every label and opened nothing, so its starting labels and means
    // are the returned ones and `base_cost` is their exact sum of squares.
    let objective = match base_cost {
        Some(cost) if converged => cost + (means.n_rows() as f64 - 1.0) * penalty,
        _ => dp_means_objective(x, &labels, &means, penalty),
    };
    let run = ClusterRun {
        labels,
        means,
        objective,
        n_iter,
        converged,
        trace,
    };
    (run, measured)
}

/// What the base pass of a sweep gives: the nearest starting mean of every row (by direct
/// distance), the exact Σ‖x_n − a_{c_n}‖² of those labels, the cluster sums by those labels,
/// and how many row-to-mean distances were measured.
struct BasePass {
    nearest: Vec<Nearest>,
    cost: f64,
    sums: ClusterSums,
    measured: usize,
}

impl BasePass {
    /// Nothing passed yet, for N rows and K means of D columns.
    fn new(n: usize, k: usize, d: usize) -> Self {
        BasePass {
            nearest: Vec::with_capacity(n),
            cost: 0.0,
            sums: ClusterSums::zeros(k, d),
            measured: 0,
        }
    }

    /// Adds the next block of rows: their nearest means, cost, sums and distances measured.
    fn add(&mut self, (nearest, cost, part, measured): (Vec<Nearest>, f64, BlockSums, usize)) {
        self.nearest.extend_from_slice(&nearest);
        self.cost += cost;
        self.sums.add_block(&part);
        self.measured += measured;
    }
}

/// Nearest of `means` for all rows, in parallel over contiguous row blocks: kept by `kept`'s
/// bounds where they prove it, else searched ([`nearest_in_block`]). The cost and the sums (of
/// the rows not marked in `skip_sums`) are folded in block order: the same bits for any
/// thread count, and the cost is exactly what [`sum_of_squares`] gives for these labels.
///
/// [`sum_of_squares`]: crate::clustering::objective::sum_of_squares
fn base_pass(
    x: MatrixView<'_>,
    means: &RowMatrix,
    skip_sums: Option<&[bool]>,
    kept: Option<&Kept<'_>>,
) -> BasePass {
    let (k, d) = (means.n_rows(), means.n_cols());
    let m_norms = row_sq_norms(means.view());
    let mut out = BasePass::new(x.n_rows(), k, d);
    ordered_block_reduce(
        x.n_rows(),
        BLOCK_ROWS,
        |b, s, e| {
            let mut nearest = vec![Nearest::NONE; e - s];
            let mut part = BlockSums::new(k, d);
            let mut cost = 0.0;
            // The sums and the cost in row order, each run of rows while it is in cache.
            let add = |c: usize, f: usize, settled: &[Nearest]| {
                for (i, best) in (c..f).zip(settled) {
                    if !skip_sums.is_some_and(|skip| skip[i]) {
                        part.add(x.row(i), best.label);
                    }
                    cost += best.dist;
                }
            };
            let measured = nearest_in_block(x, (b, s, e), means, &m_norms, kept, &mut nearest, add);
            (nearest, cost, part, measured)
        },
        |block| out.add(block),
    );
    out
}

/// The fewest means at the start of a sweep for which its base pass without bounds looks
/// for each row's nearest mean within P alone ([`reach_base_pass`]; it falls back to the
/// full pass where the anchors do not spare three quarters of the distances). Lowered from
/// 8 192 on 2026-12-05: on 200 000 × 50 blobs, two threads, at P = 100 (5 484 means at the
/// paper run's second sweep) a default fit took 3.62–3.87 s at 2 048 (3.71 s at 1 024,
/// 3.75 s at 512) against 4.25–4.47 s at 8 192; P = 150 2.13 against 2.20 s; P = 50, 300,
/// 1 000 and the σ = 4 blobs at 500, 1 000 and 3 000 within noise; the same objectives.
const REACH_MIN_MEANS: usize = 2048;

/// The fewest clusters opened in the first sweep from which its waves look for each row's
/// nearest within P alone (by anchors kept over the sweep, and dropped for the rest of it
/// once a wave is not spared three quarters of its distances). Not lowered with
/// [`REACH_MIN_MEANS`]: at 2 048 the anchors, taken up early, were dropped before the
/// clusters grew many, and a fit at P = 50 took 31.5–31.7 s against 21.4 s.
const REACH_WAVE_MIN_MEANS: usize = 8192;

/// [`base_pass`] without bounds, for a sweep without a cap on K, as far as it matters: each
/// row's nearest mean when that lies within P (the same label and distance), else none
/// (`Nearest::NONE`: the row opens a cluster in the in-order visit, whichever mean is
/// nearest); the cost of the rows within P (the pass's cost only matters when no row opens
/// a cluster, when it is the full cost); the sums of the rows within P. `None` when the
/// anchors ([`Reach`]) would spare less than three quarters of the distances, judged on the
/// first block of rows.
fn reach_base_pass(x: MatrixView<'_>, means: &RowMatrix, penalty: f64) -> Option<BasePass> {
    let (n, k, d) = (x.n_rows(), means.n_rows(), means.n_cols());
    let reach = Reach::new(means.view(), penalty);
    let first = BLOCK_ROWS.min(n);
    let mut probe = vec![Nearest::NONE; first];
    let probed = reach.nearest_within(x.rows_view(0, first), &mut probe);
    if 4 * probed > first * k {
        return None;
    }
    let mut out = BasePass::new(n, k, d);
    let probe = (probe, probed);
    ordered_block_reduce(
        n,
        BLOCK_ROWS,
        |b, s, e| {
            let (nearest, measured) = match b {
                0 => probe.clone(),
                _ => {
                    let mut nearest = vec![Nearest::NONE; e - s];
                    let measured = reach.nearest_within(x.rows_view(s, e), &mut nearest);
                    (nearest, measured)
                }
            };
            let mut part = BlockSums::new(k, d);
            let mut cost = 0.0;
            for (i, best) in (s..e).zip(&nearest) {
                if best.label != usize::MAX {
                    part.add(x.row(i), best.label);
                    cost += best.dist;
                }
            }
            (nearest, cost, part, measured)
        },
        |block| out.add(block),
    );
    Some(out)
}

/// Per-cluster sums of member rows and member counts; grows as clusters are opened.
struct ClusterSums {
    sums: RowMatrix,
    counts: Vec<usize>,
}

impl ClusterSums {
    fn zeros(k: usize, d: usize) -> Self {
        Self {
            sums: RowMatrix::zeros(k, d),
            counts: vec![0; k],
        }
    }

    fn grow_to(&mut self, k: usize) {
        let d = self.sums.n_cols();
        while self.counts.len() < k {
            self.sums.push_row(&vec![0.0; d]);
            self.counts.push(0);
        }
    }

    fn add(&mut self, row: &[f64], label: usize) {
        self.grow_to(label + 1);
        axpy(1.0, row, self.sums.row_mut(label));
        self.counts[label] += 1;
    }

    /// Moves `row` from cluster `from` (none when `usize::MAX`) to cluster `to`.
    fn moved(&mut self, row: &[f64], from: usize, to: usize) {
        if from != usize::MAX {
            axpy(-1.0, row, self.sums.row_mut(from));
            self.counts[from] -= 1;
        }
        self.add(row, to);
    }

    fn add_partial(&mut self, part: &ClusterSums) {
        self.grow_to(part.counts.len());
        for (j, &c) in part.counts.iter().enumerate() {
            if c > 0 {
                axpy(1.0, part.sums.row(j), self.sums.row_mut(j));
                self.counts[j] += c;
            }
        }
    }

    /// Adds a block's sums ([`BlockSums`]), growing to its clusters.
    fn add_block(&mut self, part: &BlockSums) {
        self.grow_to(part.k());
        for (j, sum, count) in part.slots() {
            axpy(1.0, sum, self.sums.row_mut(j));
            self.counts[j] += count;
        }
    }

    /// The means of clusters `0..k` (zero rows for empty ones).
    fn into_means(mut self, k: usize) -> RowMatrix {
        self.grow_to(k);
        for j in 0..k {
            if self.counts[j] > 0 {
                let inv = 1.0 / self.counts[j] as f64;
                self.sums.row_mut(j).iter_mut().for_each(|v| *v *= inv);
            } else {
                self.sums.row_mut(j).fill(0.0);
            }
        }
        self.sums
    }
}

/// Which of clusters `0..k` some row is labelled with.
fn clusters_used(labels: &[usize], k: usize) -> Vec<bool> {
    let mut used = vec![false; k];
    for &c in labels {
        used[c] = true;
    }
    used
}

/// Removes clusters no row is labelled with, keeping the others in order.
pub(crate) fn drop_empty_clusters(labels: &mut [usize], means: &mut RowMatrix) {
    let k = means.n_rows();
    let used = clusters_used(labels, k);
    if used.iter().all(|&u| u) {
        return;
    }
    let mut new_index = vec![usize::MAX; k];
    let mut next = 0;
    for j in 0..k {
        if used[j] {
            new_index[j] = next;
            next += 1;
        }
    }
    for c in labels.iter_mut() {
        *c = new_index[*c];
    }
    means.retain_rows(&used);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clustering::objective::{cluster_means, sum_of_squares};
    use crate::linalg::sq_dist;

    fn data(n: usize) -> RowMatrix {
        RowMatrix::new(
            n,
            3,
            (0..3 * n)
                .map(|i| ((i * 37 % 101) as f64) / 7.0 - 5.0)
                .collect(),
        )
    }

    #[test]
    fn bounded_runs_are_the_unbounded_runs_bit_for_bit() {
        use crate::generate::gaussian_blobs;
        use crate::linalg::mean_row;
        // Gaussian blobs at penalties that split them (many clusters, long tails of sweeps
        // moving a few rows), one that keeps them whole, a cap on K, and one column.
        for (n, d, k, penalty, k_max) in [
            (20_000, 10, 20, 30.0, usize::MAX),
            (20_000, 10, 20, 300.0, usize::MAX),
            (12_000, 6, 40, 12.0, 60),
            (9_000, 1, 5, 0.5, usize::MAX),
        ] {
            let x = gaussian_blobs(n, d, k, 10.0, 1.0, 7).x;
            let order = super::super::random_order(n, &mut crate::restarts::run_rng(3, 0));
            let start = mean_row(x.view());
            let run = |bounded| {
                dp_means_run_with(x.view(), &start, penalty, k_max, 300, &order, bounded, 0)
            };
            let ((a, measured_a), (b, measured_b)) = (run(true), run(false));
            let case = format!("N = {n}, D = {d}, P = {penalty}, cap {k_max}");
            assert_eq!(a.labels, b.labels, "{case}");
            assert_eq!(a.n_iter, b.n_iter, "{case}");
            assert_eq!(a.objective.to_bits(), b.objective.to_bits(), "{case}");
            let bits = |r: &ClusterRun| -> Vec<u64> {
                r.trace
                    .iter()
                    .chain(r.means.as_slice())
                    .map(|v| v.to_bits())
                    .collect()
            };
            assert_eq!(bits(&a), bits(&b), "{case}");
            // The bounds do their work (else the equality above proves nothing).
            eprintln!(
                "{case}: K = {}, {} sweeps, {measured_a} distances measured against {measured_b}",
                a.means.n_rows(),
                a.n_iter
            );
            if a.n_iter >= 8 {
                assert!(4 * measured_a < measured_b, "{case}");
            }
        }
    }

    /// How many rows two runs label differently.
    fn changed(a: &ClusterRun, b: &ClusterRun) -> usize {
        a.labels
            .iter()
            .zip(&b.labels)
            .filter(|(p, q)| p != q)
            .count()
    }

    #[test]
    fn a_refinement_start_is_the_runs_first_sweeps() {
        use crate::generate::gaussian_blobs;
        use crate::linalg::mean_row;
        // Blobs cut into many clusters: a long tail of sweeps that move a few rows.
        let (n, penalty) = (20_000, 30.0);
        let x = gaussian_blobs(n, 10, 20, 10.0, 1.0, 7).x;
        let order = super::super::random_order(n, &mut crate::restarts::run_rng(3, 0));
        let start = mean_row(x.view());
        let early = dp_means_refinement_start(x.view(), &start, penalty, usize::MAX, 300, &order);
        let full = dp_means_run(x.view(), &start, penalty, usize::MAX, 300, &order);
        assert!(full.converged && !early.converged);
        assert!(
            early.n_iter + 10 < full.n_iter,
            "{} sweeps against {}",
            early.n_iter,
            full.n_iter
        );
        // The same sweeps as the paper's run cut at that many, bit for bit.
        let cut = dp_means_run(x.view(), &start, penalty, usize::MAX, early.n_iter, &order);
        let bits = |r: &ClusterRun| -> Vec<u64> {
            (r.trace.iter().chain(r.means.as_slice()))
                .chain([&r.objective])
                .map(|v| v.to_bits())
                .collect()
        };
        assert_eq!(early.labels, cut.labels);
        assert_eq!(bits(&early), bits(&cut));
        // Its last sweep changed fewer than N/100 labels, the one before at least that many
        // (counted where K stays the same over both, so that the labels keep their indices).
        let cut_at = |s| dp_means_run(x.view(), &start, penalty, usize::MAX, s, &order);
        let (two, one) = (cut_at(early.n_iter - 2), cut_at(early.n_iter - 1));
        let k = early.means.n_rows();
        assert!(two.means.n_rows() == k && one.means.n_rows() == k);
        assert!(changed(&one, &early) < n / REFINE_START_SHARE);
        assert!(changed(&two, &one) >= n / REFINE_START_SHARE);
        // Without a share (fewer rows than REFINE_START_SHARE), the paper's run itself.
        let small = gaussian_blobs(90, 2, 3, 10.0, 1.0, 7).x;
        let order = super::super::random_order(90, &mut crate::restarts::run_rng(3, 0));
        let start = mean_row(small.view());
        let a = dp_means_refinement_start(small.view(), &start, 1.0, usize::MAX, 300, &order);
        let b = dp_means_run(small.view(), &start, 1.0, usize::MAX, 300, &order);
        assert_eq!(
            (a.labels, a.n_iter, a.converged),
            (b.labels, b.n_iter, b.converged)
        );
    }

    /// On data of more than 200 000 values the run hands over at N/2: its last sweep changed
    /// fewer than N/2 labels, the one before (where K stays the same) at least that many, and
    /// until then it is the paper's run bit for bit; at 200 000 values the share is N/100.
    /// Fails if the share is not chosen by the data's size.
    #[test]
    fn large_data_hand_over_at_half_the_rows() {
        use crate::generate::gaussian_blobs;
        use crate::linalg::mean_row;
        assert_eq!(refine_start_share(20_000, 10), REFINE_START_SHARE);
        assert_eq!(refine_start_share(20_001, 10), LARGE_DATA_START_SHARE);
        let (n, penalty) = (30_000, 20.0);
        let x = gaussian_blobs(n, 10, 20, 10.0, 1.0, 7).x;
        let order = super::super::random_order(n, &mut crate::restarts::run_rng(3, 0));
        let start = mean_row(x.view());
        let early = dp_means_refinement_start(x.view(), &start, penalty, usize::MAX, 300, &order);
        let cut_at = |s| dp_means_run(x.view(), &start, penalty, usize::MAX, s, &order);
        let cut = cut_at(early.n_iter);
        assert_eq!(early.labels, cut.labels);
        assert_eq!(early.objective.to_bits(), cut.objective.to_bits());
        assert!(
            !early.converged && early.n_iter >= 2,
            "{} sweeps",
            early.n_iter
        );
        let (two, one) = (cut_at(early.n_iter - 2), cut_at(early.n_iter - 1));
        assert!(changed(&one, &early) < n / LARGE_DATA_START_SHARE);
        if early.n_iter > 2 {
            assert!(changed(&two, &one) >= n / LARGE_DATA_START_SHARE);
        }
        let late = cut_at(300);
        assert!(late.n_iter > early.n_iter + 2, "{} sweeps", late.n_iter);
    }

    #[test]
    fn base_pass_cost_is_the_sum_of_squares_bit_for_bit() {
        let x = data(3 * BLOCK_ROWS + 17);
        let c = RowMatrix::from_rows(&[[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [9.0, 0.0, 1.0]]);
        let pass = base_pass(x.view(), &c, None, None);
        let labels: Vec<usize> = pass.nearest.iter().map(|nr| nr.label).collect();
        assert_eq!(
            pass.cost.to_bits(),
            sum_of_squares(x.view(), &labels, &c).to_bits()
        );
        for (i, nr) in pass.nearest.iter().enumerate() {
            let best = c
                .rows()
                .map(|r| sq_dist(x.row(i), r))
                .fold(f64::INFINITY, f64::min);
            assert!(sq_dist(x.row(i), c.row(nr.label)) <= best + 1e-9);
        }
        // The blocks' sums added in block order: the bits of `cluster_means`, whose blocks
        // are the same.
        let means = pass.sums.into_means(3);
        let want = cluster_means(x.view(), &labels, 3);
        let bits = |m: &RowMatrix| m.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&means), bits(&want));
    }

    /// A block's sums kept for its clusters only add the bits of full K × D sums, labels met
    /// in any order, one past the block's K (a cluster opened later) and some never. Fails if
    /// a slot's sum goes to the wrong cluster.
    #[test]
    fn block_sums_add_what_full_sums_add() {
        let x = data(50);
        let labels: Vec<usize> = (0..50).map(|i| [4, 1, 6, 1, 0, 7][i % 6]).collect();
        let (mut full, mut sparse) = (ClusterSums::zeros(9, 3), ClusterSums::zeros(9, 3));
        for part in [0..20, 20..50] {
            let (mut a, mut b) = (ClusterSums::zeros(7, 3), BlockSums::new(7, 3));
            for i in part {
                a.add(x.row(i), labels[i]);
                b.add(x.row(i), labels[i]);
            }
            full.add_partial(&a);
            sparse.add_block(&b);
        }
        assert_eq!(sparse.counts, full.counts);
        assert_eq!(sparse.counts, vec![8, 17, 0, 0, 9, 0, 8, 8, 0]);
        let bits = |c: &ClusterSums| {
            c.sums
                .as_slice()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&sparse), bits(&full));
    }

    #[test]
    fn moved_rows_leave_the_sums_of_their_final_clusters() {
        let x = data(10);
        let mut acc = ClusterSums::zeros(2, 3);
        let mut labels = vec![0usize; 10];
        for i in 0..10 {
            acc.add(x.row(i), 0);
        }
        // Rows 3 and 7 go to cluster 1, row 8 to a cluster opened later (index 4, so 2 and 3
        // stay empty), row 9 arrives with no provisional cluster.
        for (i, to) in [(3, 1), (7, 1), (8, 4)] {
            acc.moved(x.row(i), 0, to);
            labels[i] = to;
        }
        acc.counts[0] -= 1;
        axpy(-1.0, x.row(9), acc.sums.row_mut(0));
        acc.moved(x.row(9), usize::MAX, 1);
        labels[9] = 1;
        assert_eq!(acc.counts, vec![6, 3, 0, 0, 1]);
        let means = acc.into_means(5);
        let want = cluster_means(x.view(), &labels, 5);
        for (a, b) in means.as_slice().iter().zip(want.as_slice()) {
            assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }
}
