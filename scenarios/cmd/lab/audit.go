package main

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/audit"
	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

// auditHelp follows usage in `lab help`.
const auditHelp = `
The audit (./run.sh audit WORKER=... PROFILE=...): the bench at RTTS (default
3 and 10 ms, COUNT default 200, WARMUP 10; a contract worker runs beside the
Go worker's pooled client), the idle race at the profile's keep-alive timeout,
and every fault scenario that applies to the worker and the profile; writes
OUT/audit.md and audit.html (one rule per line, PASS or FAIL with its
evidence), OUT a new results/runs/<run id>/ unless given
(OUT=results/audit/<worker>-<profile> refreshes the committed one). Exit 1
when a rule failed.
`

// parseAuditArgs parses the audit's keys: the keys as for run (SCENARIO is
// refused), with the audit's smaller COUNT and WARMUP unless given, and an
// OUT the audit may empty (outdir.CheckFresh: the audit starts from an
// empty folder and never empties one the lab did not make). Errors are
// *UsageError: nothing was started.
func parseAuditArgs(args []string, getenv func(string) string) (bench.Config, error) {
	cfg, err := auditArgs(args, getenv)
	if err != nil {
		return cfg, err
	}
	return cfg, refuseFixed(args, getenv, "audit one fixed variant with WORKER=<client>-fixed")
}

// auditArgs is parseAuditArgs without its refusal of FIXED, which
// audit-clients takes.
func auditArgs(args []string, getenv func(string) string) (bench.Config, error) {
	cfg, err := parseArgs(args, getenv)
	if err != nil {
		return cfg, err
	}
	if cfg.Scenario != "" {
		return cfg, &UsageError{Key: "SCENARIO", Value: cfg.Scenario, Source: "argument",
			Msg: "the audit runs every applicable scenario itself; allowed: no SCENARIO with audit"}
	}
	if given(args, getenv, "OUT") {
		if err := outdir.CheckFresh(cfg.Out, audit.Outputs); err != nil {
			return cfg, &UsageError{Key: "OUT", Value: cfg.Out, Source: "argument", Msg: err.Error()}
		}
	}
	if !given(args, getenv, "COUNT") {
		cfg.Count = audit.DefaultCount
	}
	if !given(args, getenv, "WARMUP") {
		cfg.Warmup = audit.DefaultWarmup
	}
	return cfg, nil
}

// runAudit runs `lab audit` with parseAuditArgs's configuration.
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if b, ok, err := parseBlackBoxArgs(args, getenv); ok || err != nil {
		if err != nil {
			return err
		}
		return runBlackBox(ctx, b, args, getenv, stdout)
	}
	cfg, err := parseAuditArgs(args, getenv)
	if err != nil {
		return err
	}
	if err := labEnvironment(&cfg, getenv); err != nil {
		return err
	}
	cfg.Provenance = newProvenance(time.Now(), "audit", args, benchKeyNames(), getenv, cfg.Images)
	perRun := !given(args, getenv, "OUT")
	if perRun {
		cfg.Out, cfg.Provenance.RunID = outdir.NewRunDir(cfg.Provenance.RunID)
		announceRunDir(stdout, cfg.Out)
	}
	return finishRun(stdout, perRun, cfg.Out, cfg.Provenance.RunID, audit.Run(ctx, audit.Options{Config: cfg, Images: cfg.Images}, stdout))
}

// refuseFixed is a *UsageError when FIXED was given (a word or the
// environment): it is audit-clients' key alone, and every other command
// refuses it before anything starts; hint says what to do instead.
func refuseFixed(args []string, getenv func(string) string, hint string) error {
	if !given(args, getenv, "FIXED") {
		return nil
	}
	value, source := givenValue(args, getenv, "FIXED")
	return &UsageError{Key: "FIXED", Value: value, Source: source,
		Msg: "FIXED is audit-clients' key (./run.sh audit-clients FIXED=1); " + hint}
}

// parseRunArgs parses the keys of run and check: parseArgs's, with FIXED
// refused. Errors are *UsageError: nothing was started.
func parseRunArgs(args []string, getenv func(string) string) (bench.Config, error) {
	cfg, err := parseArgs(args, getenv)
	if err != nil {
		return cfg, err
	}
	return cfg, refuseFixed(args, getenv, "a run takes no FIXED")
}

// givenValue is key's value and where it came from ("argument", else
// "environment"): the last word KEY=VALUE wins over the environment.
func givenValue(args []string, getenv func(string) string, key string) (value, source string) {
	if getenv != nil {
		value, source = getenv(key), "environment"
	}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, key+"="); ok {
			value, source = v, "argument"
		}
	}
	return value, source
}

// given reports whether key was set by a word or the environment.
func given(args []string, getenv func(string) string, key string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, key+"=") {
			return true
		}
	}
	return getenv != nil && getenv(key) != ""
}
