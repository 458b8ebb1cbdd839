#!/usr/bin/env bash
# ensure-chromium.sh: make sure a headless Chromium is installed, for the
# test that opens the audit report's HTML page (scenarios/audit).
#
# - chromium (or chromium-browser) already on PATH: nothing to do.
# - Debian, root: install Debian's chromium package with apt-get.
# - Otherwise: stop with a message that says what to install.
#
# Exit status: 0 when a chromium binary is on PATH, 1 otherwise.
set -euo pipefail

log() { printf '[chromium] %s\n' "$*" >&2; }
die() { printf '[chromium] error: %s\n' "$*" >&2; exit 1; }

for bin in chromium chromium-browser; do
  if command -v "$bin" >/dev/null 2>&1; then
    exit 0
  fi
done

is_debian=false
if [ -r /etc/os-release ] && grep -qE '^(ID|ID_LIKE)=.*debian' /etc/os-release; then
  is_debian=true
fi
if [ "$(id -u)" != 0 ] || [ "$is_debian" != true ]; then
  die "no chromium on PATH. Install Chromium (Debian: apt-get install chromium), or on Debian run this as root and it installs it for you."
fi

log "installing Debian's chromium (apt-get, about a minute)"
export DEBIAN_FRONTEND=noninteractive
aptlog=${LAB_APT_LOG:-/var/log/notifier-lab-apt.log}
apt-get update -qq >"$aptlog" 2>&1 || { tail -n 20 "$aptlog" >&2; die "apt-get update failed: check the Debian archive is reachable"; }
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >>"$aptlog" 2>&1 || { tail -n 20 "$aptlog" >&2; die "apt-get install chromium failed (log: $aptlog)"; }
command -v chromium >/dev/null 2>&1 || die "apt-get installed chromium but it is not on PATH"
log "chromium ready ($(chromium --version 2>/dev/null || echo unknown))"
