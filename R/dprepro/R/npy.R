# The .npy reader: the files the dprepro harness hands a worker (float64,
# little-endian, written with github.com/sbinet/npyio in C order).

#' Read a .npy file of float64 numbers.
#'
#' Reads the NumPy format (versions 1.0, 2.0 and 3.0 of the header) for
#' the one element type the dprepro harness writes: little-endian float64
#' (descr '<f8'), in C (row-major) or Fortran (column-major) order, with
#' one dimension (returned as a numeric vector) or two (a numeric matrix of
#' that shape; C order is transposed on reading, so x[i, j] is row i,
#' column j either way). Anything else is an error naming the file and what
#' it holds: another element type or byte order, more dimensions, a bad
#' magic string or a file shorter than its header says.
#'
#' @param path the file's path
#' @return a numeric vector (1-D) or matrix (2-D)
read_npy <- function(path) {
  fail <- function(...) stop(sprintf("read_npy: %s: %s", path, sprintf(...)), call. = FALSE)
  if (!is.character(path) || length(path) != 1 || is.na(path)) {
    stop("read_npy: path must be one file name", call. = FALSE)
  }
  if (!file.exists(path)) fail("no such file")
  con <- file(path, "rb")
  on.exit(close(con))
  magic <- readBin(con, "raw", 8)
  if (length(magic) < 8 || !identical(magic[1:6], as.raw(c(0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59)))) {
    fail("not a .npy file (the magic string \\x93NUMPY is missing)")
  }
  major <- as.integer(magic[7])
  hlen <- switch(as.character(major),
    "1" = readBin(con, "integer", 1, size = 2, signed = FALSE, endian = "little"),
    "2" = , "3" = readBin(con, "integer", 1, size = 4, endian = "little"),
    fail("unsupported .npy format version %d.%d", major, as.integer(magic[8])))
  if (length(hlen) != 1 || is.na(hlen) || hlen < 0) fail("truncated header")
  header <- readBin(con, "raw", hlen)
  if (length(header) != hlen) fail("truncated header (%d of %d bytes)", length(header), hlen)
  header <- rawToChar(header)
  field <- function(key, pattern) {
    m <- regmatches(header, regexec(sprintf("['\"]%s['\"]\\s*:\\s*%s", key, pattern), header))[[1]]
    if (length(m) < 2) fail("the header has no %s: %s", key, trimws(header))
    m[2]
  }
  descr <- field("descr", "['\"]([^'\"]*)['\"]")
  fortran <- field("fortran_order", "(True|False)") == "True"
  shape <- field("shape", "\\(([^)]*)\\)")
  dims <- trimws(strsplit(shape, ",")[[1]])
  dims <- dims[dims != ""]
  if (descr != "<f8") {
    fail("element type '%s': only little-endian float64 ('<f8') is read", descr)
  }
  if (length(dims) < 1 || length(dims) > 2) {
    fail("shape (%s): only 1-D and 2-D arrays are read", shape)
  }
  dims <- suppressWarnings(as.numeric(dims))
  if (anyNA(dims) || any(dims < 0)) fail("bad shape (%s)", shape)
  n <- prod(dims)
  v <- readBin(con, "double", n, size = 8, endian = "little")
  if (length(v) != n) fail("the file holds %d of the %.0f numbers its shape (%s) says", length(v), n, shape)
  if (length(dims) == 1) return(v)
  if (fortran) matrix(v, nrow = dims[1], ncol = dims[2]) else matrix(v, nrow = dims[1], ncol = dims[2], byrow = TRUE)
}
