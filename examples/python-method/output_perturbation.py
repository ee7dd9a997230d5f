"""Output-perturbation logistic regression, written with numpy alone.

Chaudhuri, Monteleoni & Sarwate, "Differentially Private Empirical Risk
Minimization", JMLR 12 (2011), Algorithm 1 (output perturbation):

    w* = argmin_w  (lambda/2) |w|^2 + (1/n) sum_i log(1 + exp(-y_i x_i.w))
    release  w* + b,  with density p(b) proportional to exp(-(n lambda eps / 2) |b|_2)

With |x_i|_2 <= 1 and y_i in {-1, +1} the L2 sensitivity of w* is
2/(n lambda) (Corollary 8: the logistic loss is 1-Lipschitz), so the
release is eps-differentially private (pure; neighbouring training sets
differ in one record). b is drawn as a uniform direction times a radius
with the Gamma(d, 2/(n lambda eps)) distribution, which is that density.

The claim rests on those preconditions, so a call that does not meet them
is refused (an error reply; the unit fails with the message) rather than
answered with a guarantee that does not hold: a loss other than "logistic"
(params.loss, the spec's loss), a row with |x_i|_2 > 1 (beyond a relative
1e-9 of rounding; params.row_norm says how the spec scaled the rows, and
"none" gives no bound), a label other than -1 or +1, and a Newton run that
does not reach a gradient norm of 1e-10 (the sensitivity is that of the
exact minimizer).

This file is independent of dprepro's Go code; it serves dprepro's
cv-tuning and learner-comparison kinds as the learner named in the spec
([[methods]] name = "py-output-perturbation", serves = "learner").
"""

import os
import sys

import numpy as np

# The repository's python/ first on the path: the package whose files the
# spec's files = [...] list, so that editing them recomputes (and the
# example runs from a clone without installing the package).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
from dprepro.worker import Method, pure  # noqa: E402


def fit_logistic(X, y, lam, tol=1e-10, max_iter=100):
    """Minimize (lam/2)|w|^2 + mean log(1+exp(-y Xw)) by damped Newton;
    raise if the gradient norm is not <= tol after max_iter steps."""
    n, d = X.shape
    w = np.zeros(d)

    def objective(w):
        m = y * (X @ w)
        return 0.5 * lam * (w @ w) + np.mean(np.logaddexp(0.0, -m))

    def gradient(w):
        s = 0.5 * (1.0 - np.tanh(0.5 * (y * (X @ w))))  # sigma(-m), stable
        return lam * w - (X.T @ (y * s)) / n, s

    for _ in range(max_iter):
        grad, s = gradient(w)
        if np.linalg.norm(grad) <= tol:
            return w
        h = s * (1.0 - s)
        H = (X.T * h) @ X / n + lam * np.eye(d)
        step = np.linalg.solve(H, grad)
        if np.linalg.norm(grad) < 1e-6:  # quadratic convergence; a line search
            w = w - step                  # would only see rounding
            continue
        t, f0 = 1.0, objective(w)
        while objective(w - t * step) > f0 - 0.25 * t * (grad @ step) and t > 1e-10:
            t *= 0.5
        w = w - t * step
    g = np.linalg.norm(gradient(w)[0])
    if g <= tol:
        return w
    # The privacy analysis is that of the exact minimizer: releasing an
    # unconverged w with the claimed eps would overstate the guarantee.
    raise RuntimeError("the fit did not converge: gradient norm %.3g > %g after %d Newton steps; "
                       "nothing released" % (g, tol, max_iter))


def check_preconditions(params, X, y):
    """Raise unless the call meets what the eps-DP claim rests on: the
    logistic loss, |x_i|_2 <= 1 and labels in {-1, +1}."""
    loss = params.get("loss")
    if loss != "logistic":
        raise ValueError("loss %r: this method implements the logistic loss only (its guarantee is for it); "
                         "set the spec's loss = \"logistic\"" % (loss,))
    norm = float(np.max(np.linalg.norm(X, axis=1))) if len(X) else 0.0
    if not norm <= 1 + 1e-9:
        raise ValueError("a row has |x|_2 = %.12g > 1 (data.row_norm = %r): the sensitivity 2/(n lambda) "
                         "needs every |x_i|_2 <= 1, which row_norm l2-max, l2-clip or l2-unit gives"
                         % (norm, params.get("row_norm")))
    bad = ~np.isin(y, (-1.0, 1.0))
    if np.any(bad):
        raise ValueError("label y[%d] = %r: the guarantee needs labels -1 or +1" % (int(np.argmax(bad)), float(y[bad][0])))


method = Method("learner", "pure", version="output_perturbation.py 1 (numpy %s)" % np.__version__)


@method.op("fit")
def fit(call):
    X, y, params = call.x, call.y, call.params
    lam = float(params["lambda"])
    eps = float(params["epsilon"])
    if not (lam > 0 and eps > 0):
        raise ValueError("lambda and epsilon must be > 0 (got lambda=%r, epsilon=%r)" % (lam, eps))
    n, d = X.shape
    if len(y) != n or params.get("d", d) != d:
        raise ValueError("x is %dx%d, y has %d entries" % (n, d, len(y)))
    check_preconditions(params, X, y)
    w = fit_logistic(X, y, lam)
    rng = call.rng
    direction = rng.standard_normal(d)
    direction /= np.linalg.norm(direction)
    radius = rng.gamma(shape=d, scale=2.0 / (n * lam * eps))
    return {"weights": w + radius * direction}, pure(eps)


@method.op("stability")
def stability(call):
    """The stability constants (beta1, beta2) of Definition 2 of Chaudhuri
    & Vinterbo 2013 for the ramp-loss validation score, which the harness's
    Stability method needs (Algorithms 1-2): by their Theorem 4, output
    perturbation of a 1-Lipschitz convex loss (the logistic loss on rows
    with |x|_2 <= 1) gives beta1 = 2/lambda_min and beta2 = 1. They do not
    depend on the data; the reply claims no privacy (None). Registering
    the op makes the hello say "stability": true."""
    params = call.params
    if params.get("loss") != "logistic":
        raise ValueError("loss %r: Theorem 4's constants are for the logistic loss here" % (params.get("loss"),))
    if params.get("row_norm") == "none":
        raise ValueError("data.row_norm = \"none\": Theorem 4 needs |x|_2 <= 1")
    lam_min = min(float(v) for v in params["lambdas"])
    if not lam_min > 0:
        raise ValueError("lambdas must be > 0 (got %r)" % (params["lambdas"],))
    return {"beta1": 2.0 / lam_min, "beta2": 1.0}, None


if __name__ == "__main__":
    method.serve()
