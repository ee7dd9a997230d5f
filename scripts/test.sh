#!/usr/bin/env bash
# The test command: format check, vet and the whole test suite, against the
# real data in $DPREPRO_DATA (default ../shared/datasets). Needs only Go; the
# Go modules come from the module proxy.
#
# Every pass runs, whatever the ones before it did (a failing go test does
# not hide the Go extension's or the race detector's result); the failed
# passes are listed at the end, and the exit status is non-zero when any
# failed.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DPREPRO_DATA:-}" ] && [ -d ../shared/datasets ]; then
  DPREPRO_DATA="$(cd ../shared/datasets && pwd)"
fi
export DPREPRO_DATA="${DPREPRO_DATA:-}"
[ -n "$DPREPRO_DATA" ] || echo "test.sh: DPREPRO_DATA is not set: real-data tests will be skipped" >&2

failed=()
# pass NAME COMMAND...: runs one pass and records its failure.
pass() {
  local name=$1
  shift
  echo "== test.sh: $name" >&2
  if ! "$@"; then
    echo "test.sh: FAILED: $name" >&2
    failed+=("$name")
  fi
}

gofmt_clean() {
  local unformatted
  unformatted="$(gofmt -l .)" || return 1
  if [ -n "$unformatted" ]; then
    echo "gofmt -l lists:"; echo "$unformatted"
    return 1
  fi
}

# The Go extension example is its own module (examples/go-extension, with
# a replace to this repository): vet and test it there too. cli's
# TestGoExtension builds it and runs its spec with the binary.
go_extension() {
  (cd examples/go-extension && go vet ./... && go test -timeout 10m "$@" ./...)
}

# The example kind is its own module too (examples/kind-example); cli's
# TestKindExample builds it and runs its spec.
kind_example() {
  (cd examples/kind-example && go vet ./... && go test -timeout 10m "$@" ./...)
}

# The race detector on the concurrent parts (the parallel runner, the shared
# crypto/rand source, checkpoints); it needs cgo, hence a C compiler.
race() {
  if [ "$(go env CGO_ENABLED)" = 1 ] && command -v "$(go env CC)" >/dev/null 2>&1; then
    go test -race -timeout 10m ./runner ./core/mech ./results ./methods/external
  else
    echo "test.sh: no C compiler for cgo: the race-detector pass is skipped" >&2
  fi
}

pass "go mod download" go mod download
pass "Debian packages (scripts/debian-deps.sh)" scripts/debian-deps.sh
pass "gofmt -l ." gofmt_clean
pass "go vet ./..." go vet ./...
pass "go test ./..." go test -timeout 20m "$@" ./...
pass "the Go extension module (examples/go-extension: go vet, go test)" go_extension "$@"
pass "the example kind module (examples/kind-example: go vet, go test)" kind_example "$@"
pass "the race detector (go test -race)" race

if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: ${#failed[@]} pass(es) failed:" >&2
  printf '  - %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "test.sh: every pass succeeded" >&2
