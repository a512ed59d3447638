"""What every estimator shares: input checks, seeds, threads, progress and the defaults
read from the Rust library."""

import numbers
import os
import sys

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _core

#: The library's defaults of every algorithm, read back from its parameter builders when the
#: package is imported; the estimators' ``__init__`` defaults are taken from here, so they
#: follow the Rust library.
DEFAULTS = _core.defaults()

_DTYPES = [np.float64, np.float32]
_FAST_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


_CPUS = os.cpu_count() or 1


def _threads(n_jobs):
    """The number of threads for ``n_jobs`` (joblib's convention: None or -1 all cores,
    -2 all but one, ...)."""
    cpus = _CPUS
    if n_jobs is None:
        return cpus
    if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    if n_jobs < 0:
        return max(1, cpus + 1 + int(n_jobs))
    return int(n_jobs)


def _seed(random_state):
    """The library's seed for ``random_state``: an int is the seed itself (as the command
    line's ``--seed``); None or a RandomState/Generator draws one."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if not 0 <= random_state < 2**64:
            raise ValueError(
                f"random_state must be an integer in [0, 2**64), None or a RandomState, "
                f"got {random_state!r}"
            )
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


def _count(name, value, minimum=1):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _runs_or_auto(name, value):
    """A number of runs, or None for "auto" (the library chooses by the data's size)."""
    if isinstance(value, str) and value == "auto":
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f'{name} must be "auto" or an integer >= 1, got {value!r}')
    return int(value)


def _optional_count(name, value):
    return None if value is None else _count(name, value)


def _positive(name, value, allow_none=True):
    if value is None and allow_none:
        return None
    if (
        not isinstance(value, numbers.Real)
        or isinstance(value, bool)
        or not np.isfinite(value)
        or value <= 0
    ):
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name} must be a positive finite number{extra}, got {value!r}")
    return float(value)


def _fraction(name, value):
    """None (the library's default) or a finite number; the library checks its range."""
    if value is None:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value):
        raise ValueError(f"{name} must be a number between 0 and 0.5 or None, got {value!r}")
    return float(value)


def _tri_state(name, value):
    """None (the library's default) or a bool."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    raise ValueError(f"{name} must be True, False or None (the library's default), got {value!r}")


def _flag(name, value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def _seeding(value):
    if value is None or value in ("base", "residual"):
        return value
    raise ValueError(f"seeding must be None, 'base' or 'residual', got {value!r}")


def _too_few_rows(n, name, k):
    if k is not None and k > n:
        raise ValueError(f"n_samples={n} should be >= {name}={k}.")


class _Estimator(BaseEstimator):
    """Input validation, progress and threads for every madbayes estimator."""

    #: What one unit of progress is ("restarts" or "sweeps").
    _progress_unit = "restarts"

    def _validate(self, X, reset):
        """X checked and converted as scikit-learn's ``validate_data`` does (float64 or
        float32, 2-d, not empty, finite, ``n_features_in_`` and ``feature_names_in_``).

        A plain 2-d float64/float32 ndarray without feature names takes a fast path that
        only checks the shape: the Rust side checks every value (NaN and infinity give a
        ValueError naming the row and column) while it copies the data anyway, so a
        second pass in Python would only add to the time of small fits."""
        if (
            type(X) is np.ndarray
            and X.ndim == 2
            and X.dtype in _FAST_DTYPES
            and X.shape[0] >= 1
            and X.shape[1] >= 1
            and not hasattr(self, "feature_names_in_")
        ):
            d = X.shape[1]
            if reset:
                self.n_features_in_ = d
            elif d != self.n_features_in_:
                raise ValueError(
                    f"X has {d} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input."
                )
            return X
        return validate_data(self, X, dtype=_DTYPES, reset=reset)

    def _new_rows(self, X):
        check_is_fitted(self)
        return self._validate(X, reset=False)

    def _progress(self):
        """The callback the Rust side calls (at most every 0.5 s, and at the end) when
        ``verbose`` is on; None otherwise."""
        if not self.verbose:
            return None
        name, unit = type(self).__name__, self._progress_unit

        def report(done, total, seconds):
            end = "\n" if done >= total else ""
            print(
                f"\r[{name}] {unit} {done}/{total}, {seconds:.1f} s",
                end=end,
                file=sys.stderr,
                flush=True,
            )

        return report

    def _jobs(self):
        return _threads(self.n_jobs)
