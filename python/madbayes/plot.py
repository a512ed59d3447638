"""Pictures of fitted estimators (needs matplotlib, imported only when a function is called).

* :func:`plot_features`: the learned features (``components_``) or cluster centres as images,
  each on its own symmetric grey scale (grey = 0) for features, on [min, max] for centres;
* :func:`plot_trace`: the objective per iteration, or log p(X, Z) per sweep for the
  samplers and the evidence bound per iteration for MEIBP;
* :func:`penalty_path` and :func:`plot_path`: K and the objective over a grid of penalties.
"""

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

__all__ = ["plot_features", "plot_trace", "penalty_path", "plot_path"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "madbayes.plot needs matplotlib; install it with `pip install matplotlib`"
        ) from e
    return plt


def plot_features(estimator, image_shape=None, *, n_cols=None, max_images=64):
    """Draws each learned feature (or cluster centre) as an image; returns the figure.

    ``image_shape`` is (height, width) or (height, width, channels) with a product equal to
    n_features_in_; None takes a square when n_features_in_ is a perfect square.
    """
    check_is_fitted(estimator)
    clustering = hasattr(estimator, "cluster_centers_")
    a = estimator.cluster_centers_ if clustering else estimator.components_
    d = a.shape[1]
    if image_shape is None:
        side = int(round(d**0.5))
        if side * side != d:
            raise ValueError(
                f"the rows have {d} values, not a square number; pass image_shape=(h, w)"
            )
        image_shape = (side, side)
    image_shape = tuple(int(s) for s in image_shape)
    if int(np.prod(image_shape)) != d:
        raise ValueError(f"image_shape {image_shape} does not hold the {d} values of a row")
    k = min(a.shape[0], max_images)
    plt = _pyplot()
    n_cols = n_cols or max(1, min(k, 8))
    n_rows = max(1, -(-k // n_cols))
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(1.6 * n_cols, 1.6 * n_rows), squeeze=False)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i >= k:
            continue
        img = a[i].reshape(image_shape)
        if clustering:
            lo, hi = float(a.min()), float(a.max())
        else:
            m = float(np.abs(a[i]).max()) or 1.0
            lo, hi = -m, m
        if len(image_shape) == 3:
            ax.imshow(np.clip((img - lo) / ((hi - lo) or 1.0), 0, 1))
        else:
            ax.imshow(img, cmap="gray", vmin=lo, vmax=hi)
        ax.set_title(f"{'cluster' if clustering else 'feature'} {i}", fontsize=8)
    fig.suptitle(
        f"{type(estimator).__name__}: {a.shape[0]} {'clusters' if clustering else 'features'}"
    )
    return fig


def plot_trace(estimator, ax=None):
    """Draws the estimator's trace; returns the figure."""
    check_is_fitted(estimator)
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 3.5))
    else:
        fig = ax.figure
    if hasattr(estimator, "log_joint_trace_"):
        y, label, x_label = estimator.log_joint_trace_, "log p(X, Z)", "sweep"
    elif hasattr(estimator, "evidence_trace_"):
        y, label, x_label = estimator.evidence_trace_, "evidence lower bound", "iteration"
    else:
        y, label, x_label = estimator.trace_, "objective", "iteration"
    ax.plot(np.arange(1, len(y) + 1), y, marker="." if len(y) < 50 else None)
    ax.set_xlabel(x_label)
    ax.set_ylabel(label)
    ax.set_title(f"{type(estimator).__name__}: {label} per {x_label}")
    return fig


def penalty_path(estimator, X, penalties):
    """Fits a clone of ``estimator`` at each penalty (same seed); returns a dict of arrays
    ``penalty``, ``k`` (clusters or features) and ``objective``."""
    penalties = np.asarray(penalties, dtype=np.float64)
    ks, objectives = [], []
    for p in penalties:
        est = clone(estimator).set_params(penalty=float(p)).fit(X)
        ks.append(getattr(est, "n_clusters_", getattr(est, "n_features_", None)))
        objectives.append(est.objective_)
    return {
        "penalty": penalties,
        "k": np.asarray(ks, dtype=np.int64),
        "objective": np.asarray(objectives),
    }


def plot_path(estimator, X=None, penalties=None, *, path=None):
    """Draws K against the penalty (log scale), from ``path`` (as returned by
    :func:`penalty_path`) or by computing it for ``X`` and ``penalties``; returns the
    figure."""
    if path is None:
        if X is None or penalties is None:
            raise ValueError("give X and penalties, or a path from penalty_path")
        path = penalty_path(estimator, X, penalties)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.step(path["penalty"], path["k"], where="post", marker=".")
    ax.set_xscale("log")
    ax.set_xlabel("penalty P")
    ax.set_ylabel("K")
    ax.set_title(f"{type(estimator).__name__}: K over the penalty")
    return fig
