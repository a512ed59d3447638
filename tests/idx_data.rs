//! The IDX reader on the real Fashion-MNIST test set, where the Debian package
//! `dataset-fashion-mnist` has installed it (ignored, with that reason, otherwise; see
//! `build.rs`).

use madbayes::io::{IdxKind, read_idx};
use std::path::Path;

#[test]
#[cfg_attr(
    not(fashion_mnist),
    ignore = "needs /usr/share/datasets/fashion-mnist (apt-get install dataset-fashion-mnist)"
)]
fn fashion_mnist_test_set() {
    let dir = Path::new("/usr/share/datasets/fashion-mnist");
    let images = read_idx(&dir.join("t10k-images-idx3-ubyte.gz")).unwrap();
    assert_eq!(
        images.kind,
        IdxKind::Images {
            height: 28,
            width: 28
        }
    );
    assert_eq!((images.x.n_rows(), images.x.n_cols()), (10_000, 784));
    let v = images.x.as_slice();
    assert!(v.iter().all(|x| (0.0..=1.0).contains(x)));
    // Dark backgrounds, some full-white pixels.
    assert!(v.iter().filter(|&&x| x == 0.0).count() > v.len() / 3);
    assert!(v.contains(&1.0));
    let labels = read_idx(&dir.join("t10k-labels-idx1-ubyte.gz")).unwrap();
    assert_eq!(labels.kind, IdxKind::Labels);
    assert_eq!((labels.x.n_rows(), labels.x.n_cols()), (10_000, 1));
    // The test set is balanced: 1000 of each of the 10 classes.
    let mut counts = [0usize; 10];
    for &l in labels.x.as_slice() {
        counts[l as usize] += 1;
    }
    assert_eq!(counts, [1_000; 10]);
}
