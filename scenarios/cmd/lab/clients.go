package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/audit"
	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

// clientsHelp follows auditHelp in `lab help`.
const clientsHelp = `
./run.sh audit-clients [PROFILE=...] [KEY=VALUE...]: the audit of every
third-party client (python-requests, python-session, python-httpx, java-okhttp,
java-apache, node-axios, node-got), one after the other (about 50 min),
each into OUT/<client>-<profile>/, then the comparison page OUT/clients.md
and clients.html. OUT is a new results/runs/<run id>/ unless given;
OUT=results/audit refreshes the committed audits. FIXED=1 then audits each
client's fixed variant (<client>-fixed: its documented one-line fix
applied) into OUT/<client>-fixed-<profile>/, and the page says for each
fix whether the rules the default failed now pass. WORKER is refused (the
command names the clients). ./run.sh report results/audit rebuilds the
page offline from the folders' result files. Exit 1 when a rule of any
audit failed.
`

// parseClientsArgs parses audit-clients' keys: the audit's, without
// WORKER; OUT, when given, is the parent of the audits' folders and must
// be one the lab may write into (outdir.Check). Errors are *UsageError:
// nothing was started.
func parseClientsArgs(args []string, getenv func(string) string) (bench.Config, error) {
	if given(args, getenv, "WORKER") {
		value, source := givenValue(args, getenv, "WORKER")
		return bench.Config{}, &UsageError{Key: "WORKER", Value: value, Source: source,
			Msg: "audit-clients audits every third-party client into OUT/<client>-<profile>; allowed: no WORKER (./run.sh audit WORKER=... audits one)"}
	}
	if given(args, getenv, "OUT") {
		value, source := givenValue(args, getenv, "OUT")
		if err := outdir.Check(value); err != nil {
			return bench.Config{}, &UsageError{Key: "OUT", Value: value, Source: source, Msg: err.Error()}
		}
		if err := checkOutKind(value, []resultKind{benchKind, scaleKind, matrixKind, simKind}); err != nil {
			return bench.Config{}, &UsageError{Key: "OUT", Value: value, Source: source, Msg: err.Error()}
		}
		// The parent is claimed, not emptied: audit's own check of OUT
		// (a folder it empties) does not apply to it.
		args = withoutKey(args, "OUT")
		cfg, err := auditArgs(args, withoutEnv(getenv, "OUT"))
		if err != nil {
			return cfg, err
		}
		cfg.Out = value
		// Each client's folder is emptied when its turn comes: a file of
		// yours in one would stop the command after the audits before it.
		if err := checkClientFolders(cfg); err != nil {
			return cfg, &UsageError{Key: "OUT", Value: value, Source: source, Msg: err.Error()}
		}
		return cfg, nil
	}
	return auditArgs(args, getenv)
}

// clientWorkers lists the workers audit-clients audits, in order.
func clientWorkers(cfg bench.Config) []string {
	workers := audit.ThirdPartyClients
	if cfg.AuditFixed {
		workers = append(slices.Clone(workers), audit.FixedClients()...)
	}
	return workers
}

// checkClientFolders checks, before anything starts, that every folder
// cfg.Out/<client>-<profile> the audits will empty holds only what an
// audit writes (outdir.CheckFresh with audit.Outputs).
func checkClientFolders(cfg bench.Config) error {
	profile, _, err := audit.LoadProfile(cfg.Profile)
	if err != nil {
		return err
	}
	for _, w := range clientWorkers(cfg) {
		if err := outdir.CheckFresh(filepath.Join(cfg.Out, audit.Folder(w, profile.Name)), audit.Outputs); err != nil {
			return err
		}
	}
	return nil
}

// withoutKey returns args without the words KEY=...
func withoutKey(args []string, key string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, key+"=") {
			out = append(out, a)
		}
	}
	return out
}

// withoutEnv returns getenv that answers "" for key.
func withoutEnv(getenv func(string) string, key string) func(string) string {
	return func(k string) string {
		if k == key || getenv == nil {
			return ""
		}
		return getenv(k)
	}
}

// runClients runs the audit of every audit.ThirdPartyClients worker (and,
// with FIXED=1, of every audit.FixedClients variant after them) into
// OUT/<client>-<profile> (OUT a new run folder unless given), then writes
// the comparison page. An audit that fails a rule does not stop the
// others; any other error does.
func runClients(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseClientsArgs(args, getenv)
	if err != nil {
		return err
	}
	if err := labEnvironment(&cfg, getenv); err != nil {
		return err
	}
	cfg.Provenance = newProvenance(time.Now(), "audit-clients", args, benchKeyNames(), getenv, cfg.Images)
	perRun := !given(args, getenv, "OUT")
	parent := cfg.Out
	if perRun {
		parent, cfg.Provenance.RunID = outdir.NewRunDir(cfg.Provenance.RunID)
		announceRunDir(stdout, parent)
	}
	if err := outdir.Claim(parent, cfg.Provenance.RunID); err != nil {
		return err
	}
	return finishRun(stdout, perRun, parent, cfg.Provenance.RunID, auditClients(ctx, cfg, parent, stdout))
}

// auditClients is runClients' work, into parent.
func auditClients(ctx context.Context, cfg bench.Config, parent string, stdout io.Writer) error {
	failed := 0
	workers := clientWorkers(cfg)
	for i, w := range workers {
		fmt.Fprintf(stdout, "[audit-clients] %d/%d: %s\n", i+1, len(workers), w)
		c := cfg
		c.Worker, c.Out = w, ""
		err := audit.Run(ctx, audit.Options{Config: c, Images: c.Images, Dir: parent}, stdout)
		switch {
		case errors.Is(err, audit.ErrFailed):
			failed++
		case err != nil:
			return fmt.Errorf("audit of %s: %w", w, err)
		}
	}
	if err := writeClients(parent, stdout); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d audits failed a rule (see %s)", audit.ErrFailed, failed, len(workers),
			filepath.Join(parent, audit.ClientsMarkdown))
	}
	return nil
}

// writeClients writes parent's comparison page from its audit folders.
func writeClients(parent string, w io.Writer) error {
	c, err := audit.Compare(parent)
	if err != nil {
		return err
	}
	if err := audit.WriteComparison(parent, c); err != nil {
		return err
	}
	fmt.Fprintf(w, "comparison of %d client audits and %d fixed variants: %s, %s\n", len(c.Rows), len(c.Fixed),
		filepath.Join(parent, audit.ClientsMarkdown), filepath.Join(parent, audit.ClientsHTML))
	return nil
}
