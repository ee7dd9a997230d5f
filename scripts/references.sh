#!/usr/bin/env bash
# Refresh the committed reference results on purpose: run every spec at the
# quick profile (real data from $DPREPRO_DATA, default ../shared/datasets)
# and copy each run's summary.csv and manifest.json to results/reference/<id>/,
# then show what moved. `dprepro check` (and .ci/run) compares runs with them.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DPREPRO_DATA:-}" ] && [ -d ../shared/datasets ]; then
  DPREPRO_DATA="$(cd ../shared/datasets && pwd)"
fi
export DPREPRO_DATA="${DPREPRO_DATA:-}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
mkdir -p bin
go build -o bin/dprepro ./cmd/dprepro
bin/dprepro reproduce --profile quick --out "$out" "$@"
bin/dprepro check "$out" --against results/reference || true
for run in "$out"/*/; do
  [ -f "$run/manifest.json" ] || continue
  id="$(basename "$run")"
  mkdir -p "results/reference/$id"
  cp "$run/summary.csv" "$run/manifest.json" "results/reference/$id/"
done
git diff --stat -- results/reference || true
