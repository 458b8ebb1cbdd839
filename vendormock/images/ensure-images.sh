#!/usr/bin/env bash
# ensure-images.sh: make sure every container image of the lab exists
# locally, then write their names to .lab/images.env (LAB_IMAGE_* variables
# that the Go code and the tests read).
#
#   LAB_IMAGES=official  pinned official images (pulled when missing)
#   LAB_IMAGES=offline   the same services built here from Debian packages
#                        (debootstrap + docker import) and the WireMock jar
#                        from the npm package wiremock@3.13.2: no registry
#   LAB_IMAGES=auto      official if present locally or pullable, else
#                        offline (the default)
#
#   LAB_IMAGE_SET=all    every image (the default; ./run.sh test)
#   LAB_IMAGE_SET="postgres workers streamreset clients" (any of them, or "core")
#                        the core images (RabbitMQ, nginx, WireMock,
#                        Toxiproxy, the worker) plus the named extras only:
#                        ./run.sh asks `lab images` which ones a command
#                        starts, so the case run builds no PostgreSQL, no
#                        reference workers and no stream-reset proxy.
#                        images.env then names only what was ensured.
#
# Toxiproxy is always built from the lab's server module
# (vendormock/images/toxiproxy/server: Toxiproxy plus the handshake toxic),
# and the worker from this checkout; both are static binaries in FROM scratch
# images. Every image built here carries the label notifier-lab.inputs=<hash
# of its build inputs>: a second run with the same inputs builds nothing.
#
# Run from the repository root (run.sh does). Exit status 0 on success.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/vendormock/images"
state="$root/.lab"
build="$state/build"
mkdir -p "$build"

kind=${LAB_IMAGES:-auto}
label=notifier-lab.inputs
set_words=${LAB_IMAGE_SET:-all}

# Pinned official images and the Debian packages that stand in for them.
OFFICIAL_RABBITMQ=rabbitmq:3.13.7
OFFICIAL_NGINX=nginx:1.27.3
OFFICIAL_WIREMOCK=wiremock/wiremock:3.13.2
WIREMOCK_VERSION=3.13.2
DEBIAN_SUITE=bookworm
DEBIAN_PACKAGES=rabbitmq-server,nginx-light,openjdk-17-jre-headless,ca-certificates

log() { printf '[images] %s\n' "$*" >&2; }
die() { printf '[images] error: %s\n' "$*" >&2; exit 1; }

# wanted EXTRA : is EXTRA (postgres, workers, streamreset, clients) in LAB_IMAGE_SET?
wanted() { [[ " $set_words " == *" all "* || " $set_words " == *" $1 "* ]]; }
for w in $set_words; do
  case $w in all | core | postgres | workers | streamreset | clients) ;;
    *) die "LAB_IMAGE_SET: unknown word '$w'; allowed: all, core, postgres, workers, streamreset, clients" ;;
  esac
done

# hash_of FILES... : one sha256 over the files' contents and names.
hash_of() {
  local f
  for f in "$@"; do printf '%s\n' "${f#"$root"/}"; cat "$f"; done | sha256sum | cut -c1-16
}
# hash_str STRING : sha256 of a string.
hash_str() { printf '%s' "$1" | sha256sum | cut -c1-16; }

# image_label IMAGE : the inputs label of a local image, "" when absent.
image_label() {
  docker image inspect --format "{{ index .Config.Labels \"$label\" }}" "$1" 2>/dev/null || true
}
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# build_image TAG HASH CONTEXT [docker build args...]
build_image() {
  local tag=$1 hash=$2 ctx=$3
  shift 3
  if [ "$(image_label "$tag")" = "$hash" ]; then
    log "$tag up to date"
    return 0
  fi
  log "building $tag"
  DOCKER_BUILDKIT=0 docker build -q --label "$label=$hash" -t "$tag" "$@" "$ctx" >/dev/null 2>"$build/docker-build.err" ||
    { cat "$build/docker-build.err" >&2; die "docker build of $tag failed"; }
}

# --- Toxiproxy: built from the lab's server module --------------------------
# vendormock/images/toxiproxy/server is its own Go module (Toxiproxy's server
# plus the handshake toxic), so its dependencies stay out of the main module.
# The tag carries the Toxiproxy version and a hash of the module's files and
# the Dockerfile: a change to the toxic builds a new image.
ensure_toxiproxy() {
  local version ctx="$build/toxiproxy" src="$here/toxiproxy/server" hash
  version=$(cd "$src" && GOFLAGS=-mod=mod go list -m -f '{{.Version}}' github.com/Shopify/toxiproxy/v2) ||
    die "cannot read the Toxiproxy version from $src/go.mod"
  local files=("$here/toxiproxy/Dockerfile" "$src/go.mod" "$src/go.sum") f
  while IFS= read -r f; do files+=("$f"); done < <(find "$src" -name '*.go' | LC_ALL=C sort)
  local ldflags="-X github.com/Shopify/toxiproxy/v2.Version=$version"
  hash=$(hash_str "$ldflags $(hash_of "${files[@]}")")
  TOXIPROXY_IMAGE="notifier-lab/toxiproxy:$version-$hash"
  if [ "$(image_label "$TOXIPROXY_IMAGE")" = "$hash" ]; then
    log "$TOXIPROXY_IMAGE up to date"
    return 0
  fi
  mkdir -p "$ctx"
  log "building the lab's Toxiproxy $version server (static, with the handshake toxic)"
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$ctx/toxiproxy-server" .) ||
    die "go build of the Toxiproxy server ($src) failed"
  cp "$here/toxiproxy/Dockerfile" "$ctx/Dockerfile"
  build_image "$TOXIPROXY_IMAGE" "$hash" "$ctx"
}

# --- The worker: built from this checkout ----------------------------------
ensure_worker() {
  local ctx="$build/worker" hash
  mkdir -p "$ctx"
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$ctx/notifier-worker" ./worker/cmd/notifier-worker) ||
    die "go build of the worker failed"
  cp "$root/worker/image/Dockerfile" "$ctx/Dockerfile"
  hash=$(hash_of "$ctx/notifier-worker" "$ctx/Dockerfile")
  WORKER_IMAGE="notifier-lab/worker:$hash"
  build_image "$WORKER_IMAGE" "$hash" "$ctx"
}

# --- The stream-reset fault proxy: built from this checkout ------------------
# vendormock/streamreset: an HTTP/2 front that resets a stream with
# PROTOCOL_ERROR after the vendor accepted it (the stream-reset-h2
# scenarios); a static binary in a FROM scratch image, like the worker.
ensure_streamreset() {
  local ctx="$build/streamreset" hash
  mkdir -p "$ctx"
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$ctx/streamreset" ./vendormock/streamreset) ||
    die "go build of the stream-reset proxy failed"
  cp "$here/streamreset/Dockerfile" "$ctx/Dockerfile"
  hash=$(hash_of "$ctx/streamreset" "$ctx/Dockerfile")
  STREAMRESET_IMAGE="notifier-lab/streamreset:$hash"
  build_image "$STREAMRESET_IMAGE" "$hash" "$ctx"
}

# --- Official images -------------------------------------------------------
official_available() {
  local img
  for img in "$OFFICIAL_RABBITMQ" "$OFFICIAL_NGINX" "$OFFICIAL_WIREMOCK"; do
    have_image "$img" && continue
    log "pulling $img"
    docker pull -q "$img" >/dev/null 2>&1 || { log "$img is not pullable here (no registry access)"; return 1; }
  done
}

# --- Offline images ----------------------------------------------------------
ensure_offline() {
  local base_hash base mirror rootfs jar_dir svc hash
  base_hash=$(hash_str "$DEBIAN_SUITE $DEBIAN_PACKAGES")
  base="notifier-lab/debian-base:$base_hash"
  if [ "$(image_label "$base")" != "$base_hash" ]; then
    if ! command -v debootstrap >/dev/null 2>&1; then
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing debootstrap (builds the offline images)"
        apt-get update -qq >"$build/apt.log" 2>&1 ||
          { tail -n 20 "$build/apt.log" >&2; die "apt-get update failed: check the Debian archive is reachable"; }
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >>"$build/apt.log" 2>&1 ||
          { tail -n 20 "$build/apt.log" >&2; die "apt-get install debootstrap failed (log: $build/apt.log)"; }
      else
        die "the offline images need debootstrap: install it (apt-get install debootstrap) or set LAB_IMAGES=official on a machine that reaches Docker Hub"
      fi
    fi
    mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    if [ -z "$mirror" ]; then
      mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    fi
    [ -n "$mirror" ] || die "cannot find a Debian mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
    rootfs=$(mktemp -d "${TMPDIR:-/tmp}/notifier-lab-rootfs.XXXXXX")
    trap 'rm -rf "$rootfs"' EXIT
    log "debootstrap $DEBIAN_SUITE with $DEBIAN_PACKAGES from $mirror (about 1 min, 640 MB)"
    debootstrap --variant=minbase --include="$DEBIAN_PACKAGES" "$DEBIAN_SUITE" "$rootfs" "$mirror" \
      >"$build/debootstrap.log" 2>&1 || { tail -n 20 "$build/debootstrap.log" >&2; die "debootstrap failed (log: $build/debootstrap.log)"; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb
    log "importing the root file system as $base"
    tar -C "$rootfs" -c . | docker import --change "LABEL $label=$base_hash" - "$base" >/dev/null ||
      die "docker import failed"
    rm -rf "$rootfs"
    trap - EXIT
  else
    log "$base up to date"
  fi

  for svc in rabbitmq nginx wiremock; do
    local ctx="$here/offline/$svc" tag
    hash=$(hash_str "$base_hash $(hash_of "$here/offline/$svc/"*)")
    case $svc in
      rabbitmq) tag="notifier-lab/rabbitmq-offline:$hash" ; RABBITMQ_IMAGE=$tag ;;
      nginx)    tag="notifier-lab/nginx-offline:$hash"    ; NGINX_IMAGE=$tag ;;
      wiremock) hash=$(hash_str "$hash wiremock@$WIREMOCK_VERSION")
                tag="notifier-lab/wiremock-offline:$hash" ; WIREMOCK_IMAGE=$tag
                if [ "$(image_label "$tag")" != "$hash" ]; then ctx=$(wiremock_context); fi ;;
    esac
    build_image "$tag" "$hash" "$ctx" --build-arg "BASE=$base"
  done
}

# wiremock_context prints a build folder with the WireMock jar from the npm
# package wiremock@$WIREMOCK_VERSION (fetched once into .lab/build/wiremock)
# and the offline WireMock Dockerfile and entrypoint.
wiremock_context() {
  local jar_dir="$build/wiremock"
  mkdir -p "$jar_dir"
  if [ ! -s "$jar_dir/wiremock-standalone.jar" ]; then
    command -v npm >/dev/null 2>&1 || die "npm is needed to fetch the WireMock jar (npm pack wiremock@$WIREMOCK_VERSION): install Node.js and npm"
    log "fetching the WireMock $WIREMOCK_VERSION jar (npm pack wiremock@$WIREMOCK_VERSION)"
    (cd "$jar_dir" && npm pack -q "wiremock@$WIREMOCK_VERSION" >/dev/null 2>"$build/npm.err") ||
      { cat "$build/npm.err" >&2; die "npm pack wiremock@$WIREMOCK_VERSION failed"; }
    tar -xzf "$jar_dir/wiremock-$WIREMOCK_VERSION.tgz" -C "$jar_dir" \
      "package/build/wiremock-standalone-$WIREMOCK_VERSION.jar" >&2
    mv "$jar_dir/package/build/wiremock-standalone-$WIREMOCK_VERSION.jar" "$jar_dir/wiremock-standalone.jar"
    rm -rf "$jar_dir/package" "$jar_dir/wiremock-$WIREMOCK_VERSION.tgz"
  fi
  cp "$here/offline/wiremock/Dockerfile" "$here/offline/wiremock/docker-entrypoint.sh" "$jar_dir/"
  printf '%s\n' "$jar_dir"
}

case $kind in
  official)
    official_available || die "LAB_IMAGES=official but the official images are neither local nor pullable; use LAB_IMAGES=offline (or auto)"
    ;;
  offline) ;;
  auto)
    if official_available; then kind=official; else
      log "using the offline images instead, built here without a registry (normal on this machine; LAB_IMAGES=offline skips the pull)"
      kind=offline
    fi
    ;;
  *) die "LAB_IMAGES must be official, offline or auto (got '$kind')" ;;
esac

if [ "$kind" = official ]; then
  RABBITMQ_IMAGE=$OFFICIAL_RABBITMQ NGINX_IMAGE=$OFFICIAL_NGINX WIREMOCK_IMAGE=$OFFICIAL_WIREMOCK
else
  ensure_offline
fi
ensure_toxiproxy
ensure_worker
STREAMRESET_IMAGE=
if wanted streamreset; then ensure_streamreset; fi

# Written to a temporary file first: a failed build leaves the previous
# images.env as it was.
env_new="$state/images.env.new"
cat >"$env_new" <<EOF
# written by vendormock/images/ensure-images.sh; read by run.sh and the Go code
LAB_IMAGES_KIND=$kind
LAB_IMAGE_SET="$set_words"
LAB_IMAGE_RABBITMQ=$RABBITMQ_IMAGE
LAB_IMAGE_NGINX=$NGINX_IMAGE
LAB_IMAGE_WIREMOCK=$WIREMOCK_IMAGE
LAB_IMAGE_TOXIPROXY=$TOXIPROXY_IMAGE
LAB_IMAGE_WORKER=$WORKER_IMAGE
LAB_IMAGE_STREAMRESET=$STREAMRESET_IMAGE
EOF
if wanted postgres; then
  LAB_IMAGES_KIND=$kind DEBIAN_BASE_INPUTS="$DEBIAN_SUITE $DEBIAN_PACKAGES" bash "$here/offline/postgres.sh" >>"$env_new"
fi
if wanted workers; then
  DEBIAN_BASE_INPUTS="$DEBIAN_SUITE $DEBIAN_PACKAGES" bash "$here/workers.sh" >>"$env_new"
fi
if wanted clients; then
  DEBIAN_BASE_INPUTS="$DEBIAN_SUITE $DEBIAN_PACKAGES" bash "$here/clients.sh" >>"$env_new"
fi
mv "$env_new" "$state/images.env"
log "images ready ($kind; $set_words): see .lab/images.env"
