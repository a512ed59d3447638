//! Writing results. A result folder holds exactly one run:
//!
//! - files are staged in a hidden folder `DIR/.madbayes-partial-<pid>-<n>` and moved into
//!   place only when all of them are written, so a failed run leaves nothing that could be
//!   mistaken for a result;
//! - a committed folder carries a manifest, [`MARKER`] (`.madbayes-result`), listing every
//!   file of the result; an existing `--out` is used only when it is empty or a madbayes
//!   result (with a manifest, or an earlier version's result recognised by its
//!   `summary.json`, `path.json` or `params.json` and file names). Anything else in it — a
//!   photo, a note — makes the run stop with one line naming the file, before any work;
//! - a new result replaces an earlier one whole: on commit the old files are moved aside
//!   into a hidden trash folder, the new ones moved in (the manifest last), and the trash
//!   deleted. If a move fails, the old result is put back;
//! - `--out` may not be, contain or lie inside an input folder ([`check_out`]);
//! - SIGINT and SIGTERM remove every staging folder of the process before it exits with
//!   status 130 or 143 ([`install_signal_handler`]), and each new staging removes the
//!   staging and trash folders in DIR of processes that are no longer alive (where
//!   `/proc` tells), so even a run killed with SIGKILL is cleaned up by the next one.
//!
//! `render` rewrites the pictures of an existing result in place ([`Staging::update`]).

use super::CliError;
use madbayes::{BinaryMatrix, RowMatrix};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The manifest of a committed result: JSON with `madbayes` (version), `command` and
/// `files` (every file of the result, relative to DIR, `/`-separated).
pub const MARKER: &str = ".madbayes-result";
/// Prefix of staging folders (then `<pid>-<n>`).
const PARTIAL: &str = ".madbayes-partial-";
/// Prefix of the folders an old result is moved into while it is replaced (then `<pid>-<n>`).
const TRASH: &str = ".madbayes-trash-";

/// A staging folder alive in this process, and the DIR it created (if it did).
struct Live {
    id: u64,
    tmp: PathBuf,
    created: Option<PathBuf>,
}

/// Every live staging folder, for the signal handler. Writes and commits hold the lock, so
/// the handler never removes a folder halfway through a move.
static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn live() -> std::sync::MutexGuard<'static, Vec<Live>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes a staging folder, and the DIR it created when that is empty.
fn remove_live(l: &Live) {
    let _ = fs::remove_dir_all(&l.tmp);
    if let Some(d) = &l.created {
        let _ = fs::remove_dir(d);
    }
}

/// On SIGINT or SIGTERM: remove the staging folders, say so on stderr, and exit with status
/// 128 + the signal number (130, 143). Call once, at the start of `main`.
#[cfg(unix)]
pub fn install_signal_handler() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let list = live();
            let had = !list.is_empty();
            list.iter().for_each(remove_live);
            let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
            if had {
                eprintln!("madbayes: stopped by {name}; the partial result was removed");
            } else {
                eprintln!("madbayes: stopped by {name}");
            }
            // The lock stays held: no write or commit can start before the process ends.
            std::process::exit(128 + sig);
        }
    });
}

/// Without Unix signals the default handling stays; the next run cleans up nothing
/// (there is no `/proc` to tell dead runs from live ones).
#[cfg(not(unix))]
pub fn install_signal_handler() {}

/// Whether the process `pid` is gone: `Some(true)` when `/proc` says so, `None` when this
/// system cannot tell.
fn process_gone(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return None;
    }
    Some(!proc.join(pid.to_string()).exists())
}

/// The pid in a staging or trash folder name, when `name` is one.
fn internal_pid(name: &str) -> Option<Option<u32>> {
    let rest = name
        .strip_prefix(PARTIAL)
        .or_else(|| name.strip_prefix(TRASH))?;
    Some(rest.split('-').next().and_then(|p| p.parse().ok()))
}

/// Removes the staging and trash folders in `dir` left by processes that are gone.
fn remove_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(Some(pid)) = internal_pid(&name)
            && pid != std::process::id()
            && process_gone(pid) == Some(true)
        {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// What an existing output folder holds.
enum Contents {
    /// Nothing (or only madbayes' own staging and trash folders).
    Empty,
    /// A madbayes result: its top-level entries.
    Result(Vec<PathBuf>),
    /// Something else: the first file or folder that is not part of a result.
    Stranger(String),
}

/// The file names an earlier version of `fit`, `path` and `gen` wrote, for folders without a
/// manifest (and `model.json`, which a result whose manifest was lost holds).
const LEGACY_FILES: [&str; 20] = [
    "summary.json",
    "model.json",
    "labels.csv",
    "means.csv",
    "z.csv",
    "covariances.csv",
    "means_original.csv",
    "pca_components.npy",
    "pca_mean.npy",
    "overview.png",
    "trace.png",
    "trace.csv",
    "path.csv",
    "path.json",
    "path.png",
    "x.csv",
    "x.npy",
    "a.csv",
    "params.json",
    "features",
];

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// The files a manifest lists, or None when `dir` has no readable manifest.
fn manifest_files(dir: &Path) -> Option<BTreeSet<String>> {
    let m = read_json(&dir.join(MARKER))?;
    let files = m.get("files")?.as_array()?;
    Some(
        files
            .iter()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect(),
    )
}

/// Whether `dir` holds a result of an earlier version (no manifest): its summary, path or
/// generator record names madbayes.
fn legacy_result(dir: &Path) -> bool {
    let has = |file: &str, keys: &[&str]| {
        read_json(&dir.join(file))
            .is_some_and(|v| keys.iter().all(|k| v.get(*k).is_some_and(|x| !x.is_null())))
    };
    has("summary.json", &["version", "algo"])
        || has("params.json", &["version", "kind"])
        || has("path.json", &["algo", "rows"])
}

/// The entries of `dir` other than madbayes' staging and trash folders, sorted by name.
fn entries(dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if internal_pid(&name).is_none() {
            out.push((name, e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// The first path under `dir` (relative, `/`-separated) that `allowed` rejects; folders are
/// entered when `enter` accepts them.
fn first_stranger(
    dir: &Path,
    prefix: &str,
    allowed: &dyn Fn(&str, bool) -> bool,
) -> std::io::Result<Option<String>> {
    for (name, path) in entries(dir)? {
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let is_dir = fs::symlink_metadata(&path)?.is_dir();
        if !allowed(&rel, is_dir) {
            return Ok(Some(rel));
        }
        if is_dir && let Some(s) = first_stranger(&path, &rel, allowed)? {
            return Ok(Some(s));
        }
    }
    Ok(None)
}

fn classify(dir: &Path) -> std::io::Result<Contents> {
    let top = entries(dir)?;
    if top.is_empty() {
        return Ok(Contents::Empty);
    }
    let stranger = if let Some(files) = manifest_files(dir) {
        let allowed = |rel: &str, is_dir: bool| {
            rel == MARKER
                || if is_dir {
                    let p = format!("{rel}/");
                    files.iter().any(|f| f.starts_with(&p))
                } else {
                    files.contains(rel)
                }
        };
        first_stranger(dir, "", &allowed)?
    } else if legacy_result(dir) {
        let allowed = |rel: &str, is_dir: bool| match rel.strip_prefix("features/") {
            None => LEGACY_FILES.contains(&rel) && (is_dir == (rel == "features")),
            Some(pic) => {
                !is_dir
                    && pic.ends_with(".png")
                    && (pic.starts_with("feature_")
                        || pic.starts_with("cluster_")
                        || pic == "base.png")
            }
        };
        first_stranger(dir, "", &allowed)?
    } else {
        Some(top[0].0.clone())
    };
    Ok(match stranger {
        Some(s) => Contents::Stranger(s),
        None => Contents::Result(top.into_iter().map(|(_, p)| p).collect()),
    })
}

fn stranger_error(dir: &Path, example: &str) -> CliError {
    CliError(format!(
        "output folder {} holds files that are not a madbayes result (e.g. {example}); choose an empty or new --out",
        dir.display()
    ))
}

/// `path` made absolute with every existing part resolved (symbolic links, `..`), the
/// missing tail appended as given.
fn resolved(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = abs.clone();
    let mut tail = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for part in tail.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return normalise(&abs),
        }
    }
}

/// Removes `.` and folds `..` lexically (for paths none of whose parts exist).
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Checks `--out` before any work: it may not be or hold an input, nor lie inside an input
/// folder; when it exists it must be a folder that is empty or holds a madbayes result.
pub fn check_out(out: &Path, inputs: &[&Path]) -> Result<(), CliError> {
    let out_r = resolved(out);
    for input in inputs {
        let in_r = resolved(input);
        if in_r == out_r || (input.is_dir() && out_r.starts_with(&in_r)) {
            return Err(CliError(format!(
                "--out {} is the input folder {} or inside it; write the result somewhere else",
                out.display(),
                input.display()
            )));
        }
        if in_r.starts_with(&out_r) {
            return Err(CliError(format!(
                "the input {} lies inside --out {}, whose contents a new result replaces; choose another --out",
                input.display(),
                out.display()
            )));
        }
    }
    match fs::symlink_metadata(out) {
        Err(_) => Ok(()),
        Ok(_) if !out.is_dir() => Err(CliError(format!(
            "output path {} exists and is not a folder; choose another --out",
            out.display()
        ))),
        Ok(_) => match classify(out) {
            Ok(Contents::Stranger(s)) => Err(stranger_error(out, &s)),
            Ok(_) => Ok(()),
            Err(e) => Err(CliError(format!(
                "cannot read output folder {}: {e}; choose a readable --out",
                out.display()
            ))),
        },
    }
}

/// How a staging is committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The new result replaces DIR's contents whole.
    Replace,
    /// The staged files are added to an existing result, replacing files of the same name
    /// (`render`).
    Update,
}

/// A result folder being written.
pub struct Staging {
    id: u64,
    dir: PathBuf,
    tmp: PathBuf,
    mode: Mode,
    command: &'static str,
    files: Vec<String>,
    committed: bool,
    /// Sub-folders of DIR whose earlier pictures are removed on commit (update mode).
    replaced: Vec<String>,
}

impl Staging {
    /// Opens DIR for a new result of `command` (creating it if needed) and a staging folder
    /// inside it. Refuses a DIR holding anything but a madbayes result, and fails with a
    /// clear message when DIR cannot be written.
    pub fn open(dir: &Path, command: &'static str) -> Result<Self, CliError> {
        check_out(dir, &[])?;
        Self::start(dir, command, Mode::Replace)
    }

    /// Opens the existing result DIR to replace some of its files (`render`).
    pub fn update(dir: &Path) -> Result<Self, CliError> {
        Self::start(dir, "render", Mode::Update)
    }

    fn start(dir: &Path, command: &'static str, mode: Mode) -> Result<Self, CliError> {
        let unwritable = |e: std::io::Error| {
            CliError(format!(
                "cannot write to output folder {}: {e}; choose a writable --out",
                dir.display()
            ))
        };
        if dir.exists() && !dir.is_dir() {
            return Err(CliError(format!(
                "output path {} exists and is not a folder; choose another --out",
                dir.display()
            )));
        }
        let created = !dir.exists();
        fs::create_dir_all(dir).map_err(unwritable)?;
        remove_stale(dir);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!("{PARTIAL}{}-{id}", std::process::id()));
        {
            let mut list = live();
            list.push(Live {
                id,
                tmp: tmp.clone(),
                created: created.then(|| dir.to_path_buf()),
            });
        }
        let staging = Self {
            id,
            dir: dir.to_path_buf(),
            tmp: tmp.clone(),
            mode,
            command,
            files: Vec::new(),
            committed: false,
            replaced: Vec::new(),
        };
        fs::create_dir_all(&tmp).map_err(unwritable)?;
        // A folder can be creatable yet not writable (e.g. read-only mounts); probe it.
        fs::write(tmp.join("probe"), b"").map_err(unwritable)?;
        fs::remove_file(tmp.join("probe")).map_err(unwritable)?;
        Ok(staging)
    }

    /// Stages one file; `name` may name a sub-folder (`features/feature_00.png`).
    pub fn write(&mut self, name: &str, contents: &[u8]) -> Result<(), CliError> {
        self.write_with(name, |w| w.write_all(contents))
    }

    /// Stages one file that `fill` writes piece by piece (through a buffer), so that a large
    /// file is never built in memory. The lock is held while the file is created, not while
    /// it is written: a signal then removes the staging folder, open file and all.
    pub fn write_with(
        &mut self,
        name: &str,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), CliError> {
        let path = self.tmp.join(name);
        let failed = |e: std::io::Error| CliError(format!("cannot write {}: {e}", path.display()));
        let file = {
            let _guard = live();
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| CliError(format!("cannot write {}: {e}", parent.display())))?;
            }
            fs::File::create(&path).map_err(failed)?
        };
        let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
        fill(&mut w).map_err(failed)?;
        let file = w.into_inner().map_err(|e| failed(e.into_error()))?;
        file.sync_all().map_err(failed)?;
        if !self.files.iter().any(|f| f == name) {
            self.files.push(name.to_string());
        }
        Ok(())
    }

    /// Update mode: on commit, first removes from DIR/`folder` the pictures an earlier run
    /// wrote there (`feature_*.png`, `cluster_*.png`, `base.png`).
    pub fn replace_pictures_in(&mut self, folder: &str) {
        self.replaced.push(folder.to_string());
    }

    /// Moves the staged files into DIR: the whole result (replace mode) or the staged files
    /// over the old ones (update mode).
    pub fn commit(mut self) -> Result<(), CliError> {
        let mut list = live();
        let done = match self.mode {
            Mode::Replace => self.commit_replace(),
            Mode::Update => self.commit_update(),
        };
        if done.is_ok() {
            self.committed = true;
            let _ = fs::remove_dir_all(&self.tmp);
            list.retain(|l| l.id != self.id);
        }
        // Released before `self` drops (Drop takes the lock when the commit failed).
        drop(list);
        done
    }

    fn manifest(&self, files: &BTreeSet<String>) -> Result<Vec<u8>, CliError> {
        let m = json!({
            "madbayes": env!("CARGO_PKG_VERSION"),
            "command": self.command,
            "files": files,
        });
        let text = serde_json::to_string_pretty(&m)
            .map_err(|e| CliError(format!("cannot encode {MARKER}: {e}")))?;
        Ok((text + "\n").into_bytes())
    }

    fn commit_replace(&mut self) -> Result<(), CliError> {
        let dir = self.dir.clone();
        let cannot = |what: String, e: std::io::Error| {
            CliError(format!("cannot {what} in {}: {e}", dir.display()))
        };
        // Files may have been added to DIR since it was opened.
        let old = match classify(&dir).map_err(|e| cannot("list the folder".into(), e))? {
            Contents::Empty => Vec::new(),
            Contents::Result(old) => old,
            Contents::Stranger(s) => return Err(stranger_error(&dir, &s)),
        };
        let files: BTreeSet<String> = self.files.iter().cloned().collect();
        fs::write(self.tmp.join(MARKER), self.manifest(&files)?)
            .map_err(|e| cannot(format!("write {MARKER}"), e))?;
        // Top-level new entries, the manifest last.
        let mut new: Vec<String> = files
            .iter()
            .map(|f| f.split('/').next().unwrap_or(f).to_string())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        new.push(MARKER.to_string());
        // The old result goes aside, its manifest first, so that DIR never looks complete
        // while it is half replaced.
        let trash = dir.join(format!("{TRASH}{}-{}", std::process::id(), self.id));
        let mut old = old;
        old.sort_by_key(|p| p.file_name().is_none_or(|n| n != MARKER));
        if !old.is_empty() {
            fs::create_dir(&trash).map_err(|e| cannot("make a trash folder".into(), e))?;
        }
        let mut moved_old: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut moved_new: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut result = Ok(());
        for p in &old {
            let to = trash.join(p.file_name().unwrap_or_default());
            if let Err(e) = fs::rename(p, &to) {
                result = Err(cannot(format!("move the earlier {}", p.display()), e));
                break;
            }
            moved_old.push((p.clone(), to));
        }
        if result.is_ok() {
            for name in &new {
                let (from, to) = (self.tmp.join(name), dir.join(name));
                if let Err(e) = fs::rename(&from, &to) {
                    result = Err(cannot(format!("move {name}"), e));
                    break;
                }
                moved_new.push((from, to));
            }
        }
        if result.is_err() {
            // Put everything back as it was: the new files into staging, the old into DIR.
            for (from, to) in moved_new.iter().rev() {
                let _ = fs::rename(to, from);
            }
            for (from, to) in moved_old.iter().rev() {
                let _ = fs::rename(to, from);
            }
        }
        let _ = fs::remove_dir_all(&trash);
        result
    }

    fn commit_update(&mut self) -> Result<(), CliError> {
        for folder in &self.replaced {
            remove_old_pictures(&self.dir.join(folder));
        }
        for name in &self.files {
            if let Some(parent) = Path::new(name).parent()
                && !parent.as_os_str().is_empty()
            {
                let target = self.dir.join(parent);
                fs::create_dir_all(&target)
                    .map_err(|e| CliError(format!("cannot create {}: {e}", target.display())))?;
            }
            fs::rename(self.tmp.join(name), self.dir.join(name)).map_err(|e| {
                CliError(format!(
                    "cannot move {name} into {}: {e}",
                    self.dir.display()
                ))
            })?;
        }
        // The manifest, when there is one, lists what is there now.
        if let Some(old) = manifest_files(&self.dir) {
            let mut files: BTreeSet<String> = old
                .into_iter()
                .filter(|f| self.dir.join(f).exists())
                .collect();
            files.extend(self.files.iter().cloned());
            let tmp = self.tmp.join(MARKER);
            let write = fs::write(&tmp, self.manifest(&files)?)
                .and_then(|_| fs::rename(&tmp, self.dir.join(MARKER)));
            write.map_err(|e| {
                CliError(format!(
                    "cannot update {MARKER} in {}: {e}",
                    self.dir.display()
                ))
            })?;
        }
        Ok(())
    }
}

/// Removes the picture files `write_result` puts in a `features/` folder.
fn remove_old_pictures(folder: &Path) {
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name.ends_with(".png")
            && (name.starts_with("feature_") || name.starts_with("cluster_") || name == "base.png");
        if ours && entry.path().is_file() {
            let _ = fs::remove_file(entry.path());
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let mut list = live();
            if let Some(i) = list.iter().position(|l| l.id == self.id) {
                remove_live(&list.remove(i));
            } else {
                let _ = fs::remove_dir_all(&self.tmp);
            }
        }
    }
}

/// A matrix as CSV: one row per line, values in Rust's shortest round-trip notation.
pub fn matrix_csv(m: &RowMatrix) -> String {
    let mut s = String::with_capacity(m.n_rows() * m.n_cols() * 12);
    for r in m.rows() {
        for (j, v) in r.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            let _ = write!(s, "{v:?}");
        }
        s.push('\n');
    }
    s
}

/// A 0/1 matrix as CSV of integers.
pub fn binary_csv(m: &BinaryMatrix) -> String {
    let mut buf = Vec::with_capacity(m.n_rows() * m.n_cols() * 2);
    binary_csv_to(&mut buf, m).expect("writing to memory cannot fail");
    String::from_utf8(buf).expect("the CSV is ASCII")
}

/// [`binary_csv`], written to `w` one row at a time.
pub fn binary_csv_to(w: &mut dyn Write, m: &BinaryMatrix) -> std::io::Result<()> {
    let mut line = csv_zeros_line(m.n_cols());
    for r in m.rows() {
        for (j, v) in r.iter().enumerate() {
            line[2 * j] = if *v != 0 { b'1' } else { b'0' };
        }
        w.write_all(&line)?;
    }
    Ok(())
}

/// The one-hot matrix of `labels` over `k` columns (row n has its 1 in column `labels[n]`),
/// as [`binary_csv`] writes it, one row at a time: O(k) memory, whatever the number of rows.
pub fn one_hot_csv_to(w: &mut dyn Write, labels: &[usize], k: usize) -> std::io::Result<()> {
    let mut line = csv_zeros_line(k);
    for &l in labels {
        line[2 * l] = b'1';
        w.write_all(&line)?;
        line[2 * l] = b'0';
    }
    Ok(())
}

/// "0,0,…,0\n" with `k` zeros (just "\n" when `k` = 0): entry j at byte 2j.
fn csv_zeros_line(k: usize) -> Vec<u8> {
    let mut line = vec![b','; (2 * k).max(1)];
    line.iter_mut().step_by(2).for_each(|c| *c = b'0');
    *line.last_mut().expect("not empty") = b'\n';
    line
}

/// One integer per line.
pub fn labels_csv(labels: &[usize]) -> String {
    let mut s = String::with_capacity(labels.len() * 4);
    for l in labels {
        let _ = writeln!(s, "{l}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CSV spelled out entry by entry: values joined by commas, one line per row.
    fn spelled(rows: &[Vec<u8>]) -> String {
        rows.iter()
            .map(|r| {
                let v: Vec<String> = r.iter().map(|x| x.to_string()).collect();
                v.join(",") + "\n"
            })
            .collect()
    }

    #[test]
    fn binary_csv_writes_every_entry_in_its_place() {
        for k in 0..4 {
            let rows: Vec<Vec<u8>> = (0..5u8)
                .map(|i| (0..k).map(|j| (i >> j) & 1).collect())
                .collect();
            let m = BinaryMatrix::from_rows(&rows);
            assert_eq!(binary_csv(&m), spelled(&rows), "k = {k}");
        }
    }

    #[test]
    fn one_hot_rows_are_the_csv_of_the_one_hot_matrix() {
        let labels = [2, 0, 0, 3, 1, 2];
        let mut buf = Vec::new();
        one_hot_csv_to(&mut buf, &labels, 5).unwrap();
        let rows: Vec<Vec<u8>> = labels
            .iter()
            .map(|&l| (0..5).map(|j| u8::from(j == l)).collect())
            .collect();
        assert_eq!(String::from_utf8(buf).unwrap(), spelled(&rows));
        let mut empty = Vec::new();
        one_hot_csv_to(&mut empty, &[], 5).unwrap();
        assert!(empty.is_empty());
    }
}
