"""The Python estimators give what the command line gives on the same data and seed.

Needs the `madbayes` binary: ./test.sh passes the one `cargo test` built in MADBAYES_CLI.
"""

import json
import os
import subprocess

import numpy as np
import pytest

import madbayes

CLI = os.environ.get("MADBAYES_CLI")
pytestmark = pytest.mark.skipif(
    not CLI, reason="set MADBAYES_CLI to the madbayes binary (./test.sh does)"
)


def cli_fit(tmp_path, X, *args):
    data = tmp_path / "x.npy"
    np.save(data, X)
    out = tmp_path / "out"
    subprocess.run(
        [CLI, "fit", str(data), "--out", str(out), "--quiet", *args],
        check=True,
        capture_output=True,
    )
    summary = json.loads((out / "summary.json").read_text())
    read = lambda name: np.loadtxt(out / name, delimiter=",", ndmin=2)  # noqa: E731
    return summary, read, out


def option_args(est):
    """The command line's --plain, --refine and --seeding for the estimator's parameters
    (refine=None is the library's default, which the command line gives without --refine)."""
    params = est.get_params()
    args = []
    if params.get("plain"):
        args.append("--plain")
    if params.get("refine") is True:
        args.append("--refine")
    assert params.get("refine") in (None, True), "the command line cannot say refine=False"
    if params.get("seeding") is not None:
        args += ["--seeding", params["seeding"]]
    return args


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    centres = rng.normal(0, 4, (4, 5))
    return centres[rng.integers(0, 4, 150)] + rng.standard_normal((150, 5))


@pytest.mark.parametrize(
    "algo, est",
    [
        ("kmeans", madbayes.KMeans(n_clusters=4, n_init=5, random_state=9)),
        ("dp-means", madbayes.DPMeans(penalty=6.0, n_init=5, random_state=9)),
        ("dp-means", madbayes.DPMeans(penalty=6.0, n_init=3, plain=True, random_state=2)),
        (
            "dp-means",
            madbayes.DPMeans(penalty=6.0, n_init=3, plain=True, refine=True, random_state=2),
        ),
        ("collapsed-dp-means", madbayes.CollapsedDPMeans(penalty=6.0, n_init=5, random_state=9)),
        (
            "collapsed-dp-means",
            madbayes.CollapsedDPMeans(penalty=6.0, n_init=4, plain=True, random_state=1),
        ),
        (
            "mahalanobis",
            madbayes.MahalanobisClustering(n_clusters=3, penalty=20.0, n_init=4, random_state=9),
        ),
    ],
)
def test_clustering_matches_the_cli(tmp_path, data, algo, est):
    est.fit(data)
    args = ["--algo", algo, "--restarts", str(est.n_init), "--seed", str(est.random_state)]
    if algo in ("kmeans", "mahalanobis"):
        args += ["--k", str(est.n_clusters)]
    if algo != "kmeans":
        args += ["--penalty", repr(est.penalty)]
    args += option_args(est)
    summary, read, _ = cli_fit(tmp_path, data, *args)
    np.testing.assert_array_equal(read("labels.csv").ravel().astype(int), est.labels_)
    np.testing.assert_allclose(read("means.csv"), est.cluster_centers_, rtol=1e-13, atol=0)
    assert summary["objective"] == pytest.approx(est.objective_, rel=1e-13)
    assert summary["k"] == est.n_clusters_


@pytest.mark.parametrize(
    "algo, est",
    [
        ("bp-means", madbayes.BPMeans(penalty=10.0, n_init=5, random_state=4)),
        ("bp-means", madbayes.BPMeans(penalty=10.0, n_init=3, plain=True, random_state=8)),
        (
            "bp-means",
            madbayes.BPMeans(penalty=10.0, n_init=3, plain=True, refine=True, random_state=8),
        ),
        ("bp-means", madbayes.BPMeans(penalty=10.0, n_init=3, seeding="residual", random_state=2)),
        ("collapsed-bp-means", madbayes.CollapsedBPMeans(penalty=10.0, n_init=3, random_state=4)),
        (
            "collapsed-bp-means",
            madbayes.CollapsedBPMeans(penalty=10.0, n_init=3, plain=True, random_state=4),
        ),
        ("k-features", madbayes.KFeatures(n_features=3, n_init=5, random_state=4)),
        (
            "k-features",
            madbayes.KFeatures(
                n_features=3, n_init=5, plain=True, seeding="residual", random_state=4
            ),
        ),
        # Capped at K = 5: uncapped, the refined search climbs to K = 12 on these 150 rows,
        # half a minute in the release build and ten in the debug build the tests call.
        (
            "stepwise-k-features",
            madbayes.StepwiseKFeatures(penalty=10.0, max_features=5, n_init=3, random_state=4),
        ),
        (
            "stepwise-k-features",
            madbayes.StepwiseKFeatures(
                penalty=10.0, max_features=6, plain=True, n_init=3, random_state=4
            ),
        ),
    ],
)
def test_features_match_the_cli(tmp_path, data, algo, est):
    est.fit(data)
    args = ["--algo", algo, "--restarts", str(est.n_init), "--seed", str(est.random_state)]
    if algo == "k-features":
        args += ["--k", str(est.n_features)]
    else:
        args += ["--penalty", repr(est.penalty)]
        if est.max_features is not None:
            args += ["--k", str(est.max_features)]
    args += option_args(est)
    summary, read, _ = cli_fit(tmp_path, data, *args)
    np.testing.assert_array_equal(read("z.csv"), est.Z_)
    np.testing.assert_allclose(read("means.csv"), est.components_, rtol=1e-12, atol=1e-12)
    assert summary["objective"] == pytest.approx(est.objective_, rel=1e-12)


@pytest.mark.parametrize(
    "method, algo",
    [
        ("accelerated", "ibp-accelerated"),
        ("collapsed", "ibp-gibbs"),
        ("semicollapsed", "ibp-semicollapsed"),
    ],
)
def test_samplers_match_the_cli(tmp_path, data, method, algo):
    # The defaults: four chains, hyperparameters resampled, split-merge and block moves.
    est = madbayes.IBPSampler(method=method, n_sweeps=25, random_state=6).fit(data)
    summary, read, out = cli_fit(
        tmp_path, data, "--algo", algo, "--iterations", "25", "--seed", "6"
    )
    np.testing.assert_array_equal(read("z.csv"), est.Z_)
    trace = np.genfromtxt(out / "trace.csv", delimiter=",", names=True)
    np.testing.assert_allclose(trace["log_joint"], est.log_joint_trace_, rtol=1e-12)
    np.testing.assert_array_equal(trace["k"], est.n_features_trace_)
    # Every chain's final state, and R-hat / ESS across the chains.
    assert len(summary["chains"]) == est.chains_log_joint_.shape[0] == 4
    for c, chain in enumerate(summary["chains"]):
        assert chain["final"]["log_joint"] == pytest.approx(est.chains_log_joint_[c, -1], rel=1e-12)
        assert chain["final"]["k"] == est.chains_n_features_[c, -1]
    for name, d in summary["diagnostics"].items():
        assert d["rhat"] == pytest.approx(est.rhat_[name], rel=1e-12)
        assert d["ess_bulk"] == pytest.approx(est.ess_bulk_[name], rel=1e-12)
        assert d["ess_tail"] == pytest.approx(est.ess_tail_[name], rel=1e-12)
    assert summary["converged"] == est.chains_agree_


@pytest.mark.parametrize(
    "est, args",
    [
        (madbayes.IBPSampler(plain=True, n_chains=2), ["--plain", "--chains", "2"]),
        (
            madbayes.IBPSampler(init="prior", split_merge=0, block=2, n_chains=1),
            ["--init", "prior", "--split-merge", "0", "--block", "2", "--chains", "1"],
        ),
        (
            madbayes.IBPSampler(alpha=1.5, sigma_x=0.8, resample=True, window=3),
            ["--alpha", "1.5", "--sigma-x", "0.8", "--resample", "--window", "3"],
        ),
        (madbayes.IBPSampler(anneal=0.4, n_chains=1), ["--anneal", "0.4", "--chains", "1"]),
        # A sigma_x far above the data's sd: the mixed start puts a prior draw on chain 1.
        (
            madbayes.IBPSampler(init="mixed", sigma_x=50.0, n_chains=2),
            ["--init", "mixed", "--sigma-x", "50", "--chains", "2"],
        ),
    ],
)
def test_sampler_options_match_the_cli(tmp_path, data, est, args):
    est.set_params(n_sweeps=20, random_state=3).fit(data)
    summary, read, out = cli_fit(
        tmp_path, data, "--algo", "ibp-accelerated", "--iterations", "20", "--seed", "3", *args
    )
    np.testing.assert_array_equal(read("z.csv"), est.Z_)
    trace = np.genfromtxt(out / "trace.csv", delimiter=",", names=True)
    np.testing.assert_allclose(trace["log_joint"], est.log_joint_trace_, rtol=1e-12)


def test_meibp_matches_the_cli(tmp_path, data):
    est = madbayes.MEIBP(max_features=6, random_state=5).fit(data)
    summary, read, out = cli_fit(tmp_path, data, "--algo", "meibp", "--k", "6", "--seed", "5")
    np.testing.assert_array_equal(read("z.csv"), est.Z_)
    np.testing.assert_allclose(read("means.csv"), est.components_, rtol=1e-12, atol=1e-12)
