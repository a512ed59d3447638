//! What the benchmark examples share: `--key value` arguments, CPU-time measurement, thread
//! pools, standard normal draws.

#![allow(dead_code)] // each example uses its own part

/// The allocator of the command line and the Python module (src/main.rs), so that the
/// benchmarks time what they run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

pub type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// `--key value` pairs after the command.
pub struct Args(HashMap<String, String>);

impl Args {
    pub fn parse(raw: &[String]) -> Res<Self> {
        let mut map = HashMap::new();
        let mut it = raw.iter();
        while let Some(k) = it.next() {
            let key = k
                .strip_prefix("--")
                .ok_or(format!("expected --key, got {k}"))?;
            let v = it.next().ok_or(format!("--{key} needs a value"))?;
            map.insert(key.to_string(), v.clone());
        }
        Ok(Self(map))
    }
    pub fn get<T: std::str::FromStr>(&self, key: &str) -> Res<T> {
        let v = self.0.get(key).ok_or(format!("missing --{key}"))?;
        v.parse()
            .map_err(|_| format!("--{key}: cannot parse {v:?}").into())
    }
    pub fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }
    pub fn get_or<T: std::str::FromStr>(&self, key: &str, default: T) -> Res<T> {
        if self.0.contains_key(key) {
            self.get(key)
        } else {
            Ok(default)
        }
    }
    pub fn str(&self, key: &str) -> Res<&str> {
        Ok(self.0.get(key).ok_or(format!("missing --{key}"))?)
    }
}

/// Reads `n × d` little-endian f64 values written by numpy's `.tofile()`.
pub fn read_f64(path: &str, n: usize, d: usize) -> Res<madbayes::RowMatrix> {
    let bytes = std::fs::read(path)?;
    if bytes.len() != n * d * 8 {
        return Err(format!("{path}: {} bytes, expected {n}×{d}×8", bytes.len()).into());
    }
    let data = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Ok(madbayes::RowMatrix::new(n, d, data))
}

/// One standard normal draw (Box–Muller, cosine branch).
pub fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// CPU time used so far by all threads of this process, those that have ended included, in
/// seconds (`clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`; NaN where there is no such clock).
/// Unlike wall-clock time it hardly moves when other jobs compete for the cores (it does count
/// rayon's spinning).
///
/// Not the sum of `/proc/self/task/*/schedstat`, which these programs read until 2026-11-27:
/// the kernel brings a running thread's count there up to date only at a tick or a switch, so
/// a reading taken on the main thread after it loaded the data left out up to a tick of its
/// work, which the next reading, after the main thread had waited for the fit, counted in the
/// fit (0.2–3.7 ms in the first fit of a fresh process, measured against this clock).
pub fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    return clock_seconds(libc::CLOCK_PROCESS_CPUTIME_ID);
    #[cfg(not(unix))]
    f64::NAN
}

/// CPU time used so far by the calling thread, in seconds
/// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`; NaN where there is no such clock).
pub fn thread_cpu_seconds() -> f64 {
    #[cfg(unix)]
    return clock_seconds(libc::CLOCK_THREAD_CPUTIME_ID);
    #[cfg(not(unix))]
    f64::NAN
}

#[cfg(unix)]
fn clock_seconds(clock: libc::clockid_t) -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write to; a clock the system lacks returns -1.
    if unsafe { libc::clock_gettime(clock, &mut t) } != 0 {
        return f64::NAN;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

pub fn pool(threads: usize) -> Res<rayon::ThreadPool> {
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?)
}

pub fn fmt_times(t: &[f64]) -> String {
    let v: Vec<String> = t.iter().map(|x| format!("{x:.6}")).collect();
    format!("[{}]", v.join(","))
}

/// The IBP sampler named `collapsed`, `semi` or `accelerated`.
pub fn ibp_kind(name: &str) -> Res<madbayes::ibp::IbpKind> {
    use madbayes::ibp::IbpKind;
    Ok(match name {
        "collapsed" => IbpKind::Collapsed,
        "semi" => IbpKind::SemiCollapsed,
        "accelerated" => IbpKind::Accelerated,
        other => return Err(format!("unknown sampler {other}").into()),
    })
}

/// A comma-separated list.
pub fn list<T: std::str::FromStr>(s: &str) -> Res<Vec<T>> {
    s.split(',')
        .map(|v| v.parse().map_err(|_| format!("cannot parse {v:?}").into()))
        .collect()
}
