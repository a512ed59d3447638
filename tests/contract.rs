//! The contract every algorithm keeps (`madbayes::Fit`, `madbayes::Model`), checked the same
//! way for all twelve: shapes, the reported objective against the trace, why the run stopped,
//! new rows (right width, wrong width, non-finite), Z A reconstructions, options that do not
//! apply, and (feature `serde`) a JSON round trip that predicts the same.

use madbayes::clustering::{CollapsedDpMeans, DpMeans, KMeans, Mahalanobis};
use madbayes::features::{BpMeans, CollapsedBpMeans, KFeatures, StepwiseKFeatures};
use madbayes::generate::block_images;
use madbayes::ibp::{IbpKind, IbpSampler, Meibp};
use madbayes::occ::{OccBpMeans, OccDpMeans};
use madbayes::{BinaryMatrix, Fit, FitError, MatrixView, Model, ParamError, RowMatrix, Stop};

/// Block images: 60 rows of 36 pixels, four shapes, noise 0.3.
fn data() -> RowMatrix {
    block_images(60, 0.5, 0.3, 11).unwrap().x
}

/// Z A computed entry by entry.
fn z_times_a(z: &BinaryMatrix, a: &RowMatrix) -> RowMatrix {
    let mut out = RowMatrix::zeros(z.n_rows(), a.n_cols());
    for n in 0..z.n_rows() {
        for d in 0..a.n_cols() {
            out.row_mut(n)[d] = (0..z.n_cols())
                .filter(|&k| z.get(n, k))
                .map(|k| a.row(k)[d])
                .sum();
        }
    }
    out
}

/// What every model must satisfy, whatever its family.
fn check_model<M: Model>(name: &str, m: &M, x: &RowMatrix, sampler: bool) {
    let (n, d) = (x.n_rows(), x.n_cols());
    let z = m.z();
    assert_eq!((z.n_rows(), z.n_cols()), (n, m.k()), "{name}: Z shape");
    assert_eq!(
        (m.means().n_rows(), m.n_cols()),
        (m.k(), d),
        "{name}: means"
    );
    // One entry per kept iteration: a refined run also counts the sweeps of descents it
    // tried and dropped (see `Model::trace`).
    assert!(
        !m.trace().is_empty() && m.trace().len() <= m.n_iter(),
        "{name}: {} trace entries for {} iterations",
        m.trace().len(),
        m.n_iter()
    );
    let last = *m.trace().last().unwrap();
    assert!(
        (last - m.objective()).abs() <= 1e-9 * (1.0 + last.abs()),
        "{name}: the trace ends at {last}, the objective is {}",
        m.objective()
    );
    assert!(m.objective().is_finite(), "{name}");
    if sampler {
        assert_eq!(m.stop(), Stop::Sweeps, "{name}");
        assert!(!m.converged(), "{name}: a chain never reports converged");
    } else {
        assert_ne!(m.stop(), Stop::Sweeps, "{name}");
        assert_eq!(m.converged(), m.stop() == Stop::Converged, "{name}");
    }
    // New rows: shape, reconstruction, bad width, non-finite values, no rows.
    let zp = m.predict_z(x.view()).unwrap();
    assert_eq!(
        (zp.n_rows(), zp.n_cols()),
        (n, m.k()),
        "{name}: predicted Z"
    );
    let recon = m.reconstruct(x.view()).unwrap();
    let want = z_times_a(&zp, m.means());
    for (a, b) in recon.as_slice().iter().zip(want.as_slice()) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{name}: Z A");
    }
    assert!(matches!(
        m.predict_z(RowMatrix::zeros(2, d + 1).view()),
        Err(FitError::Shape(_))
    ));
    let mut bad = x.clone();
    bad.row_mut(1)[2] = f64::NAN;
    assert!(matches!(
        m.predict_z(bad.view()),
        Err(FitError::NonFinite { row: 1, col: 2, .. })
    ));
    assert_eq!(
        m.predict_z(RowMatrix::zeros(0, d).view()).unwrap().n_rows(),
        0
    );
}

/// Fits through the trait only, then checks the model.
fn fit_and_check<P: Fit>(name: &str, p: &P, x: &RowMatrix, sampler: bool) -> P::Model {
    let m = p.fit(x).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_model(name, &m, x, sampler);
    m
}

#[test]
fn every_algorithm_keeps_the_contract() {
    let x = data();
    let c = fit_and_check("kmeans", &KMeans::params(4).check().unwrap(), &x, false);
    // A clustering's Z is the one-hot matrix of its labels, and predict_z of the training
    // rows gives back the labels of a converged run.
    assert_eq!(c.z(), BinaryMatrix::one_hot(c.labels(), c.k()));
    assert_eq!(c.predict_z(x.view()).unwrap(), c.z());
    fit_and_check(
        "dp-means",
        &DpMeans::params(4.0).check().unwrap(),
        &x,
        false,
    );
    fit_and_check(
        "collapsed-dp-means",
        &CollapsedDpMeans::params(4.0).check().unwrap(),
        &x,
        false,
    );
    let maha = Mahalanobis::params(1, 1.0).restarts(2).check().unwrap();
    fit_and_check("mahalanobis", &maha, &x, false);
    fit_and_check(
        "bp-means",
        &BpMeans::params(2.0).check().unwrap(),
        &x,
        false,
    );
    let cbp = CollapsedBpMeans::params(2.0).restarts(3).check().unwrap();
    fit_and_check("collapsed-bp-means", &cbp, &x, false);
    fit_and_check(
        "k-features",
        &KFeatures::params(4).check().unwrap(),
        &x,
        false,
    );
    let step = StepwiseKFeatures::params(2.0).restarts(3).check().unwrap();
    fit_and_check("stepwise-k-features", &step, &x, false);
    // Without a refinement every iteration is kept: one trace entry each.
    let plain = BpMeans::params(2.0).plain().check().unwrap();
    let m = fit_and_check("bp-means plain", &plain, &x, false);
    assert_eq!(m.trace().len(), m.n_iter());
    let plain = StepwiseKFeatures::params(2.0).plain().check().unwrap();
    let m = fit_and_check("stepwise-k-features plain", &plain, &x, false);
    assert_eq!(m.trace().len(), m.n_iter());
    for kind in [
        IbpKind::Collapsed,
        IbpKind::SemiCollapsed,
        IbpKind::Accelerated,
    ] {
        let p = IbpSampler::params(kind).iterations(5).check().unwrap();
        let m = fit_and_check(kind.name(), &p, &x, true);
        assert_eq!(m.n_iter(), 5);
        assert_eq!(m.objective(), -m.log_joint());
    }
    let p = Meibp::params(6).max_iter(30).check().unwrap();
    let m = fit_and_check("meibp", &p, &x, false);
    assert_eq!(m.objective(), -m.evidence());
}

#[test]
fn a_run_cut_short_says_so() {
    let x = data();
    let m = KMeans::params(4)
        .max_iter(1)
        .check()
        .unwrap()
        .fit(&x)
        .unwrap();
    assert_eq!(m.stop(), Stop::IterationCap);
    assert!(!m.converged());
    let m = BpMeans::params(2.0)
        .max_iter(1)
        .check()
        .unwrap()
        .fit(&x)
        .unwrap();
    assert_eq!(m.stop(), Stop::IterationCap);
}

#[test]
fn options_that_do_not_apply_are_refused() {
    let na = |option, algo| Err(ParamError::NotApplicable { option, algo });
    assert_eq!(
        CollapsedBpMeans::params(1.0)
            .refine(true)
            .check()
            .map(|_| ()),
        na("refine", "collapsed-bp-means")
    );
    for (params, algo) in [
        (KFeatures::params(2), "k-features"),
        (StepwiseKFeatures::params(1.0), "stepwise-k-features"),
    ] {
        assert_eq!(
            params.grow_seeds(true).check().map(|_| ()),
            na("grow-seeds", algo)
        );
    }
    for kind in [IbpKind::Collapsed, IbpKind::SemiCollapsed] {
        assert_eq!(
            IbpSampler::params(kind).window(2).check().map(|_| ()),
            na("window", kind.name())
        );
    }
    assert!(
        IbpSampler::params(IbpKind::Accelerated)
            .window(2)
            .check()
            .is_ok()
    );
    assert!(BpMeans::params(1.0).refine(true).check().is_ok());
    assert!(BpMeans::params(1.0).exact_max_k(8).check().is_ok());
    assert!(KFeatures::params(2).refine(true).check().is_ok());
    assert!(KFeatures::params(2).exact_max_k(8).check().is_ok());
    // One error type: parameter errors convert into FitError.
    let e: FitError = ParamError::ZeroWindow.into();
    assert!(matches!(e, FitError::Params(ParamError::ZeroWindow)));
}

#[cfg(feature = "serde")]
#[test]
fn models_round_trip_through_json() {
    fn round_trip<M>(name: &str, m: &M, x: &RowMatrix)
    where
        M: Model + serde::Serialize + serde::de::DeserializeOwned,
    {
        let text = serde_json::to_string(m).unwrap();
        let back: M = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.z(), m.z(), "{name}");
        assert_eq!(back.means(), m.means(), "{name}");
        assert_eq!(
            back.objective().to_bits(),
            m.objective().to_bits(),
            "{name}"
        );
        assert_eq!(back.trace(), m.trace(), "{name}");
        assert_eq!(back.stop(), m.stop(), "{name}");
        assert_eq!(
            back.predict_z(x.view()).unwrap(),
            m.predict_z(x.view()).unwrap(),
            "{name}"
        );
    }
    let x = data();
    let c = KMeans::params(3).check().unwrap().fit(&x).unwrap();
    round_trip("kmeans", &c, &x);
    let maha = Mahalanobis::params(1, 1.0)
        .restarts(2)
        .check()
        .unwrap()
        .fit(&x)
        .unwrap();
    round_trip("mahalanobis", &maha, &x);
    let back: madbayes::clustering::MahalanobisClustering =
        serde_json::from_str(&serde_json::to_string(&maha).unwrap()).unwrap();
    assert_eq!(
        back.transform(x.view()).unwrap(),
        maha.transform(x.view()).unwrap()
    );
    let f = BpMeans::params(2.0).check().unwrap().fit(&x).unwrap();
    round_trip("bp-means", &f, &x);
    let s = IbpSampler::params(IbpKind::Collapsed)
        .iterations(4)
        .check()
        .unwrap()
        .fit(&x)
        .unwrap();
    round_trip("ibp-gibbs", &s, &x);
    let e = Meibp::params(5)
        .max_iter(10)
        .check()
        .unwrap()
        .fit(&x)
        .unwrap();
    round_trip("meibp", &e, &x);
    // Tampered files are refused, not trusted.
    let text = serde_json::to_string(&f).unwrap();
    let bad = text.replacen("\"data\":[", "\"data\":[1.0,", 1);
    assert!(serde_json::from_str::<madbayes::features::FeatureModel>(&bad).is_err());
    let bad = text.replacen("\"rows\":[\"", "\"rows\":[\"2", 1);
    assert!(serde_json::from_str::<madbayes::features::FeatureModel>(&bad).is_err());
}

/// Fits `x` owned and through a borrowed view of the same values placed inside a larger
/// buffer (rows of other data before and after), and requires the same model.
fn same_through_a_view<P: Fit>(name: &str, p: &P, x: &RowMatrix) {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut buffer: Vec<f64> = (0..3 * d).map(|i| 100.0 + i as f64).collect();
    buffer.extend_from_slice(x.as_slice());
    buffer.extend((0..2 * d).map(|i| -50.0 - i as f64));
    let view = MatrixView::new(&buffer[3 * d..3 * d + n * d], n, d).unwrap();
    let owned = p.fit(x).unwrap_or_else(|e| panic!("{name}: {e}"));
    let viewed = p.fit(view).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        owned.objective().to_bits(),
        viewed.objective().to_bits(),
        "{name}"
    );
    assert_eq!(owned.z(), viewed.z(), "{name}");
    assert_eq!(owned.means(), viewed.means(), "{name}");
    // The models read new rows through views too.
    let new = x.rows_view(0, 5);
    assert_eq!(
        owned.predict_z(new).unwrap(),
        viewed.predict_z(new).unwrap(),
        "{name}"
    );
}

#[test]
fn a_borrowed_view_fits_like_the_owned_matrix() {
    let x = data();
    same_through_a_view("kmeans", &KMeans::params(4).check().unwrap(), &x);
    same_through_a_view("dp-means", &DpMeans::params(4.0).check().unwrap(), &x);
    let cdp = CollapsedDpMeans::params(4.0).check().unwrap();
    same_through_a_view("collapsed-dp-means", &cdp, &x);
    let maha = Mahalanobis::params(1, 1.0).restarts(2).check().unwrap();
    same_through_a_view("mahalanobis", &maha, &x);
    same_through_a_view("bp-means", &BpMeans::params(2.0).check().unwrap(), &x);
    let cbp = CollapsedBpMeans::params(2.0).restarts(3).check().unwrap();
    same_through_a_view("collapsed-bp-means", &cbp, &x);
    same_through_a_view("k-features", &KFeatures::params(4).check().unwrap(), &x);
    let step = StepwiseKFeatures::params(2.0).restarts(3).check().unwrap();
    same_through_a_view("stepwise-k-features", &step, &x);
    for kind in [
        IbpKind::Collapsed,
        IbpKind::SemiCollapsed,
        IbpKind::Accelerated,
    ] {
        let p = IbpSampler::params(kind).iterations(5).check().unwrap();
        same_through_a_view(kind.name(), &p, &x);
    }
    same_through_a_view("meibp", &Meibp::params(6).max_iter(30).check().unwrap(), &x);
    let occ = OccDpMeans::params(4.0).blocks(3).check().unwrap();
    same_through_a_view("occ-dp-means", &occ, &x);
    let occ = OccBpMeans::params(2.0).blocks(3).check().unwrap();
    same_through_a_view("occ-bp-means", &occ, &x);
}
