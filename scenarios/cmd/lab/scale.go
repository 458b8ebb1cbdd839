package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/scale"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// parseScaleArgs builds a scale.Config from KEY=VALUE words, then the
// environment for keys no word set (parseWords with scale's keys), and
// checks what the keys cannot alone: the profile (precheck) and the
// transport. Errors are *UsageError.
func parseScaleArgs(args []string, getenv func(string) string) (scale.Config, error) {
	cfg := defaultsOf(cmdScale)
	sources, err := parseWords(cmdScale, &cfg, args, getenv)
	if err != nil {
		return cfg, err
	}
	if err := checkTransport(cfg.Config.Config, sources); err != nil {
		return cfg, err
	}
	if cfg.Ledger != vendormock.LedgerPostgres && slices.Max(cfg.WorkerCounts) > 1 {
		return cfg, &UsageError{Key: "LEDGER", Value: cfg.Ledger, Source: sources["LEDGER"],
			Msg: fmt.Sprintf("scale runs WORKERS=%s as competing consumers, and several active consumers each on its own bbolt ledger can send one message twice (the worker refuses it); use LEDGER=postgres, or WORKERS=1 for the case's one worker on bbolt", spaced(cfg.WorkerCounts))}
	}
	if err := precheck(cfg.Config.Config, sources); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// scaleKeyNames are the keys scale records in its provenance.
func scaleKeyNames() []string { return namesOf(cmdScale) }

// runScale runs the scale benchmark (scale.Run) into OUT, or a folder
// of its own under results/runs without OUT.
func runScale(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseScaleArgs(args, getenv)
	if err != nil {
		return err
	}
	if err := labEnvironment(&cfg.Config.Config, getenv); err != nil {
		return err
	}
	cfg.Provenance = newProvenance(time.Now(), "scale", args, scaleKeyNames(), getenv, cfg.Images)
	perRun := !given(args, getenv, "OUT")
	if perRun {
		cfg.Out, cfg.Provenance.RunID = outdir.NewRunDir(cfg.Provenance.RunID)
		announceRunDir(stdout, cfg.Out)
	}
	return finishRun(stdout, perRun, cfg.Out, cfg.Provenance.RunID, scale.Run(ctx, cfg, stdout))
}

// scaleUsage prints scale's keys and the plan's estimated time.
func scaleUsage(w io.Writer) error {
	var b strings.Builder
	def := scale.DefaultConfig()
	fmt.Fprintf(&b, `./run.sh scale [KEY=VALUE...]: the scale benchmark (docs/running.md#the-scale-benchmark):
sends/s, p50/p99 and CPU per send against CONCURRENCY and active WORKERS at a
think time where the vendor, not this machine, bounds one worker; the bare
client beside the worker; the case series at CASE_DELAY_MS; a memory run of
SOAK_S s; every container's CPU from its cgroup. One JSON per point,
OUT/summary.md and OUT/charts/. The defaults take about %s.

Every key can also be set in the environment; a word wins. An unknown key,
a key of another command or an invalid value exits 2 and starts nothing.

Keys, each shown with scale's default:
`, def.Estimate().Round(time.Minute))
	writeKeys(&b, cmdScale)
	_, err := io.WriteString(w, b.String())
	return err
}
