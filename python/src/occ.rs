//! The OCC pieces (`madbayes::occ`) for the Dask driver `madbayes.dask`: the worker step,
//! the serial validator and the sufficient statistics of DP-means and BP-means, each a plain
//! function of NumPy arrays that releases the GIL while it computes, plus the library's
//! in-process runners (`occ_fit_dp_means`, `occ_fit_bp_means`) that the tests compare the Dask
//! runs with.
//!
//! A C-contiguous float64 block is read in place (no copy); any other layout is copied once.
//! Binary z arrays are `uint8`, labels `int64` (−1: the row proposed itself).

use madbayes::linalg::{axpy, sq_dist, sq_norm};
use madbayes::occ::{
    ClusterStats, FeatureStats, OccBpMeans, OccDpMeans, OccTrace, bp_propose, bp_validate,
    dp_propose, dp_validate,
};
use madbayes::{MatrixView, Model, RowMatrix};
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::borrow::Cow;

use crate::{fit_error, floats, labels, matrix, param_error};

type Floats2<'py> = Bound<'py, PyArray2<f64>>;
type Ints1<'py> = Bound<'py, PyArray1<i64>>;
type Bits1<'py> = Bound<'py, PyArray1<bool>>;
type Bytes2<'py> = Bound<'py, PyArray2<u8>>;

/// The values of a 2-d array, row-major: borrowed when the array is C-contiguous, else one
/// copy.
fn values<'a, T: numpy::Element + Copy>(a: &'a PyReadonlyArray2<'_, T>) -> Cow<'a, [T]> {
    match a.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(a.as_array().iter().copied().collect()),
    }
}

fn shape<T: numpy::Element>(a: &PyReadonlyArray2<'_, T>) -> (usize, usize) {
    (a.shape()[0], a.shape()[1])
}

/// A 2-d float64 array as the library's borrowed matrix (with the storage it borrows from).
struct Rows<'a> {
    data: Cow<'a, [f64]>,
    n: usize,
    d: usize,
}

impl<'a> Rows<'a> {
    fn of(a: &'a PyReadonlyArray2<'_, f64>) -> Self {
        let (n, d) = shape(a);
        Self {
            data: values(a),
            n,
            d,
        }
    }
    fn view(&self) -> MatrixView<'_> {
        MatrixView::new(&self.data, self.n, self.d).expect("the array's own shape")
    }
}

/// The rows of a binary `uint8` array, each as a `Vec<u8>` (the library's per-row z).
fn z_rows(z: &PyReadonlyArray2<'_, u8>) -> Vec<Vec<u8>> {
    let (n, k) = shape(z);
    let v = values(z);
    (0..n).map(|i| v[i * k..(i + 1) * k].to_vec()).collect()
}

/// Rows of z of any lengths as an `n × k` `uint8` array, zero-padded.
fn z_array<'py>(py: Python<'py>, z: &[Vec<u8>], k: usize) -> PyResult<Bytes2<'py>> {
    let mut v = vec![0u8; z.len() * k];
    for (i, zi) in z.iter().enumerate() {
        v[i * k..i * k + zi.len()].copy_from_slice(zi);
    }
    PyArray1::from_vec(py, v).reshape([z.len(), k])
}

/// Runs `f` without the GIL on the package's one-thread rayon pool (`crate::pool`, rebuilt
/// in a forked child, so that the library's parallel loops never wait on a global pool whose
/// threads stayed in the parent). One thread: Dask runs one task per worker thread.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let pool = crate::pool(1)?;
    Ok(py.detach(|| pool.install(f)))
}

fn same_width(what: &str, d: usize, expected: usize) -> PyResult<()> {
    if d != expected {
        return Err(PyValueError::new_err(format!(
            "{what} has {d} columns but the data have {expected}; give arrays of the same width"
        )));
    }
    Ok(())
}

fn checked_labels(l: &PyReadonlyArray1<'_, i64>, k: usize) -> PyResult<Vec<usize>> {
    l.as_array()
        .iter()
        .map(|&c| match usize::try_from(c) {
            Ok(c) if c < k => Ok(c),
            _ => Err(PyValueError::new_err(format!(
                "label {c} is not a cluster index below K = {k}"
            ))),
        })
        .collect()
}

/// Checks one block of rows as every fit does (not empty, finite, within the scale band);
/// the error names the row within the block.
#[pyfunction]
fn occ_check_rows(py: Python<'_>, rows: PyReadonlyArray2<'_, f64>) -> PyResult<()> {
    let r = Rows::of(&rows);
    detached(py, || madbayes::error::check_data(r.view()))?.map_err(fit_error)
}

// ---------------------------------------------------------------------------------------
// DP-means

/// The DP-means worker step: each row's nearest centre, or −1 where the row proposes itself
/// (its squared distance to every centre is greater than the penalty), and the proposing
/// rows.
#[pyfunction]
#[pyo3(signature = (rows, centres, penalty, k_max=None))]
fn occ_dp_propose<'py>(
    py: Python<'py>,
    rows: PyReadonlyArray2<'py, f64>,
    centres: PyReadonlyArray2<'py, f64>,
    penalty: f64,
    k_max: Option<usize>,
) -> PyResult<(Ints1<'py>, Floats2<'py>)> {
    let (r, c) = (Rows::of(&rows), Rows::of(&centres));
    same_width("centres", c.d, r.d)?;
    let s = detached(py, || {
        dp_propose(r.view(), c.view(), penalty, k_max.unwrap_or(usize::MAX))
    })?;
    let l: Vec<i64> = s
        .labels
        .iter()
        .map(|l| l.map_or(-1, |k| k as i64))
        .collect();
    Ok((PyArray1::from_vec(py, l), matrix(py, &s.proposals)?))
}

/// The DP-means validation of one epoch: the proposals of each block in block order, against
/// the centres of the epoch's start. Returns the accepted centres and, per block, the centre
/// each proposal joined.
#[pyfunction]
#[pyo3(signature = (proposals, centres, penalty, k_max=None))]
fn occ_dp_validate<'py>(
    py: Python<'py>,
    proposals: Vec<PyReadonlyArray2<'py, f64>>,
    centres: PyReadonlyArray2<'py, f64>,
    penalty: f64,
    k_max: Option<usize>,
) -> PyResult<(Floats2<'py>, Vec<Ints1<'py>>)> {
    let c = Rows::of(&centres);
    let blocks: Vec<Rows<'_>> = proposals.iter().map(Rows::of).collect();
    for b in &blocks {
        same_width("a block of proposals", b.d, c.d)?;
    }
    let v = detached(py, || {
        let views: Vec<MatrixView<'_>> = blocks.iter().map(Rows::view).collect();
        dp_validate(&views, c.view(), penalty, k_max.unwrap_or(usize::MAX))
    })?;
    let per_block = v.labels.iter().map(|l| labels(py, l)).collect();
    Ok((matrix(py, &v.accepted)?, per_block))
}

/// The counts and sums of the `k` clusters of one block's rows (summed in row order).
#[pyfunction]
fn occ_cluster_stats<'py>(
    py: Python<'py>,
    rows: PyReadonlyArray2<'py, f64>,
    labels: PyReadonlyArray1<'py, i64>,
    k: usize,
) -> PyResult<(Ints1<'py>, Floats2<'py>)> {
    let r = Rows::of(&rows);
    let l = checked_labels(&labels, k)?;
    if l.len() != r.n {
        return Err(PyValueError::new_err(format!(
            "{} labels for {} rows; give one label per row",
            l.len(),
            r.n
        )));
    }
    let s = detached(py, || ClusterStats::of_rows(r.view(), &l, k))?;
    let counts = PyArray1::from_vec(py, s.counts.iter().map(|&c| c as i64).collect());
    Ok((counts, matrix(py, &s.sums)?))
}

/// The blocks' cluster statistics (counts, sums), added in the order given, and from them the
/// means of the non-empty clusters with each old index's new one (−1: the cluster was empty
/// and is dropped). Returns (means, map, counts).
#[pyfunction]
fn occ_cluster_means<'py>(
    py: Python<'py>,
    parts: Vec<(PyReadonlyArray1<'py, i64>, PyReadonlyArray2<'py, f64>)>,
) -> PyResult<(Floats2<'py>, Ints1<'py>, Ints1<'py>)> {
    let Some((c0, s0)) = parts.first() else {
        return Err(PyValueError::new_err(
            "no statistics to add; give at least one block's",
        ));
    };
    let (k, d) = shape(s0);
    if c0.len() != k {
        return Err(PyValueError::new_err("counts and sums disagree in K"));
    }
    let mut total = ClusterStats {
        counts: vec![0; k],
        sums: RowMatrix::zeros(k, d),
    };
    for (c, s) in &parts {
        if shape(s) != (k, d) || c.len() != k {
            return Err(PyValueError::new_err(format!(
                "the blocks' statistics differ in shape: ({}, {}) where ({k}, {d}) was expected",
                shape(s).0,
                shape(s).1
            )));
        }
        let counts = c
            .as_array()
            .iter()
            .map(|&v| u64::try_from(v).map_err(|_| PyValueError::new_err("a negative count")))
            .collect::<PyResult<Vec<u64>>>()?;
        let sums = RowMatrix::new(k, d, values(s).into_owned());
        total.add(&ClusterStats { counts, sums });
    }
    let (means, map) = total.means();
    let map: Vec<i64> = map.iter().map(|m| m.map_or(-1, |v| v as i64)).collect();
    let counts: Vec<i64> = total.counts.iter().map(|&c| c as i64).collect();
    Ok((
        matrix(py, &means)?,
        PyArray1::from_vec(py, map),
        PyArray1::from_vec(py, counts),
    ))
}

/// Σ ‖x − mean of its cluster‖² over one block's rows, in row order (as the in-process
/// runner sums a block).
#[pyfunction]
fn occ_dp_sum_of_squares(
    py: Python<'_>,
    rows: PyReadonlyArray2<'_, f64>,
    labels: PyReadonlyArray1<'_, i64>,
    means: PyReadonlyArray2<'_, f64>,
) -> PyResult<f64> {
    let (r, m) = (Rows::of(&rows), Rows::of(&means));
    same_width("means", m.d, r.d)?;
    let l = checked_labels(&labels, m.n)?;
    if l.len() != r.n {
        return Err(PyValueError::new_err("one label per row is needed"));
    }
    Ok(py.detach(|| {
        let (x, c) = (r.view(), m.view());
        (0..r.n)
            .map(|i| sq_dist(x.row(i), c.row(l[i])))
            .sum::<f64>()
    }))
}

// ---------------------------------------------------------------------------------------
// BP-means

/// The BP-means worker step: each row's z after one pass of flips from `z_start` (its z at
/// the start of the iteration, zero beyond its columns) against the epoch's features `a`,
/// as an `n × K` uint8 array, and which rows propose (residual greater than the penalty).
#[pyfunction]
#[pyo3(signature = (rows, z_start, a, penalty, k_max=None))]
fn occ_bp_propose<'py>(
    py: Python<'py>,
    rows: PyReadonlyArray2<'py, f64>,
    z_start: PyReadonlyArray2<'py, u8>,
    a: PyReadonlyArray2<'py, f64>,
    penalty: f64,
    k_max: Option<usize>,
) -> PyResult<(Bytes2<'py>, Bits1<'py>)> {
    let (r, f) = (Rows::of(&rows), Rows::of(&a));
    same_width("a", f.d, r.d)?;
    let (zn, zk) = shape(&z_start);
    if zn != r.n || zk > f.n {
        return Err(PyValueError::new_err(format!(
            "z_start has shape ({zn}, {zk}); give one row per data row, with at most K = {} columns",
            f.n
        )));
    }
    let z0 = z_rows(&z_start);
    let s = detached(py, || {
        bp_propose(
            r.view(),
            &z0,
            f.view(),
            penalty,
            k_max.unwrap_or(usize::MAX),
        )
    })?;
    Ok((z_array(py, &s.z, f.n)?, PyArray1::from_vec(py, s.proposes)))
}

/// The BP-means validation of one epoch: per block in block order, its proposing rows and
/// their z at the start of the iteration, against the epoch's features `a`. Returns the
/// accepted features and, per block, each proposing row's z over all features (uint8,
/// `n_b × (K + accepted)`).
#[pyfunction]
#[pyo3(signature = (rows, z_start, a, penalty, k_max=None))]
fn occ_bp_validate<'py>(
    py: Python<'py>,
    rows: Vec<PyReadonlyArray2<'py, f64>>,
    z_start: Vec<PyReadonlyArray2<'py, u8>>,
    a: PyReadonlyArray2<'py, f64>,
    penalty: f64,
    k_max: Option<usize>,
) -> PyResult<(Floats2<'py>, Vec<Bytes2<'py>>)> {
    if rows.len() != z_start.len() {
        return Err(PyValueError::new_err(format!(
            "{} blocks of rows but {} of z; give one z array per block",
            rows.len(),
            z_start.len()
        )));
    }
    let f = Rows::of(&a);
    let blocks: Vec<Rows<'_>> = rows.iter().map(Rows::of).collect();
    let mut zs = Vec::with_capacity(blocks.len());
    for (b, z) in blocks.iter().zip(&z_start) {
        same_width("a block of proposing rows", b.d, f.d)?;
        let (zn, zk) = shape(z);
        if zn != b.n || zk > f.n {
            return Err(PyValueError::new_err(format!(
                "a block's z_start has shape ({zn}, {zk}) for {} rows and K = {}",
                b.n, f.n
            )));
        }
        zs.push(z_rows(z));
    }
    let v = detached(py, || {
        let views: Vec<MatrixView<'_>> = blocks.iter().map(Rows::view).collect();
        let refs: Vec<&[Vec<u8>]> = zs.iter().map(Vec::as_slice).collect();
        bp_validate(
            &views,
            &refs,
            f.view(),
            penalty,
            k_max.unwrap_or(usize::MAX),
        )
    })?;
    let k = f.n + v.accepted.n_rows();
    let per_block =
        v.z.iter()
            .map(|z| z_array(py, z, k))
            .collect::<PyResult<Vec<_>>>()?;
    Ok((matrix(py, &v.accepted)?, per_block))
}

/// ZᵀZ (`k × k`) and ZᵀX (`k × D`) of one block's rows and their z (uint8, at most `k`
/// columns, zero beyond).
#[pyfunction]
fn occ_feature_stats<'py>(
    py: Python<'py>,
    rows: PyReadonlyArray2<'py, f64>,
    z: PyReadonlyArray2<'py, u8>,
    k: usize,
) -> PyResult<(Floats2<'py>, Floats2<'py>)> {
    let r = Rows::of(&rows);
    let (zn, zk) = shape(&z);
    if zn != r.n || zk > k {
        return Err(PyValueError::new_err(format!(
            "z has shape ({zn}, {zk}) for {} rows and K = {k}",
            r.n
        )));
    }
    let zr = z_rows(&z);
    let s = detached(py, || FeatureStats::of_rows(r.view(), &zr, k))?;
    let ztz = RowMatrix::new(k, k, s.ztz);
    Ok((matrix(py, &ztz)?, matrix(py, &s.ztx)?))
}

/// The blocks' feature statistics (ZᵀZ, ZᵀX), added in the order given; returns the columns
/// kept (non-empty, first of identical ones) and A = (ZᵀZ)⁻¹ZᵀX over them.
#[pyfunction]
fn occ_feature_solve<'py>(
    py: Python<'py>,
    parts: Vec<(PyReadonlyArray2<'py, f64>, PyReadonlyArray2<'py, f64>)>,
) -> PyResult<(Bits1<'py>, Floats2<'py>)> {
    let Some((_, x0)) = parts.first() else {
        return Err(PyValueError::new_err(
            "no statistics to add; give at least one block's",
        ));
    };
    let (k, d) = shape(x0);
    let mut total = FeatureStats {
        ztz: vec![0.0; k * k],
        ztx: RowMatrix::zeros(k, d),
    };
    for (g, x) in &parts {
        if shape(g) != (k, k) || shape(x) != (k, d) {
            return Err(PyValueError::new_err(format!(
                "the blocks' statistics differ in shape from ({k}, {k}) and ({k}, {d})"
            )));
        }
        total.add(&FeatureStats {
            ztz: values(g).into_owned(),
            ztx: RowMatrix::new(k, d, values(x).into_owned()),
        });
    }
    let (keep, a) = detached(py, || total.solve())?;
    Ok((PyArray1::from_vec(py, keep), matrix(py, &a)?))
}

/// ‖X − Z A‖² over one block's rows, in row order (each row's residual r = x − Σ_{z_k = 1}
/// a_k subtracted feature by feature, as the library's BP-means objective does).
#[pyfunction]
fn occ_bp_sum_of_squares(
    py: Python<'_>,
    rows: PyReadonlyArray2<'_, f64>,
    z: PyReadonlyArray2<'_, u8>,
    a: PyReadonlyArray2<'_, f64>,
) -> PyResult<f64> {
    let (r, f) = (Rows::of(&rows), Rows::of(&a));
    same_width("a", f.d, r.d)?;
    let (zn, zk) = shape(&z);
    if zn != r.n || zk != f.n {
        return Err(PyValueError::new_err(format!(
            "z has shape ({zn}, {zk}) for {} rows and K = {}",
            r.n, f.n
        )));
    }
    let zv = values(&z);
    Ok(py.detach(|| {
        let (x, a) = (r.view(), f.view());
        let mut res = vec![0.0; r.d];
        (0..r.n)
            .map(|i| {
                res.copy_from_slice(x.row(i));
                for (k, &on) in zv[i * zk..(i + 1) * zk].iter().enumerate() {
                    if on != 0 {
                        axpy(-1.0, a.row(k), &mut res);
                    }
                }
                sq_norm(&res)
            })
            .sum::<f64>()
    }))
}

// ---------------------------------------------------------------------------------------
// The in-process runners (what the Dask driver must reproduce)

fn ranges(blocks: &[(usize, usize)]) -> Vec<std::ops::Range<usize>> {
    blocks.iter().map(|&(s, e)| s..e).collect()
}

fn trace_items(d: &Bound<'_, PyDict>, occ: &OccTrace) -> PyResult<()> {
    let props: Vec<Vec<usize>> = occ
        .epochs
        .iter()
        .map(|it| it.iter().map(|e| e.0).collect())
        .collect();
    let acc: Vec<Vec<usize>> = occ
        .epochs
        .iter()
        .map(|it| it.iter().map(|e| e.1).collect())
        .collect();
    d.set_item("proposals", props)?;
    d.set_item("accepted", acc)?;
    Ok(())
}

/// `OccDpMeans` on `x` with the given row blocks `[(start, end), ...]` and epoch size, in this
/// process (the reference the Dask driver is tested against).
#[pyfunction]
#[pyo3(signature = (x, penalty, blocks, epoch_size, k_max, max_iter))]
fn occ_fit_dp_means<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    penalty: f64,
    blocks: Vec<(usize, usize)>,
    epoch_size: usize,
    k_max: Option<usize>,
    max_iter: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let r = Rows::of(&x);
    let p = OccDpMeans::params(penalty)
        .block_ranges(ranges(&blocks))
        .epoch_size(epoch_size)
        .k_max(k_max)
        .max_iter(max_iter)
        .check()
        .map_err(param_error)?;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let (fit, _) = crate::run(py, threads, || p.fit_traced(r.view()))?;
    let d = PyDict::new(py);
    d.set_item("labels", labels(py, fit.model.labels()))?;
    d.set_item("centers", matrix(py, fit.model.means())?)?;
    d.set_item("objective", fit.model.objective())?;
    d.set_item("trace", floats(py, fit.model.trace().iter().copied()))?;
    d.set_item("n_iter", fit.model.n_iter())?;
    d.set_item("converged", fit.model.converged())?;
    trace_items(&d, &fit.occ)?;
    Ok(d)
}

/// `OccBpMeans` on `x` with the given row blocks and epoch size, in this process.
#[pyfunction]
#[pyo3(signature = (x, penalty, blocks, epoch_size, k_max, max_iter))]
fn occ_fit_bp_means<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    penalty: f64,
    blocks: Vec<(usize, usize)>,
    epoch_size: usize,
    k_max: Option<usize>,
    max_iter: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let r = Rows::of(&x);
    let p = OccBpMeans::params(penalty)
        .block_ranges(ranges(&blocks))
        .epoch_size(epoch_size)
        .k_max(k_max)
        .max_iter(max_iter)
        .check()
        .map_err(param_error)?;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let (fit, _) = crate::run(py, threads, || p.fit_traced(r.view()))?;
    let z = fit.model.z();
    let rows: Vec<Vec<u8>> = z.rows().map(<[u8]>::to_vec).collect();
    let d = PyDict::new(py);
    d.set_item("z", z_array(py, &rows, z.n_cols())?)?;
    d.set_item("a", matrix(py, fit.model.means())?)?;
    d.set_item("objective", fit.model.objective())?;
    d.set_item("trace", floats(py, fit.model.trace().iter().copied()))?;
    d.set_item("n_iter", fit.model.n_iter())?;
    d.set_item("converged", fit.model.converged())?;
    trace_items(&d, &fit.occ)?;
    Ok(d)
}

/// Registers the OCC functions in `madbayes._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(occ_check_rows, m)?)?;
    m.add_function(wrap_pyfunction!(occ_dp_propose, m)?)?;
    m.add_function(wrap_pyfunction!(occ_dp_validate, m)?)?;
    m.add_function(wrap_pyfunction!(occ_cluster_stats, m)?)?;
    m.add_function(wrap_pyfunction!(occ_cluster_means, m)?)?;
    m.add_function(wrap_pyfunction!(occ_dp_sum_of_squares, m)?)?;
    m.add_function(wrap_pyfunction!(occ_bp_propose, m)?)?;
    m.add_function(wrap_pyfunction!(occ_bp_validate, m)?)?;
    m.add_function(wrap_pyfunction!(occ_feature_stats, m)?)?;
    m.add_function(wrap_pyfunction!(occ_feature_solve, m)?)?;
    m.add_function(wrap_pyfunction!(occ_bp_sum_of_squares, m)?)?;
    m.add_function(wrap_pyfunction!(occ_fit_dp_means, m)?)?;
    m.add_function(wrap_pyfunction!(occ_fit_bp_means, m)?)?;
    Ok(())
}
