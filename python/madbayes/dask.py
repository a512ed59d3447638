"""DP-means and BP-means on a Dask cluster by optimistic concurrency control (OCC; Pan,
Gonzalez, Jegelka, Broderick & Jordan, NIPS 2013), over the Rust core's ``madbayes::occ``.

``madbayes.dask.DPMeans`` and ``madbayes.dask.BPMeans`` take a ``dask.array`` chunked by rows
(or a NumPy array, which is cut into row chunks and sent to the workers) and need a running
``distributed.Client`` (the default client is used)::

    from distributed import Client, LocalCluster
    import dask.array as da
    import madbayes.dask

    client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
    X = da.from_zarr(...)                       # or any dask array, chunked by rows
    dp = madbayes.dask.DPMeans(penalty=4.0, epoch_size=4096).fit(X)

How a fit runs. The row chunks are the OCC *blocks*: they are persisted on the workers for
the whole fit and never travel. Every iteration is a sequence of *epochs*: in epoch e each
chunk's worker step (Rust, GIL released) takes the chunk's rows ``e*b .. (e+1)*b`` (b =
``epoch_size``) against the centres or features of the epoch's start, which are sent with
the task; it keeps the rows' assignments on the worker and returns only the rows that
propose a new cluster or feature. The client validates the proposals serially, chunk by
chunk in chunk order (Rust), and the accepted ones join the state of the next epoch. At the
end of the iteration each chunk's statistics (counts and sums; ZᵀZ and ZᵀX: K x D numbers)
come back and are added in chunk order, and the new means or features follow.

Determinism. The result depends only on the data, the chunking, ``epoch_size`` and the
parameters: every decision is made by the same Rust function on the same inputs in the same
order whatever the number of workers, where the tasks run or when they finish, and it equals
the library's in-process runner (``madbayes::occ::OccDpMeans`` / ``OccBpMeans`` with the same
block ranges and epoch size) bit for bit. A worker lost mid-fit costs time only: Dask
recomputes its chunks from the array's graph and its tasks from their inputs.

Speculation. An epoch that accepts nothing leaves the state unchanged, so the next epoch's
worker steps may start before its validation: after each epoch without an acceptance the
driver keeps twice as many epochs in flight (1, 2, 4, ...), and after an acceptance it
drops the speculative ones and starts again from one; the window carries over to the next
iteration. Once nothing is accepted any more an iteration costs three round trips instead
of one per epoch; the answer is the same either way.
"""

import math
import numbers
import sys
import time

import dask.array as da
import numpy as np
from distributed import default_client, futures_of
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _core
from ._base import DEFAULTS, _count, _optional_count, _positive
from .cluster import _Clustering
from .features import _FeatureModel

__all__ = ["DPMeans", "BPMeans"]

#: Rows each chunk processes per epoch unless ``epoch_size`` says otherwise. Larger than the
#: in-process runner's 256 because every epoch that accepts something is a round trip to the
#: client; see the class documentation.
DEFAULT_EPOCH_SIZE = 4096


# ---------------------------------------------------------------------------------------
# Tasks run on the workers (module-level, so that workers import them by name)


def _contiguous(block):
    return np.ascontiguousarray(block, dtype=np.float64)


def _check(block, index, start):
    """Checks a chunk as every fit checks its data; the error names the chunk."""
    if block.shape[0] == 0:
        return
    try:
        _core.occ_check_rows(block)
    except ValueError as e:
        raise ValueError(
            f"chunk {index} of X (rows {start} to {start + block.shape[0] - 1}; the row "
            f"below counts from the chunk's first row): {e}"
        ) from None


def _dp_start(block, index, start):
    _check(block, index, start)
    return _core.occ_cluster_stats(block, np.zeros(block.shape[0], dtype=np.int64), 1)


def _dp_step(block, s, e, centres, penalty, k_max):
    return _core.occ_dp_propose(block[s:e], centres, penalty, k_max)


def _dp_proposals(step):
    return step[1]


def _dp_finish(block, steps, resolved, k):
    """The chunk's labels over the whole iteration (each proposer's from the validation)
    and its cluster statistics."""
    parts = []
    for step, res in zip(steps, resolved):
        labels = step[0].copy()
        labels[labels < 0] = res
        parts.append(labels)
    labels = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return labels, _core.occ_cluster_stats(block, labels, k)


def _second(pair):
    return pair[1]


def _dp_relabel(finished, new_index):
    return new_index[finished[0]]


def _dp_score(block, labels, previous, means):
    changed = previous is None or not np.array_equal(labels, previous)
    return _core.occ_dp_sum_of_squares(block, labels, means), changed


def _bp_start(block, index, start):
    _check(block, index, start)
    return _core.occ_feature_stats(block, np.ones((block.shape[0], 1), dtype=np.uint8), 1)


def _bp_ones(block):
    return np.ones((block.shape[0], 1), dtype=np.uint8)


def _bp_step(block, z_start, s, e, a, penalty, k_max):
    rows = block[s:e]
    z0 = z_start[s:e]
    z, proposes = _core.occ_bp_propose(rows, z0, a, penalty, k_max)
    return z, proposes, np.ascontiguousarray(rows[proposes]), np.ascontiguousarray(z0[proposes])


def _bp_proposals(step):
    return step[2], step[3]


def _bp_finish(block, steps, resolved, k):
    """The chunk's Z over the whole iteration (K columns) and its ZᵀZ, ZᵀX."""
    z = np.zeros((block.shape[0], k), dtype=np.uint8)
    row = 0
    for step, res in zip(steps, resolved):
        zw, proposes = step[0], step[1]
        n = zw.shape[0]
        window = z[row : row + n]
        window[:, : zw.shape[1]] = zw
        if res.shape[0]:
            fill = np.zeros((res.shape[0], k), dtype=np.uint8)
            fill[:, : res.shape[1]] = res
            window[proposes] = fill
        row += n
    return z, _core.occ_feature_stats(block, z, k)


def _bp_compact(finished, keep):
    return np.ascontiguousarray(finished[0][:, keep])


def _bp_score(block, z, previous, a):
    changed = previous.shape != z.shape or not np.array_equal(z, previous)
    return _core.occ_bp_sum_of_squares(block, z, a), changed


# ---------------------------------------------------------------------------------------
# The driver


def _client():
    try:
        return default_client()
    except ValueError:
        raise ValueError(
            "madbayes.dask needs a running Dask client: start one with "
            "distributed.Client() (or Client(LocalCluster(...)), Client('scheduler:8786'))"
        ) from None


def _windows(lengths, b, e):
    """Each chunk's local rows of epoch ``e``."""
    return [(min(e * b, n), min(e * b + b, n)) for n in lengths]


class _Occ:
    """What DP-means and BP-means share: input, persisted chunks, epochs with speculation,
    statistics in chunk order."""

    def _occ_params(self):
        if self.n_init != 1:
            raise ValueError(
                f"n_init={self.n_init!r} does not apply to OCC: a fit is one deterministic pass "
                f"over the chunks in order; use n_init=1 (restarts: madbayes.{self._local})"
            )
        if self.refine is not None and self.refine is not False:
            raise ValueError(
                f"refine={self.refine!r} does not apply to OCC (it has no refinement); use "
                f"refine=None or False (refinement: madbayes.{self._local})"
            )
        if self.plain is not True:
            raise ValueError(
                f"plain={self.plain!r} does not apply to OCC: it runs the paper's algorithm "
                f"(the plain sweep) only; use plain=True (the library's defaults: "
                f"madbayes.{self._local})"
            )
        if getattr(self, "seeding", None) is not None:
            raise ValueError(
                f"seeding={self.seeding!r} does not apply to OCC BP-means: it starts from "
                f"one feature at the mean of X; use seeding=None (seedings: "
                f"madbayes.{self._local})"
            )
        if self.random_state is not None:
            raise ValueError(
                f"random_state={self.random_state!r} does not apply to OCC: a fit makes no "
                "random choice (it depends only on the chunking and epoch_size); use None"
            )
        self._jobs()
        return (
            _count("max_iter", self.max_iter),
            _count("epoch_size", self.epoch_size),
            _optional_count(self._cap_name, getattr(self, self._cap_name)),
        )

    def _dask_input(self, X):
        """X as a float64 dask array chunked by rows only, with ``n_features_in_`` set."""
        if isinstance(X, da.Array):
            if X.ndim != 2:
                raise ValueError(f"expected a 2-d dask array, got {X.ndim} dimensions")
            if any(math.isnan(c) for c in X.chunks[0]) or math.isnan(X.shape[0]):
                raise ValueError(
                    "X has chunks of unknown size; call X.compute_chunk_sizes() first"
                )
            if not (
                np.issubdtype(X.dtype, np.floating) or np.issubdtype(X.dtype, np.integer)
            ):
                raise ValueError(f"X must hold numbers, got dtype {X.dtype}")
            if X.shape[0] < 1 or X.shape[1] < 1:
                raise ValueError(f"X has shape {X.shape}; it needs at least one row and column")
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            self.n_features_in_ = X.shape[1]
            if len(X.chunks[1]) > 1:
                X = X.rechunk({1: -1})
        else:
            Xn = validate_data(self, X, dtype=[np.float64, np.float32], reset=True)
            rows = "auto" if self.chunk_rows is None else _count("chunk_rows", self.chunk_rows)
            X = da.from_array(Xn, chunks=(rows, -1))
        return X.astype(np.float64).map_blocks(_contiguous, dtype=np.float64)

    def _fit_dask(self, X):
        max_iter, b, k_max = self._occ_params()
        penalty = _positive("penalty", self.penalty)
        X = self._dask_input(X)
        client = _client()
        t0 = time.perf_counter()
        X = client.persist(X)
        by_key = {f.key: f for f in futures_of(X)}
        blocks = [by_key[k[0]] for k in X.__dask_keys__()]
        lengths = list(X.chunks[0])
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int).tolist()
        n, d = X.shape
        run = _Run(self, client, blocks, lengths, d, b, k_max)
        first = client.gather(
            [
                client.submit(self._start_task, blk, i, s, pure=False)
                for i, (blk, s) in enumerate(zip(blocks, starts))
            ]
        )
        if penalty is None:
            penalty = _data_penalty(X, n)
        run.penalty = penalty
        self._fit_loop(run, first, max_iter)
        self.penalty_ = float(penalty)
        self.fit_seconds_ = time.perf_counter() - t0
        self.n_chunks_ = len(blocks)
        self.epoch_size_ = b
        del run, blocks, by_key, X
        return self

    def _iteration_done(self, it, k, scores, log, penalty_term, t, record):
        """Records iteration `it` in `record` (trace, seconds, proposals and acceptances per
        epoch), reports it and calls the test hook. `scores` are the chunks' (sum of squares,
        changed) in chunk order and `log` the epochs' (proposals, accepted); the objective is
        the summed squares plus `penalty_term`. Returns the summed squares and whether no
        chunk changed."""
        inertia = 0.0
        for cost, _ in scores:
            inertia += cost
        objective = inertia + penalty_term
        trace, seconds, props, accs = record
        trace.append(objective)
        seconds.append(time.perf_counter() - t)
        props.append([p for p, _ in log])
        accs.append([q for _, q in log])
        self._report(it, k, sum(props[-1]), sum(accs[-1]), objective, seconds[-1])
        hook = getattr(self, "_iteration_hook", None)
        if hook is not None:
            hook(it)
        return inertia, not any(changed for _, changed in scores)

    def _report(self, it, k, props, acc, objective, seconds):
        if self.verbose:
            print(
                f"[{type(self).__module__}.{type(self).__name__}] iteration {it}: K = {k}, "
                f"{props} proposals, {acc} accepted, objective {objective:.6g}, "
                f"{seconds:.2f} s",
                file=sys.stderr,
                flush=True,
            )

    def _occ_store(self, trace, props, acc, seconds, n_iter, converged):
        objective = trace[-1]
        self.iteration_seconds_ = np.asarray(seconds, dtype=np.float64)
        self.objective_ = float(objective)
        self.trace_ = np.asarray(trace, dtype=np.float64)
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self.run_objectives_ = np.array([objective])
        self.best_run_ = 0
        width = max(len(p) for p in props)
        self.occ_proposals_ = np.array([p + [0] * (width - len(p)) for p in props])
        self.occ_accepted_ = np.array([a + [0] * (width - len(a)) for a in acc])


def _data_penalty(X, n):
    """The library's default penalty rule (``madbayes::penalty``), computed by Dask: the
    mean squared distance of the rows to their mean (equal to the in-memory estimators'
    ``penalty_`` up to rounding)."""
    mean = X.mean(axis=0)
    spread, norms = da.compute(((X - mean) ** 2).sum(), (X**2).sum())
    p = (spread if spread > 0 else norms) / n
    return float(p) if p > 0 and np.isfinite(p) else 1.0


class _Run:
    """One fit's state on the client: the persisted chunks and the epochs' bookkeeping."""

    def __init__(self, est, client, blocks, lengths, d, b, k_max):
        self.est, self.client, self.blocks, self.lengths = est, client, blocks, lengths
        self.d, self.b, self.k_max = d, b, k_max
        self.n_epochs = max(-(-n // b) for n in lengths)
        self.penalty = None
        # Epochs in flight; kept from one iteration to the next, so that once the state
        # has settled a whole iteration's worker steps start at once.
        self.window = 1

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def epochs(self, submit_epoch, empty, validate):
        """Runs the iteration's epochs: ``submit_epoch(e)`` submits epoch e's worker steps
        against the current state and returns (steps, proposal futures) per chunk (None for
        a chunk with no rows in that epoch); ``validate(e, proposals)`` validates them in
        chunk order, updates the state and returns how many it accepted. Returns every
        epoch's steps per chunk and the (proposals, accepted) counts per epoch."""
        steps = [[] for _ in self.blocks]
        log = []
        pending = {}
        window = self.window
        for e in range(self.n_epochs):
            for f in range(e, min(self.n_epochs, e + window)):
                if f not in pending:
                    pending[f] = submit_epoch(f)
            epoch = pending.pop(e)
            futures = [p for _, p in epoch if p is not None]
            got = iter(self.client.gather(futures))
            proposals = [empty() if p is None else next(got) for _, p in epoch]
            n_props, accepted = validate(e, proposals)
            log.append((n_props, accepted))
            for c, (s, _) in enumerate(epoch):
                if s is not None:
                    steps[c].append(s)
            if accepted:
                stale = [f for ep in pending.values() for pair in ep for f in pair if f is not None]
                self.client.cancel(stale)
                pending.clear()
                window = 1
            else:
                window = min(2 * window, self.n_epochs)
        self.window = window
        return steps, log


def _gather_rows(run, futures):
    """The chunks' per-row results (labels or Z), gathered and stacked in chunk order."""
    return np.concatenate(run.client.gather(futures))


class DPMeans(_Occ, _Clustering):
    """DP-means on a Dask cluster by optimistic concurrency control (OCC DP-means, Pan et
    al. 2013): the objective of :class:`madbayes.DPMeans`, sum of squares plus (K - 1) P,
    with the rows visited chunk by chunk in epochs; see :mod:`madbayes.dask`.

    It starts from one cluster at the mean of X; each iteration visits every row once (a
    row farther than sqrt(P) from every centre of its epoch's start proposes itself; the
    validation accepts a proposal unless it lies within sqrt(P) of one accepted earlier in
    the epoch) and then sets every centre to its rows' mean, dropping empty clusters; it
    stops when no label changes. The result equals serial DP-means on a particular order of
    the rows, and the library's in-process runner ``OccDpMeans`` bit for bit.

    Parameters
    ----------
    penalty : float or None, default=None
        P = lambda^2. None takes P from the data by the rule of :class:`madbayes.DPMeans`
        (the mean squared distance of the rows to their mean), computed by Dask.
    max_clusters : int or None, default from the library
        A cap on K; at the cap no row proposes and a proposal joins its nearest centre.
    n_init : 1
        Only 1: an OCC fit is one pass in chunk order (restarts: :class:`madbayes.DPMeans`).
    max_iter : int, default from the library
        Iteration cap.
    refine : None
        Only None or False: OCC has no refinement.
    plain : True
        Only True: OCC runs the paper's algorithm (the sweep of
        ``madbayes.DPMeans(plain=True)``), without the library's refinements.
    random_state : None
        Only None: an OCC fit makes no random choice.
    epoch_size : int, default=4096
        b, the rows each chunk processes per epoch. Smaller b means fewer proposals per
        epoch and more round trips; the answer depends on it (and on the chunking), never on
        the number of workers.
    chunk_rows : int or None, default=None
        For NumPy (or list, DataFrame) input: rows per chunk when X is sent to the workers
        (None: dask's automatic chunking). A dask array keeps its own row chunks.
    n_jobs : int or None, default=None
        Threads of ``predict``, ``transform`` and ``score`` on NumPy input (the fit's
        parallelism is the cluster's workers).
    verbose : bool, default=False
        Print K, proposals and objective per iteration to stderr.

    Attributes
    ----------
    labels_ (NumPy), cluster_centers_, n_clusters_, inertia_ (the sum of squares),
    objective_, penalty_, n_iter_, converged_, trace_, run_objectives_, best_run_ (0),
    fit_seconds_ (wall time of the fit), iteration_seconds_ (wall time of each
    iteration), n_chunks_, epoch_size_, and per iteration and epoch the OCC counts
    occ_proposals_ and occ_accepted_ (n_iter_ x epochs).
    """

    _local = "DPMeans"
    _cap_name = "max_clusters"
    _start_task = staticmethod(_dp_start)

    def __init__(
        self,
        penalty=None,
        *,
        max_clusters=DEFAULTS["dp_means"]["max_clusters"],
        n_init=1,
        max_iter=DEFAULTS["dp_means"]["max_iter"],
        refine=None,
        plain=True,
        random_state=None,
        epoch_size=DEFAULT_EPOCH_SIZE,
        chunk_rows=None,
        n_jobs=None,
        verbose=False,
    ):
        self.penalty = penalty
        self.max_clusters = max_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.refine = refine
        self.plain = plain
        self.random_state = random_state
        self.epoch_size = epoch_size
        self.chunk_rows = chunk_rows
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        """Fits on X: a dask array chunked by rows, or a NumPy array (sent in chunks)."""
        return self._fit_dask(X)

    def _fit_loop(self, run, first, max_iter):
        centres, _, _ = _core.occ_cluster_means(first)
        labels = [None] * len(run.blocks)
        trace, props, accs, seconds = [], [], [], []
        converged, it = False, 0
        b, pen, k_max = run.b, run.penalty, run.k_max
        state = {"centres": centres}
        while it < max_iter:
            it += 1
            t = time.perf_counter()
            resolved = [[] for _ in run.blocks]

            def submit_epoch(e):
                out = []
                for blk, (s, end) in zip(run.blocks, _windows(run.lengths, b, e)):
                    if s == end:
                        out.append((None, None))
                        continue
                    step = run.submit(_dp_step, blk, s, end, state["centres"], pen, k_max)
                    out.append((step, run.submit(_dp_proposals, step)))
                return out

            def validate(e, proposals):
                accepted, per_chunk = _core.occ_dp_validate(
                    proposals, state["centres"], pen, k_max
                )
                for c, (s, end) in enumerate(_windows(run.lengths, b, e)):
                    if s < end:
                        resolved[c].append(per_chunk[c])
                if accepted.shape[0]:
                    state["centres"] = np.vstack([state["centres"], accepted])
                return sum(p.shape[0] for p in proposals), accepted.shape[0]

            steps, log = run.epochs(
                submit_epoch, lambda: np.zeros((0, run.d)), validate
            )
            k = state["centres"].shape[0]
            finished = [
                run.submit(_dp_finish, blk, st, res, k)
                for blk, st, res in zip(run.blocks, steps, resolved)
            ]
            del steps
            stats = run.client.gather([run.submit(_second, f) for f in finished])
            means, new_index, _ = _core.occ_cluster_means(stats)
            new_labels = [run.submit(_dp_relabel, f, new_index) for f in finished]
            del finished
            scores = run.client.gather(
                [
                    run.submit(_dp_score, blk, lab, prev, means)
                    for blk, lab, prev in zip(run.blocks, new_labels, labels)
                ]
            )
            labels = new_labels
            state["centres"] = means
            inertia, unchanged = self._iteration_done(
                it, means.shape[0], scores, log, (means.shape[0] - 1.0) * pen, t,
                (trace, seconds, props, accs),
            )
            if unchanged:
                converged = True
                break
        self.labels_ = _gather_rows(run, labels).astype(np.int64)
        self.cluster_centers_ = state["centres"]
        self.n_clusters_ = self.cluster_centers_.shape[0]
        self.inertia_ = float(inertia)
        self._occ_store(trace, props, accs, seconds, it, converged)

    def predict(self, X):
        """The nearest centre of each row of X (a dask array gives a dask array)."""
        if isinstance(X, da.Array):
            check_is_fitted(self)
            c = self.cluster_centers_
            if X.ndim != 2 or X.shape[1] != c.shape[1]:
                raise ValueError(
                    f"X has shape {X.shape}, but {type(self).__name__} is expecting "
                    f"{c.shape[1]} features as input."
                )
            if len(X.chunks[1]) > 1:
                X = X.rechunk({1: -1})
            return X.map_blocks(
                lambda blk: _core.nearest_means(c, _contiguous(blk), 1),
                dtype=np.int64,
                drop_axis=1,
            )
        return super().predict(X)


class BPMeans(_Occ, _FeatureModel):
    """BP-means on a Dask cluster by optimistic concurrency control (OCC BP-means, Pan et
    al. 2013): the objective of :class:`madbayes.BPMeans`, ||X - Z A||^2 + K P, with the
    rows visited chunk by chunk in epochs; see :mod:`madbayes.dask`.

    It starts from one feature at the mean of X held by every row; each iteration updates
    each row's z by one pass of greedy flips against the features of its epoch's start (a
    row whose residual still exceeds P proposes it as a new feature; the validation first
    lets the row take the features accepted earlier in the epoch) and then solves
    A = (ZᵀZ)⁻¹ZᵀX from the statistics added in chunk order, dropping empty and duplicate
    features; it stops when Z stops changing. The result equals the library's in-process
    runner ``OccBpMeans`` bit for bit.

    Parameters
    ----------
    penalty : float or None, default=None
        P = lambda^2. None: the rule of :class:`madbayes.BPMeans`, computed by Dask.
    max_features : int or None, default=None
        A cap on K.
    seeding : None
        Only None: OCC BP-means starts from one feature at the mean of X.
    n_init, max_iter, refine, plain, random_state, epoch_size, chunk_rows, n_jobs, verbose :
        as for :class:`madbayes.dask.DPMeans`.

    Attributes
    ----------
    Z_ (NumPy, float64), components_ (A), n_features_, objective_, inertia_
    (||X - Z A||^2), penalty_, n_iter_, converged_, trace_, run_objectives_, best_run_,
    fit_seconds_, iteration_seconds_, n_chunks_, epoch_size_, occ_proposals_,
    occ_accepted_.
    """

    _local = "BPMeans"
    _cap_name = "max_features"
    _start_task = staticmethod(_bp_start)

    def __init__(
        self,
        penalty=None,
        *,
        max_features=None,
        n_init=1,
        max_iter=DEFAULTS["bp_means"]["max_iter"],
        refine=None,
        plain=True,
        seeding=None,
        random_state=None,
        epoch_size=DEFAULT_EPOCH_SIZE,
        chunk_rows=None,
        n_jobs=None,
        verbose=False,
    ):
        self.penalty = penalty
        self.max_features = max_features
        self.n_init = n_init
        self.max_iter = max_iter
        self.refine = refine
        self.plain = plain
        self.seeding = seeding
        self.random_state = random_state
        self.epoch_size = epoch_size
        self.chunk_rows = chunk_rows
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        """Fits on X: a dask array chunked by rows, or a NumPy array (sent in chunks)."""
        return self._fit_dask(X)

    def _fit_loop(self, run, first, max_iter):
        _, a = _core.occ_feature_solve(first)
        z = [run.submit(_bp_ones, blk) for blk in run.blocks]
        trace, props, accs, seconds = [], [], [], []
        converged, it = False, 0
        b, pen, k_max = run.b, run.penalty, run.k_max
        state = {"a": a}
        while it < max_iter:
            it += 1
            t = time.perf_counter()
            resolved = [[] for _ in run.blocks]
            k_start = state["a"].shape[0]  # the columns of every chunk's z at the start

            def submit_epoch(e):
                out = []
                for blk, zc, (s, end) in zip(run.blocks, z, _windows(run.lengths, b, e)):
                    if s == end:
                        out.append((None, None))
                        continue
                    step = run.submit(_bp_step, blk, zc, s, end, state["a"], pen, k_max)
                    out.append((step, run.submit(_bp_proposals, step)))
                return out

            def empty():
                return np.zeros((0, run.d)), np.zeros((0, k_start), dtype=np.uint8)

            def validate(e, proposals):
                rows = [r for r, _ in proposals]
                z0 = [np.ascontiguousarray(q) for _, q in proposals]
                accepted, per_chunk = _core.occ_bp_validate(rows, z0, state["a"], pen, k_max)
                for c, (s, end) in enumerate(_windows(run.lengths, b, e)):
                    if s < end:
                        resolved[c].append(per_chunk[c])
                if accepted.shape[0]:
                    state["a"] = np.vstack([state["a"], accepted])
                return sum(r.shape[0] for r in rows), accepted.shape[0]

            steps, log = run.epochs(submit_epoch, empty, validate)
            k = state["a"].shape[0]
            finished = [
                run.submit(_bp_finish, blk, st, res, k)
                for blk, st, res in zip(run.blocks, steps, resolved)
            ]
            del steps
            stats = run.client.gather([run.submit(_second, f) for f in finished])
            keep, a = _core.occ_feature_solve(stats)
            new_z = [run.submit(_bp_compact, f, keep) for f in finished]
            del finished
            scores = run.client.gather(
                [
                    run.submit(_bp_score, blk, zc, prev, a)
                    for blk, zc, prev in zip(run.blocks, new_z, z)
                ]
            )
            z = new_z
            state["a"] = a
            inertia, unchanged = self._iteration_done(
                it, a.shape[0], scores, log, a.shape[0] * pen, t, (trace, seconds, props, accs)
            )
            if unchanged:
                converged = True
                break
        self.Z_ = _gather_rows(run, z).astype(np.float64)
        self.components_ = state["a"]
        self.n_features_ = self.components_.shape[0]
        self.inertia_ = float(inertia)
        self._occ_store(trace, props, accs, seconds, it, converged)
