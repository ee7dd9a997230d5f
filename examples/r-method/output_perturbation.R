# Output-perturbation logistic regression in R: Chaudhuri, Monteleoni &
# Sarwate, "Differentially Private Empirical Risk Minimization", JMLR 12
# (2011), Algorithm 1. w* = argmin (lambda/2)|w|^2 + mean log(1 + exp(-y x.w))
# (damped Newton to |gradient| <= 1e-10); release w* + b, density of b
# proportional to exp(-eps |b|_2 / Delta), Delta = 2/(n lambda) the L2
# sensitivity (|x_i|_2 <= 1, labels +-1; Corollary 8), drawn as a
# Gamma(d, Delta/eps) radius times a uniform direction: eps-DP (pure). A
# call outside those preconditions is refused (an error reply). R's
# generator is seeded from the call's seed by dprepro_worker.
for (f in c("npy.R", "worker.R")) source(file.path("..", "..", "R", "dprepro", "R", f))

fit <- function(x, y, params, seed) {
  lambda <- params$lambda; eps <- params$epsilon; n <- nrow(x); d <- ncol(x)
  if (!isTRUE(lambda > 0 && eps > 0)) stop(sprintf("lambda and epsilon must be > 0 (got lambda=%s, epsilon=%s)", format(lambda), format(eps)))
  if (!identical(params$loss, "logistic")) stop(sprintf("loss '%s': this method implements the logistic loss only (its guarantee is for it)", format(params$loss)))
  if (max(sqrt(rowSums(x^2))) > 1 + 1e-9 || !all(y %in% c(-1, 1))) stop("the guarantee needs |x_i|_2 <= 1 (row_norm l2-max, l2-clip or l2-unit) and labels -1 or +1")
  obj <- function(w) lambda / 2 * sum(w^2) - mean(plogis(y * drop(x %*% w), log.p = TRUE))
  w <- numeric(d)
  for (it in 1:100) {
    s <- plogis(-y * drop(x %*% w))
    g <- lambda * w - drop(crossprod(x, y * s)) / n
    if (sqrt(sum(g^2)) <= 1e-10) break
    step <- solve(crossprod(x, x * (s * (1 - s))) / n + diag(lambda, d), g)
    t <- 1 # backtracking, except near the optimum where it would only see rounding
    while (sqrt(sum(g^2)) >= 1e-6 && obj(w - t * step) > obj(w) - 0.25 * t * sum(g * step) && t > 1e-10) t <- t / 2
    w <- w - t * step
  }
  if (sqrt(sum(g^2)) > 1e-10) stop(sprintf("the fit did not converge (gradient norm %.3g); nothing released", sqrt(sum(g^2))))
  b <- rnorm(d)
  w + b / sqrt(sum(b^2)) * rgamma(1, shape = d, scale = 2 / (n * lambda * eps))
}

dprepro_worker("r-output-perturbation", serves = "learner", privacy = "pure", fit = fit,
               version = paste0("output_perturbation.R 1 (", R.version.string, ")"))
