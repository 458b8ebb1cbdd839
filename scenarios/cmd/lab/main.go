// Command lab runs the notifier-lab case study (./run.sh calls it).
//
//	lab check [KEY=VALUE...]   validate the arguments only (exit 2 on a bad one)
//	lab run   [KEY=VALUE...]   run the lab: stack, both modes, every RTT, report;
//	                           with SCENARIO=<name|all> the fault/race scenarios instead
//	lab audit [KEY=VALUE...]   audit WORKER on PROFILE: the standard battery and its report
//	lab audit-check [KEY=...]  validate the audit's arguments only
//	lab audit-probes OUT=...   the audit's probes alone, into an audit's folder
//	lab list                   list the scenarios of scenarios/catalog, one line each
//	lab report OUT             re-render OUT's reports offline: a bench run or sweep, the
//	                           matrix, a scale run or an audit (by the result files it holds)
//	lab matrix [KEY=VALUE...]  run the published matrix (schemes x strategies x concurrency)
//	lab matrix-check [KEY=...] validate the matrix's arguments only
//	lab matrix-report OUT      rebuild OUT/matrix.md and OUT/charts from OUT/cell-*.json
//	lab scale [KEY=VALUE...]   run the scale benchmark (concurrency x active workers, per-container CPU, memory)
//	lab scale-check [KEY=...]  validate the scale benchmark's arguments only
//	lab simulate [KEY=VALUE...] run the deterministic simulator (worker/sim), no Docker
//	lab simulate-check [KEY=...] validate the simulation's arguments only
//	lab pageload [KEY=VALUE...] run the page-load experiment (study C: HTTP/1.1 vs HTTP/2 in Chromium)
//	lab pageload-check [KEY=...] validate the page-load experiment's arguments only
//	lab client-defaults [KEY=VALUE...] real HTTP clients at their defaults, connections counted by nginx
//	lab client-defaults-check [KEY=...] validate client-defaults' arguments only
//	lab keys --markdown        every key of run, audit and the matrix as a markdown table (docs/running.md)
//	lab version                the lab's commit and whether its tree was dirty
//	lab images CMD [KEY=...]   the images CMD starts, as LAB_IMAGE_SET for ensure-images.sh
//	lab help                   explain every key
//
// Keys are also read from the environment; a word wins. Exit codes: 0 done,
// 1 the run failed, 2 bad arguments (nothing was started), 130 interrupted
// (Ctrl-C; containers and network were removed).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/matrix"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// parseArgs is parseKeys plus the check of SCENARIO against the catalog:
// an unknown scenario is a *UsageError (exit 2, nothing started) that
// lists the known names; so is a THRESHOLD_* beside SCENARIO (scenarios
// judge their own rules, a threshold would be silently ignored).
func parseArgs(args []string, getenv func(string) string) (bench.Config, error) {
	cfg, err := parseKeys(args, getenv)
	if err != nil || cfg.Scenario == "" {
		return cfg, err
	}
	if cfg.Thresholds != (bench.Thresholds{}) {
		return cfg, &UsageError{Key: "SCENARIO", Value: cfg.Scenario, Source: "argument",
			Msg: "THRESHOLD_P99_MS and THRESHOLD_CONNECTIONS judge the bench; a scenario judges its own rules; allowed: SCENARIO without THRESHOLD_*"}
	}
	if err := fault.CheckName("", cfg.Scenario); err != nil {
		return cfg, &UsageError{Key: "SCENARIO", Value: cfg.Scenario, Source: "argument", Msg: err.Error()}
	}
	return cfg, nil
}

// labEnvironment reads what a run takes from the environment besides its
// keys, once, here at the command's edge, into c: the images (LAB_IMAGE_*,
// vendormock.ImagesFrom), the operator's LAB_HOST_NOTE and run.sh's
// LAB_SESSION (vendormock.EnvSession). It applies the lab's testcontainers
// settings (vendormock.EnsureTestcontainersEnv) before anything starts a
// container.
func labEnvironment(c *bench.Config, getenv func(string) string) error {
	vendormock.EnsureTestcontainersEnv()
	images, err := vendormock.ImagesFrom(getenv)
	if err != nil {
		return fmt.Errorf("read images: %w", err)
	}
	c.Images, c.HostNote, c.Session = images, getenv("LAB_HOST_NOTE"), getenv(vendormock.EnvSession)
	return nil
}

// runScenarios runs SCENARIO on one stack (package scenarios/fault).
func runScenarios(ctx context.Context, cfg bench.Config, args []string, getenv func(string) string, stdout io.Writer) error {
	// COUNT sets the idle race's sends per lane only when given: each
	// scenario file has its own count otherwise.
	count := 0
	if countGiven(args, getenv) {
		count = cfg.Count
	}
	profile, err := bench.ResolveProfile(cfg.Profile)
	if err != nil {
		return err
	}
	return fault.Run(ctx, fault.Options{
		Scenario: cfg.Scenario, Out: cfg.Out, Profile: profile,
		KeepaliveTimeout: cfg.KeepaliveTimeout, Count: count, Images: cfg.Images, Worker: cfg.Worker, Session: cfg.Session,
		Provenance: cfg.Provenance, Lanes: cfg.Lanes,
	}, stdout)
}

// stopSignals end a run as Ctrl-C does: the lab stops, removes what it
// made, and results/runs/latest names the run's folder when it wrote a
// file. SIGPIPE is one of them: `./run.sh | head` closes the lab's
// standard output, and Go's default for a broken stdout is to die at once
// (exit 141), before the run's own folder was named latest.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	quietTestcontainers(os.Getenv)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// labHelp follows usage in `lab help`.
const labHelp = `
The Go command behind ./run.sh (scenarios/cmd/lab):
  lab check [KEY=VALUE...]   validate the arguments only (exit 2 on a bad one)
  lab run   [KEY=VALUE...]   run the lab (needs Docker and LAB_IMAGE_* from .lab/images.env);
                             SCENARIO=<name|all> runs scenarios of scenarios/catalog instead
  lab list                   list the scenarios, one line each
  lab report OUT             re-render OUT's reports offline (bench, sweep, matrix, audit)
  lab matrix [KEY=VALUE...]  run the published matrix (lab matrix help lists its keys)
  lab matrix-report OUT      rebuild OUT/matrix.md and OUT/charts/ from OUT/cell-*.json
  lab scale [KEY=VALUE...]   run the scale benchmark (lab scale help lists its keys)
  lab simulate [KEY=VALUE...] run the deterministic simulator (lab simulate help lists its keys)
  lab pageload [KEY=VALUE...] the page-load experiment (lab pageload help lists its keys)
  lab keys --markdown        every key as a markdown table (docs/running.md#keys)
`

// errUsage marks a bad command line that is not a *UsageError.
var errUsage = errors.New("usage")

// run dispatches one subcommand; getenv supplies the environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: want a subcommand: check, run, audit, audit-clients, list, report, matrix, matrix-report, scale, simulate, pageload or help", errUsage)
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "check":
		_, err := parseRunArgs(rest, getenv)
		return err
	case "run":
		cfg, err := parseRunArgs(rest, getenv)
		if err != nil {
			return err
		}
		if err := labEnvironment(&cfg, getenv); err != nil {
			return err
		}
		cfg.Provenance = newProvenance(time.Now(), cmd, rest, benchKeyNames(), getenv, cfg.Images)
		perRun := !given(rest, getenv, "OUT")
		if perRun {
			cfg.Out, cfg.Provenance.RunID = outdir.NewRunDir(cfg.Provenance.RunID)
			announceRunDir(stdout, cfg.Out)
		}
		if cfg.Scenario != "" {
			err = runScenarios(ctx, cfg, rest, getenv, stdout)
		} else {
			err = bench.Run(ctx, cfg, stdout)
		}
		return finishRun(stdout, perRun, cfg.Out, cfg.Provenance.RunID, err)
	case "audit":
		return runAudit(ctx, rest, getenv, stdout)
	case "audit-check":
		if _, ok, err := parseBlackBoxArgs(rest, getenv); ok || err != nil {
			return err
		}
		_, err := parseAuditArgs(rest, getenv)
		return err
	case "contract-check":
		return runContractCheck(ctx, rest, getenv, stdout)
	case "contract-check-check":
		_, err := parseContractCheckArgs(rest, getenv)
		return err
	case "audit-clients":
		return runClients(ctx, rest, getenv, stdout)
	case "audit-probes":
		return runAuditProbes(ctx, rest, getenv, stdout)
	case "audit-probes-check":
		_, err := parseProbesArgs(rest, getenv)
		return err
	case "audit-clients-check":
		_, err := parseClientsArgs(rest, getenv)
		return err
	case "list":
		if len(rest) != 0 {
			return fmt.Errorf("%w: list takes no arguments", errUsage)
		}
		return fault.List("", stdout)
	case "report":
		if len(rest) != 1 {
			return fmt.Errorf("%w: report takes one argument, the results directory (OUT)", errUsage)
		}
		// BULK (environment only) sets the bulk projection of the rebuilt summary.
		cfg, err := parseKeys(nil, getenv)
		if err != nil {
			return err
		}
		// `report OUT=dir` reads as `report dir`: the help writes OUT.
		return runReport(strings.TrimPrefix(rest[0], "OUT="), cfg.Bulk, stdout)
	case "matrix":
		if len(rest) == 1 && (rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help") {
			return matrixUsage(stdout)
		}
		cfg, err := parseMatrixArgs(rest, getenv)
		if err != nil {
			return err
		}
		if err := labEnvironment(&cfg.Config, getenv); err != nil {
			return err
		}
		cfg.Provenance = newProvenance(time.Now(), cmd, rest, matrixKeyNames(), getenv, cfg.Images)
		perRun := !given(rest, getenv, "OUT")
		if perRun {
			cfg.Out, cfg.Provenance.RunID = outdir.NewRunDir(cfg.Provenance.RunID)
			announceRunDir(stdout, cfg.Out)
		}
		return finishRun(stdout, perRun, cfg.Out, cfg.Provenance.RunID, matrix.Run(ctx, cfg, stdout))
	case "scale":
		if len(rest) == 1 && (rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help") {
			return scaleUsage(stdout)
		}
		return runScale(ctx, rest, getenv, stdout)
	case "scale-check":
		_, err := parseScaleArgs(rest, getenv)
		return err
	case "simulate":
		if len(rest) == 1 && (rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help") {
			return simulateUsage(stdout)
		}
		return runSimulate(ctx, rest, getenv, stdout, os.Stderr)
	case "pageload":
		if len(rest) == 1 && (rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help") {
			return pageloadUsage(stdout)
		}
		return runPageload(ctx, rest, getenv, stdout)
	case "pageload-check":
		_, _, err := parsePageloadArgs(rest, getenv)
		return err
	case "client-defaults":
		if len(rest) == 1 && (rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help") {
			return defaultsUsage(stdout)
		}
		return runDefaults(ctx, rest, getenv, stdout)
	case "client-defaults-check":
		_, err := parseDefaultsArgs(rest, getenv)
		return err
	case "simulate-check":
		_, err := parseSimArgs(rest, getenv)
		return err
	case "matrix-check":
		_, err := parseMatrixArgs(rest, getenv)
		return err
	case "matrix-report":
		if len(rest) != 1 {
			return fmt.Errorf("%w: matrix-report takes one argument, the results directory (OUT)", errUsage)
		}
		return report.MatrixReport(rest[0], stdout)
	case "provenance":
		return runStamp(rest)
	case "images":
		// lab images CMD ARGS...: the LAB_IMAGE_SET run.sh builds for CMD.
		if len(rest) == 0 {
			return fmt.Errorf("%w: images takes a command and its arguments, e.g. images run COUNT=10", errUsage)
		}
		set, err := imagesFor(rest[0], rest[1:], getenv)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, set)
		return err
	case "keys":
		if len(rest) != 1 || rest[0] != "--markdown" {
			return fmt.Errorf("%w: keys takes one argument, --markdown", errUsage)
		}
		return keysMarkdown(stdout)
	case "version", "--version":
		_, err := fmt.Fprintln(stdout, version())
		return err
	case "help", "-h", "--help":
		if err := usage(stdout); err != nil {
			return err
		}
		_, err := io.WriteString(stdout, labHelp+auditHelp+blackBoxHelp+contractCheckHelp+clientsHelp+probesHelp+simulateHelp+pageloadHelp+defaultsHelp)
		return err
	default:
		return fmt.Errorf("%w: unknown subcommand %q: want check, run, audit, list, report, matrix, matrix-report, scale, simulate, pageload or help", errUsage, cmd)
	}
}

// exitCode prints err (if any) to stderr and returns the exit code.
func exitCode(err error, stderr io.Writer) int {
	var ue *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue) || errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "lab: %v\n(./run.sh --help explains every key, ./run.sh simulate help the simulator's; nothing was started)\n", err)
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "lab: interrupted; containers and network removed")
		return 130
	default:
		fmt.Fprintf(stderr, "lab: %v\n", err)
		return 1
	}
}

// countGiven reports whether COUNT was set by a word or the environment.
func countGiven(args []string, getenv func(string) string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "COUNT=") {
			return true
		}
	}
	return getenv("COUNT") != ""
}
