#!/usr/bin/env bash
# Commit the claims of a paper-profile run: copy each run's manifest.json,
# summary.csv and claims.csv from OUT (a `reproduce --profile paper` output
# folder) to results/paper/<spec>/<run>/, then regenerate the README's
# account of the claims (between its claims-summary markers) from them.
# `go test ./cli -run TestReadmeClaimsSummary` fails when the two drift.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/paper-claims.sh OUT (a paper-profile reproduce folder)}"
mkdir -p bin
go build -buildvcs=true -o bin/dprepro ./cmd/dprepro
n=0
for m in "$out"/*/paper-seed*/manifest.json; do
  run="$(dirname "$m")"
  [ -f "$run/claims.csv" ] || continue
  id="$(basename "$(dirname "$run")")"
  dest="results/paper/$id/$(basename "$run")"
  mkdir -p "$dest"
  cp "$run/manifest.json" "$run/summary.csv" "$run/claims.csv" "$dest/"
  n=$((n+1))
done
echo "paper-claims.sh: copied $n runs to results/paper" >&2
go test ./cli -run TestReadmeClaimsSummary -update-readme >/dev/null
git diff --stat -- results/paper README.md || true
