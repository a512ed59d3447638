//! Tells the tests which optional data sets this checkout can see, so that tests needing
//! one that is absent are compiled `#[ignore]` with a reason, and `cargo test` lists them as
//! `ignored, needs …` instead of passing without having run.
//!
//! * `shared_data`: the project's shared data folder `../shared/data`, beside the checkout
//!   (the tabletop photos, the BP-means dice pictures with their published optima, the block
//!   images of Doshi-Velez & Ghahramani, the scikit-learn digits).
//! * `fashion_mnist`: the Fashion-MNIST test set of the Debian package `dataset-fashion-mnist`.
//!
//! A folder that is present is watched (`rerun-if-changed` on a folder scans its files), so
//! changing or removing it is noticed. A folder that is absent is not watched: cargo treats
//! a missing path as always changed and would rebuild the crate on every `cargo test`.
//! `tests/optional_data.rs` fails, naming the fix, if a folder appears after the build.

use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let shared = Path::new(&root).join("../shared/data");
    flag("shared_data", &shared);
    flag(
        "fashion_mnist",
        Path::new("/usr/share/datasets/fashion-mnist"),
    );
}

/// Declares the cfg `name` and sets it when `dir` is a folder, which is then watched.
fn flag(name: &str, dir: &Path) {
    println!("cargo::rustc-check-cfg=cfg({name})");
    if dir.is_dir() {
        println!("cargo::rerun-if-changed={}", dir.display());
        println!("cargo::rustc-cfg={name}");
    }
}
