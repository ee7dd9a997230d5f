"""Output perturbation with noise reduction for logistic regression, in numpy.

A hypothesis generator for dprepro's expost-sweep kind (Ligett, Neel, Roth,
Waggoner & Wu, "Accuracy First", NeurIPS 2017, arXiv:1705.10829), served
through the worker protocol as the [[methods]] table with serves =
"hypothesis". It implements OutputNR (Algorithm 5) independently of
dprepro's Go code:

    theta* = argmin_w (1/n) sum_i log(1 + exp(-y_i x_i.w)) + (lambda/2) |w|^2
    Delta  = 2 sqrt(d) / (n lambda)       L1 sensitivity of theta* (Lemma A.10)

"independent" (the doubling method's black box, Algorithm 4) releases
theta* + b, b_j ~ Lap(Delta/eps) i.i.d. (the Laplace mechanism: eps-DP).

"sequence" releases theta^1..theta^T at eps_1 < ... < eps_T by the noise
reduction of Koufogiannis, Han & Pappas 2015 as Algorithm 1 of Ligett et
al. states it, independently for each coordinate j:

    v_T = theta*_j + Lap(Delta/eps_T)
    for t = T-1 .. 1:  v_t = v_{t+1}                    with prob (eps_t/eps_{t+1})^2
                       v_t = v_{t+1} + Lap(Delta/eps_t)  otherwise

Privacy: each coordinate's chain is the gradual release of the Laplace
mechanism (Koufogiannis et al. 2015; Ligett et al. Theorem 2.7):
the prefix v_1..v_t has the same dependence on theta*_j as the single
release theta*_j + Lap(Delta/eps_t), whose density ratio between
neighbouring datasets is at most exp(eps_t |theta*_j - theta'*_j| / Delta).
The chains use independent randomness, so the ratios multiply and the
prefix theta^1..theta^t is eps_t-DP because |theta* - theta'*|_1 <= Delta.
Every hypothesis longer than M = sqrt(2 log 2/lambda) (params.radius) is
scaled back onto the ball, as Algorithm 5 does, so the accuracy tests'
sensitivity holds; that is post-processing. The reply claims eps_T for the
whole sequence, which is how a method declares the prefix property to
dprepro (it books eps_t for the prefix it tests). As everywhere in dprepro,
the noise comes from a seeded generator: a simulation, not hardened DP;
and theta* is computed to a gradient norm of 1e-10, not exactly.
"""

import functools
import os
import sys

import numpy as np

# The repository's python/ first on the path: the package whose files the
# spec's files = [...] list, so that editing them recomputes (and the
# example runs from a clone without installing the package).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
from dprepro.worker import Method, load_npy, pure  # noqa: E402


def fit_logistic(X, y, lam, tol=1e-10, max_iter=100):
    """Minimize mean log(1+exp(-y Xw)) + (lam/2)|w|^2 by damped Newton."""
    n, d = X.shape
    w = np.zeros(d)

    def objective(w):
        return np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5 * lam * (w @ w)

    for _ in range(max_iter):
        m = y * (X @ w)
        s = 0.5 * (1.0 - np.tanh(0.5 * m))  # sigma(-m), stable
        grad = lam * w - (X.T @ (y * s)) / n
        if np.linalg.norm(grad) <= tol:
            return w
        h = s * (1.0 - s)
        H = (X.T * h) @ X / n + lam * np.eye(d)
        step = np.linalg.solve(H, grad)
        t, f0 = 1.0, objective(w)
        while objective(w - t * step) > f0 - 0.25 * t * (grad @ step) and t > 1e-10:
            t *= 0.5
        w = w - t * step
    raise RuntimeError("Newton did not reach a gradient norm of %g in %d steps" % (tol, max_iter))


@functools.lru_cache(maxsize=8)
def minimizer(x_path, y_path, lam, n, d):
    """theta* of the problem on the data at x_path, y_path, kept for the
    last 8 problems (a sequence and the independent releases of one
    dataset share it; a failed fit raises and is not kept)."""
    X, y = load_npy(x_path), load_npy(y_path)
    if X.shape != (n, d) or y.shape != (n,):
        raise ValueError("x is %s and y %s, params say n = %d, d = %d" % (X.shape, y.shape, n, d))
    star = fit_logistic(X, y, lam)
    star.setflags(write=False)  # shared between calls
    return star


def problem(params, data):
    """theta*, the sensitivity Delta and the radius M of the call's problem."""
    if params["task"] != "logistic":
        raise ValueError("task %r: this generator is defined for logistic regression only" % params["task"])
    lam = float(params["lambda"])
    n, d = int(params["n"]), int(params["d"])
    star = minimizer(data["x"], data["y"], lam, n, d)
    return star, 2.0 * np.sqrt(d) / (n * lam), float(params["radius"])


def project(theta, radius):
    """Scale the rows of theta longer than radius onto the ball (Algorithm 5)."""
    norms = np.linalg.norm(theta, axis=-1, keepdims=True)
    return theta * np.minimum(1.0, radius / np.maximum(norms, 1e-300))


method = Method("hypothesis", "pure", version="noise_reduction.py 1 (numpy %s)" % np.__version__,
                attributes={"tasks": ["logistic"]})


@method.op("sequence")
def sequence(call):
    params = call.params
    star, delta, radius = problem(params, call.paths)
    eps = np.asarray(params["epsilons"], dtype=float)
    if eps.ndim != 1 or len(eps) == 0 or np.any(eps <= 0) or np.any(np.diff(eps) <= 0):
        raise ValueError("epsilons must be positive and increasing")
    T, d = len(eps), len(star)
    rng = call.rng
    last = star + rng.laplace(scale=delta / eps[-1], size=d)
    # Step t (0-based, t < T-1) goes from level t+1 down to level t: keep
    # the value with probability (eps_t/eps_{t+1})^2, else add fresh
    # Lap(Delta/eps_t) noise, for each coordinate independently.
    keep = rng.random((T - 1, d)) < ((eps[:-1] / eps[1:]) ** 2)[:, None]
    lap = rng.laplace(size=(T - 1, d)) * (delta / eps[:-1])[:, None]
    inc = np.where(keep, 0.0, lap)
    # v_t = v_T + sum of the increments of the steps t .. T-2.
    theta = np.empty((T, d))
    theta[-1] = last
    theta[:-1] = last + np.cumsum(inc[::-1], axis=0)[::-1]
    theta = project(theta, radius)
    return {"thetas": theta}, pure(eps[-1])


@method.op("independent")
def independent(call):
    params = call.params
    star, delta, radius = problem(params, call.paths)
    eps = float(params["epsilon"])
    theta = project(star + call.rng.laplace(scale=delta / eps, size=len(star)), radius)
    return {"theta": theta}, pure(eps)


if __name__ == "__main__":
    method.serve()
