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

import numpy as np

import dprepro_worker
import output_perturbation as honest


def fit(params, seed, data, weights):
    X = honest.load(data["x"])
    y = honest.load(data["y"])
    lam = float(params["lambda"])
    eps = float(params["epsilon"])
    if not (lam > 0 and eps > 0):
        raise ValueError("lambda and epsilon must be > 0 (got lambda=%r, epsilon=%r)" % (lam, eps))
    n, d = X.shape
    honest.check_preconditions(params, X, y)
    w = honest.fit_logistic(X, y, lam)
    rng = np.random.default_rng(seed)
    direction = rng.standard_normal(d)
    direction /= np.linalg.norm(direction)
    radius = rng.gamma(shape=d, scale=2.0 / (n * lam * (4 * eps)))  # BROKEN: the noise for 4 eps
    return {"weights": (w + radius * direction).tolist()}, {"epsilon": eps}  # claims eps


if __name__ == "__main__":
    dprepro_worker.serve("learner", "pure", {"fit": fit},
                         version="broken_output_perturbation.py 1 (numpy %s)" % np.__version__)
