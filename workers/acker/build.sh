#!/usr/bin/env bash
# build.sh: build the acker image (a worker that consumes and acks but
# writes no records, docs/worker-contract.md) FROM scratch with a static Go
# binary, and print its name. Use it as WORKER=image:<that name>.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
image=${LAB_IMAGE_ACKER:-notifier-lab/worker-acker:test}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$ctx/acker" ./workers/acker)
printf 'FROM scratch\nCOPY acker /acker\nENTRYPOINT ["/acker"]\n' >"$ctx/Dockerfile"
docker build -q -t "$image" "$ctx" >/dev/null
echo "$image"
