#!/usr/bin/env bash
# The test command: format check, vet and the whole test suite, against the
# real data in $DPREPRO_DATA (default ../shared/datasets). Needs only Go; the
# Go modules come from the module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DPREPRO_DATA:-}" ] && [ -d ../shared/datasets ]; then
  DPREPRO_DATA="$(cd ../shared/datasets && pwd)"
fi
export DPREPRO_DATA="${DPREPRO_DATA:-}"
[ -n "$DPREPRO_DATA" ] || echo "test.sh: DPREPRO_DATA is not set: real-data tests will be skipped" >&2

go mod download
scripts/debian-deps.sh
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
  echo "gofmt -l lists:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -timeout 20m "$@" ./...
# The Go extension example is its own module (examples/go-extension, with
# a replace to this repository): vet and test it there too. cli's
# TestGoExtension builds it and runs its spec with the binary.
(cd examples/go-extension && go vet ./... && go test -timeout 10m "$@" ./...)
# The race detector on the concurrent parts (the parallel runner, the shared
# crypto/rand source, checkpoints); it needs cgo, hence a C compiler.
if [ "$(go env CGO_ENABLED)" = 1 ] && command -v "$(go env CC)" >/dev/null 2>&1; then
  go test -race -timeout 10m ./runner ./core/mech ./results ./external
else
  echo "test.sh: no C compiler for cgo: the race-detector pass is skipped" >&2
fi
