#!/usr/bin/env bash
# run.sh: the one entry point of notifier-lab.
#
#   ./run.sh [KEY=VALUE...]   run the case study (default COUNT=1000 RTTS="3 10")
#   ./run.sh SCENARIO=<name|all> [KEY=VALUE...]
#                             run fault/race scenarios of scenarios/catalog
#   ./run.sh audit WORKER=<name> PROFILE=<dir> [KEY=VALUE...]
#                             audit a worker on a vendor profile: bench, idle
#                             race and fault scenarios, then OUT/audit.{md,html}
#                             (OUT=results/audit/<worker>-<profile> for the committed one)
#   ./run.sh audit ADAPTER=<adapter.yaml> [WORKER=image:NAME] PROFILE=<dir>
#                             black-box audit of a team's image as it is
#                             (docs/auditing.md#the-adapter-file)
#   ./run.sh contract-check WORKER=image:NAME [PROFILE=<dir>]
#                             check an image against docs/worker-contract.md
#                             in about a minute and name each gap
#   ./run.sh audit-probes OUT=results/audit/<worker>-<profile>
#                             the audit's probes alone (idle timeout, POST
#                             replay, response timeout) into an audit's folder
#   ./run.sh audit-clients PROFILE=<dir> [KEY=VALUE...]
#                             audit every third-party client (python-*,
#                             java-okhttp, java-apache, node-axios, node-got)
#                             one after the other, then the comparison page
#                             results/audit/clients.{md,html}; FIXED=1 also
#                             audits each fixed variant (<client>-fixed)
#   ./run.sh list             list the scenarios, one line each
#   ./run.sh matrix [KEY=VALUE...]
#                             the published matrix: http/https/mtls x both
#                             strategies x concurrency 1/8/32, client alone and
#                             whole worker (matrix help; OUT=results/matrix for the committed one)
#   ./run.sh scale [KEY=VALUE...]
#                             the scale benchmark: sends/s, latency and CPU against
#                             concurrency and active workers, the bare client beside,
#                             every container's CPU, the worker's memory (scale help;
#                             OUT=results/scale for the committed one)
#   ./run.sh simulate [SEEDS=N] [SEED=s] [TEETH=1] [OUT=dir]
#                             the deterministic simulator (worker/sim), no Docker:
#                             SEEDS schedules (default 10000) into OUT/summary.{md,json}
#                             (OUT=results/simulate by default); SEED alone replays
#                             one seed; TEETH=1 puts each defect of
#                             testdata/sim-defects back and checks it is caught
#   ./run.sh pageload [N="10 50 100"] [RTT=50] [RUNS=5] [API_DELAY_MS=2000] [OUT=dir]
#                             HTTP/1.1 against HTTP/2 page loads in headless
#                             Chromium (study C; pageload help; OUT=results/pageload
#                             for the committed one)
#   ./run.sh client-defaults [RTT=ms] [CALLS=n] [CLIENTS=...] [OUT=dir]
#                             real HTTP clients at their defaults (Node fetch and
#                             https, curl, Python requests, Go http.Post) through
#                             Toxiproxy, connections counted by nginx (client-defaults
#                             help; OUT=results/client-defaults for the committed one)
# A measuring command without OUT writes a new folder results/runs/<run id>/ and
# links results/runs/latest to it (docs/running.md); exit codes: 0 passed, 1
# failed (the last lines say why), 2 refused before anything started, 130
# interrupted.
#   ./run.sh matrix-report OUT  rebuild OUT/matrix.md and OUT/charts/
#   ./run.sh report OUT       re-render any results folder offline (bench,
#                             sweep, matrix, scale, audit, or results/audit for the
#                             clients' comparison), no Docker
#   ./run.sh --version        the lab's commit (and whether the tree was dirty)
#   ./run.sh test             run every test: lint, unit (no Docker), then integration
#   ./run.sh test-unit        lint and unit tests (go test -race, then the
#                             simulator's 10,000 fixed seeds without -race) only (no Docker)
#   ./run.sh test-integration integration tests only (starts the real stack;
#                             four lanes side by side, docs/testing.md;
#                             LAB_CLUSTER_SCENARIOS=all adds the cluster
#                             scenarios CI leaves out, named at the end)
#   ./run.sh lint             gofmt, go vet, go mod tidy -diff, staticcheck
#   ./run.sh mutate [PKG...]  mutation testing (go-gremlins, unit tests only, no
#                             Docker) of window, ledger, vendorapi, reconcile and
#                             the handler, one at a time, into results/mutation/
#                             (docs/testing.md); slow, not part of ./run.sh test
#   ./run.sh --help           explain every key
#
# The logic lives in Go (scenarios/cmd/lab); this script only checks the
# arguments first (a bad one exits 2 and starts nothing), then makes sure the
# prerequisites exist (a Docker engine, the lab's images) and hands over.
set -euo pipefail
cd "$(dirname "$0")"

# testcontainers-go guesses the Docker host as the default gateway on some
# machines, which sends traffic off the machine: pin it to loopback unless the
# user chose otherwise. Ryuk needs a registry image: the lab removes its
# containers itself (see cleanup below and vendormock.Stack.Close).
export TESTCONTAINERS_HOST_OVERRIDE="${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}"
export TESTCONTAINERS_RYUK_DISABLED="${TESTCONTAINERS_RYUK_DISABLED:-true}"

say() { printf '[run.sh] %s\n' "$*" >&2; }

need_go() {
  command -v go >/dev/null 2>&1 || {
    say "error: Go is not installed (https://go.dev/doc/install; go.mod says which version)"
    exit 1
  }
}

build_lab() {
  need_go
  mkdir -p .lab/bin
  # -buildvcs=auto stamps the commit (lab version) even where GOFLAGS turns it off.
  go build -buildvcs=auto -o .lab/bin/lab ./scenarios/cmd/lab
}

# prerequisites [SET]: Docker engine, then the images (LAB_IMAGES=official|offline|auto):
# SET (LAB_IMAGE_SET of ensure-images.sh, default all) says which; start_lab
# asks `lab images` for the ones its command starts.
prerequisites() {
  vendormock/images/ensure-docker.sh
  LAB_IMAGE_SET="${1:-all}" vendormock/images/ensure-images.sh
  set -a
  # shellcheck source=/dev/null
  . .lab/images.env
  set +a
}

# One value per invocation: vendormock labels every container and network it
# creates with org.notifier-lab.session=$LAB_SESSION.
export LAB_SESSION="${LAB_SESSION:-run-$$-$(date +%s)}"

# start_lab validates the arguments with CHECK (exit 2 on a bad one, nothing
# started), makes sure the prerequisites exist, then runs `lab CMD ARGS`
# with the cleanup trap in place.
start_lab() {
  local check=$1 cmd=$2
  shift 2
  .lab/bin/lab "$check" "$@"
  for arg in "$@"; do
    case $arg in LAB_IMAGES=*) export LAB_IMAGES="${arg#LAB_IMAGES=}" ;; esac
  done
  # Only the images this command starts (the case run: RabbitMQ, nginx,
  # WireMock, Toxiproxy and the worker).
  prerequisites "$(.lab/bin/lab images "$cmd" "$@")"
  trap cleanup EXIT
  run_forwarding_signals .lab/bin/lab "$cmd" "$@"
}

# run_forwarding_signals runs CMD ARGS... and returns its exit status. A
# SIGTERM or Ctrl-C (SIGINT) to this script is handed on to CMD as SIGTERM
# (the lab then stops its run, removes what it made and says so), and the
# script exits 130 once CMD is gone. CMD runs in the background because
# bash runs a trap only after the foreground command has ended: a lab in the
# foreground would finish its whole run first (scenarios/runsh_test.go).
run_forwarding_signals() {
  local interrupted="" rc=0 pid
  "$@" &
  pid=$!
  trap 'interrupted=1; kill -TERM "$pid" 2>/dev/null || true' INT TERM
  while :; do
    rc=0
    wait "$pid" || rc=$?
    kill -0 "$pid" 2>/dev/null || break # else a signal cut the wait short
  done
  trap - INT TERM
  if [ -n "$interrupted" ]; then
    exit 130
  fi
  return "$rc"
}

# cleanup removes the containers, networks and volumes this invocation left, on every
# exit (Ctrl-C included), and nothing of another run on the same machine. The
# Go code removes its own on a normal exit; this is the safety net for a
# killed process.
cleanup() {
  local ids pid filter="label=org.notifier-lab.session=$LAB_SESSION"
  # Integration lanes still running (run.sh interrupted): stop them first.
  for pid in "${LANE_PIDS[@]}"; do
    kill -- "-$pid" 2>/dev/null || true
  done
  command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 || return 0
  ids=$(docker ps -aq --filter "$filter" 2>/dev/null || true)
  [ -n "$ids" ] && docker rm -f $ids >/dev/null 2>&1 || true
  ids=$(docker network ls -q --filter "$filter" 2>/dev/null || true)
  [ -n "$ids" ] && docker network rm $ids >/dev/null 2>&1 || true
  ids=$(docker volume ls -q --filter "$filter" 2>/dev/null || true)
  [ -n "$ids" ] && docker volume rm $ids >/dev/null 2>&1 || true
}

# The Toxiproxy server (with the handshake toxic) is its own Go module, so
# its dependencies stay out of the main one; lint and unit tests cover both.
TOXIPROXY_SERVER_MODULE=vendormock/images/toxiproxy/server
# staticcheck pinned (2026.2.2, supports Go 1.26), run with `go run` so the
# main module carries no tool dependency.
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2

# lint: gofmt, go vet and staticcheck for the unit and integration build
# tags, and go mod tidy -diff (go.mod and go.sum exactly what the imports
# need), in the main module and the Toxiproxy server module. Exits 1 on the
# first finding.
lint() {
  local unformatted mod
  say "lint: gofmt -l, go vet, go mod tidy -diff, staticcheck (unit and integration build tags)"
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
  if [ -n "$unformatted" ]; then
    say "error: not gofmt-formatted: $unformatted"
    exit 1
  fi
  for mod in . "$TOXIPROXY_SERVER_MODULE"; do
    (
      cd "$mod"
      go mod tidy -diff || { say "error: go.mod/go.sum of $mod are not tidy: run (cd $mod && go mod tidy)"; exit 1; }
      go vet ./...
      go vet -tags integration ./...
      go run "$STATICCHECK" ./...
      go run "$STATICCHECK" -tags integration ./...
    )
  done
}

# go-gremlins, pinned, run with `go run` like staticcheck.
GREMLINS=github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
# The packages ./run.sh mutate covers: folder, then the extra gremlins flags.
# In the worker folder only handler*.go is mutated (-E drops every path with
# a slash, i.e. the subpackages, and every file not starting with h; the
# only h* files there are handler*.go). ledgertest is the ledger's contract
# suite and fake, test code that is not mutated.
MUTATE_PACKAGES=(window ledger vendorapi reconcile handler)
mutate_spec() {
  case $1 in
    window) echo "worker/window" ;;
    ledger) echo "worker/ledger -E ^ledgertest/" ;;
    vendorapi) echo "worker/vendorapi" ;;
    reconcile) echo "scenarios/reconcile" ;;
    handler) echo "worker -E / -E ^[^h]" ;;
    *) return 1 ;;
  esac
}

# mutate runs go-gremlins over each package in turn (MUTATE_WORKERS parallel
# mutants, default 1; each mutant's tests get 3x the package's coverage run,
# MUTATE_TIMEOUT_COEFFICIENT). Tests run with -short (skips the ledger's
# minute-long soak) and without -race or build tags: unit tests only. Writes
# results/mutation/<pkg>.json (gremlins' report) and <pkg>.log, each stamped
# with the run's provenance (lab provenance).
mutate() {
  local out=results/mutation pkg spec start
  mkdir -p "$out"
  [ $# -gt 0 ] || set -- "${MUTATE_PACKAGES[@]}"
  for pkg in "$@"; do
    spec=$(mutate_spec "$pkg") || { say "error: mutate: unknown package $pkg (want: ${MUTATE_PACKAGES[*]})"; exit 2; }
  done
  for pkg in "$@"; do
    spec=$(mutate_spec "$pkg")
    say "mutate $pkg: gremlins unleash $spec (log: $out/$pkg.log)"
    start=$(date +%s)
    # shellcheck disable=SC2086 # spec is words on purpose
    GOFLAGS="${GOFLAGS:-} -short" go run "$GREMLINS" unleash \
      --workers "${MUTATE_WORKERS:-1}" --timeout-coefficient "${MUTATE_TIMEOUT_COEFFICIENT:-3}" \
      -o "$out/$pkg.json" $spec 2>&1 | tee "$out/$pkg.log"
    say "mutate $pkg: $(( $(date +%s) - start )) s"
    .lab/bin/lab provenance --command "mutate $pkg" "$out/$pkg.json" "$out/$pkg.log"
  done
}

# integration_packages prints the import paths of the packages whose files
# differ under the integration build tag (their integration tests): the
# others' tests are the unit tests, already run with -race. If a non-test
# file carries the tag (its dependents would change too), every package.
integration_packages() {
  local fmt='{{.ImportPath}} {{.GoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}' lib='{{.ImportPath}} {{.GoFiles}}'
  if ! diff -q <(go list -f "$lib" ./...) <(go list -tags integration -f "$lib" ./...) >/dev/null; then
    go list ./...
    return
  fi
  diff <(go list -f "$fmt" ./...) <(go list -tags integration -f "$fmt" ./...) | sed -n 's/^> \([^ ]*\) .*/\1/p'
}

# The integration phase runs go test -tags integration in four lanes side
# by side (each one go test at a time, -p 1: one stack per lane), each line
# prefixed with its lane's name; the lanes are balanced by measured time
# (docs/testing.md):
#   cluster  scenarios/fault -run '^TestIntegrationClusterFaults$' (a
#            three-node cluster), then the small packages (every package
#            with integration tests but no Cluster test, bench aside)
#   fault-a  scenarios/fault -skip '^TestIntegrationClusterFaults$' with
#            LAB_FAULT_SHARD=1/2 (half the one-node catalog, the idle race,
#            the nemesis steps, the Node worker's fault), then vendormock's
#            cluster tests (top-level name holding "Cluster") -run Cluster
#   fault-b  scenarios/fault -run '^TestIntegrationFaults$' with
#            LAB_FAULT_SHARD=2/2 (the other half of the catalog), then
#            worker's cluster tests -run Cluster, then scenarios/bench
#            (the packages with cluster tests alternate between the two)
#   rest     vendormock and worker -skip Cluster
# Together they run every test exactly once. run.sh waits for all four,
# says how long each took, fails if one failed, and prints what the tests
# report they left out of this run and how to run it (LAB_TEST_NOTICES, one
# line each, said once: never a silent skip).
FAULT_PACKAGE=github.com/notifier-lab/notifier-lab/scenarios/fault
FAULT_CLUSTER_TEST='^TestIntegrationClusterFaults$'
BENCH_PACKAGE=github.com/notifier-lab/notifier-lab/scenarios/bench
LANE_PIDS=()
integration() {
  local pkgs p dir cluster=() others=() later=() bench=() names=(cluster fault-a fault-b rest) i rc=0
  mapfile -t pkgs < <(integration_packages)
  for p in "${pkgs[@]}"; do
    [ "$p" != "$FAULT_PACKAGE" ] || continue
    if [ "$p" = "$BENCH_PACKAGE" ]; then
      bench+=("$p")
      continue
    fi
    dir=$(go list -f '{{.Dir}}' "$p")
    if grep -qE '^func Test[A-Za-z0-9_]*Cluster' "$dir"/*_test.go 2>/dev/null; then
      cluster+=("$p")
    elif [[ $p == */scenarios/audit || $p == */scenarios/contractcheck ]]; then
      # Their stacks take minutes (178 s and 82 s at 2026-12-05): in the
      # rest lane, which finished in 242 s, they leave the cluster lane
      # (fault's cluster test, 297 s, and the others) the longest.
      later+=("$p")
    else
      others+=("$p")
    fi
  done
  LANE_LOGS="$PWD/.lab/logs"
  mkdir -p "$LANE_LOGS"
  rm -f "$LANE_LOGS"/{cluster,fault-a,fault-b,rest}.log
  export LAB_TEST_NOTICES="$PWD/.lab/test-notices.txt"
  : >"$LAB_TEST_NOTICES"
  say "integration tests (real RabbitMQ, nginx, Toxiproxy, WireMock): go test -tags integration -p 1 in four lanes side by side"
  # Job control on: each lane gets its own process group, which cleanup
  # can stop whole (go test and the test binary under it).
  # (A go test without a package would test the current directory: an
  # empty list adds no run.)
  local first=("-run $FAULT_CLUSTER_TEST $FAULT_PACKAGE") faulta=("LAB_FAULT_SHARD=1/2 -skip $FAULT_CLUSTER_TEST $FAULT_PACKAGE")
  local faultb=("LAB_FAULT_SHARD=2/2 -run ^TestIntegrationFaults\$ $FAULT_PACKAGE") rest=()
  [ ${#others[@]} -eq 0 ] || first+=("${others[*]}")
  # The cluster tests of the other packages, one package each, alternate
  # between the two fault lanes.
  for i in "${!cluster[@]}"; do
    if ((i % 2 == 0)); then faulta+=("-run Cluster ${cluster[$i]}"); else faultb+=("-run Cluster ${cluster[$i]}"); fi
  done
  [ ${#cluster[@]} -eq 0 ] || rest+=("-skip Cluster ${cluster[*]}")
  [ ${#later[@]} -eq 0 ] || rest+=("${later[*]}")
  [ ${#bench[@]} -eq 0 ] || faultb+=("${bench[*]}")
  set -m
  lane cluster "${first[@]}"
  lane fault-a "${faulta[@]}"
  lane fault-b "${faultb[@]}"
  lane rest "${rest[@]}"
  set +m
  local failed=()
  for i in "${!LANE_PIDS[@]}"; do
    wait "${LANE_PIDS[$i]}" || { rc=1; failed+=("${names[$i]}"); }
  done
  LANE_PIDS=()
  if [ -s "$LAB_TEST_NOTICES" ]; then
    # Both fault lanes report the catalog's left-out parts: each line once.
    while IFS= read -r p; do say "not run in this run: $p"; done < <(awk '!seen[$0]++' "$LAB_TEST_NOTICES")
  fi
  # A failed lane's test failures, gathered last: among the lanes'
  # interleaved container logs they would scroll out of sight.
  for i in "${failed[@]}"; do
    say "integration lane $i failed; its failing tests (whole log: $LANE_LOGS/$i.log):"
    failure_digest "$LANE_LOGS/$i.log" | sed "s/^/[$i] /" >&2
  done
  for i in "${failed[@]}"; do say "error: integration lane $i failed (its lines start with [$i])"; done
  return "$rc"
}

# failure_digest LOG prints what go test printed of its failures in LOG:
# the --- FAIL lines, the failing tests' own indented output, panics and
# the FAIL summary lines, without the container logs between them; at most
# the first 200 such lines.
failure_digest() {
  awk '/^--- FAIL|^FAIL|^panic:|^[ \t]+[^ \t]/ && !/^[0-9][0-9][0-9][0-9]\/[0-9][0-9]\/[0-9][0-9] /' "$1" | head -n 200
}

# lane NAME ARGS... starts, in the background, one go test per ARGS (leading
# VAR=VALUE words set the environment of that go test, then test flags and
# packages, split on spaces), one after the other, their output prefixed
# with [NAME]; it records the lane's pid. The lane goes on after a failed
# go test and exits non-zero.
lane() {
  local name=$1
  shift
  (
    start=$(date +%s)
    rc=0
    for args in "$@"; do
      say "integration lane $name: go test -tags integration -p 1 ${args//github.com\/notifier-lab\/notifier-lab\//}"
      envs=() words=()
      # shellcheck disable=SC2086 # args is words on purpose
      for w in $args; do
        if [ ${#words[@]} -eq 0 ] && [[ $w == [A-Z_]*=* ]]; then envs+=("$w"); else words+=("$w"); fi
      done
      env "${envs[@]}" go test -tags integration -count=1 -p 1 -timeout 45m "${words[@]}" 2>&1 | tee -a "$LANE_LOGS/$name.log" | sed -u "s/^/[$name] /" || rc=1
    done
    say "integration lane $name: $(( $(date +%s) - start )) s, exit $rc"
    exit "$rc"
  ) &
  LANE_PIDS+=($!)
}

case "${1:-}" in
  -h | --help | help)
    build_lab
    .lab/bin/lab help
    ;;
  list)
    shift
    if [ $# -gt 0 ]; then
      say "error: 'list' takes no arguments (got: $*)"
      exit 2
    fi
    build_lab
    .lab/bin/lab list
    ;;
  test | test-unit | test-integration | lint)
    target=$1
    shift
    if [ $# -gt 0 ]; then
      say "error: '$target' takes no arguments (got: $*)"
      exit 2
    fi
    need_go
    # A fresh clone sits at a new path, and without -trimpath Go's build
    # cache keys every package of this module by its directory: each clone
    # recompiled the module for vet, staticcheck's export data, the race
    # and the integration test binaries. -trimpath keys them by module
    # path, so a clone reuses what an earlier one at the same sources
    # built. No test reads its own source path (runtime.Caller).
    GOFLAGS="$(go env GOFLAGS) -trimpath"
    export GOFLAGS
    phase=$SECONDS
    if [ "$target" = lint ] || [ "$target" = test ] || [ "$target" = test-unit ]; then
      lint
      say "lint: $((SECONDS - phase)) s"
    fi
    if [ "$target" = test ] || [ "$target" = test-unit ]; then
      phase=$SECONDS
      # The audit page's test opens it in headless Chromium.
      vendormock/images/ensure-chromium.sh
      say "unit tests (no Docker, race detector): go test -race ./... (and the Toxiproxy server module)"
      go test -race -count=1 ./...
      (cd "$TOXIPROXY_SERVER_MODULE" && go test -race -count=1 ./...)
      say "unit tests: $((SECONDS - phase)) s"
      # The race run above runs 2,000 of the simulator's fixed seeds; the
      # whole set of 10,000 runs here without the race detector (issue 27's
      # budget: at least 10,000 schedules in at most 90 s on 2 cores).
      phase=$SECONDS
      say "simulation (the fixed 10,000 seeds, no race detector): go test -count=1 -run '^TestSimulate\$' ./worker/sim"
      go test -count=1 -run '^TestSimulate$' ./worker/sim
      say "simulation: $((SECONDS - phase)) s"
    fi
    if [ "$target" = test ] || [ "$target" = test-integration ]; then
      phase=$SECONDS
      prerequisites
      say "Docker engine and images: $((SECONDS - phase)) s"
      trap cleanup EXIT
      trap 'exit 130' INT TERM
      phase=$SECONDS
      integration
      say "integration tests: $((SECONDS - phase)) s"
    fi
    ;;
  audit)
    shift
    build_lab
    case "${1:-}" in
      -h | --help | help)
        .lab/bin/lab help
        exit 0
        ;;
    esac
    start_lab audit-check audit "$@"
    ;;
  contract-check)
    shift
    build_lab
    case "${1:-}" in
      -h | --help | help)
        .lab/bin/lab help
        exit 0
        ;;
    esac
    start_lab contract-check-check contract-check "$@"
    ;;
  audit-probes)
    shift
    build_lab
    start_lab audit-probes-check audit-probes "$@"
    ;;
  audit-clients)
    shift
    build_lab
    case "${1:-}" in
      -h | --help | help)
        .lab/bin/lab help
        exit 0
        ;;
    esac
    start_lab audit-clients-check audit-clients "$@"
    ;;
  matrix)
    shift
    build_lab
    case "${1:-}" in
      -h | --help | help)
        .lab/bin/lab matrix help
        exit 0
        ;;
    esac
    start_lab matrix-check matrix "$@"
    ;;
  scale)
    shift
    build_lab
    case "${1:-}" in
      -h | --help | help)
        .lab/bin/lab scale help
        exit 0
        ;;
    esac
    start_lab scale-check scale "$@"
    ;;
  simulate)
    # No Docker: the arguments are checked (exit 2, nothing started), then
    # the lab runs the simulator itself, Ctrl-C handed on to it.
    shift
    build_lab
    case "${1:-}" in
      -h | --help | help)
        .lab/bin/lab simulate help
        exit 0
        ;;
    esac
    .lab/bin/lab simulate-check "$@"
    run_forwarding_signals .lab/bin/lab simulate "$@"
    ;;
  pageload)
    # The keys first (exit 2, nothing started), then Chromium (Debian's,
    # installed when missing), then Docker and the images.
    shift
    build_lab
    case "${1:-}" in
      -h | --help | help)
        .lab/bin/lab pageload help
        exit 0
        ;;
    esac
    .lab/bin/lab pageload-check "$@"
    vendormock/images/ensure-chromium.sh
    start_lab pageload-check pageload "$@"
    ;;
  client-defaults)
    shift
    build_lab
    case "${1:-}" in
      -h | --help | help)
        .lab/bin/lab client-defaults help
        exit 0
        ;;
    esac
    start_lab client-defaults-check client-defaults "$@"
    ;;
  matrix-report)
    shift
    build_lab
    .lab/bin/lab matrix-report "$@"
    ;;
  report)
    shift
    build_lab
    .lab/bin/lab report "$@"
    ;;
  mutate)
    shift
    need_go
    build_lab
    mutate "$@"
    ;;
  --version | version)
    build_lab
    .lab/bin/lab version
    ;;
  *)
    build_lab
    start_lab check run "$@"
    ;;
esac
