//! `madbayes fit` on image folders and IDX files: results, and every bad folder giving one
//! line `madbayes: error: …`, exit status 2 and nothing in the output folder.

use madbayes::io::{PixelScale, write_png};
use std::fs;
use std::path::Path;
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

/// Writes `n` RGB images of `w × h`: even ones dark, odd ones bright.
fn write_images(dir: &Path, n: usize, w: usize, h: usize) {
    fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        let base = if i % 2 == 0 { 0.1 } else { 0.9 };
        let v: Vec<f64> = (0..w * h * 3)
            .map(|j| base + 0.01 * ((i + j) % 3) as f64)
            .collect();
        write_png(
            &dir.join(format!("im{i}.png")),
            &v,
            w,
            h,
            3,
            PixelScale::UNIT,
        )
        .unwrap();
    }
}

fn assert_bad(out: &Output, needles: &[&str], out_dir: &Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("madbayes: error:"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
    if out_dir.exists() {
        assert_eq!(fs::read_dir(out_dir).unwrap().count(), 0, "files left");
    }
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn a_folder_of_images_is_fitted_one_row_per_image() {
    let d = tempfile::tempdir().unwrap();
    let imgs = d.path().join("imgs");
    write_images(&imgs, 6, 4, 3);
    let out = d.path().join("res");
    let o = madbayes(&[
        "fit",
        s(&imgs),
        "--algo",
        "dp-means",
        "--penalty",
        "5",
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sm = summary(&out);
    assert_eq!(sm["n"], 6);
    assert_eq!(sm["d"], 4 * 3 * 3);
    assert_eq!(sm["k"], 2);
    let out_grey = d.path().join("grey");
    let o = madbayes(&[
        "fit",
        s(&imgs),
        "--grey",
        "--algo",
        "kmeans",
        "--k",
        "2",
        "--out",
        s(&out_grey),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(summary(&out_grey)["d"], 4 * 3);
}

#[test]
fn bad_folders_give_one_line_and_no_result() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let fit = |input: &Path, extra: &[&str]| {
        let mut a = vec![
            "fit",
            s(input),
            "--algo",
            "kmeans",
            "--k",
            "1",
            "--out",
            s(&out),
        ];
        a.extend_from_slice(extra);
        a.push("--quiet");
        madbayes(&a)
    };
    let empty = d.path().join("empty");
    fs::create_dir(&empty).unwrap();
    assert_bad(&fit(&empty, &[]), &["empty", "no images"], &out);

    let mixed = d.path().join("mixed");
    write_images(&mixed, 2, 4, 3);
    write_png(
        &mixed.join("im9.png"),
        &[0.5; 5 * 3 * 3],
        5,
        3,
        3,
        PixelScale::UNIT,
    )
    .unwrap();
    assert_bad(
        &fit(&mixed, &[]),
        &[
            "im9.png is 5×3 (RGB)",
            "im0.png is 4×3 (RGB)",
            "same width, height",
        ],
        &out,
    );

    let corrupt = d.path().join("corrupt");
    write_images(&corrupt, 2, 4, 3);
    fs::write(
        corrupt.join("im5.jpg"),
        b"\xFF\xD8\xFF\xDB not really a jpeg",
    )
    .unwrap();
    assert_bad(
        &fit(&corrupt, &[]),
        &["im5.jpg: cannot decode the image"],
        &out,
    );

    let csv = d.path().join("x.csv");
    fs::write(&csv, "1,2\n3,4\n").unwrap();
    assert_bad(
        &fit(&csv, &["--grey"]),
        &["--grey applies only to a folder"],
        &out,
    );
}

#[test]
fn an_idx_file_is_read_by_its_name() {
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let mut raw = Vec::new();
    for v in [2051u32, 8, 2, 2] {
        raw.extend_from_slice(&v.to_be_bytes());
    }
    for i in 0..8u8 {
        raw.extend_from_slice(&[if i < 4 { 10 } else { 240 }; 4]);
    }
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&raw).unwrap();
    let p = d.path().join("toy-images-idx3-ubyte.gz");
    fs::write(&p, gz.finish().unwrap()).unwrap();
    let out = d.path().join("res");
    let o = madbayes(&[
        "fit",
        s(&p),
        "--algo",
        "kmeans",
        "--k",
        "2",
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sm = summary(&out);
    assert_eq!((sm["n"].as_u64(), sm["d"].as_u64()), (Some(8), Some(4)));
    assert_eq!(sm["objective"], 0.0);
    // Cut short: one line, nothing written.
    let cut = d.path().join("cut-ubyte");
    fs::write(&cut, &raw[..raw.len() - 3]).unwrap();
    let out2 = d.path().join("res2");
    let o = madbayes(&[
        "fit",
        s(&cut),
        "--algo",
        "kmeans",
        "--k",
        "2",
        "--out",
        s(&out2),
        "--quiet",
    ]);
    assert_bad(&o, &["cut-ubyte: truncated IDX file"], &out2);
}

fn read_csv_rows(p: &Path) -> Vec<Vec<f64>> {
    fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect()
}

#[test]
fn pca_projects_the_data_and_maps_means_back() {
    let d = tempfile::tempdir().unwrap();
    let imgs = d.path().join("imgs");
    write_images(&imgs, 8, 5, 4);
    let out = d.path().join("res");
    let o = madbayes(&[
        "fit",
        s(&imgs),
        "--pca",
        "3",
        "--algo",
        "kmeans",
        "--k",
        "2",
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sm = summary(&out);
    assert_eq!(sm["d"], 3);
    assert_eq!(sm["pca"]["components"], 3);
    assert_eq!(sm["pca"]["original_d"], 60);
    assert_eq!(sm["pca"]["method"], "gram");
    let v = madbayes::io::read_npy(&out.join("pca_components.npy")).unwrap();
    let m = madbayes::io::read_npy(&out.join("pca_mean.npy")).unwrap();
    assert_eq!((v.n_rows(), v.n_cols()), (3, 60));
    assert_eq!((m.n_rows(), m.n_cols()), (1, 60));
    let means = read_csv_rows(&out.join("means.csv"));
    let back = read_csv_rows(&out.join("means_original.csv"));
    assert_eq!(means.len(), 2);
    assert!(means.iter().all(|r| r.len() == 3));
    for (mu, orig) in means.iter().zip(&back) {
        assert_eq!(orig.len(), 60);
        for j in 0..60 {
            let want = m.row(0)[j] + (0..3).map(|c| mu[c] * v.row(c)[j]).sum::<f64>();
            assert!((orig[j] - want).abs() < 1e-12);
        }
        // The two groups' means are images near 0.1 or near 0.9 in every pixel.
        assert!(
            orig.iter().all(|x| (x - 0.11).abs() < 0.02)
                || orig.iter().all(|x| (x - 0.91).abs() < 0.02)
        );
    }
    let out2 = d.path().join("res2");
    let o = madbayes(&[
        "fit",
        s(&imgs),
        "--pca",
        "9",
        "--algo",
        "kmeans",
        "--k",
        "2",
        "--out",
        s(&out2),
        "--quiet",
    ]);
    assert_bad(&o, &["--pca 9", "min(N, D) = 8"], &out2);
}
