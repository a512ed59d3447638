//! How much memory a request may take: sizes given by users or read from file headers are
//! compared with the memory available before anything is allocated, so a request that
//! cannot fit fails with a message instead of an abort (or the machine swapping).
//!
//! The memory available is `MemAvailable` of `/proc/meminfo` where there is one (Linux),
//! and [`FALLBACK_BYTES`] elsewhere. Inside a control group with a memory limit (a
//! container, a batch job's slot) it is at most what the limit leaves: the limit less the
//! group's usage without its inactive file cache, which the kernel reclaims first. Without
//! that, a container sees its host's memory, and a request above its own limit is killed
//! by the kernel instead of refused.

/// What is assumed available where the system does not tell (32 GiB).
pub const FALLBACK_BYTES: u64 = 32 << 30;

/// Bytes of memory available for new allocations: `MemAvailable` of `/proc/meminfo`, or
/// [`FALLBACK_BYTES`] where it cannot be read, and no more than the process's control
/// group leaves (`cgroup_headroom`).
pub fn available_memory() -> u64 {
    let system = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_available(&text))
        .unwrap_or(FALLBACK_BYTES);
    cgroup_headroom().map_or(system, |room| room.min(system))
}

/// What the memory limits of this process's control group and of the groups above it leave,
/// in bytes (the least of them), or `None` where there is no limit or none can be read.
/// Control groups v2 (`memory.max`, `memory.current`, `inactive_file` of `memory.stat`) and
/// v1 (`memory.limit_in_bytes`, `memory.usage_in_bytes`, `total_inactive_file`), found
/// through `/proc/self/cgroup`. Folders that are not mounted are passed over: inside a
/// container's namespace the group's own path is not there, and the mount's root is the
/// container's group.
fn cgroup_headroom() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |path: String| std::fs::read_to_string(path).ok();
    for (version, path) in memory_groups(&groups) {
        let (root, limit, usage, inactive) = match version {
            2 => (
                "/sys/fs/cgroup",
                "memory.max",
                "memory.current",
                "inactive_file",
            ),
            _ => (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "total_inactive_file",
            ),
        };
        let mut least: Option<u64> = None;
        for group in path_and_ancestors(path) {
            let dir = format!("{root}{group}");
            let Some(limit) = read(format!("{dir}/{limit}")) else {
                continue;
            };
            let usage = read(format!("{dir}/{usage}")).unwrap_or_default();
            let stat = read(format!("{dir}/memory.stat")).unwrap_or_default();
            if let Some(room) = headroom(&limit, &usage, &stat, inactive) {
                least = Some(least.map_or(room, |l| l.min(room)));
            }
        }
        if least.is_some() {
            return least;
        }
    }
    None
}

/// A group's path and those of the groups above it, up to the root (`""`):
/// `/a/b` gives `/a/b`, `/a`, `""`.
fn path_and_ancestors(path: &str) -> Vec<&str> {
    let mut paths = vec![path.trim_end_matches('/')];
    while let Some(cut) = paths.last().and_then(|p| p.rfind('/')) {
        let parent = &path[..cut];
        paths.push(parent);
    }
    paths
}

/// The memory controller's groups in the text of `/proc/self/cgroup`, as (version, path):
/// `N:memory:/path` (or a list of controllers holding `memory`) for v1, `0::/path` for v2.
fn memory_groups(text: &str) -> Vec<(u8, &str)> {
    let mut groups = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.split(',').any(|c| c == "memory") {
            groups.push((1, path));
        } else if id == "0" && controllers.is_empty() {
            groups.push((2, path));
        }
    }
    groups
}

/// Limits at or above this many bytes (2⁶² and v1's page-rounded `i64::MAX`) mean none.
const NO_LIMIT: u64 = 1 << 62;

/// `limit − (usage − inactive file cache)` from the texts of a group's limit, usage and
/// `memory.stat` files; `None` for no limit (`max`, or at least [`NO_LIMIT`]) or an
/// unreadable limit.
fn headroom(limit: &str, usage: &str, stat: &str, inactive_key: &str) -> Option<u64> {
    let limit: u64 = limit.trim().parse().ok()?;
    if limit >= NO_LIMIT {
        return None;
    }
    let usage: u64 = usage.trim().parse().unwrap_or(0);
    let inactive: u64 = stat
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(' ')?;
            (key == inactive_key).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    Some(limit.saturating_sub(usage.saturating_sub(inactive)))
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
    fn finds_the_memory_groups_of_both_versions() {
        let v1 = "9:name=systemd:/\n4:memory:/job/42\n3:cpu,cpuacct:/\n0::/\n";
        assert_eq!(memory_groups(v1), vec![(1, "/job/42"), (2, "/")]);
        assert_eq!(memory_groups("5:cpu,memory:/a\n"), vec![(1, "/a")]);
        assert_eq!(
            memory_groups("0::/user.slice/x\n"),
            vec![(2, "/user.slice/x")]
        );
        assert!(memory_groups("3:cpu:/\nnot a line\n").is_empty());
    }

    #[test]
    fn a_group_path_climbs_to_the_root() {
        assert_eq!(path_and_ancestors("/a/b"), vec!["/a/b", "/a", ""]);
        assert_eq!(path_and_ancestors("/"), vec![""]);
        assert_eq!(path_and_ancestors("/job/42/"), vec!["/job/42", "/job", ""]);
    }

    #[test]
    fn a_limit_leaves_its_headroom_and_no_limit_leaves_none() {
        let stat2 = "anon 100\ninactive_file 300\nactive_file 50\n";
        assert_eq!(
            headroom("1000\n", "600\n", stat2, "inactive_file"),
            Some(700)
        );
        assert_eq!(headroom("max\n", "600\n", stat2, "inactive_file"), None);
        assert_eq!(
            headroom("9223372036854771712\n", "5", "", "total_inactive_file"),
            None
        );
        let stat1 = "cache 10\ninactive_file 999\ntotal_inactive_file 20\n";
        assert_eq!(
            headroom("100", "90", stat1, "total_inactive_file"),
            Some(30)
        );
        // Usage over the limit (a group being reclaimed) leaves nothing, not an underflow.
        assert_eq!(headroom("100", "150", "", "inactive_file"), Some(0));
        assert_eq!(headroom("garbage", "1", "", "inactive_file"), None);
        // An unreadable usage counts as none used.
        assert_eq!(headroom("100", "", "", "inactive_file"), Some(100));
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
