"""Inputs as users hand them, bad input, and the parameters' behaviour."""

import os
import pickle
import threading
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import madbayes
from madbayes import _core

CLUSTERERS = [
    madbayes.KMeans(n_clusters=3),
    madbayes.DPMeans(),
    madbayes.CollapsedDPMeans(),
    madbayes.MahalanobisClustering(n_clusters=3),
]
TRANSFORMERS = [
    madbayes.BPMeans(),
    madbayes.CollapsedBPMeans(),
    madbayes.KFeatures(n_features=4),
    madbayes.StepwiseKFeatures(),
    madbayes.IBPSampler(n_sweeps=30),
    madbayes.IBPSampler(method="collapsed", n_sweeps=30),
    madbayes.IBPSampler(method="semicollapsed", n_sweeps=30),
    madbayes.MEIBP(max_features=6),
]
ALL = CLUSTERERS + TRANSFORMERS


def name(est):
    return f"{type(est).__name__}-{getattr(est, 'method', '')}"


def outputs(est, X):
    """What a fitted estimator says about X: its predictions and fitted arrays."""
    if hasattr(est, "labels_"):
        return [est.labels_, est.cluster_centers_, est.predict(X), est.transform(X)]
    return [est.Z_, est.components_, est.transform(X)]


def assert_same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("est", ALL, ids=name)
def test_layouts_and_dtypes_give_the_same_fit(est, blobs):
    X = blobs[0]
    ref = outputs(clone(est).fit(X), X)
    for variant in [np.asfortranarray(X), X.tolist(), pd.DataFrame(X)]:
        assert_same(outputs(clone(est).fit(variant), X), ref)
    ro = X.copy()
    ro.setflags(write=False)
    assert_same(outputs(clone(est).fit(ro), X), ref)
    # float32 data are the float64 values of the float32 numbers.
    x32 = X.astype(np.float32)
    assert_same(outputs(clone(est).fit(x32), X), outputs(clone(est).fit(x32.astype(np.float64)), X))


def test_memory_mapped_input(tmp_path, blobs):
    X = blobs[0]
    path = tmp_path / "x.npy"
    np.save(path, X)
    mm = np.load(path, mmap_mode="r")
    assert not mm.flags.writeable
    est = madbayes.DPMeans().fit(mm)
    np.testing.assert_array_equal(est.labels_, madbayes.DPMeans().fit(X).labels_)
    np.testing.assert_array_equal(est.predict(mm), est.labels_)


def test_dataframe_feature_names(blobs):
    X = pd.DataFrame(blobs[0], columns=["a", "b", "c", "d"])
    est = madbayes.BPMeans().fit(X)
    assert list(est.feature_names_in_) == ["a", "b", "c", "d"]
    assert est.n_features_in_ == 4
    with pytest.raises(ValueError, match="feature names should match"):
        est.transform(X.rename(columns={"a": "z"}))


@pytest.mark.parametrize("est", ALL, ids=name)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused(est, bad, blobs):
    X = blobs[0].copy()
    X[3, 1] = bad
    for given in [X, X.tolist(), pd.DataFrame(X)]:
        with pytest.raises(ValueError, match="NaN|inf"):
            clone(est).fit(given)
    fitted = clone(est).fit(blobs[0])
    with pytest.raises(ValueError, match="NaN|inf"):
        fitted.transform(X)
    # Arrays take the fast path: the Rust side names the place of the bad value.
    with pytest.raises(ValueError, match="at row 3, column 1"):
        clone(est).fit(X)


@pytest.mark.parametrize("est", ALL, ids=name)
def test_wrong_width_at_predict(est, blobs):
    fitted = clone(est).fit(blobs[0])
    with pytest.raises(ValueError, match="4 features"):
        fitted.transform(blobs[0][:, :3])
    with pytest.raises(ValueError):
        fitted.transform(blobs[0][0])  # 1-d


@pytest.mark.parametrize(
    "est, message",
    [
        (madbayes.DPMeans(penalty=-1.0), "penalty must be a positive"),
        (madbayes.DPMeans(penalty=float("nan")), "penalty must be a positive"),
        (madbayes.KMeans(n_clusters=0), "n_clusters must be an integer >= 1"),
        (madbayes.KMeans(n_clusters=200), "n_samples=90 should be >= n_clusters=200"),
        (madbayes.BPMeans(n_init=0), "n_init must be an integer >= 1"),
        (madbayes.DPMeans(n_init=0), 'n_init must be "auto" or an integer >= 1'),
        (madbayes.CollapsedDPMeans(n_init="many"), 'n_init must be "auto" or an integer >= 1'),
        (madbayes.KFeatures(max_iter=0), "max_iter must be an integer >= 1"),
        (madbayes.IBPSampler(method="gibbs"), "method must be"),
        (madbayes.IBPSampler(window=2, method="collapsed"), "window does not apply"),
        (madbayes.IBPSampler(alpha=0.0), "alpha must be a positive"),
        (madbayes.IBPSampler(anneal=0.7), "anneal must be a fraction of the sweeps"),
        (madbayes.IBPSampler(anneal="a"), "anneal must be a number"),
        (madbayes.DPMeans(random_state=-3), "random_state must be"),
        (madbayes.DPMeans(n_jobs=0), "n_jobs must be"),
        (madbayes.MahalanobisClustering(n_clusters=30), "n_samples=90 is too few"),
    ],
)
def test_bad_parameters_say_what_to_change(est, message, blobs):
    with pytest.raises(ValueError, match=message):
        est.fit(blobs[0])


def test_default_penalty_is_the_mean_squared_distance_to_the_mean(blobs):
    X = blobs[0]
    expected = np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1))
    for est in [madbayes.DPMeans(), madbayes.BPMeans(), madbayes.StepwiseKFeatures()]:
        est.fit(X)
        assert est.penalty_ == pytest.approx(expected, rel=1e-12)
    assert madbayes.DPMeans(penalty=2.5).fit(X).penalty_ == 2.5
    assert _core.default_penalty(X) == pytest.approx(expected, rel=1e-12)
    m = madbayes.MahalanobisClustering(n_clusters=3).fit(X)
    assert m.penalty_ == 30.0


def test_default_penalty_recovers_standardised_blobs(blobs):
    X = StandardScaler().fit_transform(blobs[0])
    for est in [madbayes.DPMeans(), madbayes.CollapsedDPMeans()]:
        labels = est.fit_predict(X)
        assert est.n_clusters_ == 3
        assert adjusted_rand_score(blobs[1], labels) == 1.0


@pytest.mark.parametrize("est", ALL, ids=name)
def test_pickle_round_trip(est, blobs):
    X = blobs[0]
    fitted = clone(est).fit(X)
    again = pickle.loads(pickle.dumps(fitted))
    assert_same(outputs(again, X), outputs(fitted, X))


@pytest.mark.parametrize("est", ALL, ids=name)
def test_results_do_not_depend_on_n_jobs(est, blobs):
    X = blobs[0]
    one = outputs(clone(est).set_params(n_jobs=1).fit(X), X)
    for n_jobs in [2, 3, -1, None]:
        assert_same(outputs(clone(est).set_params(n_jobs=n_jobs).fit(X), X), one)


def test_random_state_is_the_seed(blobs):
    X = blobs[0]
    a = madbayes.BPMeans(random_state=7).fit(X)
    b = madbayes.BPMeans(random_state=7).fit(X)
    np.testing.assert_array_equal(a.Z_, b.Z_)
    c = madbayes.IBPSampler(random_state=1, n_sweeps=20).fit(X)
    d = madbayes.IBPSampler(random_state=2, n_sweeps=20).fit(X)
    assert not np.array_equal(c.log_joint_trace_, d.log_joint_trace_)


def test_defaults_come_from_the_library():
    d = _core.defaults()
    assert madbayes.DPMeans().n_init == d["dp_means"]["n_init"]
    assert madbayes.BPMeans().n_init == d["bp_means"]["n_init"]
    assert madbayes.KMeans().max_iter == d["kmeans"]["max_iter"]
    assert madbayes.IBPSampler().n_sweeps == d["ibp"]["tuned"]["n_sweeps"]
    assert madbayes.IBPSampler().n_chains == d["ibp"]["n_chains"]
    assert d["ibp"]["tuned"]["anneal"] == 0.25 and d["ibp"]["plain"]["anneal"] == 0.0
    assert madbayes.MEIBP().max_iter == d["meibp"]["max_iter"]
    assert madbayes.MahalanobisClustering().reg == d["mahalanobis"]["reg"]


def test_dp_means_runs_by_the_data_size_unless_given(blobs):
    """n_init="auto" (the default): 10 runs on data of at most 200 000 values; above, 1 for
    DPMeans (refined by groups of clusters, two tries each) and 2 for CollapsedDPMeans; the
    same fit for any n_jobs; a number is taken as given."""
    assert madbayes.DPMeans().n_init == "auto" == madbayes.CollapsedDPMeans().n_init
    small = madbayes.DPMeans(penalty=3.0).fit(blobs[0])
    assert len(small.run_objectives_) == 10
    rng = np.random.default_rng(3)
    centres = rng.uniform(-10.0, 10.0, size=(20, 10))
    big = centres[rng.integers(0, 20, size=20_001)] + rng.standard_normal((20_001, 10))
    auto = madbayes.DPMeans(penalty=400.0, n_jobs=1).fit(big)
    assert len(auto.run_objectives_) == 1
    one = madbayes.DPMeans(penalty=400.0, n_init=1, n_jobs=2).fit(big)
    np.testing.assert_array_equal(auto.labels_, one.labels_)
    assert auto.objective_ == one.objective_
    collapsed = madbayes.CollapsedDPMeans(penalty=400.0, n_jobs=2).fit(big)
    assert len(collapsed.run_objectives_) == 2
    assert len(madbayes.DPMeans(penalty=400.0, n_init=3, plain=True).fit(big).run_objectives_) == 3


def test_clone_params_pipeline_and_grid_search(blobs):
    X = blobs[0]
    est = madbayes.DPMeans(penalty=3.0, n_init=4)
    assert clone(est).get_params() == est.get_params()
    est.set_params(penalty=5.0)
    assert est.penalty == 5.0
    pipe = make_pipeline(StandardScaler(), madbayes.BPMeans(penalty=1.0)).fit(X)
    assert pipe.transform(X).shape == (90, pipe[-1].n_features_)
    grid = GridSearchCV(madbayes.DPMeans(), {"penalty": [0.5, 4.0, 40.0, 4000.0]}, cv=3)
    grid.fit(X)
    assert grid.best_params_["penalty"] in [0.5, 4.0, 40.0, 4000.0]
    assert len(grid.cv_results_["mean_test_score"]) == 4
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))


def test_inverse_transform_is_z_times_a(blocks):
    X, _, _ = blocks
    est = madbayes.KFeatures(n_features=4).fit(X)
    Z = est.transform(X)
    np.testing.assert_allclose(est.inverse_transform(Z), Z @ est.components_)
    assert set(np.unique(Z)) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="columns"):
        est.inverse_transform(Z[:, :2])


def test_feature_models_explain_the_block_images(blocks):
    X, _, _ = blocks
    kf = madbayes.KFeatures(n_features=4).fit(X)
    assert kf.n_features_ == 4
    # Four features explain most of the pictures' variance (K-features can stop in a local
    # optimum above the noise, 0.01 per entry).
    assert kf.inertia_ / X.size < 0.2 * X.var()
    assert kf.score(X) == pytest.approx(-kf.inertia_, rel=0.05)
    bp = madbayes.BPMeans().fit(X)
    # BP-means at the default penalty fits down to the noise, with at least the 4 shapes.
    assert bp.n_features_ >= 4
    assert 0.005 < bp.inertia_ / X.size < 0.012


def test_ibp_attributes_and_score(blocks):
    X, _, _ = blocks
    est = madbayes.IBPSampler(n_sweeps=40, sigma_x=0.1, sigma_a=1.0).fit(X)
    assert len(est.log_joint_trace_) == 40
    assert est.n_features_trace_[-1] == est.n_features_
    np.testing.assert_array_equal(est.trace_, -est.log_joint_trace_)
    assert est.sigma_x_ == 0.1
    assert est.objective_ == -est.log_joint_trace_[-1]
    good = est.score(X)
    noisy = est.score(X + np.random.default_rng(0).standard_normal(X.shape))
    assert good > noisy
    me = madbayes.MEIBP(max_features=8).fit(X)
    assert np.all(me.components_ >= 0)
    assert np.all(np.diff(me.evidence_trace_) >= -1e-9 * np.abs(me.evidence_trace_[1:]))
    assert me.max_features_ == 8
    # MEIBP's held-out score: the same Gaussian log-density per entry, higher on rows like
    # the training rows than on noisier ones.
    held_out = X[:30] + 0.1 * np.random.default_rng(1).standard_normal((30, X.shape[1]))
    assert me.score(held_out) > me.score(
        held_out + np.random.default_rng(2).standard_normal(held_out.shape)
    )
    resid = held_out - me.transform(held_out) @ me.components_
    expected = -0.5 * np.log(2 * np.pi * me.sigma_x_**2) - np.mean(resid**2) / (2 * me.sigma_x_**2)
    assert me.score(held_out) == pytest.approx(expected, rel=1e-12)
    assert madbayes.MEIBP().fit(X).max_features_ == madbayes.ibp.default_meibp_features(120, 3.0)


def test_kmeans_from_given_centres(blobs):
    X = blobs[0]
    init = X[[0, 30, 60]]
    est = madbayes.KMeans(n_clusters=3, init=init).fit(X)
    assert adjusted_rand_score(blobs[1], est.labels_) == 1.0
    assert est.inertia_ == pytest.approx(est.objective_)
    with pytest.raises(ValueError, match="init has shape"):
        madbayes.KMeans(n_clusters=3, init=X[:2]).fit(X)


def test_cluster_attributes(blobs):
    X = blobs[0]
    est = madbayes.DPMeans(penalty=4.0).fit(X)
    k = est.n_clusters_
    d2 = ((X - est.cluster_centers_[est.labels_]) ** 2).sum()
    assert est.inertia_ == pytest.approx(d2)
    assert est.objective_ == pytest.approx(d2 + (k - 1) * 4.0)
    assert est.labels_.dtype == np.int64
    assert est.n_iter_ >= 1 and est.converged_
    np.testing.assert_allclose(
        est.transform(X), np.sqrt(((X[:, None] - est.cluster_centers_[None]) ** 2).sum(2))
    )
    assert est.score(X) == pytest.approx(-d2)


def test_verbose_prints_progress(capfd, blobs):
    madbayes.DPMeans(verbose=True, n_init=5).fit(blobs[0])
    err = capfd.readouterr().err
    assert "[DPMeans] restarts 5/5" in err
    # The sweeps of every chain count.
    madbayes.IBPSampler(verbose=True, n_sweeps=7, n_chains=2).fit(blobs[0])
    assert "[IBPSampler] sweeps 14/14" in capfd.readouterr().err
    madbayes.DPMeans(n_init=5).fit(blobs[0])
    assert capfd.readouterr().err == ""


def test_fit_releases_the_gil():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 20))
    # About 0.25 s on one idle core.
    est = madbayes.KMeans(n_clusters=40, n_init=40, n_jobs=1)
    ticks = 0
    thread = threading.Thread(target=est.fit, args=(X,))
    t0 = time.perf_counter()
    thread.start()
    while thread.is_alive():
        ticks += 1
        time.sleep(0.001)
    thread.join()
    during = time.perf_counter() - t0
    # Holding the GIL would stop this loop for the whole fit (a tick or two, before and
    # after); released, it ticks about once per millisecond on an idle machine, and still
    # dozens of times on a loaded one whose sleeps overshoot.
    assert during > 0.05, "the fit is too short to tell"
    assert ticks >= 10, f"{ticks} ticks in {during:.3f} s"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() exists on POSIX only")
def test_fit_in_a_forked_child(blobs):
    import multiprocessing as mp

    X = blobs[0]
    parent = madbayes.DPMeans(n_jobs=2).fit(X).labels_
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        child = pool.apply_async(_fit_labels, (X,)).get(timeout=60)
    np.testing.assert_array_equal(child, parent)


def _fit_labels(X):
    return madbayes.DPMeans(n_jobs=2).fit(X).labels_


def test_ibp_chains(blocks):
    X, _, _ = blocks
    est = madbayes.IBPSampler(n_sweeps=30, n_chains=3, random_state=2).fit(X)
    assert est.chains_log_joint_.shape == est.chains_n_features_.shape == (3, 30)
    # The kept chain is the one of highest final log joint, and its trace is its row.
    assert est.best_chain_ == int(np.argmax(est.chains_log_joint_[:, -1]))
    np.testing.assert_array_equal(est.chains_log_joint_[est.best_chain_], est.log_joint_trace_)
    assert set(est.rhat_) == {"k", "log_joint", "alpha", "sigma_x", "sigma_a"}
    assert est.chains_agree_ == all(r < 1.01 for r in est.rhat_.values())
    assert sum(est.k_distribution_.values()) == pytest.approx(1.0)
    # Chain 0 of several is the single chain.
    one = madbayes.IBPSampler(n_sweeps=30, n_chains=1, random_state=2).fit(X)
    np.testing.assert_array_equal(one.log_joint_trace_, est.chains_log_joint_[0])


def test_rows_inside_a_larger_array_fit_like_a_copy(blobs):
    """A C-contiguous slice starts inside another array's buffer; the library reads it there."""
    X = blobs[0]
    padded = np.vstack([np.full((7, X.shape[1]), 1e3), X, np.full((4, X.shape[1]), -1e3)])
    inside = padded[7 : 7 + len(X)]
    assert inside.flags.c_contiguous and not inside.flags.owndata
    for est in [madbayes.DPMeans(), madbayes.BPMeans()]:
        assert_same(outputs(clone(est).fit(inside), X), outputs(clone(est).fit(X.copy()), X))


def test_a_c_contiguous_float64_array_is_not_copied():
    """Peak memory of a fit on a 305 MiB array grows by less than 3/4 of the array's size: 124
    MiB measured (labels, row norms, distance blocks), against 397 MiB for the same fit of a
    Fortran-ordered array, which is converted by a copy. Run in a fresh interpreter so that
    the peak is this fit's."""
    import subprocess
    import sys

    script = """
import resource, numpy as np, madbayes
X = np.random.default_rng(0).normal(size=(4_000_000, 10))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
madbayes.KMeans(n_clusters=2, n_init=1, max_iter=2, n_jobs=1).fit(X)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) / 1024, X.nbytes / 2**20)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    grown_mib, array_mib = map(float, out.stdout.split())
    assert array_mib > 300
    assert grown_mib < 0.75 * array_mib, (grown_mib, array_mib)
