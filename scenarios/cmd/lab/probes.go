package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/audit"
	"github.com/notifier-lab/notifier-lab/scenarios/bench"
)

// probesHelp follows usage in `lab help`.
const probesHelp = `
The probes alone (./run.sh audit-probes OUT=results/audit/<worker>-<profile>):
the idle timeout, POST replay and response timeout probes
(docs/auditing.md#the-probes) against the worker and profile the audit in OUT
ran with (its audit.json), on a stack of their own; writes OUT/probes.json and
re-renders OUT/audit.md and audit.html. For an audit written before the probes
existed. IDLE_LADDER sets the idle ladder.
`

// parseProbesArgs parses audit-probes' keys: run's keys, OUT required and
// naming an audit's folder (it holds audit.json with a worker and a
// profile), which sets WORKER and PROFILE. Errors are *UsageError:
// nothing was started.
func parseProbesArgs(args []string, getenv func(string) string) (bench.Config, error) {
	cfg, err := parseRunArgs(args, getenv)
	if err != nil {
		return cfg, err
	}
	value, source := givenValue(args, getenv, "OUT")
	if !given(args, getenv, "OUT") {
		return cfg, &UsageError{Key: "OUT", Value: "", Source: "argument",
			Msg: "audit-probes needs OUT=<an audit's folder> (e.g. results/audit/go-alimtalk); allowed: a folder holding " + audit.RulesFile}
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, audit.RulesFile))
	var old audit.Report
	if err == nil {
		err = json.Unmarshal(b, &old)
	}
	if err != nil || old.Worker == "" || old.Profile == "" {
		return cfg, &UsageError{Key: "OUT", Value: value, Source: source,
			Msg: fmt.Sprintf("not an audit's folder (%s with a worker and a profile: %v); allowed: a folder an audit wrote", audit.RulesFile, err)}
	}
	cfg.Worker, cfg.Profile = old.Worker, old.Profile
	return cfg, nil
}

// runAuditProbes runs `lab audit-probes`: the probes into OUT, then the
// audit's page re-rendered (reportAudit).
func runAuditProbes(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseProbesArgs(args, getenv)
	if err != nil {
		return err
	}
	if err := labEnvironment(&cfg, getenv); err != nil {
		return err
	}
	cfg.Provenance = newProvenance(time.Now(), "audit-probes", args, benchKeyNames(), getenv, cfg.Images)
	if err := audit.ProbeFolder(ctx, audit.Options{Config: cfg, Images: cfg.Images}, stdout); err != nil {
		return err
	}
	return reportAudit(cfg.Out, stdout)
}
