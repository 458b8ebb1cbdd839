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
	cfg, err := parseArgs(args, getenv)
	if err != nil {
		return cfg, err
	}
	if cfg.Scenario != "" {
		return cfg, &UsageError{Key: "SCENARIO", Value: cfg.Scenario, Source: "argument",
			Msg: "the audit runs every applicable scenario itself; allowed: no SCENARIO with audit"}
	}
	if given(args, getenv, "OUT") {
		if err := outdir.CheckFresh(cfg.Out); err != nil {
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
	cfg, err := parseAuditArgs(args, getenv)
	if err != nil {
		return err
	}
	if given(args, getenv, "FIXED") {
		return &UsageError{Key: "FIXED", Value: "(set)", Source: "argument",
			Msg: "FIXED is audit-clients' key; audit one fixed variant with WORKER=<client>-fixed"}
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
	return finishRun(perRun, cfg.Out, cfg.Provenance.RunID, audit.Run(ctx, audit.Options{Config: cfg, Images: cfg.Images}, stdout))
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
