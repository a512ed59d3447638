//! `madbayes._core`: the Rust side of the Python package.
//!
//! Every function here takes NumPy arrays and plain numbers, releases the GIL, runs the
//! library on a rayon pool of `n_jobs` threads and returns NumPy arrays (in a dict for the
//! fits). The estimators in `madbayes/*.py` validate the input the scikit-learn way and keep
//! the fitted state as NumPy arrays, so nothing here holds state between calls except the
//! thread pools.

use madbayes::clustering::{
    CollapsedDpMeans, DpMeans, KMeans, Mahalanobis, objective::sum_of_squares,
};
use madbayes::features::{
    BpMeans, CollapsedBpMeans, FeatureParams, FeatureSeeding, KFeatures, StepwiseKFeatures,
};
use madbayes::from_arrays;
use madbayes::ibp::{
    DEFAULT_CHAINS, DEFAULT_DRAWS, IbpDefaults, IbpKind, IbpSampler, IbpStart, Meibp,
};
use madbayes::restarts::Observer;
use madbayes::{BinaryMatrix, Fit, FitError, MatrixView, Model, ParamError, RowMatrix};
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod occ;

/// mimalloc instead of the system's allocator, as in the command line (its src/main.rs says
/// why). It serves the module's own Rust allocations; NumPy and Python keep theirs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// ---------------------------------------------------------------------------------------
// Input

/// A NumPy array as the library's input: a C-contiguous float64 array is borrowed in place
/// (no copy; NumPy's borrow flag keeps Rust code from writing to it while it is read), any
/// other float64 or float32 layout is converted once to an owned row-major matrix.
enum Input<'py> {
    Borrowed(PyReadonlyArray2<'py, f64>),
    Owned(RowMatrix),
}

impl Input<'_> {
    /// The rows, read in place.
    fn view(&self) -> MatrixView<'_> {
        match self {
            Input::Borrowed(r) => {
                let (n, d) = (r.shape()[0], r.shape()[1]);
                let data = r.as_slice().expect("checked C-contiguous when borrowed");
                MatrixView::new(data, n, d).expect("a NumPy array's length is n × d")
            }
            Input::Owned(m) => m.view(),
        }
    }

    /// An owned copy (for the small matrices passed beside the data: means, features).
    fn to_owned(&self) -> RowMatrix {
        match self {
            Input::Borrowed(_) => self.view().to_owned(),
            Input::Owned(m) => m.clone(),
        }
    }
}

/// The one place where a NumPy array becomes the library's input matrix (see [`Input`]).
fn to_matrix<'py>(x: &Bound<'py, PyAny>) -> PyResult<Input<'py>> {
    if let Ok(a) = x.cast::<PyArray2<f64>>() {
        let r = a.try_readonly()?;
        if r.is_c_contiguous() {
            return Ok(Input::Borrowed(r));
        }
        let (n, d) = (r.shape()[0], r.shape()[1]);
        let data = r.as_array().iter().copied().collect();
        return Ok(Input::Owned(RowMatrix::new(n, d, data)));
    }
    if let Ok(a) = x.cast::<PyArray2<f32>>() {
        let r = a.try_readonly()?;
        let (n, d) = (r.shape()[0], r.shape()[1]);
        let data = r.as_array().iter().map(|&v| f64::from(v)).collect();
        return Ok(Input::Owned(RowMatrix::new(n, d, data)));
    }
    Err(PyTypeError::new_err(
        "expected a 2-d NumPy array of float64 or float32",
    ))
}

fn to_matrices(c: &PyReadonlyArray3<'_, f64>) -> Vec<RowMatrix> {
    let a = c.as_array();
    a.outer_iter()
        .map(|m| RowMatrix::new(m.nrows(), m.ncols(), m.iter().copied().collect()))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Output

fn matrix<'py>(py: Python<'py>, m: &RowMatrix) -> PyResult<Bound<'py, PyArray2<f64>>> {
    PyArray1::from_slice(py, m.as_slice()).reshape([m.n_rows(), m.n_cols()])
}

fn binary<'py>(py: Python<'py>, z: &BinaryMatrix) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let mut v = Vec::with_capacity(z.n_rows() * z.n_cols());
    for row in z.rows() {
        v.extend(row.iter().map(|&b| f64::from(b)));
    }
    PyArray1::from_vec(py, v).reshape([z.n_rows(), z.n_cols()])
}

fn labels<'py>(py: Python<'py>, l: &[usize]) -> Bound<'py, PyArray1<i64>> {
    PyArray1::from_vec(py, l.iter().map(|&v| v as i64).collect())
}

fn floats<'py>(py: Python<'py>, v: impl IntoIterator<Item = f64>) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_vec(py, v.into_iter().collect())
}

fn ints<'py>(py: Python<'py>, v: impl IntoIterator<Item = usize>) -> Bound<'py, PyArray1<i64>> {
    PyArray1::from_vec(py, v.into_iter().map(|k| k as i64).collect())
}

fn fit_error(e: FitError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn param_error(e: ParamError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

// ---------------------------------------------------------------------------------------
// Threads

/// One rayon pool per size, built on first use and kept: building one costs more than a
/// small fit. A pool does not survive `fork()` (its threads stay in the parent), so the pools
/// are keyed by process id and a child builds its own; the parent's pool objects are leaked
/// in the child, never joined, since their threads do not exist there.
static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

/// The process id that built the pools, and the pools by size.
type Pools = (u32, HashMap<usize, Arc<rayon::ThreadPool>>);

fn pool(n_jobs: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    if n_jobs == 0 {
        return Err(PyValueError::new_err("n_jobs must be at least 1"));
    }
    let pid = std::process::id();
    let mut guard = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    if guard.as_ref().is_none_or(|(p, _)| *p != pid)
        && let Some((_, inherited)) = guard.replace((pid, HashMap::new()))
    {
        std::mem::forget(inherited);
    }
    let pools = &mut guard.as_mut().expect("set above").1;
    if let Some(p) = pools.get(&n_jobs) {
        return Ok(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n_jobs)
            .thread_name(|i| format!("madbayes-{i}"))
            .build()
            .map_err(|e| PyValueError::new_err(format!("cannot start {n_jobs} threads: {e}")))?,
    );
    pools.insert(n_jobs, p.clone());
    Ok(p)
}

/// Progress for `verbose`: counts finished runs (restarts) or sweeps and calls the Python
/// `callback(done, total, seconds)` at most every half second (and once at the end), taking
/// the GIL only then.
struct Progress {
    callback: Option<Py<PyAny>>,
    total: AtomicUsize,
    done: AtomicUsize,
    start: Instant,
    last: Mutex<Instant>,
}

impl Progress {
    fn new(callback: Option<Py<PyAny>>) -> Self {
        let now = Instant::now();
        Self {
            callback,
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            start: now,
            last: Mutex::new(now),
        }
    }
}

impl Observer for Progress {
    fn start(&self, runs: usize) {
        self.total.fetch_add(runs, Ordering::Relaxed);
    }

    fn run_finished(&self) {
        self.tick();
    }
}

impl Progress {
    /// One more unit done (a run, or a sweep of one chain); reports when it is time.
    fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let Some(cb) = &self.callback else { return };
        let total = self.total.load(Ordering::Relaxed);
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if done < total && last.elapsed() < Duration::from_millis(500) {
                return;
            }
            *last = Instant::now();
        }
        let seconds = self.start.elapsed().as_secs_f64();
        Python::attach(|py| {
            // Progress is best effort: an error raised by the callback is printed, not raised.
            if let Err(e) = cb.call1(py, (done, total, seconds)) {
                e.print(py);
            }
        });
    }
}

/// Runs `f` without the GIL on the pool of `n_jobs` threads; returns its result and the
/// seconds it took (the core's time, without any Python).
fn run<M: Send>(
    py: Python<'_>,
    n_jobs: usize,
    f: impl FnOnce() -> Result<M, FitError> + Send,
) -> PyResult<(M, f64)> {
    let pool = pool(n_jobs)?;
    let (result, seconds) = py.detach(|| {
        let t = Instant::now();
        let r = pool.install(f);
        (r, t.elapsed().as_secs_f64())
    });
    Ok((result.map_err(fit_error)?, seconds))
}

// ---------------------------------------------------------------------------------------
// Defaults

/// The library's defaults of every algorithm, read back from its builders, so that the
/// Python estimators' `__init__` defaults follow the library.
#[pyfunction]
fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    let km = KMeans::params(1).check().map_err(param_error)?;
    let d = PyDict::new(py);
    d.set_item("n_init", km.restarts())?;
    d.set_item("max_iter", km.max_iter())?;
    d.set_item("random_state", km.seed())?;
    out.set_item("kmeans", d)?;
    for (name, p) in [
        ("dp_means", DpMeans::params(1.0)),
        ("collapsed_dp_means", CollapsedDpMeans::params(1.0)),
    ] {
        let p = p.check().map_err(param_error)?;
        let d = PyDict::new(py);
        // No number: the library chooses by the data's size ("auto", as scikit-learn's).
        match p.restarts() {
            Some(r) => d.set_item("n_init", r)?,
            None => d.set_item("n_init", "auto")?,
        }
        d.set_item("max_iter", p.max_iter())?;
        d.set_item("random_state", p.seed())?;
        // What `refine=None` means: the library's default.
        d.set_item("refine", p.refine())?;
        d.set_item("max_clusters", p.k_max())?;
        out.set_item(name, d)?;
    }
    let m = Mahalanobis::params(1, 1.0).check().map_err(param_error)?;
    let d = PyDict::new(py);
    d.set_item("n_init", m.restarts())?;
    d.set_item("max_iter", m.max_iter())?;
    d.set_item("random_state", m.seed())?;
    d.set_item("reg", m.reg())?;
    out.set_item("mahalanobis", d)?;
    for (name, p) in [
        ("bp_means", BpMeans::params(1.0)),
        ("collapsed_bp_means", CollapsedBpMeans::params(1.0)),
        ("k_features", KFeatures::params(1)),
        ("stepwise_k_features", StepwiseKFeatures::params(1.0)),
    ] {
        let p = p.check().map_err(param_error)?;
        let d = PyDict::new(py);
        d.set_item("n_init", p.restarts())?;
        d.set_item("max_iter", p.max_iter())?;
        d.set_item("random_state", p.seed())?;
        // What `refine=None` and `seeding=None` mean: the library's defaults.
        d.set_item("refine", p.refines())?;
        d.set_item("grow_seeds", p.grows_seeds())?;
        d.set_item("seeding", p.seeding().name())?;
        out.set_item(name, d)?;
    }
    let p = IbpSampler::params(IbpKind::Accelerated)
        .check()
        .map_err(param_error)?;
    let d = PyDict::new(py);
    for (name, base) in [("tuned", IbpDefaults::TUNED), ("plain", IbpDefaults::PLAIN)] {
        let b = PyDict::new(py);
        b.set_item("alpha", base.alpha)?;
        b.set_item("sigma_x_fraction", base.sigma_x_fraction)?;
        b.set_item("sigma_a_fraction", base.sigma_a_fraction)?;
        b.set_item("n_sweeps", base.iterations)?;
        b.set_item("resample", base.resample)?;
        b.set_item("init", base.start.name())?;
        b.set_item("split_merge", base.split_merge)?;
        b.set_item("block", base.block)?;
        b.set_item("anneal", base.anneal)?;
        d.set_item(name, b)?;
    }
    d.set_item("n_sweeps", IbpDefaults::TUNED.iterations)?;
    d.set_item("n_chains", DEFAULT_CHAINS)?;
    d.set_item("n_draws", DEFAULT_DRAWS)?;
    d.set_item("k_new_max", p.k_new_max())?;
    d.set_item("random_state", p.seed())?;
    out.set_item("ibp", d)?;
    let p = Meibp::params(1).check().map_err(param_error)?;
    let d = PyDict::new(py);
    d.set_item("alpha", p.alpha())?;
    d.set_item("sigma_x", p.sigma_x())?;
    d.set_item("sigma_a", p.sigma_a())?;
    d.set_item("max_iter", p.max_iter())?;
    d.set_item("random_state", p.seed())?;
    out.set_item("meibp", d)?;
    Ok(out)
}

/// The penalty used when none is given: `madbayes::penalty::default_penalty`.
#[pyfunction]
fn default_penalty(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
    let x_in = to_matrix(x)?;
    let x = x_in.view();
    py.detach(|| madbayes::penalty::default_penalty(x))
        .map_err(fit_error)
}

/// The given penalty, or the library's default for `x` (computed without the GIL).
fn penalty_or_default(py: Python<'_>, penalty: Option<f64>, x: MatrixView<'_>) -> PyResult<f64> {
    match penalty {
        Some(p) => Ok(p),
        None => py
            .detach(|| madbayes::penalty::default_penalty(x))
            .map_err(fit_error),
    }
}

// ---------------------------------------------------------------------------------------
// Clustering

fn clustering_dict<'py>(
    py: Python<'py>,
    x: MatrixView<'_>,
    fit: &madbayes::clustering::Clustering,
    seconds: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("labels", labels(py, fit.labels()))?;
    d.set_item("centers", matrix(py, fit.means())?)?;
    d.set_item("objective", fit.objective())?;
    d.set_item("inertia", sum_of_squares(x, fit.labels(), fit.means()))?;
    d.set_item("trace", floats(py, fit.trace().iter().copied()))?;
    d.set_item("n_iter", fit.n_iter())?;
    d.set_item("converged", fit.converged())?;
    d.set_item(
        "run_objectives",
        floats(py, fit.run_objectives().iter().copied()),
    )?;
    d.set_item("best_run", fit.best_run())?;
    d.set_item("seconds", seconds)?;
    Ok(d)
}

/// K-means: `n_init` seeded runs, or one Lloyd run from `init` (K × D) when given.
#[pyfunction]
#[pyo3(signature = (x, n_clusters, n_init, max_iter, seed, n_jobs, progress=None, init=None))]
#[allow(clippy::too_many_arguments)]
fn fit_kmeans<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    n_clusters: usize,
    n_init: usize,
    max_iter: usize,
    seed: u64,
    n_jobs: usize,
    progress: Option<Py<PyAny>>,
    init: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let x_in = to_matrix(x)?;
    let x = x_in.view();
    let init = init
        .map(|m| to_matrix(m).map(|m| m.to_owned()))
        .transpose()?;
    if let Some(m) = &init
        && (m.n_rows(), m.n_cols()) != (n_clusters, x.n_cols())
    {
        return Err(PyValueError::new_err(format!(
            "init has shape ({}, {}) but n_clusters = {n_clusters} and X has {} features; \
             give an array of shape ({n_clusters}, {})",
            m.n_rows(),
            m.n_cols(),
            x.n_cols(),
            x.n_cols()
        )));
    }
    let p = KMeans::params(n_clusters)
        .restarts(n_init)
        .max_iter(max_iter)
        .seed(seed)
        .check()
        .map_err(param_error)?;
    let obs = Progress::new(progress);
    let (fit, secs) = run(py, n_jobs, || match &init {
        Some(m) => p.fit_from_means(x, m),
        None => p.fit_observed(x, &obs),
    })?;
    clustering_dict(py, x, &fit, secs)
}

/// DP-means or collapsed DP-means; `n_init` None lets the library choose by the data's size.
#[pyfunction]
#[pyo3(signature = (x, penalty, collapsed, max_clusters, n_init, max_iter, seed, refine, plain, n_jobs, progress=None))]
#[allow(clippy::too_many_arguments)]
fn fit_dp_means<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    penalty: Option<f64>,
    collapsed: bool,
    max_clusters: Option<usize>,
    n_init: Option<usize>,
    max_iter: usize,
    seed: u64,
    refine: Option<bool>,
    plain: bool,
    n_jobs: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let x_in = to_matrix(x)?;
    let x = x_in.view();
    let penalty = penalty_or_default(py, penalty, x)?;
    let mut builder = if collapsed {
        CollapsedDpMeans::params(penalty)
    } else {
        DpMeans::params(penalty)
    };
    // As the command line: `--plain` first, then an explicit `--refine` on top of it.
    if plain {
        builder = builder.plain();
    }
    if let Some(r) = refine {
        builder = builder.refine(r);
    }
    // None ("auto"): the library chooses by the data's size.
    if let Some(r) = n_init {
        builder = builder.restarts(r);
    }
    let p = builder
        .k_max(max_clusters)
        .max_iter(max_iter)
        .seed(seed)
        .check()
        .map_err(param_error)?;
    let obs = Progress::new(progress);
    let (fit, secs) = run(py, n_jobs, || p.fit_observed(x, &obs))?;
    let d = clustering_dict(py, x, &fit, secs)?;
    d.set_item("penalty", penalty)?;
    Ok(d)
}

/// Mahalanobis clustering with K fixed.
#[pyfunction]
#[pyo3(signature = (x, n_clusters, penalty, reg, n_init, max_iter, seed, n_jobs, progress=None))]
#[allow(clippy::too_many_arguments)]
fn fit_mahalanobis<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    n_clusters: usize,
    penalty: Option<f64>,
    reg: f64,
    n_init: usize,
    max_iter: usize,
    seed: u64,
    n_jobs: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let x_in = to_matrix(x)?;
    let x = x_in.view();
    let penalty = penalty
        .unwrap_or_else(|| madbayes::penalty::default_mahalanobis_penalty(x.n_rows(), n_clusters));
    let p = Mahalanobis::params(n_clusters, penalty)
        .reg(reg)
        .restarts(n_init)
        .max_iter(max_iter)
        .seed(seed)
        .check()
        .map_err(param_error)?;
    let obs = Progress::new(progress);
    let (fit, secs) = run(py, n_jobs, || p.fit_observed(x, &obs))?;
    let d = clustering_dict(py, x, fit.clustering(), secs)?;
    let (k, dim) = (fit.k(), x.n_cols());
    let mut cov = Vec::with_capacity(k * dim * dim);
    for c in fit.covariances() {
        cov.extend_from_slice(c.as_slice());
    }
    d.set_item(
        "covariances",
        PyArray1::from_vec(py, cov).reshape([k, dim, dim])?,
    )?;
    d.set_item("phi", fit.phi())?;
    d.set_item("penalty", penalty)?;
    Ok(d)
}

/// The nearest of `centers` to each row of `x`.
#[pyfunction]
fn nearest_means<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    n_jobs: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let (c, x_in) = (to_matrix(centers)?.to_owned(), to_matrix(x)?);
    let x = x_in.view();
    let (l, _) = run(py, n_jobs, || from_arrays::nearest_means(x, &c))?;
    Ok(labels(py, &l))
}

/// Squared Euclidean distances of the rows of `x` to `centers` (N × K).
#[pyfunction]
fn squared_distances<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    n_jobs: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (c, x_in) = (to_matrix(centers)?.to_owned(), to_matrix(x)?);
    let x = x_in.view();
    let (d, _) = run(py, n_jobs, || from_arrays::squared_distances(x, &c))?;
    matrix(py, &d)
}

/// Squared Mahalanobis distances of the rows of `x` to each cluster (N × K).
#[pyfunction]
fn mahalanobis_distances<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    covariances: PyReadonlyArray3<'py, f64>,
    x: &Bound<'py, PyAny>,
    n_jobs: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (c, x_in) = (to_matrix(centers)?.to_owned(), to_matrix(x)?);
    let x = x_in.view();
    let cov = to_matrices(&covariances);
    let (d, _) = run(py, n_jobs, || {
        from_arrays::mahalanobis_distances_to(x, &c, &cov)
    })?;
    matrix(py, &d)
}

// ---------------------------------------------------------------------------------------
// Features

/// BP-means, collapsed BP-means, K-features or stepwise K-features.
#[pyfunction]
#[pyo3(signature = (x, algo, penalty, k, n_init, max_iter, seed, refine, plain, seeding, n_jobs, progress=None))]
#[allow(clippy::too_many_arguments)]
fn fit_features<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    algo: &str,
    penalty: Option<f64>,
    k: Option<usize>,
    n_init: usize,
    max_iter: usize,
    seed: u64,
    refine: Option<bool>,
    plain: bool,
    seeding: Option<&str>,
    n_jobs: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let seeding = seeding.map(feature_seeding).transpose()?;
    let x_in = to_matrix(x)?;
    let x = x_in.view();
    let penalty = match algo {
        "k-features" => None,
        _ => Some(penalty_or_default(py, penalty, x)?),
    };
    let need_penalty =
        || penalty.ok_or_else(|| PyValueError::new_err(format!("{algo} takes no penalty")));
    let builder: FeatureParams = match algo {
        "bp-means" => BpMeans::params(need_penalty()?),
        "collapsed-bp-means" => CollapsedBpMeans::params(need_penalty()?),
        "k-features" => KFeatures::params(k.unwrap_or(0)),
        "stepwise-k-features" => StepwiseKFeatures::params(need_penalty()?),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown feature algorithm {other:?}"
            )));
        }
    };
    // In the command line's order: `--plain`, then `--seeding`, then an explicit `--refine`.
    let mut builder = builder.k(k);
    if plain {
        builder = builder.plain();
    }
    if let Some(s) = seeding {
        builder = builder.seeding(s);
    }
    if let Some(r) = refine {
        builder = builder.refine(r);
    }
    let p = builder
        .restarts(n_init)
        .max_iter(max_iter)
        .seed(seed)
        .check()
        .map_err(param_error)?;
    let obs = Progress::new(progress);
    let (fit, secs) = run(py, n_jobs, || p.fit_observed(x, &obs))?;
    let d = PyDict::new(py);
    d.set_item("z", binary(py, &fit.z())?)?;
    d.set_item("a", matrix(py, fit.means())?)?;
    d.set_item("objective", fit.objective())?;
    d.set_item("trace", floats(py, fit.trace().iter().copied()))?;
    d.set_item("n_iter", fit.n_iter())?;
    d.set_item("converged", fit.converged())?;
    d.set_item(
        "run_objectives",
        floats(py, fit.run_objectives().iter().copied()),
    )?;
    d.set_item("best_run", fit.best_run())?;
    d.set_item(
        "objective_by_k",
        floats(py, fit.objective_by_k().iter().copied()),
    )?;
    d.set_item("seconds", secs)?;
    d.set_item("penalty", penalty)?;
    Ok(d)
}

/// The library's seeding for its command-line name (`base`, `residual`).
fn feature_seeding(name: &str) -> PyResult<FeatureSeeding> {
    [FeatureSeeding::BaseFeature, FeatureSeeding::Residual]
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "seeding must be None, 'base' or 'residual', got {name:?}"
            ))
        })
}

/// The best binary z of each row of `x` given feature means `a`.
#[pyfunction]
fn best_features<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    n_jobs: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (a, x_in) = (to_matrix(a)?.to_owned(), to_matrix(x)?);
    let x = x_in.view();
    let (z, _) = run(py, n_jobs, || from_arrays::best_features(x, &a))?;
    binary(py, &z)
}

/// The most probable z of each row of `x` under the IBP methods' rule.
#[pyfunction]
fn most_probable_features<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    counts: PyReadonlyArray1<'py, i64>,
    n_train: usize,
    sigma_x: f64,
    x: &Bound<'py, PyAny>,
    n_jobs: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (a, x_in) = (to_matrix(a)?.to_owned(), to_matrix(x)?);
    let x = x_in.view();
    let counts: Vec<usize> = counts
        .as_array()
        .iter()
        .map(|&c| usize::try_from(c))
        .collect::<Result<_, _>>()
        .map_err(|_| PyValueError::new_err("feature counts must be non-negative"))?;
    let (z, _) = run(py, n_jobs, || {
        from_arrays::most_probable_features(x, &a, &counts, n_train, sigma_x)
    })?;
    binary(py, &z)
}

// ---------------------------------------------------------------------------------------
// IBP methods

/// An IBP Gibbs sampler: `n_chains` chains in parallel (chain c on stream c of the seed),
/// built in the command line's order (`--plain` first, then every option given).
#[pyfunction]
#[pyo3(signature = (x, method, n_chains, n_draws, alpha, sigma_x, sigma_a, n_sweeps, seed, window, k_new_max, resample, init, split_merge, block, anneal, plain, n_jobs, progress=None))]
#[allow(clippy::too_many_arguments)]
fn fit_ibp<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    method: &str,
    n_chains: usize,
    n_draws: usize,
    alpha: Option<f64>,
    sigma_x: Option<f64>,
    sigma_a: Option<f64>,
    n_sweeps: usize,
    seed: u64,
    window: Option<usize>,
    k_new_max: usize,
    resample: Option<bool>,
    init: Option<&str>,
    split_merge: Option<usize>,
    block: Option<usize>,
    anneal: Option<f64>,
    plain: bool,
    n_jobs: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let x_in = to_matrix(x)?;
    let x = x_in.view();
    let kind = match method {
        "accelerated" => IbpKind::Accelerated,
        "collapsed" => IbpKind::Collapsed,
        "semicollapsed" => IbpKind::SemiCollapsed,
        other => {
            return Err(PyValueError::new_err(format!(
                "method must be 'accelerated', 'collapsed' or 'semicollapsed', got {other:?}"
            )));
        }
    };
    let mut b = IbpSampler::params(kind).seed(seed);
    if plain {
        b = b.plain();
    }
    if let Some(a) = alpha {
        b = b.alpha(a);
    }
    b = b.iterations(n_sweeps).k_new_max(k_new_max);
    if let Some(r) = resample {
        b = b.resample_hyper(r);
    }
    if let Some(s) = sigma_x {
        b = b.sigma_x(s);
    }
    if let Some(s) = sigma_a {
        b = b.sigma_a(s);
    }
    if let Some(w) = window {
        b = b.window(w);
    }
    if let Some(n) = split_merge {
        b = b.split_merge(n);
    }
    if let Some(n) = block {
        b = b.block(n);
    }
    if let Some(f) = anneal {
        b = b.anneal(f);
    }
    match init {
        None => {}
        Some("empty") => b = b.start_from_prior(false),
        Some("prior") => b = b.start_from_prior(true),
        Some("mixed") => b = b.start(IbpStart::Mixed),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "init must be None, 'empty', 'prior' or 'mixed', got {other:?}"
            )));
        }
    }
    let p = b.check().map_err(param_error)?;
    let obs = Progress::new(progress);
    obs.start(n_chains * n_sweeps);
    let (post, secs) = run(py, n_jobs, || {
        p.fit_chains_observed(x, n_chains, n_draws, &|_, _, _| obs.tick())
    })?;
    let best = post.best_chain();
    let fit = &post.chains()[best];
    let r = fit.records();
    let d = PyDict::new(py);
    d.set_item("z", binary(py, &fit.z())?)?;
    d.set_item("a", matrix(py, fit.means())?)?;
    d.set_item("iteration", ints(py, r.iter().map(|r| r.iteration)))?;
    d.set_item("seconds", floats(py, r.iter().map(|r| r.seconds)))?;
    d.set_item("k", ints(py, r.iter().map(|r| r.k)))?;
    d.set_item("log_joint", floats(py, r.iter().map(|r| r.log_joint)))?;
    d.set_item("alpha_trace", floats(py, r.iter().map(|r| r.alpha)))?;
    d.set_item("sigma_x_trace", floats(py, r.iter().map(|r| r.sigma_x)))?;
    d.set_item("sigma_a_trace", floats(py, r.iter().map(|r| r.sigma_a)))?;
    d.set_item("alpha", fit.alpha())?;
    d.set_item("sigma_x", fit.sigma_x())?;
    d.set_item("sigma_a", fit.sigma_a())?;
    d.set_item("objective", fit.objective())?;
    d.set_item("n_iter", fit.n_iter())?;
    d.set_item("best_chain", best)?;
    // Every chain's log joint and K per sweep (n_chains × n_sweeps).
    let per_chain = |f: &dyn Fn(&madbayes::ibp::IbpTraceRecord) -> f64| {
        let rows: Vec<f64> = post
            .chains()
            .iter()
            .flat_map(|c| c.records().iter().map(f).collect::<Vec<_>>())
            .collect();
        PyArray1::from_vec(py, rows).reshape([n_chains, n_sweeps])
    };
    d.set_item("chains_log_joint", per_chain(&|r| r.log_joint)?)?;
    d.set_item("chains_k", per_chain(&|r| r.k as f64)?)?;
    let diag = PyDict::new(py);
    for (name, g) in post.diagnostics().named() {
        diag.set_item(name, (g.rhat, g.ess_bulk, g.ess_tail))?;
    }
    d.set_item("diagnostics", diag)?;
    d.set_item("chains_agree", post.agree())?;
    let (ks, probs): (Vec<usize>, Vec<f64>) = post.k_distribution().into_iter().unzip();
    d.set_item("k_values", ints(py, ks))?;
    d.set_item("k_probabilities", floats(py, probs))?;
    d.set_item("fit_seconds", secs)?;
    Ok(d)
}

/// MEIBP with at most `k_max` features.
#[pyfunction]
#[pyo3(signature = (x, k_max, alpha, sigma_x, sigma_a, max_iter, seed, n_jobs, progress=None))]
#[allow(clippy::too_many_arguments)]
fn fit_meibp<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    k_max: usize,
    alpha: f64,
    sigma_x: Option<f64>,
    sigma_a: Option<f64>,
    max_iter: usize,
    seed: u64,
    n_jobs: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let x_in = to_matrix(x)?;
    let x = x_in.view();
    let mut b = Meibp::params(k_max)
        .alpha(alpha)
        .max_iter(max_iter)
        .seed(seed);
    if let Some(s) = sigma_x {
        b = b.sigma_x(s);
    }
    if let Some(s) = sigma_a {
        b = b.sigma_a(s);
    }
    let p = b.check().map_err(param_error)?;
    let obs = Progress::new(progress);
    let (fit, secs) = run(py, n_jobs, || p.fit_observed(x, &obs))?;
    let (_, sa) = p.sigmas(x);
    let r = fit.records();
    let d = PyDict::new(py);
    d.set_item("z", binary(py, &fit.z())?)?;
    d.set_item("a", matrix(py, fit.means())?)?;
    d.set_item("iteration", ints(py, r.iter().map(|r| r.iteration)))?;
    d.set_item("seconds", floats(py, r.iter().map(|r| r.seconds)))?;
    d.set_item("k", ints(py, r.iter().map(|r| r.k)))?;
    d.set_item("evidence", floats(py, r.iter().map(|r| r.evidence)))?;
    d.set_item("changed_rows", ints(py, r.iter().map(|r| r.changed_rows)))?;
    d.set_item(
        "removed_features",
        ints(py, r.iter().map(|r| r.removed_features)),
    )?;
    d.set_item("sigma_x", fit.sigma_x())?;
    d.set_item("sigma_a", sa)?;
    d.set_item("objective", fit.objective())?;
    d.set_item("n_iter", fit.n_iter())?;
    d.set_item("converged", fit.converged())?;
    d.set_item("fit_seconds", secs)?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(default_penalty, m)?)?;
    m.add_function(wrap_pyfunction!(fit_kmeans, m)?)?;
    m.add_function(wrap_pyfunction!(fit_dp_means, m)?)?;
    m.add_function(wrap_pyfunction!(fit_mahalanobis, m)?)?;
    m.add_function(wrap_pyfunction!(nearest_means, m)?)?;
    m.add_function(wrap_pyfunction!(squared_distances, m)?)?;
    m.add_function(wrap_pyfunction!(mahalanobis_distances, m)?)?;
    m.add_function(wrap_pyfunction!(fit_features, m)?)?;
    m.add_function(wrap_pyfunction!(best_features, m)?)?;
    m.add_function(wrap_pyfunction!(most_probable_features, m)?)?;
    m.add_function(wrap_pyfunction!(fit_ibp, m)?)?;
    m.add_function(wrap_pyfunction!(fit_meibp, m)?)?;
    occ::register(m)?;
    Ok(())
}
