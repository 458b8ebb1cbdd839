package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/audit"
	"github.com/notifier-lab/notifier-lab/scenarios/bench"
)

// clientsHelp follows auditHelp in `lab help`.
const clientsHelp = `
./run.sh audit-clients PROFILE=... [KEY=VALUE...]: the audit of every
third-party client (python-requests, python-session, python-httpx, java-okhttp,
java-apache, node-axios, node-got), one after the other, each into
results/audit/<client>-<profile>/, then the comparison page
results/audit/clients.md and clients.html. FIXED=1 then audits each
client's fixed variant (<client>-fixed: its documented one-line fix
applied) into results/audit/<client>-fixed-<profile>/, and the page says
for each fix whether the rules the default failed now pass. WORKER and OUT
are refused (the audit names each folder). ./run.sh report results/audit rebuilds the page
offline from the folders' result files. Exit 1 when a rule of any audit failed.
`

// parseClientsArgs parses audit-clients' keys: the audit's, without WORKER
// or OUT. Errors are *UsageError: nothing was started.
func parseClientsArgs(args []string, getenv func(string) string) (bench.Config, error) {
	for _, key := range []string{"WORKER", "OUT"} {
		if given(args, getenv, key) {
			value, source := givenValue(args, getenv, key)
			return bench.Config{}, &UsageError{Key: key, Value: value, Source: source,
				Msg: "audit-clients audits every third-party client into results/audit/<client>-<profile>; allowed: no " + key}
		}
	}
	return auditArgs(args, getenv)
}

// runClients runs the audit of every audit.ThirdPartyClients worker (and,
// with FIXED=1, of every audit.FixedClients variant after them), then
// writes the comparison page. An audit that fails a rule does not stop the
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
	failed := 0
	workers := audit.ThirdPartyClients
	if cfg.AuditFixed {
		workers = append(slices.Clone(workers), audit.FixedClients()...)
	}
	for i, w := range workers {
		fmt.Fprintf(stdout, "[audit-clients] %d/%d: %s\n", i+1, len(workers), w)
		c := cfg
		c.Worker, c.Out = w, ""
		err := audit.Run(ctx, audit.Options{Config: c, Images: c.Images}, stdout)
		switch {
		case errors.Is(err, audit.ErrFailed):
			failed++
		case err != nil:
			return fmt.Errorf("audit of %s: %w", w, err)
		}
	}
	if err := writeClients(audit.DefaultDir, stdout); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d audits failed a rule (see %s)", audit.ErrFailed, failed, len(workers),
			filepath.Join(audit.DefaultDir, audit.ClientsMarkdown))
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
