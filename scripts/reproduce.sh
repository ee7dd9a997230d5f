#!/usr/bin/env bash
# The main job: every spec under experiments/ at a profile (default quick),
# writing CSVs, manifests and figures under results/runs/ (or $OUT).
#   scripts/reproduce.sh [quick|paper] [extra dprepro flags...]
# Real data is read from $DPREPRO_DATA (default ../shared/datasets); datasets
# whose files are absent run on labelled synthetic stand-ins.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-quick}"; shift || true
if [ -z "${DPREPRO_DATA:-}" ] && [ -d ../shared/datasets ]; then
  DPREPRO_DATA="$(cd ../shared/datasets && pwd)"
fi
export DPREPRO_DATA="${DPREPRO_DATA:-}"
mkdir -p bin
go build -o bin/dprepro ./cmd/dprepro
exec bin/dprepro reproduce --profile "$profile" --out "${OUT:-results/runs}" "$@"
