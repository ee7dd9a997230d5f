#!/usr/bin/env bash
# Installs the Debian packages some tests need, when they are missing and
# this user can install (root, or sudo without a password):
#   python3-numpy  the external-method example (examples/python-method)
#   r-base-core, r-cran-jsonlite  the R front end and its example
#                  (R/dprepro, examples/r-method)
#   python3-venv, python3-setuptools, python3-pandas
#                  the Python package (python/package_test.go: an offline
#                  pip install into a venv; dprepro.results with pandas).
# The R and these Python packages are installed without their Recommends:
# python3-pandas recommends scipy, whose pythran pulls in OpenBLAS, which
# replaces numpy's reference BLAS and changes the last bits of the Python
# examples' results (R's recommends could do the same).
#   chromium       the HTML report in a real browser (cli TestReportInBrowser)
#   slurm-wlm, munge  scripts/slurm-array.sh on a real single-node Slurm
#                  (cli TestSlurmArrayScript_RealScheduler; it starts munged,
#                  slurmctld and slurmd itself, nothing is enabled here)
# Without them those tests skip with a message saying what to install,
# except under CI=true, where they fail (.ci/run runs this first).
set -euo pipefail
missing=()
/usr/bin/python3 -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
lean=() # installed with --no-install-recommends
command -v Rscript >/dev/null 2>&1 || lean+=(r-base-core)
Rscript -e 'library(jsonlite)' >/dev/null 2>&1 || lean+=(r-cran-jsonlite)
/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null || lean+=(python3-venv)
/usr/bin/python3 -c 'import setuptools' 2>/dev/null || lean+=(python3-setuptools)
/usr/bin/python3 -c 'import pandas' 2>/dev/null || lean+=(python3-pandas)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
# The daemons live in /usr/sbin, which a non-root PATH may not list.
has() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
{ has slurmctld && has slurmd && has sbatch; } || missing+=(slurm-wlm)
has munged || missing+=(munge)
[ ${#missing[@]} -eq 0 ] && [ ${#lean[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "debian-deps.sh: missing ${missing[*]} ${lean[*]} and no right to install them (apt-get install ${missing[*]} ${lean[*]}): the tests that need them will skip" >&2
    exit 0
  fi
fi
echo "debian-deps.sh: installing ${missing[*]} ${lean[*]}" >&2
$SUDO apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ${#lean[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null
fi
