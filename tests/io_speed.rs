//! Read throughput on generated files (ignored by default; run with
//! `cargo test --release --test io_speed -- --ignored --nocapture`).
//!
//! Sizes can be set with `MADBAYES_IO_ROWS` (default 500000); columns are 36.

use madbayes::RowMatrix;
use madbayes::io::{read_csv, read_npy, write_npy};
use std::io::Write;
use std::time::Instant;

/// CPU time of this thread in seconds (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), so the
/// numbers mean something on a loaded machine; `None` elsewhere. (Not the thread's
/// `/proc/thread-self/schedstat`, which the kernel brings up to date only at a tick or a switch.)
fn thread_cpu() -> Option<f64> {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec to write to, and the clock id is a constant.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            return Some(t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9);
        }
    }
    None
}

/// Wall and CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (t, c) = (Instant::now(), thread_cpu());
    let out = f();
    let cpu = match (c, thread_cpu()) {
        (Some(a), Some(b)) => b - a,
        _ => f64::NAN,
    };
    (out, t.elapsed().as_secs_f64(), cpu)
}

// Ignored: a throughput measurement that writes ~500 MB of files, not a check; CI runs
// every reader check in io_files.rs and the unit tests instead.
#[test]
#[ignore = "a throughput measurement, not a check: writes ~500 MB of files; run by hand"]
fn read_throughput() {
    let rows: usize = std::env::var("MADBAYES_IO_ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500_000);
    let cols = 36;
    let mut x = RowMatrix::zeros(rows, cols);
    for (k, v) in x.as_mut_slice().iter_mut().enumerate() {
        *v = ((k as f64) * 0.618_033_988_749_895).fract() * 2.0 - 1.0;
    }
    let dir = tempfile::tempdir().unwrap();

    let csv = dir.path().join("x.csv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    for r in x.rows() {
        let cells: Vec<String> = r.iter().map(|v| format!("{v:?}")).collect();
        writeln!(w, "{}", cells.join(",")).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let csv_bytes = std::fs::metadata(&csv).unwrap().len();
    let (y, s, cpu) = timed(|| read_csv(&csv).unwrap());
    assert_eq!(y, x);
    println!(
        "csv  {rows} × {cols}: {:.1} MB, wall {s:.3} s ({:.0} MB/s), cpu {cpu:.3} s ({:.0} MB/s)",
        csv_bytes as f64 / 1e6,
        csv_bytes as f64 / 1e6 / s,
        csv_bytes as f64 / 1e6 / cpu
    );

    let npy = dir.path().join("x.npy");
    write_npy(&npy, &x).unwrap();
    let npy_bytes = std::fs::metadata(&npy).unwrap().len();
    let (y, s, cpu) = timed(|| read_npy(&npy).unwrap());
    assert_eq!(y, x);
    println!(
        "npy  {rows} × {cols}: {:.1} MB, wall {s:.3} s ({:.0} MB/s), cpu {cpu:.3} s ({:.0} MB/s)",
        npy_bytes as f64 / 1e6,
        npy_bytes as f64 / 1e6 / s,
        npy_bytes as f64 / 1e6 / cpu
    );
}
