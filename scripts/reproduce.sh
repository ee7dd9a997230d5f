#!/usr/bin/env bash
# The main job: every built-in spec at a profile (default quick), writing
# CSVs, manifests, figures and an index under results/runs/ (or $OUT).
#   scripts/reproduce.sh [quick|paper|PROFILE] [extra dprepro flags...]
# Data: the binary's one search order (--data-dir, else $DPREPRO_DATA, else
# the per-user folder that `dprepro data fetch` fills); it prints the folder
# it uses first. With no folder named, missing files run on labelled
# synthetic stand-ins and the run ends with a line counting them.
# Relative paths in $DPREPRO_DATA and $OUT are taken from the directory the
# script is called from (it then works from the repository root); so are
# those of --data-dir and --out among the extra flags.
set -euo pipefail
abs() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
[ -n "${DPREPRO_DATA:-}" ] && export DPREPRO_DATA="$(abs "$DPREPRO_DATA")"
[ -n "${OUT:-}" ] && OUT="$(abs "$OUT")"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir|-data-dir|--out|-out) args+=("$1"); shift; [ $# -gt 0 ] && { args+=("$(abs "$1")"); shift; } ;;
    --data-dir=*|-data-dir=*|--out=*|-out=*) args+=("${1%%=*}=$(abs "${1#*=}")"); shift ;;
    *) args+=("$1"); shift ;;
  esac
done
set -- ${args[@]+"${args[@]}"}
cd "$(dirname "$0")/.."
profile="${1:-quick}"; shift || true
mkdir -p bin
go build -buildvcs=true -o bin/dprepro ./cmd/dprepro
exec bin/dprepro reproduce --profile "$profile" --out "${OUT:-results/runs}" "$@"
