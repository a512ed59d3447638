//! Serializability: every OCC run equals the serial algorithm replayed on the order it
//! records, bit for bit (labels, Z, means or A, objective), on random data and on integer
//! grids where distances and residuals tie exactly at the penalty; one block with epochs of
//! one row is the plain serial algorithm; results do not depend on the thread count.

use super::bp::{Features, bp_row};
use super::*;
use crate::linalg::sq_dist;
use crate::model::Model;
use crate::{MatrixView, RowMatrix};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random data: `n × d`, uniform in [0, 4) (`grid`: integers 0..4, so ties are common).
fn data(n: usize, d: usize, seed: u64, grid: bool) -> RowMatrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let v = (0..n * d)
        .map(|_| {
            let u = 4.0 * rng.random::<f64>();
            if grid { u.floor() } else { u }
        })
        .collect();
    RowMatrix::new(n, d, v)
}

/// Block sums of `rows` by label, in row order per block and block order (the OCC runners'
/// summation order), written out again so the replay does not call the runner's code.
fn means_in_block_order(
    x: &RowMatrix,
    blocks: &[std::ops::Range<usize>],
    labels: &[usize],
    k: usize,
) -> (RowMatrix, Vec<Option<usize>>) {
    let d = x.n_cols();
    let mut count = vec![0u64; k];
    let mut sum = vec![0.0; k * d];
    for b in blocks {
        let mut c = vec![0u64; k];
        let mut s = vec![0.0; k * d];
        for i in b.clone() {
            c[labels[i]] += 1;
            for j in 0..d {
                s[labels[i] * d + j] += x.row(i)[j];
            }
        }
        for j in 0..k {
            count[j] += c[j];
        }
        for (t, v) in sum.iter_mut().zip(&s) {
            *t += v;
        }
    }
    let mut means = RowMatrix::zeros(0, d);
    let mut map = Vec::new();
    for j in 0..k {
        if count[j] == 0 {
            map.push(None);
        } else {
            let m: Vec<f64> = (0..d)
                .map(|t| sum[j * d + t] * (1.0 / count[j] as f64))
                .collect();
            map.push(Some(means.n_rows()));
            means.push_row(&m);
        }
    }
    (means, map)
}

/// Serial DP-means (the definition): one sweep over `order` from `centres`, then means.
fn serial_dp_sweep(
    x: &RowMatrix,
    order: &[usize],
    centres: &RowMatrix,
    penalty: f64,
    k_max: usize,
) -> (Vec<usize>, usize) {
    let mut c = centres.clone();
    let mut labels = vec![usize::MAX; x.n_rows()];
    for &i in order {
        let mut best = (0, f64::INFINITY);
        for (k, a) in c.rows().enumerate() {
            let d = sq_dist(x.row(i), a);
            if d < best.1 {
                best = (k, d);
            }
        }
        if best.1 > penalty && c.n_rows() < k_max {
            c.push_row(x.row(i));
            labels[i] = c.n_rows() - 1;
        } else {
            labels[i] = best.0;
        }
    }
    (labels, c.n_rows())
}

fn dp_replay(
    x: &RowMatrix,
    p: usize,
    b: usize,
    penalty: f64,
    k_max: Option<usize>,
    max_iter: usize,
) {
    let params = OccDpMeans::params(penalty)
        .blocks(p)
        .epoch_size(b)
        .k_max(k_max)
        .max_iter(max_iter)
        .check()
        .unwrap();
    let fit = params.fit_traced(x.view()).unwrap();
    let blocks = even_blocks(x.n_rows(), p);
    let (mut centres, _) = means_in_block_order(x, &blocks, &vec![0; x.n_rows()], 1);
    let mut labels = Vec::new();
    let mut trace = Vec::new();
    for order in &fit.occ.orders {
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..x.n_rows()).collect::<Vec<_>>(),
            "an order is a permutation"
        );
        let (l, k) = serial_dp_sweep(x, order, &centres, penalty, k_max.unwrap_or(usize::MAX));
        let (m, map) = means_in_block_order(x, &blocks, &l, k);
        labels = l.iter().map(|&c| map[c].unwrap()).collect();
        centres = m;
        let cost: f64 = blocks
            .iter()
            .map(|bl| {
                bl.clone()
                    .map(|i| sq_dist(x.row(i), centres.row(labels[i])))
                    .sum::<f64>()
            })
            .sum();
        trace.push(cost + (centres.n_rows() as f64 - 1.0) * penalty);
    }
    let what = format!("P {p}, b {b}, penalty {penalty}, k_max {k_max:?}");
    assert_eq!(fit.model.labels(), &labels[..], "{what}");
    assert_eq!(fit.model.means(), &centres, "{what}");
    assert_eq!(fit.model.trace(), &trace[..], "{what}");
}

#[test]
fn occ_dp_means_equals_serial_dp_means_on_its_recorded_order() {
    for (seed, grid) in [(1, false), (2, true), (3, true), (4, false)] {
        let x = data(120, 2, seed, grid);
        for p in [1, 2, 3, 8] {
            for b in [1, 7, 50] {
                // Integer data: squared distances are integers, so P = 1, 2, 4 ties often.
                for penalty in [1.0, 2.0, 4.0, 0.7] {
                    dp_replay(&x, p, b, penalty, None, 30);
                }
                dp_replay(&x, p, b, 1.0, Some(5), 30);
            }
        }
    }
}

#[test]
fn one_block_of_one_row_epochs_is_the_plain_serial_algorithm() {
    let x = data(200, 3, 9, false);
    let fit = OccDpMeans::params(1.5)
        .blocks(1)
        .epoch_size(1)
        .check()
        .unwrap()
        .fit_traced(x.view())
        .unwrap();
    // Every iteration visits the rows in their natural order, and nothing is ever rejected.
    for order in &fit.occ.orders {
        assert_eq!(order, &(0..200).collect::<Vec<_>>());
    }
    assert_eq!(fit.occ.rejections(), 0);
    // The library's serial DP-means on the natural order makes the same decisions.
    let serial = crate::clustering::dp_means::dp_means_run(
        x.view(),
        &crate::linalg::mean_row(x.view()),
        1.5,
        usize::MAX,
        100,
        &(0..200).collect::<Vec<_>>(),
    );
    assert_eq!(fit.model.labels(), &serial.labels[..]);
    assert_eq!(fit.model.n_iter(), serial.n_iter);
    assert!((fit.model.objective() - serial.objective).abs() <= 1e-9 * serial.objective);
}

#[test]
fn the_result_does_not_depend_on_the_thread_count() {
    let x = data(3000, 4, 5, false);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let d = OccDpMeans::params(2.0)
                    .blocks(5)
                    .epoch_size(64)
                    .check()
                    .unwrap();
                let b = OccBpMeans::params(3.0)
                    .blocks(5)
                    .epoch_size(64)
                    .check()
                    .unwrap();
                (
                    d.fit_traced(x.view()).unwrap(),
                    b.fit_traced(x.view()).unwrap(),
                )
            })
    };
    let (d1, b1) = run(1);
    let (d2, b2) = run(2);
    assert_eq!(d1.model.labels(), d2.model.labels());
    assert_eq!(d1.model.means(), d2.model.means());
    assert_eq!(d1.occ, d2.occ);
    assert_eq!(b1.model.z(), b2.model.z());
    assert_eq!(b1.model.means(), b2.model.means());
    assert_eq!(b1.occ, b2.occ);
}

/// Serial BP-means (Alg. 1): one sweep over `order` from (Z, A), rows' z extended with zeros.
fn serial_bp_sweep(
    x: &RowMatrix,
    order: &[usize],
    z: &[Vec<u8>],
    a: &RowMatrix,
    penalty: f64,
    k_max: usize,
) -> (Vec<Vec<u8>>, usize) {
    let mut f = Features::new(a.clone());
    let mut out = z.to_vec();
    for &i in order {
        let mut zi = z[i].clone();
        let (r, e) = bp_row(x.row(i), &mut zi, &f);
        if f.k() < k_max && e > penalty {
            f.push(&r);
            zi.push(1);
        }
        out[i] = zi;
    }
    let k = f.k();
    for zi in &mut out {
        zi.resize(k, 0);
    }
    (out, k)
}

fn bp_replay(x: &RowMatrix, p: usize, b: usize, penalty: f64, k_max: Option<usize>) {
    let params = OccBpMeans::params(penalty)
        .blocks(p)
        .epoch_size(b)
        .k_max(k_max)
        .max_iter(30)
        .check()
        .unwrap();
    let fit = params.fit_traced(x.view()).unwrap();
    let blocks = even_blocks(x.n_rows(), p);
    let n = x.n_rows();
    let stats = |z: &[Vec<u8>], k: usize| {
        let mut total = FeatureStats {
            ztz: vec![0.0; k * k],
            ztx: RowMatrix::zeros(k, x.n_cols()),
        };
        for bl in &blocks {
            total.add(&FeatureStats::of_rows(
                x.rows_view(bl.start, bl.end),
                &z[bl.clone()],
                k,
            ));
        }
        total
    };
    let mut z: Vec<Vec<u8>> = vec![vec![1]; n];
    let (_, mut a) = stats(&z, 1).solve();
    let mut trace = Vec::new();
    for order in &fit.occ.orders {
        let (zn, k) = serial_bp_sweep(x, order, &z, &a, penalty, k_max.unwrap_or(usize::MAX));
        let (keep, na) = stats(&zn, k).solve();
        z = zn
            .into_iter()
            .map(|zi| {
                zi.iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(v, _)| *v)
                    .collect()
            })
            .collect();
        a = na;
        let mut r = vec![0.0; x.n_cols()];
        let cost: f64 = blocks
            .iter()
            .map(|bl| {
                bl.clone()
                    .map(|i| crate::features::objective::row_residual(x.row(i), &z[i], &a, &mut r))
                    .sum::<f64>()
            })
            .sum();
        trace.push(cost + a.n_rows() as f64 * penalty);
    }
    let what = format!("P {p}, b {b}, penalty {penalty}, k_max {k_max:?}");
    let zm = fit.model.z();
    for i in 0..n {
        assert_eq!(zm.row(i), &z[i][..], "{what}: row {i}");
    }
    assert_eq!(fit.model.means(), &a, "{what}");
    assert_eq!(fit.model.trace(), &trace[..], "{what}");
}

#[test]
fn occ_bp_means_equals_serial_bp_means_on_its_recorded_order() {
    for (seed, grid) in [(11, false), (12, true), (13, true)] {
        let x = data(90, 3, seed, grid);
        for p in [1, 2, 3, 8] {
            for b in [1, 7, 50] {
                for penalty in [1.0, 2.0, 3.0] {
                    bp_replay(&x, p, b, penalty, None);
                }
                bp_replay(&x, p, b, 1.0, Some(3));
            }
        }
    }
}

#[test]
fn proposals_and_rejections_are_counted_per_epoch() {
    let x = data(400, 2, 21, false);
    let fit = OccDpMeans::params(0.5)
        .blocks(4)
        .epoch_size(10)
        .check()
        .unwrap()
        .fit_traced(x.view())
        .unwrap();
    // 400 rows in 4 blocks of 100, epochs of 10: ten epochs per iteration.
    assert!(fit.occ.epochs.iter().all(|e| e.len() == 10));
    let first = &fit.occ.epochs[0];
    let (proposed, accepted): (usize, usize) =
        first.iter().fold((0, 0), |(p, a), e| (p + e.0, a + e.1));
    assert!(accepted <= proposed && proposed > 0);
    assert_eq!(
        fit.occ.proposals() - fit.occ.rejections(),
        fit.occ.epochs.iter().flatten().map(|e| e.1).sum::<usize>()
    );
    // K at the end is at most the number of accepted proposals plus the starting centre.
    assert!(
        fit.model.k()
            <= accepted
                + 1
                + fit.occ.epochs[1..]
                    .iter()
                    .flatten()
                    .map(|e| e.1)
                    .sum::<usize>()
    );
    let _: MatrixView<'_> = x.view();
}

/// Serial online facility location (Meyerson), written out again: the rows in `order`, each
/// with its draw u_n; a row opens a facility when u_n · P is below its squared distance to
/// the nearest facility (ties to the lowest index), or when there is none, below the cap.
fn serial_ofl(
    x: &RowMatrix,
    order: &[usize],
    penalty: f64,
    seed: u64,
    k_max: usize,
) -> (Vec<usize>, RowMatrix) {
    let mut facilities = RowMatrix::zeros(0, x.n_cols());
    let mut labels = vec![usize::MAX; x.n_rows()];
    for &i in order {
        let mut best = (usize::MAX, f64::INFINITY);
        for (k, c) in facilities.rows().enumerate() {
            let d = sq_dist(x.row(i), c);
            if d < best.1 {
                best = (k, d);
            }
        }
        let u = ofl_uniform(seed, i);
        if facilities.n_rows() < k_max && u * penalty < best.1 {
            facilities.push_row(x.row(i));
            labels[i] = facilities.n_rows() - 1;
        } else {
            labels[i] = best.0;
        }
    }
    (labels, facilities)
}

fn ofl_replay(x: &RowMatrix, p: usize, b: usize, penalty: f64, k_max: Option<usize>, seed: u64) {
    let fit = OccOfl::params(penalty)
        .blocks(p)
        .epoch_size(b)
        .k_max(k_max)
        .seed(seed)
        .check()
        .unwrap()
        .fit_traced(x.view())
        .unwrap();
    let what = format!("P = {p}, b = {b}, penalty {penalty}, cap {k_max:?}, seed {seed}");
    let order = &fit.occ.orders[0];
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..x.n_rows()).collect::<Vec<_>>(), "{what}");
    let (labels, facilities) = serial_ofl(x, order, penalty, seed, k_max.unwrap_or(usize::MAX));
    assert_eq!(fit.model.labels(), &labels[..], "{what}");
    assert_eq!(fit.model.means(), &facilities, "{what}");
    let objective: f64 = (0..x.n_rows())
        .map(|i| sq_dist(x.row(i), facilities.row(labels[i])))
        .sum::<f64>()
        + (facilities.n_rows() as f64 - 1.0) * penalty;
    assert!(
        (fit.model.objective() - objective).abs() <= 1e-12 * objective,
        "{what}"
    );
    let accepted: usize = fit.occ.epochs[0].iter().map(|e| e.1).sum();
    assert_eq!(accepted, facilities.n_rows(), "{what}");
}

#[test]
fn occ_ofl_equals_serial_ofl_on_its_recorded_order() {
    for (seed, grid) in [(1, false), (2, true), (3, true)] {
        let x = data(150, 2, seed, grid);
        for p in [1, 2, 5] {
            for b in [1, 4, 40] {
                for penalty in [0.5, 2.0, 4.0, 20.0] {
                    ofl_replay(&x, p, b, penalty, None, seed);
                }
                ofl_replay(&x, p, b, 1.0, Some(4), seed + 10);
            }
        }
    }
}

#[test]
fn ofl_with_one_block_of_one_row_epochs_visits_the_rows_in_order_and_ignores_threads() {
    let x = data(500, 3, 7, false);
    let fit = |blocks: usize, b: usize, threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                OccOfl::params(3.0)
                    .blocks(blocks)
                    .epoch_size(b)
                    .seed(11)
                    .check()
                    .unwrap()
                    .fit_traced(x.view())
                    .unwrap()
            })
    };
    let one = fit(1, 1, 1);
    assert_eq!(one.occ.orders[0], (0..500).collect::<Vec<_>>());
    assert_eq!(one.occ.rejections(), 0);
    let (a, b) = (fit(6, 20, 1), fit(6, 20, 2));
    assert_eq!(a.model.labels(), b.model.labels());
    assert_eq!(a.model.means(), b.model.means());
    assert_eq!(a.occ, b.occ);
    // Every facility is a row of X, and each row's facility is its nearest one.
    for c in a.model.means().rows() {
        assert!((0..500).any(|i| x.row(i) == c));
    }
}

#[test]
fn ofl_draws_depend_on_the_seed_and_row_only_and_look_uniform() {
    assert_eq!(ofl_uniform(3, 17), ofl_uniform(3, 17));
    assert_ne!(ofl_uniform(3, 17), ofl_uniform(4, 17));
    assert_ne!(ofl_uniform(3, 17), ofl_uniform(3, 18));
    let n = 100_000;
    let u: Vec<f64> = (0..n).map(|i| ofl_uniform(5, i)).collect();
    assert!(u.iter().all(|&v| (0.0..1.0).contains(&v)));
    let mean = u.iter().sum::<f64>() / n as f64;
    // The mean of n uniforms has sd 1/√(12 n) ≈ 0.0009: 5 sd.
    assert!((mean - 0.5).abs() < 0.0046, "{mean}");
    let below_tenth = u.iter().filter(|&&v| v < 0.1).count() as f64 / n as f64;
    assert!((below_tenth - 0.1).abs() < 0.005, "{below_tenth}");
    // A facility cost far above every squared distance leaves about one facility per
    // expected opening; one far below it opens one per row.
    let x = data(300, 2, 3, false);
    let fit = |penalty: f64| {
        OccOfl::params(penalty)
            .check()
            .unwrap()
            .fit_traced(x.view())
            .unwrap()
            .model
            .k()
    };
    assert_eq!(fit(1e-12), 300);
    assert!(fit(1e9) <= 2);
}

/// The three runners fit through the common contract and give what `fit_traced` gives.
#[test]
fn the_runners_fit_through_the_contract() {
    use crate::model::Fit;
    let x = data(200, 2, 4, false);
    let dp = OccDpMeans::params(2.0).blocks(3).check().unwrap();
    assert_eq!(
        dp.fit(&x).unwrap().labels(),
        dp.fit_traced(x.view()).unwrap().model.labels()
    );
    let bp = OccBpMeans::params(2.0).blocks(3).check().unwrap();
    assert_eq!(
        bp.fit(&x).unwrap().z(),
        bp.fit_traced(x.view()).unwrap().model.z()
    );
    let ofl = OccOfl::params(2.0).blocks(3).seed(5).check().unwrap();
    let m = ofl.fit(&x).unwrap();
    assert_eq!(m.labels(), ofl.fit_traced(x.view()).unwrap().model.labels());
    assert_eq!((m.n_iter(), m.trace().len()), (1, 1));
}
