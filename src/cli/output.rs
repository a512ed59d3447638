//! Writing results: files are staged in a hidden folder inside DIR and moved into place only
//! when all of them are written (`summary.json` last), so a failed run leaves nothing that
//! could be mistaken for a result.

use super::CliError;
use madbayes::{BinaryMatrix, RowMatrix};
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
    /// Sub-folders of DIR whose earlier pictures are removed on commit.
    replaced: Vec<String>,
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
        let path = self.tmp.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| CliError(format!("cannot write {}: {e}", parent.display())))?;
        }
        let mut f = fs::File::create(&path)
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?;
        f.write_all(contents)
            .and_then(|_| f.sync_all())
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?;
        self.files.push(name.to_string());
        Ok(())
    }

    /// On commit, first removes from DIR/`folder` the pictures an earlier run wrote there
    /// (`feature_*.png`, `cluster_*.png`, `base.png`), so that none of a previous result
    /// is left among the new ones. Other files are kept.
    pub fn replace_pictures_in(&mut self, folder: &str) {
        self.replaced.push(folder.to_string());
    }

    /// Moves the staged files into DIR, in the order written (write `summary.json` last).
    pub fn commit(mut self) -> Result<(), CliError> {
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
        self.committed = true;
        let _ = fs::remove_dir_all(&self.tmp);
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
pub fn binary_csv(m: &BinaryMatrix) -> String {
    let mut s = String::with_capacity(m.n_rows() * m.n_cols() * 2);
    for r in m.rows() {
        for (j, v) in r.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            s.push(if *v != 0 { '1' } else { '0' });
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
