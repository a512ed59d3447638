import os

# scikit-learn's array-API estimator check skips itself unless SciPy's array API support is
# switched on, which must happen before SciPy is first imported; with it on, every estimator
# check runs and none is skipped.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

matplotlib.use("Agg")


@pytest.fixture
def blobs():
    """Three well-separated Gaussian clusters in 4 dimensions, 90 rows."""
    rng = np.random.default_rng(5)
    centres = np.array([[0.0, 0.0, 0.0, 0.0], [6.0, 0.0, 6.0, 0.0], [0.0, 6.0, 0.0, 6.0]])
    y = np.repeat(np.arange(3), 30)
    return centres[y] + 0.5 * rng.standard_normal((90, 4)), y


@pytest.fixture
def blocks():
    """Block images: 6 x 6 pictures, each the sum of a random subset of 4 shapes plus
    noise (the data of Griffiths & Ghahramani), 120 rows."""
    shapes = np.zeros((4, 6, 6))
    shapes[0, 0:3, 0:3] = 1
    shapes[1, 0:3, 3:6] = [[1, 1, 1], [1, 0, 1], [1, 1, 1]]
    shapes[2, 3:6, 0:3] = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    shapes[3, 3:6, 3:6] = [[0, 1, 0], [1, 1, 1], [0, 1, 0]]
    a = shapes.reshape(4, 36)
    rng = np.random.default_rng(11)
    z = (rng.random((120, 4)) < 0.5).astype(float)
    return z @ a + 0.1 * rng.standard_normal((120, 36)), z, a
