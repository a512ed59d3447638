//! Writing results: files are staged in a hidden folder inside DIR and moved into place only
//! when all of them are written (`summary.json` last), so a failed run leaves nothing that
//! could be mistaken for a result.

use super::CliError;
use madbayes::RowMatrix;
use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A result folder being written.
pub struct Staging {
    dir: PathBuf,
    tmp: PathBuf,
    created_dir: bool,
    files: Vec<String>,
    committed: bool,
}

impl Staging {
    /// Creates DIR if needed and a staging folder inside it; fails with a clear message when
    /// DIR cannot be written.
    pub fn open(dir: &Path) -> Result<Self, CliError> {
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
        let created_dir = !dir.exists();
        fs::create_dir_all(dir).map_err(unwritable)?;
        let tmp = dir.join(format!(".madbayes-partial-{}", std::process::id()));
        let staging = Self {
            dir: dir.to_path_buf(),
            tmp: tmp.clone(),
            created_dir,
            files: Vec::new(),
            committed: false,
        };
        fs::create_dir_all(&tmp).map_err(unwritable)?;
        // A folder can be creatable yet not writable (e.g. read-only mounts); probe it.
        fs::write(tmp.join("probe"), b"").map_err(unwritable)?;
        fs::remove_file(tmp.join("probe")).map_err(unwritable)?;
        Ok(staging)
    }

    /// Stages one file.
    pub fn write(&mut self, name: &str, contents: &[u8]) -> Result<(), CliError> {
        let path = self.tmp.join(name);
        let mut f = fs::File::create(&path)
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?;
        f.write_all(contents)
            .and_then(|_| f.sync_all())
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?;
        self.files.push(name.to_string());
        Ok(())
    }

    /// Moves the staged files into DIR, in the order written (write `summary.json` last).
    pub fn commit(mut self) -> Result<(), CliError> {
        for name in &self.files {
            fs::rename(self.tmp.join(name), self.dir.join(name)).map_err(|e| {
                CliError(format!(
                    "cannot move {name} into {}: {e}",
                    self.dir.display()
                ))
            })?;
        }
        self.committed = true;
        let _ = fs::remove_dir(&self.tmp);
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.tmp);
            if self.created_dir {
                // Only removes DIR if it is empty, i.e. it holds nothing of the user's.
                let _ = fs::remove_dir(&self.dir);
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
pub fn binary_csv(m: &RowMatrix) -> String {
    let mut s = String::with_capacity(m.n_rows() * m.n_cols() * 2);
    for r in m.rows() {
        for (j, v) in r.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            s.push(if *v != 0.0 { '1' } else { '0' });
        }
        s.push('\n');
    }
    s
}

/// One integer per line.
pub fn labels_csv(labels: &[usize]) -> String {
    let mut s = String::with_capacity(labels.len() * 4);
    for l in labels {
        let _ = writeln!(s, "{l}");
    }
    s
}
