"""madbayes.dask on a LocalCluster of worker processes: the Dask fit equals the library's
in-process OCC runner bit for bit (labels, Z, means, objective, trace, proposals per epoch),
does not depend on the number of workers, and survives a worker killed mid-fit."""

import os
import signal

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import madbayes  # noqa: E402
import madbayes.dask  # noqa: E402
from madbayes import _core  # noqa: E402


def _cluster(n_workers):
    return distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
    )


@pytest.fixture(scope="module")
def client():
    with _cluster(2) as cluster, distributed.Client(cluster) as c:
        yield c


def _mixture(n, d, k, seed, spread=6.0):
    rng = np.random.default_rng(seed)
    centres = spread * rng.standard_normal((k, d))
    return centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))


def _grid(n, seed):
    """Integer points, so that squared distances hit the penalty 4 exactly."""
    return np.random.default_rng(seed).integers(0, 7, size=(n, 2)).astype(np.float64)


def _features(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, size=(4, 12)).astype(np.float64) * 2.0
    z = (rng.random((n, 4)) < 0.4).astype(np.float64)
    return z @ a + 0.2 * rng.standard_normal((n, 12))


def _ranges(chunks):
    starts = np.concatenate([[0], np.cumsum(chunks)[:-1]])
    return [(int(s), int(s + c)) for s, c in zip(starts, chunks)]


def _runner_dp(X, penalty, chunks, b, k_max=None, max_iter=100):
    return _core.occ_fit_dp_means(X, penalty, _ranges(chunks), b, k_max, max_iter)


def _runner_bp(X, penalty, chunks, b, k_max=None, max_iter=100):
    return _core.occ_fit_bp_means(X, penalty, _ranges(chunks), b, k_max, max_iter)


def _proposal_table(r):
    width = max(len(p) for p in r["proposals"])
    return np.array([p + [0] * (width - len(p)) for p in r["proposals"]])


def _same_dp(est, r):
    np.testing.assert_array_equal(est.labels_, r["labels"])
    np.testing.assert_array_equal(est.cluster_centers_, r["centers"])
    assert est.objective_ == r["objective"]
    np.testing.assert_array_equal(est.trace_, r["trace"])
    assert (est.n_iter_, est.converged_) == (r["n_iter"], r["converged"])
    np.testing.assert_array_equal(est.occ_proposals_, _proposal_table(r))


def _same_bp(est, r):
    np.testing.assert_array_equal(est.Z_, r["z"])
    np.testing.assert_array_equal(est.components_, r["a"])
    assert est.objective_ == r["objective"]
    np.testing.assert_array_equal(est.trace_, r["trace"])
    assert (est.n_iter_, est.converged_) == (r["n_iter"], r["converged"])
    np.testing.assert_array_equal(est.occ_proposals_, _proposal_table(r))


@pytest.mark.parametrize(
    "data, penalty, chunk_rows, b, k_max, max_iter",
    [
        (_mixture(2000, 3, 6, 1), 25.0, 450, 64, None, 6),  # uneven last chunk, 8 epochs
        (_grid(600, 2), 4.0, 200, 16, None, 100),  # ties at exactly the penalty; converges
        (_mixture(900, 2, 8, 3), 8.0, 300, 32, 5, 6),  # the cap on K
    ],
)
def test_dp_means_equals_the_in_process_runner(
    client, data, penalty, chunk_rows, b, k_max, max_iter
):
    est = madbayes.dask.DPMeans(
        penalty, epoch_size=b, chunk_rows=chunk_rows, max_clusters=k_max, max_iter=max_iter
    ).fit(data)
    n = len(data)
    chunks = [min(chunk_rows, n - s) for s in range(0, n, chunk_rows)]
    r = _runner_dp(data, penalty, chunks, b, k_max, max_iter)
    _same_dp(est, r)
    assert est.occ_proposals_.sum() > est.occ_accepted_.sum() > 0  # conflicts were resolved
    assert est.n_chunks_ == len(chunks)
    # The fitted attributes agree with each other.
    d2 = ((data - est.cluster_centers_[est.labels_]) ** 2).sum()
    assert est.inertia_ == pytest.approx(d2, rel=1e-12)
    nearest = _core.nearest_means(est.cluster_centers_, data, 1)
    np.testing.assert_array_equal(est.predict(data), nearest)


def test_bp_means_equals_the_in_process_runner(client):
    X = _features(800, 4)
    est = madbayes.dask.BPMeans(4.0, epoch_size=24, chunk_rows=250, max_iter=6).fit(X)
    r = _runner_bp(X, 4.0, [250, 250, 250, 50], 24, max_iter=6)
    _same_bp(est, r)
    assert est.n_features_ >= 4 and est.occ_proposals_.sum() > est.occ_accepted_.sum()
    assert est.inertia_ == pytest.approx(((X - est.Z_ @ est.components_) ** 2).sum(), rel=1e-12)


def test_a_dask_array_keeps_its_chunks_and_one_worker_gives_the_same_answer(client):
    X = _mixture(1500, 4, 5, 7)
    Xd = da.from_array(X, chunks=((400, 600, 500), (2, 2)))  # columns are joined
    two = madbayes.dask.DPMeans(25.0, epoch_size=50, max_iter=5).fit(Xd)
    _same_dp(two, _runner_dp(X, 25.0, [400, 600, 500], 50, max_iter=5))
    F = _features(600, 8)
    Fd = da.from_array(F, chunks=(200, -1))
    bp_two = madbayes.dask.BPMeans(4.0, epoch_size=20, max_iter=5).fit(Fd)
    with _cluster(1) as cluster, distributed.Client(cluster, set_as_default=True) as one_client:
        assert len(one_client.scheduler_info()["workers"]) == 1
        one = madbayes.dask.DPMeans(25.0, epoch_size=50, max_iter=5).fit(Xd)
        bp_one = madbayes.dask.BPMeans(4.0, epoch_size=20, max_iter=5).fit(Fd)
    _same_dp(one, _runner_dp(X, 25.0, [400, 600, 500], 50, max_iter=5))
    np.testing.assert_array_equal(bp_one.Z_, bp_two.Z_)
    np.testing.assert_array_equal(bp_one.components_, bp_two.components_)
    assert bp_one.objective_ == bp_two.objective_
    # predict on a dask array is lazy and equals predict on NumPy.
    np.testing.assert_array_equal(two.predict(Xd).compute(), two.predict(X))


@pytest.mark.parametrize("algo", ["dp-means", "bp-means"])
def test_a_worker_killed_mid_fit_changes_nothing(algo):
    if algo == "dp-means":
        X = _mixture(3000, 3, 6, 11)
        reference = _runner_dp(X, 25.0, [750] * 4, 40, max_iter=6)
        est = madbayes.dask.DPMeans(25.0, epoch_size=40, chunk_rows=750, max_iter=6)
        same = _same_dp
    else:
        X = _features(1200, 5)
        reference = _runner_bp(X, 4.0, [300] * 4, 24, max_iter=6)
        est = madbayes.dask.BPMeans(4.0, epoch_size=24, chunk_rows=300, max_iter=6)
        same = _same_bp
    assert reference["n_iter"] >= 3
    with _cluster(2) as cluster, distributed.Client(cluster) as c:
        killed = []

        def kill(iteration):
            if iteration == 1:
                pids = c.run(os.getpid)
                # The worker holding the most of X's persisted chunks (and the labels or Z
                # computed there).
                chunks = {
                    w: sum(isinstance(k, tuple) and k[0].startswith("_contiguous") for k in keys)
                    for w, keys in c.has_what().items()
                }
                victim = max(chunks, key=chunks.get)
                os.kill(pids[victim], signal.SIGKILL)
                killed.append(chunks[victim])

        est._iteration_hook = kill
        est.fit(X)
        # The kill took chunks with it, before the fit ended.
        assert killed and killed[0] >= 1 and est.n_iter_ > 1
    same(est, reference)


def _child_fit(X):
    _core.occ_check_rows(X)  # 80 000 values: more than one of check_data's parallel chunks
    return _runner_dp(X, 25.0, [20_000, 20_000], 2_000)["labels"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() exists on POSIX only")
def test_the_occ_pieces_work_in_a_forked_child():
    import multiprocessing as mp

    X = _mixture(40_000, 2, 3, 1)
    _core.default_penalty(X)  # runs on rayon's global pool, whose threads a child lacks
    parent = _child_fit(X)
    with mp.get_context("fork").Pool(1) as pool:
        child = pool.apply_async(_child_fit, (X,)).get(timeout=60)
    np.testing.assert_array_equal(child, parent)


def test_the_default_penalty_follows_the_library_rule(client):
    X = _mixture(500, 3, 4, 5)
    est = madbayes.dask.DPMeans(epoch_size=64, chunk_rows=200).fit(X)
    assert est.penalty_ == pytest.approx(_core.default_penalty(X), rel=1e-12)
    _same_dp(est, _runner_dp(X, est.penalty_, [200, 200, 100], 64))


def test_bad_input_and_parameters_are_refused(client):
    X = _mixture(300, 2, 3, 6)
    X[250, 1] = np.nan
    with pytest.raises(ValueError, match="NaN|finite"):
        madbayes.dask.DPMeans(1.0, chunk_rows=100).fit(X)
    Xd = da.from_array(X, chunks=(100, -1))
    with pytest.raises(ValueError, match="chunk 2 of X"):
        madbayes.dask.DPMeans(1.0).fit(Xd)
    ok = _mixture(50, 2, 2, 1)
    for params in [
        {"n_init": 3},
        {"refine": True},
        {"random_state": 0},
        {"epoch_size": 0},
        {"max_iter": 0},
        {"penalty": -1.0},
    ]:
        with pytest.raises(ValueError):
            madbayes.dask.DPMeans(**params).fit(ok)
        with pytest.raises(ValueError):
            madbayes.dask.BPMeans(**params).fit(ok)
    with pytest.raises(ValueError, match="plain=False does not apply"):
        madbayes.dask.DPMeans(plain=False).fit(ok)
    with pytest.raises(ValueError, match="seeding='residual' does not apply"):
        madbayes.dask.BPMeans(seeding="residual").fit(ok)


def test_the_parameters_are_those_of_the_in_memory_estimators_plus_occ():
    for dask_cls, local_cls in [
        (madbayes.dask.DPMeans, madbayes.DPMeans),
        (madbayes.dask.BPMeans, madbayes.BPMeans),
    ]:
        local = set(local_cls().get_params())
        extra = set(dask_cls().get_params()) - local
        assert local <= set(dask_cls().get_params())
        assert extra == {"epoch_size", "chunk_rows"}
