//! The image-folder reader on the tabletop photographs of `../shared/data/tabletop`
//! (ignored, with that reason, when the folder is absent; see `build.rs`): shape, natural
//! file order, and per-image pixel sums against MANIFEST.csv, which holds the sums of
//! Pillow/libjpeg's decoded uint8 values.

use madbayes::io::{read_image, read_image_folder};
use std::path::{Path, PathBuf};

fn tabletop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/tabletop")
}

/// Largest allowed |sum(zune-jpeg) − sum(libjpeg)| per image, divided by the 230 400 samples
/// of an image: a mean difference of at most 0.01 grey levels (of 255) per sample. Two
/// conforming JPEG decoders may differ by ±1 in some samples (IDCT and chroma upsampling
/// rounding), which moves a sum by at most a few thousand here; a real decoding error (wrong
/// channel order, a shifted block, missing upsampling) moves it by whole grey levels per
/// sample, hundreds of times more.
const MEAN_TOL: f64 = 0.01;

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/tabletop (not in this checkout)"
)]
fn tabletop_pixel_sums_match_the_manifest() {
    let dir = tabletop();
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.csv")).unwrap();
    let mut lines = manifest.lines();
    let header = lines.next().unwrap();
    assert_eq!(header, "file,sha256,pixel_sum_libjpeg_pillow");
    let expected: Vec<(String, u64)> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells[0].to_string(), cells[2].trim().parse().unwrap())
        })
        .collect();
    assert_eq!(expected.len(), 100);

    let set = read_image_folder(&dir.join("images"), false).unwrap();
    assert_eq!((set.height, set.width, set.channels), (240, 320, 3));
    assert_eq!((set.x.n_rows(), set.x.n_cols()), (100, 230_400));
    // Natural order: Picture_1, Picture_2, …, Picture_100.
    for (i, f) in set.files.iter().enumerate() {
        let name = f.file_name().unwrap().to_str().unwrap();
        assert_eq!(name, format!("Picture_{}.jpg", i + 1));
    }
    let mut worst_rel = 0.0f64;
    let mut total_abs = 0u64;
    let mut signed = 0i64;
    let mut max_abs = 0u64;
    for (i, row) in set.x.rows().enumerate() {
        let name = set.files[i].file_name().unwrap().to_str().unwrap();
        let want = expected
            .iter()
            .find(|(f, _)| f == name)
            .unwrap_or_else(|| panic!("{name} not in MANIFEST.csv"))
            .1;
        // Every value is a byte / 255; multiply back exactly.
        let got: u64 = row.iter().map(|v| (v * 255.0).round() as u64).sum();
        assert!(row.iter().all(|v| (0.0..=1.0).contains(v)));
        let diff = got.abs_diff(want);
        signed += got as i64 - want as i64;
        total_abs += diff;
        max_abs = max_abs.max(diff);
        let rel = diff as f64 / want as f64;
        worst_rel = worst_rel.max(rel);
        let per_sample = diff as f64 / row.len() as f64;
        assert!(
            per_sample <= MEAN_TOL,
            "{name}: pixel sum {got}, manifest {want} ({per_sample:.4} grey levels per sample)"
        );
    }
    println!(
        "tabletop pixel sums vs libjpeg: max |diff| {max_abs} ({:.4} per sample), mean |diff| {:.1}, mean signed diff {:.1}, worst relative {worst_rel:.2e}",
        max_abs as f64 / 230_400.0,
        total_abs as f64 / 100.0,
        signed as f64 / 100.0
    );
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/tabletop (not in this checkout)"
)]
fn a_cut_jpeg_is_an_error_naming_it() {
    let dir = tabletop();
    let bytes = std::fs::read(dir.join("images/Picture_1.jpg")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("cut.jpg");
    std::fs::write(&p, &bytes[..bytes.len() / 3]).unwrap();
    let msg = read_image(&p).unwrap_err().to_string();
    assert!(msg.contains("cut.jpg: cannot decode"), "{msg}");
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/tabletop (not in this checkout)"
)]
fn tabletop_pca_keeps_what_it_reports() {
    use madbayes::pca::{Pca, PcaMethod};
    let dir = tabletop();
    let x = read_image_folder(&dir.join("images"), false).unwrap().x;
    let pca = Pca::params(20).fit(&x).unwrap();
    // N = 100 ≪ D = 230 400: the Gram path.
    assert_eq!(pca.method(), PcaMethod::Gram);
    // ‖X − X̂‖² = ‖X − 1 mᵀ‖² − Σ kept s_i², with the total computed here directly.
    let m = pca.mean();
    let total: f64 = x
        .rows()
        .map(|r| r.iter().zip(m).map(|(v, c)| (v - c) * (v - c)).sum::<f64>())
        .sum();
    let kept: f64 = pca.singular_values().iter().map(|s| s * s).sum();
    let xhat = pca.inverse_transform(&pca.transform(&x));
    let err: f64 = x
        .as_slice()
        .iter()
        .zip(xhat.as_slice())
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    let discarded = total - kept;
    assert!(discarded > 0.0);
    assert!(
        (err - discarded).abs() <= 1e-8 * discarded,
        "‖X − X̂‖² = {err}, total − kept = {discarded}"
    );
    let ratio = pca.explained_variance_ratio();
    println!("tabletop PCA to 20: {:.4} of the variance kept", ratio);
    assert!(ratio > 0.5 && ratio < 1.0);
}
