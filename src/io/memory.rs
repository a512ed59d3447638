//! How much memory a request may take: sizes given by users or read from file headers are
//! compared with the memory available before anything is allocated, so a request that
//! cannot fit fails with a message instead of an abort (or the machine swapping).
//!
//! The memory available is `MemAvailable` of `/proc/meminfo` where there is one (Linux),
//! and [`FALLBACK_BYTES`] elsewhere.

/// What is assumed available where the system does not tell (32 GiB).
pub const FALLBACK_BYTES: u64 = 32 << 30;

/// Bytes of memory available for new allocations: `MemAvailable` of `/proc/meminfo`, or
/// [`FALLBACK_BYTES`] where it cannot be read.
pub fn available_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_available(&text))
        .unwrap_or(FALLBACK_BYTES)
}

/// `MemAvailable` in bytes from the text of `/proc/meminfo` (`MemAvailable:  123 kB`).
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut parts = line.split_whitespace().skip(1);
    let value: u64 = parts.next()?.parse().ok()?;
    let unit = match parts.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    value.checked_mul(unit)
}

/// A byte count for messages: `812 bytes`, `3.4 MB`, `22.1 GB`, `3600.0 TB`.
pub fn human_bytes(bytes: u128) -> String {
    let b = bytes as f64;
    if b < 1e3 {
        format!("{bytes} bytes")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else if b < 1e12 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.1} TB", b / 1e12)
    }
}

/// `Err(available)` when `bytes` exceed the memory available now.
pub fn fits_in_memory(bytes: u128) -> Result<(), u64> {
    let available = available_memory();
    if bytes > u128::from(available) {
        Err(available)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available() {
        let text =
            "MemTotal:       24000000 kB\nMemFree:        1000 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(mem_available(text), Some(2048 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: x kB\n"), None);
        assert!(available_memory() > 0);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(812), "812 bytes");
        assert_eq!(human_bytes(3_400_000), "3.4 MB");
        assert_eq!(human_bytes(22_100_000_000), "22.1 GB");
        assert!(fits_in_memory(u128::MAX).is_err());
        assert!(fits_in_memory(1).is_ok());
    }
}
