"""The clustering family: K-means, DP-means, collapsed DP-means, Mahalanobis clustering."""

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin

from . import _core
from ._base import (
    DEFAULTS,
    _Estimator,
    _count,
    _flag,
    _optional_count,
    _positive,
    _runs_or_auto,
    _seed,
    _too_few_rows,
    _tri_state,
)

__all__ = ["KMeans", "DPMeans", "CollapsedDPMeans", "MahalanobisClustering"]


class _Clustering(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, _Estimator):
    """Fitted attributes, prediction and distances shared by the clustering estimators."""

    def _store(self, r):
        self.labels_ = r["labels"]
        self.cluster_centers_ = r["centers"]
        self.n_clusters_ = self.cluster_centers_.shape[0]
        self.inertia_ = float(r["inertia"])
        self.objective_ = float(r["objective"])
        self.n_iter_ = int(r["n_iter"])
        self.converged_ = bool(r["converged"])
        self.trace_ = r["trace"]
        self.run_objectives_ = r["run_objectives"]
        self.best_run_ = int(r["best_run"])
        self.fit_seconds_ = float(r["seconds"])
        return self

    @property
    def _n_features_out(self):
        return self.cluster_centers_.shape[0]

    def _squared_distances(self, X):
        return _core.squared_distances(self.cluster_centers_, X, self._jobs())

    def predict(self, X):
        """The nearest cluster centre of each row of X (ties to the lowest index)."""
        X = self._new_rows(X)
        return _core.nearest_means(self.cluster_centers_, X, self._jobs())

    def transform(self, X):
        """The distance of each row of X to each cluster centre, shape (n_samples, K)."""
        X = self._new_rows(X)
        return np.sqrt(self._squared_distances(X))

    def score(self, X, y=None):
        """Minus the sum of squared distances of the rows of X to their nearest centre (the
        value of X on the K-means objective, as scikit-learn's KMeans.score)."""
        X = self._new_rows(X)
        return -float(self._squared_distances(X).min(axis=1).sum())


class KMeans(_Clustering):
    """K-means: greedy k-means++ seeding and Lloyd iterations, the best of ``n_init`` runs.

    Parameters
    ----------
    n_clusters : int, default=8
        K.
    init : "k-means++" or array of shape (n_clusters, n_features), default="k-means++"
        Seeding, or the initial centres of one Lloyd run (then ``n_init`` is not used).
    n_init : int, default from the library
        Runs with their own seeding; the lowest objective wins.
    max_iter : int, default from the library
        Iteration cap of each run.
    random_state : int, RandomState or None, default from the library
        The seed (the command line's ``--seed``); None draws one.
    n_jobs : int or None, default=None
        Threads of the rayon pool (None or -1: all cores). Never changes the result.
    verbose : bool, default=False
        Print progress over the runs to stderr.

    Attributes
    ----------
    labels_, cluster_centers_, n_clusters_, inertia_ (the sum of squares), objective_ (equal
    to ``inertia_`` for K-means), n_iter_, converged_, trace_ (objective per iteration of the
    winning run), run_objectives_, best_run_, fit_seconds_ (time in the Rust core).
    """

    def __init__(
        self,
        n_clusters=8,
        *,
        init="k-means++",
        n_init=DEFAULTS["kmeans"]["n_init"],
        max_iter=DEFAULTS["kmeans"]["max_iter"],
        random_state=DEFAULTS["kmeans"]["random_state"],
        n_jobs=None,
        verbose=False,
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        k = _count("n_clusters", self.n_clusters)
        _too_few_rows(X.shape[0], "n_clusters", k)
        init = None
        if isinstance(self.init, str):
            if self.init != "k-means++":
                raise ValueError(f"init must be 'k-means++' or an array, got {self.init!r}")
        else:
            init = np.ascontiguousarray(self.init, dtype=np.float64)
        r = _core.fit_kmeans(
            X,
            k,
            _count("n_init", self.n_init),
            _count("max_iter", self.max_iter),
            _seed(self.random_state),
            self._jobs(),
            self._progress(),
            init,
        )
        return self._store(r)


class _PenaltyClustering(_Clustering):
    _collapsed = False
    _defaults = DEFAULTS["dp_means"]

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        r = _core.fit_dp_means(
            X,
            _positive("penalty", self.penalty),
            self._collapsed,
            _optional_count("max_clusters", self.max_clusters),
            _runs_or_auto("n_init", self.n_init),
            _count("max_iter", self.max_iter),
            _seed(self.random_state),
            _tri_state("refine", self.refine),
            _flag("plain", self.plain),
            self._jobs(),
            self._progress(),
        )
        self.penalty_ = float(r["penalty"])
        return self._store(r)


_DP = DEFAULTS["dp_means"]
_CDP = DEFAULTS["collapsed_dp_means"]

_PENALTY_DOC = """
    Parameters
    ----------
    penalty : float or None, default=None
        P = lambda^2, the objective's cost of one more cluster. None takes P from the data:
        the mean squared distance of the rows to their mean (``madbayes::penalty``); the
        value used is ``penalty_``.
    max_clusters : int or None, default from the library
        A cap on K (capped DP-means, MAD-Bayes Eq. 12); None for no cap.
    n_init : int or "auto", default="auto"
        Runs, each visiting the rows in its own random order; the lowest objective wins.
        "auto": 10 on data of at most 200 000 values (rows x columns); on larger data 1
        for DPMeans, whose run is refined group of clusters by group, each group from two
        row orders, and 2 for CollapsedDPMeans (there a refinement costs many runs, and
        which run is best before it says nothing about which is best after;
        docs/defaults.md).
    max_iter : int, default from the library
        Sweep cap of each run.
    refine : bool or None, default=None
        After a run converges, keep descending with exact single-row moves, merges and
        splits, accepting only what lowers the objective: every run on data of at most
        200 000 values (rows x columns), only the best two runs on larger data when more
        than two are asked for. None: the
        library's default (on, unless ``plain``; ``DEFAULTS[...]["refine"]``). The command
        line's ``--refine``.
    plain : bool, default=False
        The paper's algorithm exactly as published: no refinement (unless ``refine=True``).
        Faster, and usually a worse objective. The command line's ``--plain``.
    random_state : int, RandomState or None, default from the library
        The seed (the command line's ``--seed``); None draws one.
    n_jobs : int or None, default=None
        Threads of the rayon pool (None or -1: all cores). Never changes the result.
    verbose : bool, default=False
        Print progress over the runs to stderr.

    Attributes
    ----------
    labels_, cluster_centers_, n_clusters_, inertia_ (the sum of squares), objective_ (the
    sum of squares plus (K - 1) P), penalty_, n_iter_, converged_, trace_, run_objectives_,
    best_run_, fit_seconds_ (time in the Rust core).
"""


class DPMeans(_PenaltyClustering):
    __doc__ = (
        "DP-means (Kulis & Jordan; MAD-Bayes Eq. 3): K-means whose K is learned, each cluster"
        " costing the penalty P.\n" + _PENALTY_DOC
    )

    def __init__(
        self,
        penalty=None,
        *,
        max_clusters=_DP["max_clusters"],
        n_init=_DP["n_init"],
        max_iter=_DP["max_iter"],
        refine=None,
        plain=False,
        random_state=_DP["random_state"],
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
        self.n_jobs = n_jobs
        self.verbose = verbose


class CollapsedDPMeans(_PenaltyClustering):
    __doc__ = (
        "Collapsed DP-means (MAD-Bayes Eqs. 8-9, Alg. 2): exact coordinate descent on the"
        " collapsed objective.\n" + _PENALTY_DOC
    )
    _collapsed = True

    def __init__(
        self,
        penalty=None,
        *,
        max_clusters=_CDP["max_clusters"],
        n_init=_CDP["n_init"],
        max_iter=_CDP["max_iter"],
        refine=None,
        plain=False,
        random_state=_CDP["random_state"],
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
        self.n_jobs = n_jobs
        self.verbose = verbose


_MA = DEFAULTS["mahalanobis"]


class MahalanobisClustering(_Clustering):
    """Mahalanobis clustering (MAD-Bayes Sup. Mat. E): K clusters, each with its own
    covariance, penalty P on log det of each.

    Parameters
    ----------
    n_clusters : int, default=2
        K. Every cluster keeps more than n_features rows, so n_samples must be at least
        n_clusters * (n_features + 1).
    penalty : float or None, default=None
        P. None takes P = n_samples / n_clusters, with which a cluster of the average size
        gets its sample covariance (``madbayes::penalty``); the value used is ``penalty_``.
    reg : float, default from the library
        Scale of the inverse-Wishart term, relative to the mean column variance.
    n_init, max_iter, random_state, n_jobs, verbose : as for :class:`KMeans`.

    Attributes
    ----------
    labels_, cluster_centers_, covariances_ (K x D x D), n_clusters_, inertia_ (the sum of
    squares), objective_ (the Mahalanobis objective), penalty_, n_iter_, converged_, trace_,
    run_objectives_, best_run_, fit_seconds_.
    """

    def __init__(
        self,
        n_clusters=2,
        *,
        penalty=None,
        reg=_MA["reg"],
        n_init=_MA["n_init"],
        max_iter=_MA["max_iter"],
        random_state=_MA["random_state"],
        n_jobs=None,
        verbose=False,
    ):
        self.n_clusters = n_clusters
        self.penalty = penalty
        self.reg = reg
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        n, d = X.shape
        k = _count("n_clusters", self.n_clusters)
        if n < k * (d + 1):
            raise ValueError(
                f"n_samples={n} is too few: Mahalanobis clustering keeps every cluster larger "
                f"than n_features={d} rows, so it needs n_samples >= n_clusters * "
                f"(n_features + 1) = {k * (d + 1)}; use fewer clusters or more rows"
            )
        reg = self.reg
        if not (isinstance(reg, (int, float)) and np.isfinite(reg) and reg >= 0):
            raise ValueError(f"reg must be a non-negative finite number, got {reg!r}")
        r = _core.fit_mahalanobis(
            X,
            k,
            _positive("penalty", self.penalty),
            float(reg),
            _count("n_init", self.n_init),
            _count("max_iter", self.max_iter),
            _seed(self.random_state),
            self._jobs(),
            self._progress(),
        )
        self.covariances_ = r["covariances"]
        self.penalty_ = float(r["penalty"])
        return self._store(r)

    def _mahalanobis(self, X):
        return _core.mahalanobis_distances(
            self.cluster_centers_, self.covariances_, X, self._jobs()
        )

    def predict(self, X):
        """The cluster of smallest Mahalanobis distance for each row of X."""
        X = self._new_rows(X)
        return np.argmin(self._mahalanobis(X), axis=1)

    def transform(self, X):
        """The Mahalanobis distance of each row of X to each cluster, (n_samples, K)."""
        X = self._new_rows(X)
        return np.sqrt(np.maximum(self._mahalanobis(X), 0.0))

    def score(self, X, y=None):
        """Minus the sum of squared Euclidean distances of the rows of X to the centre of
        their predicted cluster."""
        X = self._new_rows(X)
        labels = np.argmin(self._mahalanobis(X), axis=1)
        d2 = self._squared_distances(X)
        return -float(d2[np.arange(X.shape[0]), labels].sum())
