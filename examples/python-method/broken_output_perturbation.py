"""A deliberately BROKEN output perturbation, for `dprepro audit --learner`.

It is output_perturbation.py (Chaudhuri, Monteleoni & Sarwate 2011,
Algorithm 1) with one line changed: it claims eps-DP for the eps it is
handed but draws the noise for 4*eps,

    release  w* + b,  with density p(b) proportional to exp(-(n lambda (4 eps) / 2) |b|_2),

a quarter of the noise the claim needs. Its true privacy loss is 4 eps on
the worst pair of neighbouring training sets (the minimizers 2/(n lambda)
apart). `dprepro audit --learner py-broken-output-perturbation --spec
audit-learners.toml` catches it ("claim violated"); do not use it for
anything else.
"""

import os
import sys

import numpy as np

# The dprepro package of this repository, the one the spec's files hash.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
from dprepro.worker import Method, pure  # noqa: E402

import output_perturbation as honest  # noqa: E402

method = Method("learner", "pure", version="broken_output_perturbation.py 2 (numpy %s)" % np.__version__)


@method.op("fit")
def fit(call):
    X, y, params = call.x, call.y, call.params
    lam = float(params["lambda"])
    eps = float(params["epsilon"])
    if not (lam > 0 and eps > 0):
        raise ValueError("lambda and epsilon must be > 0 (got lambda=%r, epsilon=%r)" % (lam, eps))
    n, d = X.shape
    honest.check_preconditions(params, X, y)
    w = honest.fit_logistic(X, y, lam)
    rng = call.rng
    direction = rng.standard_normal(d)
    direction /= np.linalg.norm(direction)
    radius = rng.gamma(shape=d, scale=2.0 / (n * lam * (4 * eps)))  # BROKEN: the noise for 4 eps
    return {"weights": w + radius * direction}, pure(eps)  # claims eps


if __name__ == "__main__":
    method.serve()
