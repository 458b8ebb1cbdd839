#!/usr/bin/env bash
# ensure-docker.sh: make sure a Docker engine answers `docker info`.
#
# - An engine already answers: nothing to do.
# - No engine, Debian, root: install docker.io from Debian's archive (if
#   dockerd is missing) and start dockerd in the background, logging to
#   $LAB_DOCKERD_LOG (default /var/log/notifier-lab-dockerd.log), with
#   none of the caller's file descriptors beyond stderr; wait for it.
# - Otherwise: stop with a message that says what to install.
#
# Exit status: 0 when `docker info` answers, 1 otherwise.
set -euo pipefail

log() { printf '[docker] %s\n' "$*" >&2; }
die() { printf '[docker] error: %s\n' "$*" >&2; exit 1; }

wait_for_engine() {
  local secs=$1 i
  for ((i = 0; i < secs; i++)); do
    if docker info >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  return 1
}

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  exit 0
fi

is_debian=false
osrelease=${LAB_OS_RELEASE:-/etc/os-release}
if [ -r "$osrelease" ] && grep -qE '^(ID|ID_LIKE)=.*debian' "$osrelease"; then
  is_debian=true
fi

if [ "$(id -u)" != 0 ] || [ "$is_debian" != true ]; then
  die "no Docker engine answers 'docker info'. Install and start Docker (https://docs.docker.com/engine/install/), or on Debian run this as root and it installs docker.io for you."
fi

if ! command -v dockerd >/dev/null 2>&1; then
  log "no Docker engine: installing Debian's docker.io (apt-get, about 15 s)"
  export DEBIAN_FRONTEND=noninteractive
  aptlog=${LAB_APT_LOG:-/var/log/notifier-lab-apt.log}
  apt-get update -qq >"$aptlog" 2>&1 || { tail -n 20 "$aptlog" >&2; die "apt-get update failed: check the Debian archive is reachable"; }
  apt-get install -y -qq docker.io >>"$aptlog" 2>&1 || { tail -n 20 "$aptlog" >&2; die "apt-get install docker.io failed (log: $aptlog)"; }
fi

logfile=${LAB_DOCKERD_LOG:-/var/log/notifier-lab-dockerd.log}
if pgrep -x dockerd >/dev/null 2>&1; then
  log "dockerd is running but not answering yet; waiting"
else
  log "starting dockerd in the background (log: $logfile)"
  # dockerd outlives this script: it must hold none of the caller's file
  # descriptors open (a flock lock would never be released, a CI log pipe
  # never reach its end), so it starts with stdin, stdout and stderr only,
  # in a session of its own.
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec setsid nohup dockerd </dev/null >"$logfile" 2>&1
  ) &
fi
if ! wait_for_engine 60; then
  tail -n 20 "$logfile" >&2 || true
  die "dockerd did not answer 'docker info' within 60 s (log: $logfile)"
fi
log "Docker engine ready ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo unknown))"
