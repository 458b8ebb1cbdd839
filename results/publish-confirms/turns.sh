#!/usr/bin/env bash
# turns.sh BEFORE AFTER [ROUNDS]: BenchmarkIntegrationPublishConfirms at two
# commits, in turns (before, after, before, after, ...), each run under the
# shared measure lock, each against a fresh RabbitMQ container of the
# lab's image. Raw `go test` output goes to <label>-<round>.txt here, with
# the commit, the time and the load average before and after each run.
#
#   results/publish-confirms/turns.sh 43dfca8 <after> 2
#
# BENCH (the -bench pattern, default IntegrationPublishConfirms),
# BENCHTIME (default 1000x) and PREFIX (of the file names, default none)
# select another set; OVERLAY (paths) copies those files from AFTER's tree
# into BEFORE's (a benchmark file added after BEFORE, using only its API). Needs LAB_IMAGE_RABBITMQ (set -a; . .lab/images.env;
# set +a).
set -euo pipefail
before=${1:?usage: turns.sh BEFORE AFTER [ROUNDS]}
after=${2:?usage: turns.sh BEFORE AFTER [ROUNDS]}
rounds=${3:-2}
bench=${BENCH:-IntegrationPublishConfirms}
benchtime=${BENCHTIME:-1000x}
prefix=${PREFIX:-}
: "${LAB_IMAGE_RABBITMQ:?set LAB_IMAGE_RABBITMQ (.lab/images.env)}"
export TESTCONTAINERS_HOST_OVERRIDE=${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
lock=${MEASURE_LOCK:-/work/wt/measure.lock}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for label in before after; do
	commit=${!label}
	mkdir -p "$work/$label"
	git -C "$repo" archive "$commit" | tar -x -C "$work/$label"
done
for f in ${OVERLAY:-}; do
	cp "$work/after/$f" "$work/before/$f"
done
for round in $(seq 1 "$rounds"); do
	for label in before after; do
		commit=$(git -C "$repo" rev-parse --short "${!label}")
		out="$here/$prefix$label-$round.txt"
		echo "== $label round $round: commit $commit -> $out" >&2
		{
			echo "commit: $commit ($label)${OVERLAY:+; the before tree has $OVERLAY from after}"
			echo "command: go test -tags integration -run '^\$' -bench '$bench' -benchtime $benchtime -count 1 ./worker"
			echo "start: $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
			(cd "$work/$label" && flock "$lock" go test -tags integration -run '^$' \
				-bench "$bench" -benchtime "$benchtime" -count 1 ./worker 2>&1)
			echo "end: $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
		} >"$out"
		grep -E '^Benchmark|^(ok|FAIL)' "$out" >&2 || true
	done
done
