//! Unit tests of the image-folder reader and the PNG writer.

use super::*;
use std::cmp::Ordering;
use std::fs;

/// Deterministic bytes in 0..=255.
fn pattern(len: usize, salt: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| ((i.wrapping_mul(2_654_435_761) ^ salt) >> 7) as u8)
        .collect()
}

fn unit(bytes: &[u8]) -> Vec<f64> {
    bytes.iter().map(|&b| f64::from(b) / 255.0).collect()
}

#[test]
fn natural_order_compares_digit_runs_as_numbers() {
    let mut names = vec![
        "Picture_10.jpg",
        "Picture_2.jpg",
        "Picture_1.jpg",
        "Picture_100.jpg",
        "Picture_9.jpg",
        "a.png",
        "Picture_02.jpg",
    ];
    names.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(
        names,
        [
            "Picture_1.jpg",
            "Picture_02.jpg",
            "Picture_2.jpg",
            "Picture_9.jpg",
            "Picture_10.jpg",
            "Picture_100.jpg",
            "a.png"
        ]
    );
    assert_eq!(natural_cmp("x2y10", "x2y9"), Ordering::Greater);
    assert_eq!(natural_cmp("img", "img1"), Ordering::Less);
    assert_eq!(natural_cmp("same", "same"), Ordering::Equal);
    // Numbers longer than any integer type still compare by value.
    assert_eq!(
        natural_cmp(
            "f123456789012345678901234567890",
            "f99999999999999999999999999999"
        ),
        Ordering::Greater
    );
    // Equal by value, different text: a total order, leading zero first ("0" < "1").
    assert_eq!(natural_cmp("a01", "a1"), Ordering::Less);
    assert_eq!(natural_cmp("a1", "a01"), Ordering::Greater);
}

#[test]
fn png_round_trip_is_exact_for_grey_and_rgb() {
    let dir = tempfile::tempdir().unwrap();
    for (channels, w, h) in [(1usize, 7usize, 5usize), (3, 4, 6)] {
        let bytes = pattern(w * h * channels, channels as u32);
        let values = unit(&bytes);
        let p = dir.path().join(format!("c{channels}.png"));
        write_png(&p, &values, w, h, channels, PixelScale::UNIT).unwrap();
        let im = read_image(&p).unwrap();
        assert_eq!((im.width, im.height, im.channels), (w, h, channels));
        assert_eq!(im.values, values, "{channels} channels");
    }
}

#[test]
fn min_max_scaling_spans_the_byte_range() {
    let v = [-3.0, 1.0, 5.0, f64::NAN];
    assert_eq!(to_bytes(&v, PixelScale::MinMax), vec![0, 128, 255, 0]);
    assert_eq!(
        to_bytes(&[2.0, -1.0, 0.5], PixelScale::Fixed { lo: 0.0, hi: 1.0 }),
        vec![255, 0, 128]
    );
    assert_eq!(to_bytes(&[4.0, 4.0], PixelScale::MinMax), vec![0, 0]);
}

#[test]
fn folder_rows_follow_natural_order_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (3, 2);
    let mut expected = Vec::new();
    for i in [10u32, 2, 1] {
        let bytes = pattern(w * h * 3, i);
        write_png(
            &dir.path().join(format!("img_{i}.png")),
            &unit(&bytes),
            w,
            h,
            3,
            PixelScale::UNIT,
        )
        .unwrap();
        expected.push((i, unit(&bytes)));
    }
    fs::write(dir.path().join("notes.txt"), "not an image").unwrap();
    fs::write(dir.path().join(".hidden.png"), "ignored").unwrap();
    fs::create_dir(dir.path().join("sub.png")).unwrap();
    expected.sort_by_key(|e| e.0);
    let set = read_image_folder(dir.path(), false).unwrap();
    assert_eq!((set.height, set.width, set.channels), (h, w, 3));
    assert_eq!(set.x.n_rows(), 3);
    assert_eq!(set.x.n_cols(), w * h * 3);
    for (r, (i, vals)) in expected.iter().enumerate() {
        assert!(set.files[r].ends_with(format!("img_{i}.png")));
        assert_eq!(set.x.row(r), vals.as_slice());
    }
    // Grey: 0.299 R + 0.587 G + 0.114 B per pixel, pixel (y, x) at y·w + x.
    let grey = read_image_folder(dir.path(), true).unwrap();
    assert_eq!(grey.channels, 1);
    let rgb = set.x.row(0);
    for p in 0..w * h {
        let y = 0.299 * rgb[3 * p] + 0.587 * rgb[3 * p + 1] + 0.114 * rgb[3 * p + 2];
        assert!((grey.x.row(0)[p] - y).abs() < 1e-15);
    }
}

#[test]
fn row_major_pixel_order() {
    let dir = tempfile::tempdir().unwrap();
    // 3 wide, 2 high; byte value 10·y + x marks each pixel.
    let bytes: Vec<u8> = (0..2u8)
        .flat_map(|y| (0..3u8).map(move |x| 10 * y + x))
        .collect();
    let p = dir.path().join("a.png");
    write_png(&p, &unit(&bytes), 3, 2, 1, PixelScale::UNIT).unwrap();
    let im = read_image(&p).unwrap();
    let back: Vec<u8> = im
        .values
        .iter()
        .map(|v| (v * 255.0).round() as u8)
        .collect();
    assert_eq!(back, vec![0, 1, 2, 10, 11, 12]);
}

#[test]
fn folder_errors_name_the_folder_or_files() {
    let dir = tempfile::tempdir().unwrap();
    let msg = read_image_folder(dir.path(), false)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("no images") && msg.contains("empty"), "{msg}");
    fs::write(dir.path().join("x.csv"), "1,2\n").unwrap();
    let msg = read_image_folder(dir.path(), false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("no images") && msg.contains("none a .png"),
        "{msg}"
    );

    write_png(
        &dir.path().join("a1.png"),
        &[0.0; 12],
        4,
        3,
        1,
        PixelScale::UNIT,
    )
    .unwrap();
    write_png(
        &dir.path().join("a2.png"),
        &[0.0; 12],
        3,
        4,
        1,
        PixelScale::UNIT,
    )
    .unwrap();
    let msg = read_image_folder(dir.path(), false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("a2.png is 3×4 (grey)") && msg.contains("a1.png is 4×3 (grey)"),
        "{msg}"
    );
    fs::remove_file(dir.path().join("a2.png")).unwrap();
    write_png(
        &dir.path().join("a2.png"),
        &[0.0; 36],
        4,
        3,
        3,
        PixelScale::UNIT,
    )
    .unwrap();
    let msg = read_image_folder(dir.path(), false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("4×3 (RGB)") && msg.contains("4×3 (grey)"),
        "{msg}"
    );
    // With grey both become one channel and may be mixed.
    assert_eq!(read_image_folder(dir.path(), true).unwrap().x.n_rows(), 2);

    fs::write(dir.path().join("a3.jpg"), b"\xFF\xD8\xFF\xE0garbage").unwrap();
    let msg = read_image_folder(dir.path(), true).unwrap_err().to_string();
    assert!(msg.contains("a3.jpg: cannot decode"), "{msg}");
    fs::write(dir.path().join("a3.jpg"), b"plain text").unwrap();
    let msg = read_image_folder(dir.path(), true).unwrap_err().to_string();
    assert!(
        msg.contains("a3.jpg") && msg.contains("neither a PNG"),
        "{msg}"
    );
    // A PNG cut in half.
    let whole = fs::read(dir.path().join("a1.png")).unwrap();
    fs::write(dir.path().join("a3.jpg"), &whole[..whole.len() / 2]).unwrap();
    let msg = read_image_folder(dir.path(), true).unwrap_err().to_string();
    assert!(msg.contains("a3.jpg: cannot decode"), "{msg}");
    assert!(!msg.contains('\n'));
}

#[test]
fn sixteen_bit_png_is_scaled_by_65535() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("deep.png");
    let samples: [u16; 4] = [0, 1, 32_768, 65_535];
    let mut enc = png::Encoder::new(fs::File::create(&p).unwrap(), 2, 2);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Sixteen);
    let mut w = enc.write_header().unwrap();
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_be_bytes()).collect();
    w.write_image_data(&bytes).unwrap();
    w.finish().unwrap();
    let im = read_image(&p).unwrap();
    let want: Vec<f64> = samples.iter().map(|&s| f64::from(s) / 65535.0).collect();
    assert_eq!((im.channels, im.values), (1, want));
}
