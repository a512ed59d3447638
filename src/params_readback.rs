//! The read-back getters of every algorithm's checked parameters return what the builder
//! was given (the Python package takes its defaults from them).

use crate::clustering::dp_means::{DEFAULT_RESTARTS, LARGE_DATA_REFINED, LARGE_DATA_RESTARTS};
use crate::clustering::{CollapsedDpMeans, DpMeans, KMeans, Mahalanobis};
use crate::features::{BpMeans, FeatureSeeding, KFeatures};
use crate::ibp::{IbpKind, IbpSampler, Meibp};

#[test]
fn clustering_parameters_read_back() {
    let k = KMeans::params(4)
        .restarts(7)
        .max_iter(9)
        .seed(11)
        .check()
        .unwrap();
    assert_eq!((k.k(), k.restarts(), k.max_iter(), k.seed()), (4, 7, 9, 11));
    for b in [DpMeans::params(2.5), CollapsedDpMeans::params(2.5)] {
        let p = b
            .k_max(Some(3))
            .restarts(5)
            .max_iter(6)
            .seed(8)
            .refine(true)
            .check()
            .unwrap();
        assert_eq!(p.penalty(), 2.5);
        assert_eq!(
            (p.k_max(), p.restarts(), p.max_iter(), p.seed(), p.refine()),
            (Some(3), Some(5), 6, 8, true)
        );
        assert_eq!(p.restarts_for(100_000, 10), 5);
    }
    for (b, large) in [
        (DpMeans::params(2.5), LARGE_DATA_RESTARTS),
        (CollapsedDpMeans::params(2.5), LARGE_DATA_REFINED),
    ] {
        let p = b.check().unwrap();
        assert_eq!(p.restarts(), None);
        assert_eq!(p.restarts_for(20_000, 10), DEFAULT_RESTARTS);
        assert_eq!(p.restarts_for(20_001, 10), large);
    }
    let m = Mahalanobis::params(2, 3.0)
        .reg(0.5)
        .restarts(4)
        .max_iter(12)
        .seed(13)
        .check()
        .unwrap();
    assert_eq!((m.k(), m.penalty(), m.reg()), (2, 3.0, 0.5));
    assert_eq!((m.restarts(), m.max_iter(), m.seed()), (4, 12, 13));
}

#[test]
fn feature_parameters_read_back() {
    let p = BpMeans::params(1.5)
        .k(Some(6))
        .restarts(3)
        .max_iter(14)
        .seed(15)
        .refine(true)
        .seeding(FeatureSeeding::Residual)
        .check()
        .unwrap();
    assert_eq!((p.penalty(), p.k()), (Some(1.5), Some(6)));
    assert_eq!(
        (p.restarts(), p.max_iter(), p.seed(), p.refines()),
        (3, 14, 15, true)
    );
    assert_eq!(p.seeding(), FeatureSeeding::Residual);
    let k = KFeatures::params(2).plain().check().unwrap();
    assert_eq!((k.penalty(), k.k(), k.refines()), (None, Some(2), false));
}

#[test]
fn ibp_parameters_read_back() {
    let p = IbpSampler::params(IbpKind::Accelerated)
        .window(4)
        .k_new_max(2)
        .seed(16)
        .check()
        .unwrap();
    assert_eq!((p.window(), p.k_new_max(), p.seed()), (Some(4), 2, 16));
    let e = Meibp::params(9)
        .sigma_a(0.7)
        .max_iter(17)
        .seed(18)
        .check()
        .unwrap();
    assert_eq!((e.k_max(), e.sigma_x(), e.sigma_a()), (9, None, Some(0.7)));
    assert_eq!((e.max_iter(), e.seed()), (17, 18));
}
