"""Output-perturbation logistic regression, written with numpy alone.

Chaudhuri, Monteleoni & Sarwate, "Differentially Private Empirical Risk
Minimization", JMLR 12 (2011), Algorithm 1 (output perturbation):

    w* = argmin_w  (lambda/2) |w|^2 + (1/n) sum_i log(1 + exp(-y_i x_i.w))
    release  w* + b,  with density p(b) proportional to exp(-(n lambda eps / 2) |b|_2)

With |x_i|_2 <= 1 the L2 sensitivity of w* is 2/(n lambda) (Corollary 8), so
the release is eps-differentially private (pure; neighbouring training sets
differ in one record). b is drawn as a uniform direction times a radius
with the Gamma(d, 2/(n lambda eps)) distribution, which is that density.

This file is independent of dprepro's Go code; it serves dprepro's
cv-tuning and learner-comparison kinds as the learner named in the spec
([[methods]] name = "py-output-perturbation", serves = "learner").
"""

import numpy as np

import dprepro_worker

_cache = {}


def load(path):
    """Read a .npy file once per path (the harness never rewrites a path)."""
    a = _cache.get(path)
    if a is None:
        a = np.load(path)
        _cache[path] = a
    return a


def fit_logistic(X, y, lam, tol=1e-10, max_iter=100):
    """Minimize (lam/2)|w|^2 + mean log(1+exp(-y Xw)) by damped Newton."""
    n, d = X.shape
    w = np.zeros(d)

    def objective(w):
        m = y * (X @ w)
        return 0.5 * lam * (w @ w) + np.mean(np.logaddexp(0.0, -m))

    for _ in range(max_iter):
        m = y * (X @ w)
        s = 0.5 * (1.0 - np.tanh(0.5 * m))  # sigma(-m), stable
        grad = lam * w - (X.T @ (y * s)) / n
        if np.linalg.norm(grad) <= tol:
            break
        h = s * (1.0 - s)
        H = (X.T * h) @ X / n + lam * np.eye(d)
        step = np.linalg.solve(H, grad)
        t, f0 = 1.0, objective(w)
        while objective(w - t * step) > f0 - 0.25 * t * (grad @ step) and t > 1e-10:
            t *= 0.5
        w = w - t * step
    return w


def fit(params, seed, data, weights):
    X = load(data["x"])
    y = load(data["y"])
    lam = float(params["lambda"])
    eps = float(params["epsilon"])
    if not (lam > 0 and eps > 0):
        raise ValueError("lambda and epsilon must be > 0 (got lambda=%r, epsilon=%r)" % (lam, eps))
    n, d = X.shape
    if len(y) != n or params.get("d", d) != d:
        raise ValueError("x is %dx%d, y has %d entries" % (n, d, len(y)))
    w = fit_logistic(X, y, lam)
    rng = np.random.default_rng(seed)
    direction = rng.standard_normal(d)
    direction /= np.linalg.norm(direction)
    radius = rng.gamma(shape=d, scale=2.0 / (n * lam * eps))
    return {"weights": (w + radius * direction).tolist()}, {"epsilon": eps}


if __name__ == "__main__":
    dprepro_worker.serve("learner", "pure", {"fit": fit},
                         version="output_perturbation.py 1 (numpy %s)" % np.__version__)
