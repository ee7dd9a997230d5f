#!/usr/bin/env bash
# The main job: every built-in spec at a profile (default quick), writing
# CSVs, manifests, figures and an index under results/runs/ (or $OUT).
#   scripts/reproduce.sh [quick|paper|PROFILE] [extra dprepro flags...]
# Data: the binary's one search order (--data-dir, else $DPREPRO_DATA, else
# the per-user folder that `dprepro data fetch` fills); it prints the folder
# it uses first. With no folder named, missing files run on labelled
# synthetic stand-ins and the run ends with a line counting them.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-quick}"; shift || true
mkdir -p bin
go build -buildvcs=true -o bin/dprepro ./cmd/dprepro
exec bin/dprepro reproduce --profile "$profile" --out "${OUT:-results/runs}" "$@"
