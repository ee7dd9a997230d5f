#!/usr/bin/env bash
# Refresh the committed reference results on purpose: run every spec at the
# quick profile on the real data of $DPREPRO_DATA (required: references are
# never made on stand-ins for files that exist) and copy each run's
# summary.csv and manifest.json to results/reference/<id>/, then show what
# moved. `dprepro check` (and .ci/run) compares runs with them.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DPREPRO_DATA:?set DPREPRO_DATA to the real data folder (e.g. ../shared/datasets)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
mkdir -p bin
go build -buildvcs=true -o bin/dprepro ./cmd/dprepro
# One command per spec, so that no run takes a unit from another's
# (runner.Memo shares identical units within a command): CI's `reproduce`
# then checks, in exact mode, that sharing changes no number.
for spec in experiments/*.toml; do
  id="$(basename "$spec" .toml)"
  bin/dprepro run --profile quick --data-dir "$DPREPRO_DATA" --out "$out" "$@" "$id"
done
bin/dprepro check "$out" --against results/reference || true
for run in "$out"/*/quick-seed*/; do
  [ -f "$run/manifest.json" ] || continue
  id="$(basename "$(dirname "$run")")"
  mkdir -p "results/reference/$id"
  cp "$run/summary.csv" "$run/manifest.json" "results/reference/$id/"
  if [ -f "$run/claims.csv" ]; then cp "$run/claims.csv" "results/reference/$id/"; else rm -f "results/reference/$id/claims.csv"; fi
done
git diff --stat -- results/reference || true
