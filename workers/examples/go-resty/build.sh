#!/usr/bin/env bash
# build.sh: build the example team worker's image offline and print its
# name (notifier-lab/example-dispatch:<hash of its sources>). The binary is
# built on the host with the Go toolchain (static, CGO off; modules from
# the Go module cache or the module proxy) and copied into an image FROM
# scratch: no base image to pull, no registry. A second run with the same
# sources builds nothing. Use it as
#   ./run.sh audit ADAPTER=workers/examples/go-resty/adapter.yaml \
#     WORKER=image:$(workers/examples/go-resty/build.sh) PROFILE=sms
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hash=$(cd "$here" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)
image="notifier-lab/example-dispatch:$hash"
if docker image inspect "$image" >/dev/null 2>&1; then
  echo "$image"
  exit 0
fi
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
(cd "$here" && CGO_ENABLED=0 go build -trimpath -o "$ctx/dispatch" .)
printf 'FROM scratch\nCOPY dispatch /dispatch\nENTRYPOINT ["/dispatch"]\n' >"$ctx/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q --label "notifier-lab.inputs=$hash" -t "$image" "$ctx" >/dev/null 2>"$ctx/build.err" || { cat "$ctx/build.err" >&2; exit 1; }
echo "$image"
