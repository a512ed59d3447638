//! Pictures written by `madbayes fit` and redrawn by `madbayes render`: the cluster pictures
//! of duplicated images are those images byte for byte (pixel order round-trips, with and
//! without `--pca`), render gives the same bytes as fit, the sheet is drawn without examples
//! when the images are gone, non-image results get `trace.png`, and bad render folders give
//! one error line.

use madbayes::io::{PixelScale, write_png};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn madbayes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madbayes"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Decodes a PNG: (width, height, channels, samples).
fn decode(bytes: &[u8]) -> (u32, u32, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type.samples(), buf)
}

/// `copies` copies of `distinct` different `w × h` images with `channels` channels, values
/// k/255, written in an interleaved order; returns the distinct images' PNG bytes.
fn duplicated_images(
    dir: &Path,
    distinct: usize,
    copies: usize,
    w: usize,
    h: usize,
    channels: usize,
) -> Vec<Vec<u8>> {
    fs::create_dir_all(dir).unwrap();
    let mut files = Vec::new();
    for k in 0..distinct {
        let v: Vec<f64> = (0..w * h * channels)
            .map(|j| ((j * 37 + k * 101 + (j * j) % 13) % 256) as f64 / 255.0)
            .collect();
        let path = dir.join(format!("distinct_{k}.png.keep"));
        write_png(&path, &v, w, h, channels, PixelScale::UNIT).unwrap();
        files.push(fs::read(&path).unwrap());
        fs::remove_file(&path).unwrap();
        for c in 0..copies {
            fs::write(
                dir.join(format!("im_{}.png", c * distinct + k)),
                files.last().unwrap(),
            )
            .unwrap();
        }
    }
    files
}

/// Picture files of a result folder by name.
type Pngs = BTreeMap<String, Vec<u8>>;

fn pngs_under(dir: &Path) -> Pngs {
    let mut m = BTreeMap::new();
    for name in ["overview.png", "trace.png"] {
        if let Ok(b) = fs::read(dir.join(name)) {
            m.insert(name.to_string(), b);
        }
    }
    if let Ok(entries) = fs::read_dir(dir.join("features")) {
        for e in entries {
            let e = e.unwrap();
            m.insert(
                format!("features/{}", e.file_name().to_string_lossy()),
                fs::read(e.path()).unwrap(),
            );
        }
    }
    m
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

fn cluster_pictures_equal_the_images(pca: Option<&str>, channels: usize) {
    let d = tempfile::tempdir().unwrap();
    let imgs = d.path().join("imgs");
    let (w, h) = (7, 4);
    let distinct = duplicated_images(&imgs, 3, 3, w, h, channels);
    let out = d.path().join("res");
    let mut args = vec![
        "fit",
        s(&imgs),
        "--algo",
        "kmeans",
        "--k",
        "3",
        "--restarts",
        "5",
        "--out",
        s(&out),
        "--quiet",
    ];
    if let Some(p) = pca {
        args.extend(["--pca", p]);
    }
    ok(&madbayes(&args));
    let sm = summary(&out);
    assert_eq!(sm["image"]["height"], h);
    assert_eq!(sm["image"]["width"], w);
    assert_eq!(sm["image"]["channels"], channels);
    assert_eq!(sm["image"]["grey"], false);
    let mut found = [false; 3];
    for k in 0..3 {
        let pic = fs::read(out.join(format!("features/cluster_{k:02}.png"))).unwrap();
        let (pw, ph, pc, samples) = decode(&pic);
        assert_eq!((pw as usize, ph as usize, pc), (w, h, channels));
        let which = distinct
            .iter()
            .position(|im| decode(im).3 == samples)
            .unwrap_or_else(|| panic!("cluster {k} is none of the input images"));
        // Same encoder settings as write_png: the files themselves are equal.
        assert_eq!(pic, distinct[which]);
        found[which] = true;
    }
    assert!(found.iter().all(|&f| f), "every image is a cluster");
    let (_, _, _, sheet) = decode(&fs::read(out.join("overview.png")).unwrap());
    assert!(!sheet.is_empty());
}

#[test]
fn cluster_pictures_are_the_duplicated_images_byte_for_byte() {
    cluster_pictures_equal_the_images(None, 3);
    cluster_pictures_equal_the_images(None, 1);
}

#[test]
fn cluster_pictures_round_trip_through_the_pca() {
    cluster_pictures_equal_the_images(Some("2"), 3);
}

/// Runs fit, keeps its pictures, deletes them, renders and returns (fit's, render's).
fn fit_then_render(fit_args: &[&str], out: &Path) -> (Pngs, Pngs, Output) {
    ok(&madbayes(fit_args));
    let before = pngs_under(out);
    assert!(!before.is_empty());
    let _ = fs::remove_dir_all(out.join("features"));
    let _ = fs::remove_file(out.join("overview.png"));
    let _ = fs::remove_file(out.join("trace.png"));
    let r = madbayes(&["render", s(out)]);
    ok(&r);
    (before, pngs_under(out), r)
}

#[test]
fn render_redraws_the_same_bytes_for_features_clusters_and_traces() {
    let d = tempfile::tempdir().unwrap();
    let imgs = d.path().join("imgs");
    duplicated_images(&imgs, 4, 3, 9, 6, 3);
    let out = d.path().join("feat");
    let args = [
        "fit",
        s(&imgs),
        "--algo",
        "bp-means",
        "--penalty",
        "0.5",
        "--pca",
        "5",
        "--restarts",
        "3",
        "--out",
        s(&out),
        "--quiet",
    ];
    let (fit, render, _) = fit_then_render(&args, &out);
    assert!(fit.contains_key("features/base.png") && fit.contains_key("features/feature_00.png"));
    assert!(fit.contains_key("overview.png"));
    assert_eq!(fit, render);

    let out = d.path().join("clus");
    let args = [
        "fit",
        s(&imgs),
        "--algo",
        "dp-means",
        "--penalty",
        "1",
        "--restarts",
        "3",
        "--out",
        s(&out),
        "--quiet",
    ];
    let (fit, render, _) = fit_then_render(&args, &out);
    assert!(fit.contains_key("features/cluster_00.png"));
    assert_eq!(fit, render);

    let csv = d.path().join("x.csv");
    fs::write(&csv, "0,0\n0.1,0\n5,5\n5.1,5\n9,0\n9,0.2\n").unwrap();
    let out = d.path().join("csv");
    let args = [
        "fit",
        s(&csv),
        "--algo",
        "kmeans",
        "--k",
        "3",
        "--out",
        s(&out),
        "--quiet",
    ];
    let (fit, render, _) = fit_then_render(&args, &out);
    assert_eq!(fit.keys().collect::<Vec<_>>(), vec!["trace.png"]);
    assert_eq!(decode(&fit["trace.png"]).0, 800);
    assert_eq!(fit, render);
}

#[test]
fn render_without_the_images_draws_the_sheet_without_examples() {
    let d = tempfile::tempdir().unwrap();
    let imgs = d.path().join("imgs");
    duplicated_images(&imgs, 2, 2, 5, 5, 1);
    let out = d.path().join("res");
    let args = [
        "fit",
        s(&imgs),
        "--algo",
        "kmeans",
        "--k",
        "2",
        "--out",
        s(&out),
        "--quiet",
    ];
    ok(&madbayes(&args));
    let with_examples = fs::read(out.join("overview.png")).unwrap();
    let feature = fs::read(out.join("features/cluster_00.png")).unwrap();
    fs::rename(&imgs, d.path().join("gone")).unwrap();
    let r = madbayes(&["render", s(&out)]);
    ok(&r);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("without examples"), "{err}");
    let without = fs::read(out.join("overview.png")).unwrap();
    assert_ne!(with_examples, without);
    assert_eq!(
        feature,
        fs::read(out.join("features/cluster_00.png")).unwrap()
    );
}

#[test]
fn a_refit_with_fewer_means_leaves_no_stale_pictures() {
    let d = tempfile::tempdir().unwrap();
    let imgs = d.path().join("imgs");
    duplicated_images(&imgs, 3, 2, 4, 4, 1);
    let out = d.path().join("res");
    for k in ["3", "2"] {
        ok(&madbayes(&[
            "fit",
            s(&imgs),
            "--algo",
            "kmeans",
            "--k",
            k,
            "--out",
            s(&out),
            "--quiet",
        ]));
    }
    let names: Vec<PathBuf> = fs::read_dir(out.join("features"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let hidden = fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".madbayes-partial")
        })
        .count();
    assert_eq!(hidden, 0, "staging folder left behind");
}

#[test]
fn render_of_a_folder_that_is_not_a_result_is_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    let o = madbayes(&["render", s(d.path())]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
    assert!(
        err.starts_with("madbayes: error:") && err.contains("summary.json"),
        "{err}"
    );
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0, "files left");
}

#[test]
#[cfg_attr(
    not(shared_data),
    ignore = "needs ../shared/data/tabletop (not in this checkout)"
)]
fn tabletop_features_are_drawn_and_redrawn() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/tabletop/images");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("tab");
    // Penalty 1200 ≈ the paper's 12 on data scaled by 1/sqrt(N − 1) (N = 100).
    let args = [
        "fit",
        s(&root),
        "--pca",
        "100",
        "--algo",
        "stepwise-k-features",
        "--penalty",
        "1200",
        "--restarts",
        "10",
        "--out",
        s(&out),
        "--quiet",
    ];
    let (fit, render, _) = fit_then_render(&args, &out);
    assert_eq!(fit, render);
    let sm = summary(&out);
    let k = sm["k"].as_u64().unwrap() as usize;
    assert_eq!(sm["image"]["width"], 320);
    assert_eq!(sm["image"]["height"], 240);
    assert_eq!(sm["image"]["channels"], 3);
    for j in 0..k {
        let (w, h, c, _) = decode(&fit[&format!("features/feature_{j:02}.png")]);
        assert_eq!((w, h, c), (320, 240, 3));
    }
    assert_eq!(fit.len(), k + 2, "features, base.png and overview.png");
    let (w, h, _, _) = decode(&fit["overview.png"]);
    assert!(w >= 160 * 3 && h >= 2 * 120, "{w}×{h}");
}
