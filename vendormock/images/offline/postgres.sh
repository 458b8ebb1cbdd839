#!/usr/bin/env bash
# postgres.sh: make sure the lab's PostgreSQL image exists and print its
# name as one line, LAB_IMAGE_POSTGRES=<image>, for .lab/images.env.
# Called by ensure-images.sh with LAB_IMAGES_KIND (official | offline) and
# DEBIAN_BASE_INPUTS (the "suite packages" string that names the offline
# Debian base image, notifier-lab/debian-base:<hash>).
#
#   official: the pinned official image, local or pulled; when neither, the
#             offline image (if the Debian base exists)
#   offline:  notifier-lab/postgres-offline:<hash>, built FROM the Debian
#             base with Debian's postgresql-15 package (apt-get from the
#             Debian archive inside `docker build`); the label
#             notifier-lab.inputs=<hash> makes a second run build nothing
#
# Logs go to stderr; stdout carries only the one line. Exit status 0 on
# success.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build="$root/.lab/build"
mkdir -p "$build"
OFFICIAL_POSTGRES=postgres:15.13
label=notifier-lab.inputs
kind=${LAB_IMAGES_KIND:-offline}

log() { printf '[images] %s\n' "$*" >&2; }
die() { printf '[images] error: %s\n' "$*" >&2; exit 1; }
hash_str() { printf '%s' "$1" | sha256sum | cut -c1-16; }
image_label() { docker image inspect --format "{{ index .Config.Labels \"$label\" }}" "$1" 2>/dev/null || true; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

if [ "$kind" = official ]; then
  if have_image "$OFFICIAL_POSTGRES" || docker pull -q "$OFFICIAL_POSTGRES" >/dev/null 2>&1; then
    printf 'LAB_IMAGE_POSTGRES=%s\n' "$OFFICIAL_POSTGRES"
    exit 0
  fi
  log "cannot pull $OFFICIAL_POSTGRES: building the offline PostgreSQL image"
fi

[ -n "${DEBIAN_BASE_INPUTS:-}" ] || die "postgres.sh needs DEBIAN_BASE_INPUTS (run it through ensure-images.sh)"
base="notifier-lab/debian-base:$(hash_str "$DEBIAN_BASE_INPUTS")"
have_image "$base" ||
  die "the Debian base image $base is missing: run LAB_IMAGES=offline vendormock/images/ensure-images.sh"

ctx="$here/postgres"
hash=$(hash_str "$base $(cd "$ctx" && cat Dockerfile docker-entrypoint.sh | sha256sum | cut -c1-16)")
tag="notifier-lab/postgres-offline:$hash"
if [ "$(image_label "$tag")" = "$hash" ]; then
  log "$tag up to date"
else
  log "building $tag (Debian's postgresql-15 from the Debian archive, about 1 min)"
  DOCKER_BUILDKIT=0 docker build -q --label "$label=$hash" --build-arg "BASE=$base" -t "$tag" "$ctx" \
    >/dev/null 2>"$build/postgres-build.err" ||
    { tail -n 30 "$build/postgres-build.err" >&2; die "docker build of $tag failed (log: $build/postgres-build.err)"; }
fi
printf 'LAB_IMAGE_POSTGRES=%s\n' "$tag"
