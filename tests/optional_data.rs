//! The optional data sets and the build's view of them agree.
//!
//! `build.rs` sets the cfg `shared_data` when `../shared/data` exists and `fashion_mnist` when
//! the Debian package's Fashion-MNIST folder exists; the tests that need them are compiled
//! `#[ignore]` otherwise. A folder that is absent at build time is not watched (watching a
//! missing path would rebuild the crate on every `cargo test`), so one that appears later
//! would leave its tests ignored although the data are there. This test catches that case
//! and names the fix.

use std::path::Path;

/// Fails if `dir` exists but the build did not see it.
fn agrees(seen_at_build: bool, dir: &Path) {
    assert!(
        seen_at_build || !dir.is_dir(),
        "{} appeared after the last build, so the tests that need it are still compiled as \
         ignored; run `touch build.rs` (or `cargo clean -p madbayes`) and test again",
        dir.display()
    );
}

#[test]
fn shared_data_folder_matches_the_build() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    agrees(cfg!(shared_data), &dir);
}

#[test]
fn fashion_mnist_folder_matches_the_build() {
    agrees(
        cfg!(fashion_mnist),
        Path::new("/usr/share/datasets/fashion-mnist"),
    );
}
