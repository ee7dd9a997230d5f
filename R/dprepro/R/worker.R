# The worker loop: the dprepro worker protocol, version 1
# (docs/worker-protocol.md in the dprepro repository): one JSON object per
# line on stdin and stdout; the harness sends a hello, the worker answers
# with its own, then every call line gets exactly one reply; when the
# harness closes stdin the worker returns.

#' Seed R's random number generator from a protocol seed.
#'
#' The harness hands every call a seed below 2^53; seeding every draw with
#' it makes a method replay bit-identically. R's set.seed takes 32 bits,
#' so the seed is split into s1 = seed mod 2^31 and s2 = floor(seed / 2^31)
#' (a bijection; s2 < 2^22), and the Mersenne-Twister state is the state of
#' set.seed(s1) XOR the state of set.seed(s2) rotated by one word (the
#' rotation keeps (s1, s2) and (s2, s1) apart). Distinct seeds thus give
#' distinct states instead of colliding modulo 2^32. The generator is set
#' to R's default kinds (Mersenne-Twister, Inversion, Rejection), whatever
#' the session had. The worker loop calls it before every op; seeded noise
#' is a simulation, not a hardened sampler.
#'
#' @param seed an integer-valued number in [0, 2^53)
dprepro_seed <- function(seed) {
  if (!is.numeric(seed) || length(seed) != 1 || !is.finite(seed) || seed < 0 || seed >= 2^53 || seed != floor(seed)) {
    stop(sprintf("dprepro_seed: the seed must be an integer in [0, 2^53) (got %s)", format(seed)), call. = FALSE)
  }
  RNGkind("Mersenne-Twister", "Inversion", "Rejection")
  words <- function(s) { # the 624 state words of set.seed(s), as unsigned doubles
    set.seed(s)
    w <- .Random.seed[-(1:2)]
    u <- as.double(w)
    u[is.na(w)] <- -2^31 # NA_integer_ is the word 0x80000000
    u %% 2^32
  }
  xor32 <- function(a, b) { # bitwXor works on 31 bits: XOR the 16-bit halves
    bitwXor(a %/% 65536, b %/% 65536) * 65536 + bitwXor(a %% 65536, b %% 65536)
  }
  a <- words(seed %% 2^31)
  b <- words(seed %/% 2^31)
  m <- xor32(a, c(b[-1], b[1]))
  if (all(m == 0)) m[1] <- 1 # an all-zero state would make R reseed from the clock
  m[m >= 2^31] <- m[m >= 2^31] - 2^32
  state <- .Random.seed
  state[-(1:2)] <- suppressWarnings(as.integer(m)) # -2^31 becomes NA_integer_, the same bits
  assign(".Random.seed", state, envir = globalenv())
  invisible(NULL)
}

# json_encode writes x as JSON: a named list is an object, an unnamed list
# an array; an atomic vector of length 1 is a scalar unless wrapped in I(),
# longer ones are arrays; NA is null; numbers keep full precision (the
# shortest of 15 or 17 significant digits that reads back exactly). NaN
# and infinities, which JSON has not, are an error.
json_encode <- function(x) {
  if (is.null(x)) return("null")
  if (is.list(x)) {
    parts <- vapply(x, json_encode, "")
    if (!is.null(names(x))) {
      keys <- vapply(names(x), function(k) as.character(jsonlite::toJSON(k, auto_unbox = TRUE)), "")
      return(paste0("{", paste0(keys, ":", parts, collapse = ","), "}"))
    }
    return(paste0("[", paste0(parts, collapse = ","), "]"))
  }
  array <- length(x) != 1 || inherits(x, "AsIs") # decided before as.double drops the class
  if (is.factor(x)) x <- as.character(x)
  s <- if (is.logical(x)) {
    ifelse(x, "true", "false")
  } else if (is.numeric(x)) {
    if (any(is.nan(x) | is.infinite(x))) stop("NaN/Inf (JSON has neither)", call. = FALSE)
    x <- as.double(x)
    f <- sprintf("%.15g", x)
    long <- !is.na(x) & as.numeric(f) != x
    f[long] <- sprintf("%.17g", x[long])
    f
  } else if (is.character(x)) {
    vapply(x, function(v) as.character(jsonlite::toJSON(v, auto_unbox = TRUE)), "", USE.NAMES = FALSE)
  } else {
    stop(sprintf("a value of class %s has no JSON form", class(x)[1]), call. = FALSE)
  }
  s[is.na(x)] <- "null"
  if (!array) s else paste0("[", paste0(s, collapse = ","), "]")
}

#' Serve a method to the dprepro harness over the worker protocol.
#'
#' Reads the harness's hello on stdin, answers it, then answers every call
#' line until stdin closes. Anything the method prints goes to stderr (the
#' run's workers.log): standard output carries the protocol alone.
#'
#' For a learner give fit = function(x, y, params, seed): x is the n x d
#' training matrix, y the n labels (+-1), params the call's params (lambda,
#' epsilon, delta, n, d, loss, huber_h, row_norm and, with declared
#' parameters, method_params), seed the call's seed, with which R's
#' generator is already seeded (dprepro_seed). It returns the weights
#' (numeric, length d), claiming the level it was asked for in the declared
#' form (pure: epsilon; approx: epsilon and delta), or a list with weights,
#' optionally privacy (the claim, e.g. list(rho = r), which a zcdp method
#' must give) and diagnostics (named numbers or NA).
#'
#' Every other op (and every op of a ci or hypothesis method) is a function
#' in ops: function(params, seed, data, weights) returning
#' list(output = ..., privacy = ...) (privacy NULL: no claim), where data
#' maps roles to .npy paths (read them with read_npy) and weights is the
#' call's row counts or NULL.
#'
#' A call that fails (stop(), a missing file, an output JSON cannot carry)
#' is answered with an error reply carrying the message; so is a line that
#' is not a call. The worker keeps serving.
#'
#' @param name the method's name, for the log
#' @param serves "learner", "ci" or "hypothesis"
#' @param privacy the form of every claim: "pure", "approx" or "zcdp"
#' @param fit a learner's fit function (see above), or NULL
#' @param ops more ops: a named list of functions (see above)
#' @param params declared parameters: a list of list(name, type, default,
#'   doc) (type "float", "int", "bool" or "string"; doc optional)
#' @param version the version string recorded in the run's manifest
#' @param attributes more hello attributes (e.g. list(stability = TRUE))
#' @param input,output the protocol's connections (default stdin, stdout)
dprepro_worker <- function(name, serves = "learner", privacy = "pure", fit = NULL, ops = list(),
                           params = NULL, version = "", attributes = list(),
                           input = file("stdin"), output = stdout()) {
  stopifnot(is.character(serves), length(serves) == 1, is.character(privacy), length(privacy) == 1)
  if (!is.null(fit)) ops$fit <- fit_op(fit, privacy)
  if (length(params)) {
    attributes$params <- lapply(params, function(p) {
      p <- as.list(p)
      if (is.null(names(p))) names(p) <- c("name", "type", "default", "doc")[seq_along(p)]
      p
    })
  }
  force(output) # evaluate stdout() before the sink below redirects it
  if (!isOpen(input)) open(input, "r")
  send <- function(msg) {
    cat(json_encode(msg), "\n", sep = "", file = output)
    flush(output)
  }
  sink(stderr()) # stray output goes to the log, not into the protocol stream
  on.exit(sink())
  line <- readLines(input, n = 1, warn = FALSE)
  if (length(line) == 0) return(invisible(NULL))
  hello <- tryCatch(jsonlite::fromJSON(line, simplifyVector = FALSE), error = function(e) NULL)
  if (!is.list(hello) || !identical(hello$type, "hello")) {
    stop(sprintf("dprepro_worker: expected a hello from the harness, got %s", substr(line, 1, 80)), call. = FALSE)
  }
  reply <- list(type = "hello", protocol = 1, serves = serves, privacy = privacy)
  if (nzchar(version)) reply$version <- version
  if (length(attributes)) reply$attributes <- attributes
  send(reply)
  message(sprintf("dprepro_worker: %s serving %s (%s privacy)", if (is.null(hello$method)) name else hello$method, serves, privacy))
  repeat {
    line <- readLines(input, n = 1, warn = FALSE)
    if (length(line) == 0) break
    if (!nzchar(trimws(line))) next
    send(answer(line, ops))
  }
  invisible(NULL)
}

# answer returns the reply to one call line: a result, or an error naming
# what went wrong.
answer <- function(line, ops) {
  req <- tryCatch(jsonlite::fromJSON(line, simplifyVector = TRUE, simplifyDataFrame = FALSE, simplifyMatrix = FALSE),
                  error = function(e) e)
  fail <- function(id, msg) {
    message("dprepro_worker: call ", if (is.null(id)) "?" else id, ": ", msg)
    list(type = "error", id = id, message = msg)
  }
  if (inherits(req, "error")) return(fail(NULL, paste("the request is not JSON:", conditionMessage(req))))
  if (!is.list(req) || !identical(req$type, "call")) return(fail(req$id, "the request is not a call"))
  id <- req$id
  op <- if (is.character(req$op) && length(req$op) == 1) ops[[req$op]] else NULL
  if (is.null(op)) return(fail(id, sprintf("unknown op %s", if (is.null(req$op)) "(none)" else format(req$op))))
  res <- tryCatch({
    seed <- if (is.null(req$seed)) 0 else req$seed
    dprepro_seed(seed)
    r <- op(if (is.null(req$params)) list() else req$params, seed, if (is.null(req$data)) list() else req$data, req$weights)
    if (!is.list(r) || !("output" %in% names(r))) stop("the op must return list(output = ..., privacy = ...)", call. = FALSE)
    msg <- list(type = "result", id = id, output = r$output, privacy = r$privacy)
    json_encode(msg) # fails here, inside the tryCatch, if JSON cannot carry the output
    msg
  }, error = function(e) e)
  if (inherits(res, "error")) return(fail(id, conditionMessage(res)))
  res
}

# npy_cache keeps the last 8 arrays read, by path: the harness never
# rewrites a path, and a long run hands a worker many.
npy_cache <- new.env()
npy_cache$paths <- character(0)
npy_cache$arrays <- list()

cached_npy <- function(path) {
  i <- match(path, npy_cache$paths)
  if (!is.na(i)) return(npy_cache$arrays[[i]])
  a <- read_npy(path)
  npy_cache$paths <- c(path, utils::head(npy_cache$paths, 7))
  npy_cache$arrays <- c(list(a), utils::head(npy_cache$arrays, 7))
  a
}

#' The claim of a fit whose (epsilon, delta) the harness computes
#'
#' steps steps of the Poisson-subsampled Gaussian mechanism (DP-SGD;
#' sampling_rate 1 for full-batch DP-GD) with noise standard deviation
#' noise_multiplier times the L2 sensitivity of each step's sum. The
#' harness's accountants (privacy-loss distributions, and RDP after
#' Mironov, Talwar & Zhang 2019) compute its epsilon at delta (the
#' level's when NULL) and it books the smaller bound; epsilon, if
#' given, is the method's own figure, set beside it (a smaller one is a
#' warning). Return it as a fit's privacy, with
#' dprepro_worker(privacy = "approx", attributes = list(mechanism =
#' "subsampled-gaussian")); docs/worker-protocol.md states the adjacency.
#'
#' @param noise_multiplier sigma, > 0
#' @param sampling_rate q in [0, 1]
#' @param steps T, a whole number >= 1
#' @param epsilon,delta optional: the method's own epsilon, a delta other
#'   than the level's
#' @return the claim, a list
#' @export
subsampled_gaussian <- function(noise_multiplier, sampling_rate, steps, epsilon = NULL, delta = NULL) {
  claim <- list(mechanism = list(name = "subsampled-gaussian", noise_multiplier = as.double(noise_multiplier),
                                 sampling_rate = as.double(sampling_rate), steps = as.integer(steps)))
  if (!is.null(epsilon)) claim$epsilon <- as.double(epsilon)
  if (!is.null(delta)) claim$delta <- as.double(delta)
  claim
}

# fit_op wraps a learner's fit(x, y, params, seed) as the op "fit".
fit_op <- function(fit, privacy) {
  function(params, seed, data, weights) {
    for (role in c("x", "y")) {
      if (!is.character(data[[role]])) stop(sprintf("the call has no data.%s", role), call. = FALSE)
    }
    x <- cached_npy(data$x)
    y <- cached_npy(data$y)
    if (is.null(dim(x))) x <- matrix(x, ncol = 1)
    if (length(y) != nrow(x)) stop(sprintf("x is %dx%d, y has %d entries", nrow(x), ncol(x), length(y)), call. = FALSE)
    r <- fit(x, y, params, seed)
    if (!is.list(r)) r <- list(weights = r)
    w <- r$weights
    if (!is.numeric(w) || length(w) != ncol(x)) {
      stop(sprintf("fit returned %d weights for d = %d columns", length(w), ncol(x)), call. = FALSE)
    }
    claim <- r$privacy
    if (is.null(claim)) {
      claim <- switch(privacy,
        pure = list(epsilon = params$epsilon),
        approx = list(epsilon = params$epsilon, delta = params$delta),
        stop("a zcdp fit must return list(weights = ..., privacy = list(rho = ...))", call. = FALSE))
    }
    out <- list(weights = I(as.double(w)))
    if (!is.null(r$diagnostics)) out$diagnostics <- as.list(r$diagnostics)
    list(output = out, privacy = claim)
  }
}
