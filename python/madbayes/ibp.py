"""The Indian-buffet-process methods MAD-Bayes is measured against: Gibbs samplers for the
linear-Gaussian IBP (collapsed, semi-collapsed, accelerated) and MEIBP."""

import math

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from . import _core
from ._base import (
    DEFAULTS,
    _Estimator,
    _count,
    _flag,
    _fraction,
    _optional_count,
    _positive,
    _seed,
    _tri_state,
)

__all__ = ["IBPSampler", "MEIBP"]


class _IBPModel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, _Estimator):
    """Prediction, reconstruction and held-out scoring of the IBP methods."""

    _progress_unit = "sweeps"

    def _store_common(self, r, n_train):
        self.Z_ = r["z"]
        self.components_ = r["a"]
        self.n_features_ = self.components_.shape[0]
        self.feature_counts_ = self.Z_.sum(axis=0).astype(np.int64)
        self.n_train_ = int(n_train)
        self.sigma_x_ = float(r["sigma_x"])
        self.sigma_a_ = float(r["sigma_a"])
        self.objective_ = float(r["objective"])
        self.n_iter_ = int(r["n_iter"])
        self.seconds_trace_ = r["seconds"]
        self.n_features_trace_ = r["k"]
        self.fit_seconds_ = float(r["fit_seconds"])

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _z(self, X):
        return _core.most_probable_features(
            self.components_,
            self.feature_counts_,
            self.n_train_,
            self.sigma_x_,
            X,
            self._jobs(),
        )

    def transform(self, X):
        """The most probable binary z of each row of X given A (``components_``), noise
        ``sigma_x_`` and the training rows' feature frequencies m_k / (N + 1); float64
        (n_samples, K)."""
        X = self._new_rows(X)
        return self._z(X)

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
        """Held-out score of new rows: the mean Gaussian log-density per entry,
        log N(x_nd | (z_n A)_d, sigma_x^2), with z_n = transform(X) (higher is better)."""
        X = self._new_rows(X)
        resid = X - self._z(X) @ self.components_
        s2 = self.sigma_x_**2
        return float(-0.5 * math.log(2 * math.pi * s2) - np.mean(resid**2) / (2 * s2))


_IBP = DEFAULTS["ibp"]
_TUNED = _IBP["tuned"]


class IBPSampler(_IBPModel):
    """Gibbs samplers for the linear-Gaussian IBP, X = Z A + E: ``n_chains`` independent
    chains run in parallel, the one of highest final log joint kept (as ``madbayes fit``
    does), with R-hat and effective sample sizes across the chains.

    Parameters
    ----------
    method : {"accelerated", "collapsed", "semicollapsed"}, default="accelerated"
        Accelerated Gibbs (Doshi-Velez & Ghahramani 2009, Alg. 1), collapsed Gibbs (A
        integrated out) or semi-collapsed Gibbs (A drawn every sweep).
    n_chains : int, default from the library
        Chains; chain c draws from stream c of the seed, so the result does not depend on
        ``n_jobs``. The command line's ``--chains``.
    alpha : float or None, default=None
        The IBP concentration. None: the library's default (resampled every sweep from
        ``DEFAULTS["ibp"]["tuned"]["alpha"]``; with ``plain``, fixed at the plain value).
        A given value is fixed unless ``resample=True``.
    sigma_x, sigma_a : float or None, default=None
        Noise and feature standard deviations. None: the library's defaults, fractions of
        the data's standard deviation (``DEFAULTS["ibp"][...]["sigma_x_fraction"]``),
        resampled unless ``plain``. A given value is fixed unless ``resample=True``.
    n_sweeps : int, default from the library
        Sweeps of each chain.
    window : int or None, default=None
        Rows per window of the accelerated sampler (None: the library's default).
    k_new_max : int, default from the library
        Most new features per row and step.
    resample : bool or None, default=None
        True resamples alpha, sigma_x and sigma_a every sweep even when given (the given
        values start the chain); False fixes them all; None resamples those not given.
    init : {"empty", "prior", "mixed"} or None, default=None
        Start from Z with no feature, from a draw of the IBP prior, or "mixed": empty, except
        that when sigma_x is fixed at or above the data's sd chains 1, 3, ... start from a
        prior draw (None: the library's default, ``DEFAULTS["ibp"]["tuned"]["init"]``,
        which is "mixed").
    split_merge : int or None, default=None
        Split-merge Metropolis-Hastings attempts after every sweep (None: the library's
        default; 0: none).
    block : int or None, default=None
        Each row also draws its entries on a random block of this many features jointly
        (None: the library's default; 0: none).
    anneal : float or None, default=None
        The first fraction of the sweeps in which a resampled sigma_x is held above a floor
        falling from its starting value to 1/20 of it, and a fixed sigma_x is resampled above
        itself and a floor falling from the data's sd, then fixed (a fixed sigma_a beside it
        is resampled over those sweeps, then fixed) (None: the library's default,
        ``DEFAULTS["ibp"]["tuned"]["anneal"]``; 0: none; at most 0.5, within the burn-in).
        The command line's ``--anneal``.
    plain : bool, default=False
        The paper's plain sampler (fixed alpha = 2, sigma_x = 0.25 sd, sigma_a = 0.75 sd,
        empty start, no split-merge, no block update, no annealing); options given beside
        it still apply. The command line's ``--plain``.
    random_state : int, RandomState or None, default from the library
        The seed (the command line's ``--seed``); None draws one.
    n_jobs : int or None, default=None
        Threads of the rayon pool (the chains run in parallel). Never changes the result.
    verbose : bool, default=False
        Print progress over the sweeps (of all chains) to stderr.

    Attributes
    ----------
    Z_ (the final Z of the best chain), components_ (the posterior mean of A given it),
    n_features_ (K), feature_counts_, alpha_, sigma_x_, sigma_a_ (final values),
    objective_ (-log p(X, Z)), log_joint_trace_, n_features_trace_, seconds_trace_,
    alpha_trace_, sigma_x_trace_, sigma_a_trace_ (the best chain, one entry per sweep),
    best_chain_, chains_log_joint_ and chains_n_features_ ((n_chains, n_sweeps): every
    chain), rhat_, ess_bulk_, ess_tail_ (dicts over "k", "log_joint", "alpha", "sigma_x",
    "sigma_a", from the chains' second halves; R-hat is inf where no chain moved but
    they differ), chains_agree_ (every R-hat below 1.01),
    k_distribution_ (dict K -> probability over the retained draws), n_iter_,
    fit_seconds_.
    """

    def __init__(
        self,
        method="accelerated",
        *,
        n_chains=_IBP["n_chains"],
        alpha=None,
        sigma_x=None,
        sigma_a=None,
        n_sweeps=_IBP["n_sweeps"],
        window=None,
        k_new_max=_IBP["k_new_max"],
        resample=None,
        init=None,
        split_merge=None,
        block=None,
        anneal=None,
        plain=False,
        random_state=_IBP["random_state"],
        n_jobs=None,
        verbose=False,
    ):
        self.method = method
        self.n_chains = n_chains
        self.alpha = alpha
        self.sigma_x = sigma_x
        self.sigma_a = sigma_a
        self.n_sweeps = n_sweeps
        self.window = window
        self.k_new_max = k_new_max
        self.resample = resample
        self.init = init
        self.split_merge = split_merge
        self.block = block
        self.anneal = anneal
        self.plain = plain
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        if self.method not in ("accelerated", "collapsed", "semicollapsed"):
            raise ValueError(
                f"method must be 'accelerated', 'collapsed' or 'semicollapsed', got {self.method!r}"
            )
        if self.init not in (None, "empty", "prior", "mixed"):
            raise ValueError(
                f"init must be None, 'empty', 'prior' or 'mixed', got {self.init!r}"
            )
        n_chains = _count("n_chains", self.n_chains)
        n_sweeps = _count("n_sweeps", self.n_sweeps)
        split_merge = self.split_merge
        block = self.block
        r = _core.fit_ibp(
            X,
            self.method,
            n_chains,
            _IBP["n_draws"],
            _positive("alpha", self.alpha),
            _positive("sigma_x", self.sigma_x),
            _positive("sigma_a", self.sigma_a),
            n_sweeps,
            _seed(self.random_state),
            _optional_count("window", self.window),
            _count("k_new_max", self.k_new_max, minimum=0),
            _tri_state("resample", self.resample),
            self.init,
            None if split_merge is None else _count("split_merge", split_merge, minimum=0),
            None if block is None else _count("block", block, minimum=0),
            _fraction("anneal", self.anneal),
            _flag("plain", self.plain),
            self._jobs(),
            self._progress(),
        )
        self._store_common(r, X.shape[0])
        self.alpha_ = float(r["alpha"])
        self.log_joint_trace_ = r["log_joint"]
        self.alpha_trace_ = r["alpha_trace"]
        self.sigma_x_trace_ = r["sigma_x_trace"]
        self.sigma_a_trace_ = r["sigma_a_trace"]
        self.trace_ = -self.log_joint_trace_
        self.best_chain_ = int(r["best_chain"])
        self.chains_log_joint_ = r["chains_log_joint"]
        self.chains_n_features_ = r["chains_k"].astype(np.int64)
        diag = r["diagnostics"]
        self.rhat_ = {k: v[0] for k, v in diag.items()}
        self.ess_bulk_ = {k: v[1] for k, v in diag.items()}
        self.ess_tail_ = {k: v[2] for k, v in diag.items()}
        self.chains_agree_ = bool(r["chains_agree"])
        self.k_distribution_ = {
            int(k): float(p) for k, p in zip(r["k_values"], r["k_probabilities"])
        }
        return self


_ME = DEFAULTS["meibp"]


def default_meibp_features(n, alpha):
    """MEIBP's default cap on K: twice the IBP prior's expected number of features,
    2 alpha H_N, rounded up (and at most N)."""
    harmonic = sum(1.0 / i for i in range(1, n + 1))
    return max(1, min(n, math.ceil(2 * alpha * harmonic)))


class MEIBP(_IBPModel):
    """Maximization-expectation IBP (Reed & Ghahramani 2013) for nonnegative features.

    Parameters
    ----------
    max_features : int or None, default=None
        The most features K. None: twice the IBP prior's expected number of features,
        ceil(2 alpha H_N) (at most n_samples); the value used is ``max_features_``.
    alpha : float, default from the library
    sigma_x, sigma_a : float or None, default=None
        None derives them from the data (0.75 of its standard deviation, as R&G).
    max_iter : int, default from the library
    random_state, n_jobs, verbose : as for :class:`IBPSampler`.

    Attributes
    ----------
    Z_, components_ (E_q[A], nonnegative), n_features_, feature_counts_, sigma_x_,
    sigma_a_, objective_ (minus the evidence bound), evidence_trace_, n_features_trace_,
    changed_rows_trace_, removed_features_trace_, seconds_trace_, n_iter_, converged_,
    max_features_, fit_seconds_.
    """

    _progress_unit = "iterations"

    def __init__(
        self,
        max_features=None,
        *,
        alpha=_ME["alpha"],
        sigma_x=_ME["sigma_x"],
        sigma_a=_ME["sigma_a"],
        max_iter=_ME["max_iter"],
        random_state=_ME["random_state"],
        n_jobs=None,
        verbose=False,
    ):
        self.max_features = max_features
        self.alpha = alpha
        self.sigma_x = sigma_x
        self.sigma_a = sigma_a
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        X = self._validate(X, reset=True)
        alpha = _positive("alpha", self.alpha, allow_none=False)
        k = _optional_count("max_features", self.max_features)
        if k is None:
            k = default_meibp_features(X.shape[0], alpha)
        r = _core.fit_meibp(
            X,
            k,
            alpha,
            _positive("sigma_x", self.sigma_x),
            _positive("sigma_a", self.sigma_a),
            _count("max_iter", self.max_iter),
            _seed(self.random_state),
            self._jobs(),
            self._progress(),
        )
        self._store_common(r, X.shape[0])
        self.max_features_ = k
        self.converged_ = bool(r["converged"])
        self.evidence_trace_ = r["evidence"]
        self.changed_rows_trace_ = r["changed_rows"]
        self.removed_features_trace_ = r["removed_features"]
        self.trace_ = -self.evidence_trace_
        return self
