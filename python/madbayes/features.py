"""The feature family: BP-means, collapsed BP-means, K-features, stepwise K-features.

Each row holds any number of latent features: X ~ Z A with Z binary (n_samples x K) and A
(``components_``) K x n_features. ``transform`` gives the binary Z of new rows (as float64),
``inverse_transform`` gives Z A.
"""

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from . import _core
from ._base import (
    DEFAULTS,
    _Estimator,
    _count,
    _flag,
    _optional_count,
    _positive,
    _seed,
    _seeding,
    _too_few_rows,
    _tri_state,
)

__all__ = ["BPMeans", "CollapsedBPMeans", "KFeatures", "StepwiseKFeatures"]


class _FeatureModel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, _Estimator):
    """Fitted attributes, transform and inverse_transform of the feature estimators."""

    def _store(self, r, X):
        self.Z_ = r["z"]
        self.components_ = r["a"]
        self.n_features_ = self.components_.shape[0]
        self.objective_ = float(r["objective"])
        self.inertia_ = float(np.sum((X - self.Z_ @ self.components_) ** 2))
        self.n_iter_ = int(r["n_iter"])
        self.converged_ = bool(r["converged"])
        self.trace_ = r["trace"]
        self.run_objectives_ = r["run_objectives"]
        self.best_run_ = int(r["best_run"])
        self.fit_seconds_ = float(r["seconds"])
        if r["penalty"] is not None:
            self.penalty_ = float(r["penalty"])
        return self

    def _fit(self, X, algo, penalty, k):
        # Collapsed BP-means has no refinement, hence no ``refine`` parameter.
        refine = _tri_state("refine", getattr(self, "refine", None))
        r = _core.fit_features(
            X,
            algo,
            penalty,
            k,
            _count("n_init", self.n_init),
            _count("max_iter", self.max_iter),
            _seed(self.random_state),
            refine,
            _flag("plain", self.plain),
            _seeding(self.seeding),
            self._jobs(),
            self._progress(),
        )
        return self._store(r, X)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def transform(self, X):
        """The best binary feature vector z of each row of X given A:
        argmin_z ||x - z A||^2 (exact for K <= 12), as float64 (n_samples, K)."""
        X = self._new_rows(X)
        return _core.best_features(self.components_, X, self._jobs())

    def inverse_transform(self, X):
        """Z A for a feature matrix Z of shape (n_samples, K)."""
        check_is_fitted(self)
        Z = check_array(X, dtype=np.float64)
        if Z.shape[1] != self.components_.shape[0]:
            raise ValueError(
                f"X has {Z.shape[1]} columns, but {type(self).__name__} has "
                f"{self.components_.shape[0]} features"
            )
        return Z @ self.components_

    def score(self, X, y=None):
        """Minus the squared reconstruction error ||X - Z A||^2 of X, Z = transform(X)."""
        X = self._new_rows(X)
        Z = _core.best_features(self.components_, X, self._jobs())
        return -float(np.sum((X - Z @ self.components_) ** 2))


_PLAIN_DOC = """
    plain : bool, default=False
        The paper's algorithm exactly as published: the base-feature seeding of MAD-Bayes
        Sec. 5 with the drawn residual tested as it is (no growth), and no refinement (unless
        ``refine=True``). Faster, and usually a worse objective. The command line's
        ``--plain``.
    seeding : {"base", "residual"} or None, default=None
        How each run is seeded: "base" (the paper's: a base feature at the mean of the rows,
        then residual draws) or "residual" (the authors' code: no base feature). None: the
        library's default (``DEFAULTS[...]["seeding"]``). The command line's ``--seeding``.
"""

_REFINE_DOC = """
    refine : bool or None, default=None
        After a run converges, try the refinement's moves (BP-means: remove, merge and grow
        features, deep moves, a collapsed polish; K-features: replace a feature), keeping
        only what lowers the objective. None: the library's default (on, unless ``plain``;
        ``DEFAULTS[...]["refine"]``). The command line's ``--refine``."""

_COMMON_DOC = """
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
    Z_ : (n_samples, K) binary float64, the features of the training rows.
    components_ : (K, n_features), the feature means A.
    n_features_ : K.
    objective_ : the algorithm's objective (with K P where there is a penalty).
    inertia_ : ||X - Z A||^2 on the training rows.
    penalty_ : the penalty used (where there is one).
    n_iter_, converged_, trace_, run_objectives_, best_run_, fit_seconds_ (time in the core).
"""

_PENALTY_DOC = """
    penalty : float or None, default=None
        P = lambda^2, the objective's cost of one more feature. None takes P from the data:
        the mean squared distance of the rows to their mean (``madbayes::penalty``).
"""

_BP = DEFAULTS["bp_means"]
_CBP = DEFAULTS["collapsed_bp_means"]
_KF = DEFAULTS["k_features"]
_SKF = DEFAULTS["stepwise_k_features"]


class BPMeans(_FeatureModel):
    __doc__ = (
        "BP-means (MAD-Bayes Eq. 6, Alg. 1): ||X - Z A||^2 + K P, K learned.\n\n"
        "    Parameters\n    ----------"
        + _PENALTY_DOC
        + """    max_features : int or None, default=None
        A cap on K (capped BP-means, Eq. 15)."""
        + _REFINE_DOC
        + _PLAIN_DOC
        + _COMMON_DOC
    )

    def __init__(
        self,
        penalty=None,
        *,
        max_features=None,
        n_init=_BP["n_init"],
        max_iter=_BP["max_iter"],
        refine=None,
        plain=False,
        seeding=None,
        random_state=_BP["random_state"],
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
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        k = _optional_count("max_features", self.max_features)
        _too_few_rows(X.shape[0], "max_features", k)
        return self._fit(X, "bp-means", _positive("penalty", self.penalty), k)


class CollapsedBPMeans(_FeatureModel):
    __doc__ = (
        "Collapsed BP-means (MAD-Bayes Eq. 10, Alg. 3): A integrated out,"
        " tr(X^T (I - Z (Z^T Z)^-1 Z^T) X) + K P.\n\n"
        "    Parameters\n    ----------"
        + _PENALTY_DOC
        + """    max_features : int or None, default=None
        A cap on K."""
        + _PLAIN_DOC
        + """    (Collapsed BP-means has no refinement.)
"""
        + _COMMON_DOC
    )

    def __init__(
        self,
        penalty=None,
        *,
        max_features=None,
        n_init=_CBP["n_init"],
        max_iter=_CBP["max_iter"],
        plain=False,
        seeding=None,
        random_state=_CBP["random_state"],
        n_jobs=None,
        verbose=False,
    ):
        self.penalty = penalty
        self.max_features = max_features
        self.n_init = n_init
        self.max_iter = max_iter
        self.plain = plain
        self.seeding = seeding
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        k = _optional_count("max_features", self.max_features)
        _too_few_rows(X.shape[0], "max_features", k)
        return self._fit(X, "collapsed-bp-means", _positive("penalty", self.penalty), k)


class KFeatures(_FeatureModel):
    __doc__ = (
        "K-features (MAD-Bayes Eq. 14, Alg. 4): ||X - Z A||^2 with K fixed.\n\n"
        "    Parameters\n    ----------\n    n_features : int, default=3\n"
        "        K (3: a base feature and two more, as in the paper's faces experiment)."
        + _REFINE_DOC
        + _PLAIN_DOC
        + _COMMON_DOC
    )

    def __init__(
        self,
        n_features=3,
        *,
        n_init=_KF["n_init"],
        max_iter=_KF["max_iter"],
        refine=None,
        plain=False,
        seeding=None,
        random_state=_KF["random_state"],
        n_jobs=None,
        verbose=False,
    ):
        self.n_features = n_features
        self.n_init = n_init
        self.max_iter = max_iter
        self.refine = refine
        self.plain = plain
        self.seeding = seeding
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        k = _count("n_features", self.n_features)
        _too_few_rows(X.shape[0], "n_features", k)
        return self._fit(X, "k-features", None, k)


class StepwiseKFeatures(_FeatureModel):
    __doc__ = (
        "Stepwise K-features (MAD-Bayes Sec. 5): K-features for K = 1, 2, ... until the"
        " BP-means objective with penalty P rises.\n\n"
        "    Parameters\n    ----------"
        + _PENALTY_DOC
        + """    max_features : int or None, default=None
        The largest K tried (None: n_samples)."""
        + _REFINE_DOC
        + _PLAIN_DOC
        + _COMMON_DOC
        + """    objective_by_k_ : the best BP-means objective at K = 1, 2, ... as tried.
"""
    )

    def __init__(
        self,
        penalty=None,
        *,
        max_features=None,
        n_init=_SKF["n_init"],
        max_iter=_SKF["max_iter"],
        refine=None,
        plain=False,
        seeding=None,
        random_state=_SKF["random_state"],
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
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        k = _optional_count("max_features", self.max_features)
        if k is not None:
            k = min(k, X.shape[0])
        self._fit(X, "stepwise-k-features", _positive("penalty", self.penalty), k)
        return self

    def _store(self, r, X):
        super()._store(r, X)
        self.objective_by_k_ = r["objective_by_k"]
        return self
