#!/bin/bash
# curl.sh: curl as people script it, for ./run.sh client-defaults
# (scenarios/defaults). Usage: bash curl.sh MODE, MODE loop (one curl
# process per call, as a shell loop does) or multi (one curl process with
# every URL, each its own body, --next between them: curl keeps its
# connections across them). The environment gives URL, TOKEN, PREFIX and
# CALLS; the lab CA is /lab/ca.pem. Per-call ms is curl's own
# %{time_total}; wall ms is the whole loop's or process's, process starts
# included. Prints one JSON line.
set -u
mode=$1
ca=/lab/ca.pem
ms=$(mktemp)
errfile=$(mktemp)
args() { # args N: one transfer's options
  printf '%s\0' "$URL" --cacert "$ca" -sS -o /dev/null -w '%{http_code} %{time_total}\n' \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -H "X-Refkey: $PREFIX-$1" \
    --data "{\"refkey\":\"$PREFIX-$1\",\"to\":\"01000000000\",\"template\":\"defaults\",\"text\":\"client defaults\"}"
}
t0=$(date +%s%N)
case $mode in
loop)
  for n in $(seq 1 "$CALLS"); do
    mapfile -d '' a < <(args "$n")
    curl "${a[@]}" >>"$ms" 2>>"$errfile"
  done
  ;;
multi)
  all=()
  for n in $(seq 1 "$CALLS"); do
    mapfile -d '' a < <(args "$n")
    [ "$n" -gt 1 ] && all+=(--next)
    all+=("${a[@]}")
  done
  curl "${all[@]}" >>"$ms" 2>>"$errfile"
  ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
t1=$(date +%s%N)
awk -v wall="$(( (t1 - t0) / 1000 ))" -v calls="$CALLS" -v ver="$(curl --version | head -1 | cut -d' ' -f1-2)" -v err="$(head -c 200 "$errfile" | tr -d '"\\\n')" '
  $1 == "200" { ms = ms (n++ ? "," : "") sprintf("%.3f", $2 * 1000) }
  END { printf "{\"ms\":[%s],\"wall_ms\":%.3f,\"errors\":%d,\"first_error\":\"%s\",\"version\":\"%s\"}\n", ms, wall / 1000, calls - n, err, ver }' "$ms"
rm -f "$ms" "$errfile"
