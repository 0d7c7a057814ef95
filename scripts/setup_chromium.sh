#!/usr/bin/env bash
# Headless Chromium for the report's browser test (tests/report/test_browser.py): Debian's
# `chromium` package, installed only where it is missing. Where it cannot be installed (no root,
# no apt-get, no package mirror) this says so and exits 0: the test then skips with its reason.
set -uo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup_chromium: chromium missing and not installable here (needs root and apt-get)" >&2
  exit 0
fi
echo "setup_chromium: installing Debian's chromium (once)" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
  >/tmp/setup_chromium.log 2>&1; then
  echo "setup_chromium: apt-get failed (see /tmp/setup_chromium.log); the browser test will skip" >&2
fi
exit 0
