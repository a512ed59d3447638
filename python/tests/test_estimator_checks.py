"""scikit-learn's estimator checks on every estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import madbayes

# Every estimator with its default parameters, except the samplers' chain length: the
# checks fit each estimator dozens of times, and 1000 sweeps each would only make them slow
# (nothing a check looks at depends on the chain length).
ESTIMATORS = [
    madbayes.KMeans(),
    madbayes.DPMeans(),
    madbayes.CollapsedDPMeans(),
    madbayes.MahalanobisClustering(),
    madbayes.BPMeans(),
    madbayes.CollapsedBPMeans(),
    madbayes.KFeatures(),
    madbayes.StepwiseKFeatures(),
    madbayes.IBPSampler(method="accelerated", n_sweeps=50),
    madbayes.IBPSampler(method="collapsed", n_sweeps=50),
    madbayes.IBPSampler(method="semicollapsed", n_sweeps=50),
    madbayes.MEIBP(),
]


def expected_failed_checks(estimator):
    """Checks an estimator is known to fail, each with the reason; none so far."""
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
