#!/usr/bin/env bash
# workers.sh: make sure the contract worker images exist (workers/node,
# workers/java and workers/python, docs/worker-contract.md) and print their
# names as three lines for .lab/images.env:
#   LAB_IMAGE_WORKER_NODE=<image>
#   LAB_IMAGE_WORKER_JAVA=<image>
#   LAB_IMAGE_WORKER_PYTHON=<image>
# Called by ensure-images.sh with DEBIAN_BASE_INPUTS (the "suite packages"
# string naming the Debian base image, notifier-lab/debian-base:<hash>).
#
# Both images are built FROM that base with Debian's packages from the
# Debian archive (nodejs; openjdk-17-jdk-headless, librabbitmq-client-java,
# libokhttp-java and libhttpclient-java; python3-pika, python3-requests and
# python3-httpx). The Node worker's node_modules come from
# `npm ci` against its package-lock.json, once per lock file, into
# .lab/build/worker-node. Each image carries notifier-lab.inputs=<hash of
# its inputs>: a second run with the same inputs builds nothing. Without the
# Debian base (LAB_IMAGES=official on a machine that never built it) the
# lines are printed empty and a warning says how to get them.
#
# Logs go to stderr; stdout carries only the three lines. Exit status 0 on
# success.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/.lab/build"
mkdir -p "$build"
label=notifier-lab.inputs

log() { printf '[images] %s\n' "$*" >&2; }
die() { printf '[images] error: %s\n' "$*" >&2; exit 1; }
hash_str() { printf '%s' "$1" | sha256sum | cut -c1-16; }
# hash_files DIR FILES... : one hash over the files' names and contents.
hash_files() {
  local d=$1 f
  shift
  for f in "$@"; do printf '%s\n' "$f"; cat "$d/$f"; done | sha256sum | cut -c1-16
}
image_label() { docker image inspect --format "{{ index .Config.Labels \"$label\" }}" "$1" 2>/dev/null || true; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

[ -n "${DEBIAN_BASE_INPUTS:-}" ] || die "workers.sh needs DEBIAN_BASE_INPUTS (run it through ensure-images.sh)"
base="notifier-lab/debian-base:$(hash_str "$DEBIAN_BASE_INPUTS")"
if ! have_image "$base"; then
  log "warning: no Debian base image $base: the Node and Java reference workers are not built (LAB_IMAGES=offline vendormock/images/ensure-images.sh builds them)"
  printf 'LAB_IMAGE_WORKER_NODE=\nLAB_IMAGE_WORKER_JAVA=\nLAB_IMAGE_WORKER_PYTHON=\n'
  exit 0
fi

# build TAG HASH CONTEXT NAME
build() {
  local tag=$1 hash=$2 ctx=$3 name=$4
  if [ "$(image_label "$tag")" = "$hash" ]; then
    log "$tag up to date"
    return 0
  fi
  log "building $tag ($name)"
  DOCKER_BUILDKIT=0 docker build -q --label "$label=$hash" --build-arg "BASE=$base" -t "$tag" "$ctx" \
    >/dev/null 2>"$build/$name-build.err" ||
    { tail -n 30 "$build/$name-build.err" >&2; die "docker build of $tag failed (log: $build/$name-build.err)"; }
}

# --- Node: sources from workers/node, node_modules from npm ci ------------
src="$root/workers/node"
files=(Dockerfile entrypoint.sh main.js package.json package-lock.json)
while IFS= read -r f; do files+=("$f"); done < <(cd "$src" && find src -name '*.js' | LC_ALL=C sort)
hash=$(hash_str "$base $(hash_files "$src" "${files[@]}")")
node_tag="notifier-lab/worker-node:$hash"
if [ "$(image_label "$node_tag")" != "$hash" ]; then
  ctx="$build/worker-node"
  lock_hash=$(hash_files "$src" package-lock.json)
  if [ "$(cat "$ctx/.lock-hash" 2>/dev/null || true)" != "$lock_hash" ]; then
    command -v npm >/dev/null 2>&1 || die "npm is needed once to fetch the Node worker's packages (npm ci): install Node.js and npm"
    rm -rf "$ctx" && mkdir -p "$ctx"
    cp "$src/package.json" "$src/package-lock.json" "$ctx/"
    log "fetching the Node worker's packages (npm ci, package-lock.json)"
    (cd "$ctx" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null 2>"$build/worker-node-npm.err") ||
      { cat "$build/worker-node-npm.err" >&2; die "npm ci for workers/node failed"; }
    printf '%s' "$lock_hash" >"$ctx/.lock-hash"
  fi
  rm -rf "$ctx/src"
  (cd "$src" && cp -r Dockerfile entrypoint.sh main.js package.json package-lock.json src "$ctx/")
  build "$node_tag" "$hash" "$ctx" worker-node
else
  log "$node_tag up to date"
fi

# --- Java: compiled with javac inside the build, self test included -------
src="$root/workers/java"
files=(Dockerfile entrypoint.sh)
while IFS= read -r f; do files+=("$f"); done < <(cd "$src" && find src -name '*.java' | LC_ALL=C sort)
hash=$(hash_str "$base $(hash_files "$src" "${files[@]}")")
java_tag="notifier-lab/worker-java:$hash"
build "$java_tag" "$hash" "$src" worker-java

# --- Python: Debian's packages only, unit tests run inside the build ------
src="$root/workers/python"
files=(Dockerfile entrypoint.sh main.py)
while IFS= read -r f; do files+=("$f"); done < <(cd "$src" && find notifier tests -name '*.py' | LC_ALL=C sort)
hash=$(hash_str "$base $(hash_files "$src" "${files[@]}")")
python_tag="notifier-lab/worker-python:$hash"
build "$python_tag" "$hash" "$src" worker-python

printf 'LAB_IMAGE_WORKER_NODE=%s\nLAB_IMAGE_WORKER_JAVA=%s\nLAB_IMAGE_WORKER_PYTHON=%s\n' "$node_tag" "$java_tag" "$python_tag"
