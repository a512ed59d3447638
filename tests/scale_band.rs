//! The band of data scales every algorithm accepts (`madbayes::error::SCALE_MIN ..=
//! SCALE_MAX` for the largest |value|): data scaled so that their largest value sits at
//! either end of it must fit with every algorithm without a panic and with a finite
//! objective (or log joint), and data just outside it must be refused by `check_data` with
//! the message that names the value and the power of ten to divide or multiply by.
//!
//! The penalties scale with the data (the objectives are sums of squares, so P goes with the
//! square of the scale); σ_X and σ_A take their defaults, which follow the data's spread.

use madbayes::Fit;
use madbayes::clustering::{CollapsedDpMeans, DpMeans, KMeans, Mahalanobis};
use madbayes::error::{FitError, SCALE_MAX, SCALE_MIN, check_data};
use madbayes::features::{BpMeans, CollapsedBpMeans, KFeatures, StepwiseKFeatures};
use madbayes::ibp::{IbpKind, IbpSampler, Meibp, collapsed_log_lik, log_ibp_prior};
use madbayes::{Model, RowMatrix};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 24 rows of 4 columns: two groups, each row the sum of some of three features plus noise,
/// scaled so that the largest |value| is exactly 1.
fn unit_data() -> RowMatrix {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let feats = [
        [1.0, 0.0, 1.0, 0.0],
        [0.0, 1.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let (n, d) = (24, 4);
    let mut v = Vec::with_capacity(n * d);
    for i in 0..n {
        let z = [i % 2 == 0, i % 3 == 0, i % 4 < 2];
        for j in 0..d {
            let mut x = 0.1 * (rng.random::<f64>() - 0.5);
            for (k, f) in feats.iter().enumerate() {
                if z[k] {
                    x += f[j];
                }
            }
            v.push(x);
        }
    }
    let max = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    RowMatrix::new(n, d, v.iter().map(|x| x / max).collect())
}

fn scaled(s: f64) -> RowMatrix {
    let x = unit_data();
    RowMatrix::new(
        x.n_rows(),
        x.n_cols(),
        x.as_slice().iter().map(|v| v * s).collect(),
    )
}

/// What one algorithm gives on the data: its objective or final log joint.
type Outcome = Result<f64, FitError>;
/// One algorithm's run on the data.
type Run<'a> = Box<dyn Fn() -> Outcome + 'a>;

/// Runs every algorithm on `x` (whose values are about `s` in size) and returns each one's
/// name and outcome; a panic is caught and reported as `None`.
fn fit_everything(x: &RowMatrix, s: f64) -> Vec<(&'static str, Option<Outcome>)> {
    let p = 0.5 * s * s;
    let small = |b: madbayes::features::FeatureParams| b.restarts(2).max_iter(5).seed(1);
    let mut runs: Vec<(&'static str, Run<'_>)> = Vec::new();
    runs.push((
        "kmeans",
        Box::new(|| {
            KMeans::params(2)
                .restarts(2)
                .max_iter(5)
                .check()
                .unwrap()
                .fit(x)
                .map(|m| m.objective())
        }),
    ));
    runs.push((
        "dp-means",
        Box::new(move || {
            DpMeans::params(p)
                .restarts(2)
                .max_iter(5)
                .refine(true)
                .check()
                .unwrap()
                .fit(x)
                .map(|m| m.objective())
        }),
    ));
    runs.push((
        "collapsed-dp-means",
        Box::new(move || {
            CollapsedDpMeans::params(p)
                .restarts(2)
                .max_iter(5)
                .refine(true)
                .check()
                .unwrap()
                .fit(x)
                .map(|m| m.objective())
        }),
    ));
    runs.push((
        "mahalanobis",
        Box::new(|| {
            Mahalanobis::params(2, 1.0)
                .restarts(2)
                .max_iter(5)
                .check()
                .unwrap()
                .fit(x)
                .map(|m| m.objective())
        }),
    ));
    runs.push((
        "bp-means",
        Box::new(move || {
            small(BpMeans::params(p).refine(true))
                .check()
                .unwrap()
                .fit(x)
                .map(|m| m.objective())
        }),
    ));
    runs.push((
        "collapsed-bp-means",
        Box::new(move || {
            small(CollapsedBpMeans::params(p))
                .check()
                .unwrap()
                .fit(x)
                .map(|m| m.objective())
        }),
    ));
    runs.push((
        "k-features",
        Box::new(move || {
            small(KFeatures::params(3))
                .check()
                .unwrap()
                .fit(x)
                .map(|m| m.objective())
        }),
    ));
    runs.push((
        "stepwise-k-features",
        Box::new(move || {
            small(StepwiseKFeatures::params(p))
                .check()
                .unwrap()
                .fit(x)
                .map(|m| m.objective())
        }),
    ));
    for (name, kind) in [
        ("ibp-gibbs", IbpKind::Collapsed),
        ("ibp-semicollapsed", IbpKind::SemiCollapsed),
        ("ibp-accelerated", IbpKind::Accelerated),
    ] {
        runs.push((
            name,
            Box::new(move || {
                IbpSampler::params(kind)
                    .iterations(5)
                    .resample_hyper(true)
                    .seed(1)
                    .check()
                    .unwrap()
                    .fit(x)
                    .map(|f| f.log_joint())
            }),
        ));
    }
    runs.push((
        "meibp",
        Box::new(|| {
            let meibp = Meibp::params(4).max_iter(5).seed(1).check().unwrap();
            let (sx, sa) = meibp.sigmas(x.view());
            meibp.fit(x).map(|f| {
                // Both its own evidence and the linear-Gaussian log joint the CLI reports.
                let ev = f.evidence();
                ev + collapsed_log_lik(x.view(), &f.z().to_row_matrix(), sx, sa)
                    + log_ibp_prior(&f.z().to_row_matrix(), 3.0)
            })
        }),
    ));
    runs.into_iter()
        .map(|(name, run)| {
            (
                name,
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).ok(),
            )
        })
        .collect()
}

/// The runs of `fit_everything` whose outcome is not a finite number.
fn failures(results: &[(&'static str, Option<Outcome>)]) -> Vec<String> {
    results
        .iter()
        .filter(|(_, r)| !matches!(r, Some(Ok(v)) if v.is_finite()))
        .map(|(name, r)| match r {
            None => format!("{name}: panicked"),
            Some(v) => format!("{name}: {v:?}"),
        })
        .collect()
}

fn assert_all_finite(s: f64) {
    let x = scaled(s);
    assert_eq!(
        check_data(&x),
        Ok(()),
        "data of scale {s:e} must be accepted"
    );
    let bad = failures(&fit_everything(&x, s));
    assert!(bad.is_empty(), "at scale {s:e}: {}", bad.join("; "));
}

#[test]
fn every_algorithm_fits_data_at_the_top_of_the_band() {
    assert_all_finite(SCALE_MAX);
}

#[test]
fn every_algorithm_fits_data_at_the_bottom_of_the_band() {
    assert_all_finite(SCALE_MIN);
}

#[test]
fn data_outside_the_band_are_refused_with_the_value_and_the_fix() {
    let big = scaled(1e155);
    let err = check_data(&big).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, FitError::Scale { .. }), "{err:?}");
    assert!(msg.contains("1e155"), "{msg}");
    assert!(msg.contains("divide the data by 1e155"), "{msg}");
    let tiny = scaled(1e-300);
    let msg = check_data(&tiny).unwrap_err().to_string();
    assert!(msg.contains("1e-300"), "{msg}");
    assert!(msg.contains("multiply the data by 1e300"), "{msg}");
    // Just outside either end.
    assert!(check_data(&scaled(SCALE_MAX * 2.0)).is_err());
    assert!(check_data(&scaled(SCALE_MIN / 2.0)).is_err());
    // All zeros is fine for check_data (algorithms give their own errors).
    assert_eq!(check_data(&RowMatrix::zeros(3, 2)), Ok(()));
}
