#!/usr/bin/env bash
# clients.sh: make sure the client-defaults image exists
# (vendormock/images/clients/Dockerfile: nodejs, python3-requests and curl
# from Debian on the lab's Debian base) and print its name as one line for
# .lab/images.env:
#   LAB_IMAGE_CLIENTS=<image>
# Called by ensure-images.sh with DEBIAN_BASE_INPUTS, like workers.sh. The
# image carries notifier-lab.inputs=<hash of its inputs>: a second run with
# the same inputs builds nothing. Without the Debian base the line is
# printed empty and a warning says how to get it. Logs go to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/.lab/build"
mkdir -p "$build"
label=notifier-lab.inputs

log() { printf '[images] %s\n' "$*" >&2; }
die() { printf '[images] error: %s\n' "$*" >&2; exit 1; }
hash_str() { printf '%s' "$1" | sha256sum | cut -c1-16; }

[ -n "${DEBIAN_BASE_INPUTS:-}" ] || die "clients.sh needs DEBIAN_BASE_INPUTS (run it through ensure-images.sh)"
base="notifier-lab/debian-base:$(hash_str "$DEBIAN_BASE_INPUTS")"
if ! docker image inspect "$base" >/dev/null 2>&1; then
  log "warning: no Debian base image $base: the client-defaults image is not built (LAB_IMAGES=offline vendormock/images/ensure-images.sh builds it)"
  printf 'LAB_IMAGE_CLIENTS=\n'
  exit 0
fi
hash=$(hash_str "$base $(cat "$here/clients/Dockerfile")")
tag="notifier-lab/clients:$hash"
if [ "$(docker image inspect --format "{{ index .Config.Labels \"$label\" }}" "$tag" 2>/dev/null || true)" = "$hash" ]; then
  log "$tag up to date"
else
  log "building $tag (client-defaults: nodejs, python3-requests, curl)"
  DOCKER_BUILDKIT=0 docker build -q --label "$label=$hash" --build-arg "BASE=$base" -t "$tag" "$here/clients" \
    >/dev/null 2>"$build/clients-build.err" ||
    { tail -n 30 "$build/clients-build.err" >&2; die "docker build of $tag failed (log: $build/clients-build.err)"; }
fi
printf 'LAB_IMAGE_CLIENTS=%s\n' "$tag"
