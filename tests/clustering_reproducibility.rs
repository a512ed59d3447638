//! Reproducibility of the clustering family: the same seed gives the same result, different
//! seeds give different row orders, results are bit-identical on rayon pools of 1 and 2
//! threads (with several 4096-row blocks), and they do not depend on where the data sit
//! (squared distances are translation-invariant).

mod common;

use common::*;
use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::clustering::{Clustering, CollapsedDpMeans, DpMeans, KMeans};

#[test]
fn seeds_reproduce_and_differ() {
    let x = uniform(300, 2, &mut rng(7));
    let fit = |seed: u64| {
        DpMeans::params(0.05)
            .plain()
            .restarts(4)
            .seed(seed)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap()
    };
    let (a, b, c) = (fit(1), fit(1), fit(2));
    assert_eq!(a.labels(), b.labels());
    assert_eq!(a.means(), b.means());
    assert_eq!(a.run_objectives(), b.run_objectives());
    // The row order of each run comes from the seed, and DP-means depends on it.
    assert_ne!(a.run_objectives(), c.run_objectives());
    let distinct: Vec<u64> = a.run_objectives().iter().map(|v| v.to_bits()).collect();
    assert!(
        distinct.windows(2).any(|w| w[0] != w[1]),
        "runs of one seed all agree"
    );
}

fn bits(f: &Clustering) -> (Vec<usize>, Vec<u64>, u64, Vec<u64>, Vec<u64>) {
    (
        f.labels().to_vec(),
        f.means().as_slice().iter().map(|v| v.to_bits()).collect(),
        f.objective().to_bits(),
        f.run_objectives().iter().map(|v| v.to_bits()).collect(),
        f.trace().iter().map(|v| v.to_bits()).collect(),
    )
}

#[test]
fn results_are_bit_identical_on_one_and_two_threads() {
    // 12 000 rows: three row blocks of 4096, so block partials are really combined.
    let centers: Vec<Vec<f64>> = (0..6)
        .map(|g| vec![6.0 * (g % 3) as f64, 6.0 * (g / 3) as f64, 0.5 * g as f64])
        .collect();
    let (x, _) = blobs(&centers, 2000, &mut rng(8));
    assert!(x.n_rows() >= 10_000);
    type Job<'a> = (&'static str, Box<dyn Fn() -> Clustering + Sync + 'a>);
    let algos: Vec<Job> = vec![
        (
            "K-means",
            Box::new(|| {
                KMeans::params(6)
                    .restarts(3)
                    .seed(5)
                    .check()
                    .unwrap()
                    .fit(&x)
                    .unwrap()
            }),
        ),
        (
            "DP-means",
            Box::new(|| {
                DpMeans::params(12.0)
                    .plain()
                    .restarts(2)
                    .seed(5)
                    .check()
                    .unwrap()
                    .fit(&x)
                    .unwrap()
            }),
        ),
        (
            "DP-means+refine",
            Box::new(|| {
                DpMeans::params(12.0)
                    .refine(true)
                    .restarts(1)
                    .max_iter(20)
                    .seed(5)
                    .check()
                    .unwrap()
                    .fit(&x)
                    .unwrap()
            }),
        ),
        (
            "collapsed",
            Box::new(|| {
                CollapsedDpMeans::params(12.0)
                    .plain()
                    .restarts(1)
                    .max_iter(10)
                    .seed(5)
                    .check()
                    .unwrap()
                    .fit(&x)
                    .unwrap()
            }),
        ),
    ];
    for (name, go) in &algos {
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| bits(&go()))
        };
        let t0 = std::time::Instant::now();
        let one = on(1);
        println!(
            "{name}: one fit on 1 thread took {:.2} s",
            t0.elapsed().as_secs_f64()
        );
        assert_eq!(one, on(2), "{name}: 1 vs 2 threads");
        assert_eq!(one, on(1), "{name}: the same seed twice");
    }
}

#[test]
fn results_do_not_depend_on_where_the_data_sit() {
    // Squared distances are translation-invariant. Far from the origin (offset 10⁷, unit
    // spread) ‖x‖² − 2x·a + ‖a‖² alone would lose all digits of the distance.
    let x0 = uniform(400, 2, &mut rng(11));
    for off in [1e3, 1e7] {
        let x = RowMatrix::new(400, 2, x0.as_slice().iter().map(|v| v + off).collect());
        let fits: Vec<Fitter> = vec![
            (
                "K-means".to_string(),
                Box::new(|x: &RowMatrix| {
                    KMeans::params(6)
                        .restarts(3)
                        .seed(1)
                        .check()
                        .unwrap()
                        .fit(x)
                        .unwrap()
                }),
            ),
            (
                "DP-means".to_string(),
                Box::new(|x: &RowMatrix| {
                    DpMeans::params(0.05)
                        .plain()
                        .restarts(3)
                        .seed(1)
                        .check()
                        .unwrap()
                        .fit(x)
                        .unwrap()
                }),
            ),
            (
                "collapsed".to_string(),
                Box::new(|x: &RowMatrix| {
                    CollapsedDpMeans::params(0.05)
                        .plain()
                        .restarts(3)
                        .seed(1)
                        .check()
                        .unwrap()
                        .fit(x)
                        .unwrap()
                }),
            ),
        ];
        for (name, fit) in &fits {
            let (a, b) = (fit(&x0), fit(&x));
            let what = format!("{name} at offset {off:e}");
            assert!(
                same_partition(a.labels(), b.labels()),
                "{what}: partition moved"
            );
            assert!(
                (a.objective() - b.objective()).abs() <= 1e-6 * a.objective(),
                "{what}"
            );
            if *name != "collapsed" {
                assert_eq!(b.predict(x.view()).unwrap(), b.labels(), "{what}: predict");
            }
            for (p, q) in a.means().as_slice().iter().zip(b.means().as_slice()) {
                assert!((p + off - q).abs() <= 1e-6 * off, "{what}: means");
            }
        }
    }
}
