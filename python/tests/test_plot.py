"""madbayes.plot draws with the Agg backend (set in conftest)."""

import numpy as np
import pytest

import madbayes
from madbayes import plot


def test_features_as_images(blocks):
    X, _, _ = blocks
    est = madbayes.KFeatures(n_features=4).fit(X)
    fig = plot.plot_features(est)  # 36 values: 6 x 6 squares
    shown = [ax for ax in fig.axes if ax.images]
    assert len(shown) == 4
    np.testing.assert_array_equal(shown[2].images[0].get_array(), est.components_[2].reshape(6, 6))
    # Each feature on its own symmetric scale, grey = 0.
    lo, hi = shown[0].images[0].get_clim()
    assert lo == -hi == -np.abs(est.components_[0]).max()
    fig = plot.plot_features(madbayes.KMeans(n_clusters=2).fit(X), image_shape=(6, 6))
    assert len([ax for ax in fig.axes if ax.images]) == 2
    with pytest.raises(ValueError, match="image_shape"):
        plot.plot_features(est, image_shape=(5, 5))


def test_traces(blocks, blobs):
    X, _, _ = blocks
    est = madbayes.IBPSampler(n_sweeps=15).fit(X)
    fig = plot.plot_trace(est)
    line = fig.axes[0].lines[0]
    np.testing.assert_array_equal(line.get_ydata(), est.log_joint_trace_)
    assert "log p(X, Z)" in fig.axes[0].get_ylabel()
    dp = madbayes.DPMeans().fit(blobs[0])
    np.testing.assert_array_equal(plot.plot_trace(dp).axes[0].lines[0].get_ydata(), dp.trace_)
    me = madbayes.MEIBP(max_features=5).fit(X)
    assert "evidence" in plot.plot_trace(me).axes[0].get_ylabel()


def test_penalty_path(blobs):
    X = blobs[0]
    path = plot.penalty_path(madbayes.DPMeans(), X, [0.01, 1.0, 10.0, 1e4])
    assert path["k"][0] > path["k"][2] >= path["k"][3] == 1
    assert path["k"][2] == 3
    fig = plot.plot_path(madbayes.DPMeans(), path=path)
    np.testing.assert_array_equal(fig.axes[0].lines[0].get_ydata(), path["k"])
