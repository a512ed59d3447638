//! The tabletop photos (../shared/data/tabletop; ignored, with that reason, when absent):
//! stepwise K-features settles on a base feature held by every photo plus one feature per
//! object.

use madbayes::Fit;
use madbayes::Model;
use madbayes::experiments::tabletop_matrix;
use madbayes::features::StepwiseKFeatures;
use madbayes::io::read_image_folder;
use std::path::Path;

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/tabletop (not in this checkout)"
)]
fn stepwise_k_features_finds_a_base_feature_and_four_objects() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/tabletop/images");
    let set = read_image_folder(&dir, false).unwrap();
    let y = tabletop_matrix(set.x, 100).unwrap();
    // P = 12 (authors' scaling): the 5th feature lowers the residual by ≈ 44, the 6th by ≈ 6.
    // The paper's stepwise K-features (`plain`), as `madbayes experiment tabletop` runs it.
    let fit = StepwiseKFeatures::params(12.0)
        .plain()
        .restarts(50)
        .seed(1)
        .check()
        .unwrap()
        .fit(&y)
        .unwrap();
    assert_eq!(fit.k(), 5, "objective by K: {:?}", fit.objective_by_k());
    let z = fit.z();
    let counts: Vec<usize> = (0..5)
        .map(|k| (0..100).filter(|&n| z.get(n, k)).count())
        .collect();
    assert_eq!(
        counts.iter().filter(|&&c| c == 100).count(),
        1,
        "{counts:?}"
    );
    // The four objects are each on the table in roughly half the photos.
    assert!(
        counts.iter().filter(|&&c| (25..=75).contains(&c)).count() == 4,
        "{counts:?}"
    );
    // Every one of the 2⁴ object combinations is photographed.
    let mut codes: Vec<Vec<u8>> = (0..100).map(|n| z.row(n).to_vec()).collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes.len(), 16);
}
