"""DP gradient-descent logistic regression, written with numpy alone.

Full-batch gradient descent on the L2-regularized logistic loss,

    J(w) = (lambda/2) |w|^2 + (1/n) sum_i log(1 + exp(-y_i x_i.w)),

from w_0 = 0, for T = steps iterations, each with per-record clipped
gradients and Gaussian noise (the clipping of Abadi et al., "Deep Learning
with Differential Privacy", CCS 2016, with full batches: the gradient
perturbation of Bassily, Smith & Thakurta, FOCS 2014):

    g_t     = (1/n) sum_i clip_C(grad l(w_t; x_i, y_i)) + N(0, sigma^2 I_d)
    w_{t+1} = w_t - lr (g_t + lambda w_t)

where clip_C scales a vector to L2 norm at most C = clip. The release is
w_T, a function of the noisy averages alone (lambda w_t is data-free).

Privacy ((epsilon, delta)-DP; neighbouring training sets differ in one
record replaced by another, n fixed). Whatever the rows, a replaced record
moves the clipped average by at most Delta = 2C/n in L2 norm, so step t
is a Gaussian mechanism, rho = Delta^2/(2 sigma^2)-zCDP (Bun & Steinke,
"Concentrated Differential Privacy: Simplifications, Extensions, and
Lower Bounds", TCC 2016, Proposition 1.6); the T adaptively chosen steps
compose to T rho-zCDP (their Lemma 1.7), which is (eps, delta)-DP with
eps = T rho + 2 sqrt(T rho ln(1/delta)) (their Proposition 1.3). For the
call's epsilon and delta this solves to

    rho_total = (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2
    sigma     = (2C/n) sqrt(T / (2 rho_total))

and the reply claims exactly (epsilon, delta). The guarantee rests on the
clipping alone, not on |x_i| <= 1 (row_norm may be anything); with
|x_i| <= 1 and C >= 1 the logistic gradients have norm <= 1 and nothing
is clipped. delta = 0 is refused: Gaussian noise gives no pure guarantee.
So is a loss other than "logistic" (the spec's loss; the one this method
implements), a label other than -1 or +1 and a non-finite entry of x.

Parameters (the spec's [methods.params]; docs/worker-protocol.md):
steps (int, 50), clip (float, 1.0) and lr (float, 1.0, the step size).
Diagnostic: clip_fraction, the fraction of per-record gradients clipped,
averaged over the steps.

This file is independent of dprepro's Go code; it serves the
learner-comparison and cv-tuning kinds as the learner named in the spec
([[methods]] name = "py-dp-gd", serves = "learner"; see dp-gd.toml).
"""

import math
import os
import sys

import numpy as np

# The repository's python/ first on the path: the package whose files the
# spec's files = [...] list, so that editing them recomputes (and the
# example runs from a clone without installing the package).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
from dprepro.worker import Method, Param, approx  # noqa: E402


def noise_std(eps, delta, steps, clip, n):
    """The sigma that makes `steps` Gaussian steps on an average with L2
    sensitivity 2 clip/n (eps, delta)-DP through zCDP (Bun & Steinke 2016)."""
    L = math.log(1.0 / delta)
    rho = (eps / (math.sqrt(L + eps) + math.sqrt(L))) ** 2  # = (sqrt(L+eps)-sqrt(L))^2, stably
    return (2.0 * clip / n) * math.sqrt(steps / (2.0 * rho))


method = Method(
    "learner", "approx", version="dp_gd.py 1 (numpy %s)" % np.__version__,
    params=[Param("steps", "int", 50, "gradient steps (the noise grows as sqrt(steps))"),
            Param("clip", "float", 1.0, "per-record gradient L2 clipping norm"),
            Param("lr", "float", 1.0, "step size")],
    diagnostics=["clip_fraction"])


@method.op("fit")
def fit(call):
    X, y, params = call.x, call.y, call.params
    mp = call.method_params  # every declared parameter, converted to its type
    steps, clip, lr = mp["steps"], mp["clip"], mp["lr"]
    lam = float(params["lambda"])
    eps = float(params["epsilon"])
    delta = float(params.get("delta", 0))
    if params.get("loss") != "logistic":
        raise ValueError("loss %r: this method implements the logistic loss only; set the spec's loss = \"logistic\""
                         % (params.get("loss"),))
    if not delta > 0:
        raise ValueError("delta = %r: this learner needs delta > 0 (Gaussian noise gives no pure epsilon-DP); "
                         "set comparison.delta > 0" % (delta,))
    if not (eps > 0 and delta < 1 and lam >= 0):
        raise ValueError("need epsilon > 0, 0 < delta < 1 and lambda >= 0 (got epsilon=%r, delta=%r, lambda=%r)"
                         % (eps, delta, lam))
    if not (steps >= 1 and clip > 0 and math.isfinite(clip) and lr > 0 and math.isfinite(lr)):
        raise ValueError("need steps >= 1, clip > 0 and lr > 0 (got steps=%r, clip=%r, lr=%r)" % (steps, clip, lr))
    n, d = X.shape
    if n < 1 or len(y) != n or params.get("d", d) != d:
        raise ValueError("x is %dx%d, y has %d entries" % (n, d, len(y)))
    if not np.all(np.isfinite(X)):
        raise ValueError("x has a NaN or infinite entry")
    bad = ~np.isin(y, (-1.0, 1.0))
    if np.any(bad):
        raise ValueError("label y[%d] = %r: the logistic loss needs labels -1 or +1"
                         % (int(np.argmax(bad)), float(y[bad][0])))

    sigma = noise_std(eps, delta, steps, clip, n)
    rng = call.rng
    row_norms = np.linalg.norm(X, axis=1)
    w = np.zeros(d)
    clipped = 0.0
    for _ in range(steps):
        # grad l_i = -y_i sigma(-y_i x_i.w) x_i: a multiple c_i of x_i.
        c = -y * 0.5 * (1.0 - np.tanh(0.5 * (y * (X @ w))))  # sigma(-m), stable
        norms = np.abs(c) * row_norms
        over = norms > clip
        scale = np.where(over, clip / np.where(over, norms, 1.0), 1.0)
        clipped += np.mean(over)
        g = (X.T @ (c * scale)) / n + sigma * rng.standard_normal(d)
        w = w - lr * (g + lam * w)
    output = {"weights": w, "diagnostics": {"clip_fraction": clipped / steps}}
    return output, approx(eps, delta)


if __name__ == "__main__":
    method.serve()
