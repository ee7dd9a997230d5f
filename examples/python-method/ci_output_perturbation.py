"""Private confidence intervals for logistic-regression coefficients, in numpy.

A ci method for dprepro's ci-coverage kind ([[methods]] serves = "ci"),
written independently of dprepro's Go code after the output-perturbation
route of Wang, Kifer & Lee, "Differentially Private Confidence Intervals for
Empirical Risk Minimization" (JPC 9(1), 2019; arXiv:1804.03794), Section 5:

  1. theta_hat = argmin (1/n) sum_i w_i log(1 + exp(-y_i x_i.theta)) + c |theta|^2
     (w_i = the replicate's counts, n = sum w_i), by damped Newton steps.
  2. theta~ = theta_hat + b,  density of b ~ exp(-n c eps1 |b|_2)      [eps1]
  3. H~ = Priv(H(theta~), 1/n * sqrt(2)/4, eps2), eigenvalues >= 2c    [eps2]
     with H(t) = (1/n) sum_i w_i S(m_i) S(-m_i) x_i x_i^T + 2c I
  4. M~ = Priv(M(theta~), 1/n * sqrt(2), eps3), eigenvalues >= 0       [eps3]
     with M(t) = (1/n) sum_i w_i S(-m_i)^2 x_i x_i^T (the gradients' second
     moment, m_i = y_i x_i.t, S the sigmoid)
  5. V = H~^-1 M~ H~^-1 / n; m Monte Carlo draws z = g - b' with
     g ~ N(0, V) and b' a fresh copy of the noise of step 2; the interval
     of coordinate j is [theta~_j + q_{alpha/2}(z_j), theta~_j + q_{1-alpha/2}(z_j)].

theta0 - theta~ is approximately H^-1 G / sqrt(n) - b with G ~ N(0, Sigma),
Sigma the gradients' covariance (the paper's Eq. 8); this method uses M for
Sigma, which exceeds it by the outer product of the mean gradient (-2c theta
at the optimum), so the interval errs on the wide side.

Priv(A, Delta, eps) adds to A the symmetric noise whose upper triangle, with
the off-diagonal entries multiplied by sqrt(2), is a vector of dimension
D(D+1)/2 with density ~ exp(-eps |v|_2 / Delta) (so |v|_2 is the Frobenius
norm of the symmetric noise matrix); then it clips the eigenvalues.

Privacy (pure eps-DP, neighbouring replicates differ in one record, n
fixed): every row has |x_i|_2 <= 1 and |y_i| = 1.
  * Step 2: the objective is 2c-strongly convex and the loss 1-Lipschitz,
    so theta_hat has L2 sensitivity 2 / (n * 2c) = 1/(nc) (Chaudhuri,
    Monteleoni & Sarwate 2011, Corollary 8); the noise density ratio is then
    at most exp(eps1): eps1-DP.
  * Steps 3 and 4: each record adds a PSD rank-one term of Frobenius norm
    at most 1/(4n) (H: S(1-S) <= 1/4) or 1/n (M: S^2 <= 1). Replacing a
    record changes the matrix by (A - A')/n with A, A' PSD, and
    |A - A'|_F^2 = |A|^2 + |A'|^2 - 2 tr(AA') <= |A|^2 + |A'|^2, so the
    sensitivities are sqrt(2)/(4n) and sqrt(2)/n; the same density argument
    makes them eps2-DP and eps3-DP. They are evaluated at the released
    theta~, not at theta_hat, so their sensitivities do not depend on it.
  * Step 5 and the eigenvalue clipping are post-processing. By sequential
    composition an interval is (eps1 + eps2 + eps3)-DP and an estimate
    (theta~ alone) eps1-DP; each reply claims exactly that.
The privacy proof assumes the exact minimizer theta_hat, so a Newton run
that does not reach a gradient norm of 1e-10 releases nothing: the reply
is {"status": "fit not converged (...)"} with no theta, lo or hi (the row
records the reason, with NaN coverage; an estimate without theta ends that
method's variability interval). Its privacy claim is still the declared
cost (eps1 + eps2 + eps3 for an interval, eps1 for an estimate): the
harness requires every reply to claim exactly that, and the ledger books
it, so the budget counts as spent even though nothing was released. (The
status itself depends on the data; the analysis, which assumes an exact
solver, does not cover it, as for any solver failure.) No noise is drawn
for such a call.

The hello states the model (lr), the budget parts spent and the labels.
Randomness comes only from numpy's PCG64 seeded by the call's seed, so a
run replays bit-identically at any number of workers.
"""

import math
import os
import sys

import numpy as np

# The repository's python/ first on the path: the package whose files the
# spec's files = [...] list, so that editing them recomputes (and the
# example runs from a clone without installing the package).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
from dprepro.worker import Method, pure  # noqa: E402

VERSION = "ci_output_perturbation.py 1"

method = Method("ci", "pure", version="%s (numpy %s)" % (VERSION, np.__version__),
                attributes={
                    "model": "lr",
                    "spends": ["eps1", "eps2", "eps3"],
                    "perturbation": "output",
                    "perturbation_label": "output (Python)",
                })


def replicate(call, n):
    """The replicate's distinct rows: the records drawn, with their counts."""
    X, y, w = call.x, call.y, call.weights
    if w is None:
        raise ValueError("a ci call needs the replicate's weights")
    if X.ndim != 2 or y.shape != (X.shape[0],) or w.shape != (X.shape[0],):
        raise ValueError("x is %s, y %s, weights %s: want n x D, n, n" % (X.shape, y.shape, w.shape))
    if w.sum() != n or np.any(w < 0):
        raise ValueError("the weights sum to %g, params.n is %d" % (w.sum(), n))
    keep = w > 0
    return X[keep], y[keep], w[keep]


def sigmoid(t):
    return 0.5 * (1.0 + np.tanh(0.5 * t))  # stable for large |t|


def fit(X, y, w, n, c, tol=1e-10, max_iter=200):
    """theta_hat, and None if Newton's method converged, else the reason
    (the gradient norm reached)."""
    D = X.shape[1]
    theta = np.zeros(D)

    def objective(t):
        return np.dot(w, np.logaddexp(0.0, -y * (X @ t))) / n + c * (t @ t)

    for _ in range(max_iter):
        s = sigmoid(-y * (X @ theta))
        grad = -(X.T @ (w * y * s)) / n + 2 * c * theta
        if np.linalg.norm(grad) <= tol:
            return theta, None
        H = (X.T * (w * s * (1 - s))) @ X / n + 2 * c * np.eye(D)
        step = np.linalg.solve(H, grad)
        if np.linalg.norm(grad) < 1e-6:  # quadratic convergence; a line search
            theta = theta - step          # would only see rounding
            continue
        t, f0 = 1.0, objective(theta)
        while objective(theta - t * step) > f0 - 0.25 * t * (grad @ step) and t > 1e-12:
            t *= 0.5
        theta = theta - t * step
    s = sigmoid(-y * (X @ theta))
    g = np.linalg.norm(-(X.T @ (w * y * s)) / n + 2 * c * theta)
    if g <= tol:
        return theta, None
    return theta, "gradient norm %.3g > %g after %d Newton steps" % (g, tol, max_iter)


def l2_laplace(rng, dim, scale, size=None):
    """Draws with density ~ exp(-|v|_2 / scale) in R^dim: a uniform
    direction times a Gamma(dim, scale) radius."""
    shape = (dim,) if size is None else (size, dim)
    g = rng.standard_normal(shape)
    g /= np.linalg.norm(g, axis=-1, keepdims=True)
    r = rng.gamma(shape=dim, scale=scale, size=None if size is None else (size, 1))
    return g * r


def private_symmetric(rng, A, sensitivity, eps, floor):
    """A plus symmetric noise of Frobenius-norm density ~ exp(-eps |E|_F /
    sensitivity), with its eigenvalues raised to floor."""
    D = A.shape[0]
    iu = np.triu_indices(D)
    v = l2_laplace(rng, len(iu[0]), sensitivity / eps)
    off = iu[0] != iu[1]
    v[off] /= math.sqrt(2.0)  # the vector's norm is the matrix's Frobenius norm
    E = np.zeros((D, D))
    E[iu] = v
    E = E + np.triu(E, 1).T
    lam, Q = np.linalg.eigh(A + E)
    return (Q * np.maximum(lam, floor)) @ Q.T


def check_model(params):
    if params.get("model") != "lr":
        raise ValueError("this method covers logistic regression, not %r" % params.get("model"))


def private_theta(call):
    """theta~ (None when the fit did not converge), the replicate, the
    generator and the status ("ok" or why nothing is released)."""
    params = call.params
    n = int(params["n"])
    c = float(params["c"])
    eps1 = float(params["eps1"])
    X, y, w = replicate(call, n)
    theta_hat, why = fit(X, y, w, n, c)
    if why is not None:
        return X, y, w, None, None, "fit not converged (%s)" % why
    rng = call.rng
    theta = theta_hat + l2_laplace(rng, X.shape[1], 1.0 / (n * c * eps1))
    return X, y, w, theta, rng, "ok"


@method.op("interval")
def interval(call):
    params = call.params
    check_model(params)
    n = int(params["n"])
    c = float(params["c"])
    eps1, eps2, eps3 = float(params["eps1"]), float(params["eps2"]), float(params["eps3"])
    alpha = float(params["alpha"])
    m = int(params["m"])
    claim = pure(eps1 + eps2 + eps3)  # the declared cost, released or not
    X, y, w, theta, rng, status = private_theta(call)
    if theta is None:
        return {"status": status}, claim
    D = X.shape[1]
    s = sigmoid(y * (X @ theta))  # S(m_i); S(-m_i) = 1 - s
    H = (X.T * (w * s * (1 - s))) @ X / n + 2 * c * np.eye(D)
    M = (X.T * (w * (1 - s) ** 2)) @ X / n
    Ht = private_symmetric(rng, H, math.sqrt(2.0) / (4 * n), eps2, 2 * c)
    Mt = private_symmetric(rng, M, math.sqrt(2.0) / n, eps3, 0.0)
    Hinv = np.linalg.inv(Ht)
    V = Hinv @ Mt @ Hinv / n
    V = (V + V.T) / 2
    lam, Q = np.linalg.eigh(V)
    L = Q * np.sqrt(np.maximum(lam, 0.0))
    z = rng.standard_normal((m, D)) @ L.T - l2_laplace(rng, D, 1.0 / (n * c * eps1), size=m)
    lo = theta + np.quantile(z, alpha / 2, axis=0)
    hi = theta + np.quantile(z, 1 - alpha / 2, axis=0)
    out = {"theta": theta, "lo": lo, "hi": hi, "status": status}
    return out, claim


@method.op("estimate")
def estimate(call):
    check_model(call.params)
    claim = pure(call.params["eps1"])  # the declared cost, released or not
    _, _, _, theta, _, status = private_theta(call)
    if theta is None:
        return {"status": status}, claim
    return {"theta": theta, "status": status}, claim


if __name__ == "__main__":
    method.serve()
