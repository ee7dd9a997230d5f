#' Load a finished dprepro run.
#'
#' Reads a run directory, OUT/<spec id>/<profile>-seed<seed> (the one
#' `dprepro run` prints): rows.csv (one row per unit result), summary.csv
#' (the aggregates the figures plot), claims.csv when the spec checks
#' claims, and the privacy ledger of manifest.json, flattened to one row
#' per charge. A missing rows.csv, summary.csv or manifest.json is an error
#' naming the file.
#'
#' @param dir the run directory
#' @return a list: rows, summary, claims (NULL when the run has none) and
#'   ledger (data frames), and manifest (the parsed manifest.json)
load_run <- function(dir) {
  if (!is.character(dir) || length(dir) != 1 || !dir.exists(dir)) {
    stop(sprintf("load_run: %s: no such directory", format(dir)), call. = FALSE)
  }
  path <- function(f) file.path(dir, f)
  need <- function(f) {
    if (!file.exists(path(f))) {
      stop(sprintf("load_run: %s: no such file (is %s a finished run's directory, OUT/<spec>/<profile>-seed<seed>?)", path(f), dir), call. = FALSE)
    }
    path(f)
  }
  csv <- function(f) utils::read.csv(f, stringsAsFactors = FALSE, check.names = FALSE, na.strings = c("NA", "NaN"))
  rows <- csv(need("rows.csv"))
  summary <- csv(need("summary.csv"))
  manifest <- jsonlite::read_json(need("manifest.json"), simplifyVector = FALSE)
  claims <- if (file.exists(path("claims.csv"))) csv(path("claims.csv")) else NULL
  list(rows = rows, summary = summary, claims = claims, ledger = ledger_frame(manifest$privacy_ledger), manifest = manifest)
}

# ledger_num reads a manifest number: a JSON number, or "inf", "-inf" or
# "nan" (how the manifest writes the values JSON has not).
ledger_num <- function(v) {
  if (is.null(v)) return(NA_real_)
  if (is.character(v)) return(switch(v, inf = Inf, "-inf" = -Inf, nan = NaN, as.numeric(v)))
  as.double(v)
}

# ledger_frame flattens the manifest's privacy_ledger: one row per charge
# (component) of each entry, with the entry's method, setting, composition
# rule and total beside it.
ledger_frame <- function(ledger) {
  str0 <- function(v) if (is.null(v)) "" else as.character(v)
  rows <- list()
  for (e in ledger) {
    for (c in e$components) {
      rows[[length(rows) + 1]] <- data.frame(
        method = str0(e$method), setting = str0(e$setting), composition = str0(e$composition),
        total_epsilon = ledger_num(e$total$epsilon), total_delta = ledger_num(e$total$delta),
        total_rho = ledger_num(e$total$rho), total_private = isTRUE(e$total$private),
        part = str0(c$part), release = str0(c$release), data = str0(c$data), notion = str0(c$notion),
        epsilon = ledger_num(c$epsilon), delta = ledger_num(c$delta), rho = ledger_num(c$rho),
        private = isTRUE(c$private), claimed = str0(c$claimed), declared_by = str0(c$declared_by),
        stringsAsFactors = FALSE)
    }
  }
  if (length(rows) == 0) {
    return(data.frame(method = character(0), setting = character(0), composition = character(0),
                      total_epsilon = numeric(0), total_delta = numeric(0), total_rho = numeric(0),
                      total_private = logical(0), part = character(0), release = character(0),
                      data = character(0), notion = character(0), epsilon = numeric(0), delta = numeric(0),
                      rho = numeric(0), private = logical(0), claimed = character(0), declared_by = character(0),
                      stringsAsFactors = FALSE))
  }
  do.call(rbind, rows)
}
