#!/usr/bin/env bash
# Installs the Debian packages some tests need, when they are missing and
# this user can install (root, or sudo without a password):
#   python3-numpy  the external-method example (examples/python-method)
#   chromium       the HTML report in a real browser (cli TestReportInBrowser)
# Without them those tests skip with a message saying what to install,
# except under CI=true, where they fail (.ci/run runs this first).
set -euo pipefail
missing=()
/usr/bin/python3 -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "debian-deps.sh: missing ${missing[*]} and no right to install them (apt-get install ${missing[*]}): the tests that need them will skip" >&2
    exit 0
  fi
fi
echo "debian-deps.sh: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
