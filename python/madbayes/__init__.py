"""madbayes: hard-assignment Bayesian nonparametrics (MAD-Bayes) as scikit-learn estimators
over a Rust core.

Clustering (``ClusterMixin``): :class:`KMeans`, :class:`DPMeans`, :class:`CollapsedDPMeans`,
:class:`MahalanobisClustering`. Latent features (``TransformerMixin``): :class:`BPMeans`,
:class:`CollapsedBPMeans`, :class:`KFeatures`, :class:`StepwiseKFeatures`. Indian buffet
process: :class:`IBPSampler`, :class:`MEIBP`. Pictures: :mod:`madbayes.plot` (matplotlib).
On a Dask cluster (``pip install "./python[dask]"`` from a clone): :mod:`madbayes.dask`
(OCC DP-means and BP-means).

Every fit and predict runs in Rust with the GIL released, on a rayon pool of ``n_jobs``
threads; the result never depends on ``n_jobs``.
"""

from ._base import DEFAULTS
from .cluster import CollapsedDPMeans, DPMeans, KMeans, MahalanobisClustering
from .features import BPMeans, CollapsedBPMeans, KFeatures, StepwiseKFeatures
from .ibp import MEIBP, IBPSampler

__version__ = "0.1.0"

__all__ = [
    "DEFAULTS",
    "KMeans",
    "DPMeans",
    "CollapsedDPMeans",
    "MahalanobisClustering",
    "BPMeans",
    "CollapsedBPMeans",
    "KFeatures",
    "StepwiseKFeatures",
    "IBPSampler",
    "MEIBP",
]
