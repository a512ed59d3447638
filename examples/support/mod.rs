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

/// One standard normal draw (Box–Muller, cosine branch).
pub fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// CPU time used so far by all threads of this process, in seconds: the sum of the first
/// field of `/proc/self/task/*/schedstat` (nanoseconds on a CPU). Unlike wall-clock time it
/// hardly moves when other jobs compete for the cores (it does count rayon's spinning).
pub fn cpu_seconds() -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return f64::NAN;
    };
    let mut ns = 0u64;
    for task in dir.flatten() {
        if let Ok(s) = std::fs::read_to_string(task.path().join("schedstat")) {
            ns += s
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    ns as f64 * 1e-9
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
