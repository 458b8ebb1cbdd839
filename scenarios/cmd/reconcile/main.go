// Command reconcile checks, after a run of the notification worker, that
// every published message ended in exactly one place, that none reached
// the vendor twice, and that the worker's word agrees with the vendor's
// request journal (package reconcile; docs/outcomes.md#outcome-table).
//
//	reconcile -published out/published.jsonl -records out/records.jsonl \
//	    -ledger out/ledger.db -amqp-url amqp://guest:guest@127.0.0.1:5672/ \
//	    -wiremock http://127.0.0.1:8080 -json out/reconcile.json
//
// It prints a table, writes the JSON report when -json is set, and exits 0
// when every invariant holds, 1 when one is broken (or nothing could be
// checked), 2 on a usage error, 3 when a source could not be read. Stop
// the worker first: its ledger is locked while it runs, and its consumer
// would take the messages the reconciler puts back.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// Exit codes.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	exitGather    = 3
)

// errUsage marks a command-line error.
var errUsage = errors.New("usage")

type options struct {
	gather   reconcile.GatherOptions
	jsonPath string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(exitCode(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// exitCode parses args, runs, reports an error on stderr and returns the
// exit code.
func exitCode(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil {
		err = run(ctx, opts, stdout, stderr)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "reconcile: %v (see -h)\n", err)
		return exitUsage
	case errors.Is(err, reconcile.ErrInvariant):
		fmt.Fprintf(stderr, "reconcile: %v\n", err)
		return exitViolation
	default:
		fmt.Fprintf(stderr, "reconcile: %v\n", err)
		return exitGather
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.gather.PublishedPath, "published", "", "published list written by the lab's driver, JSON lines (required)")
	fs.StringVar(&o.gather.RecordsPath, "records", "", "worker records file, JSON lines; empty skips the places and route checks")
	fs.StringVar(&o.gather.LedgerPath, "ledger", "", "worker ledger file (bbolt), read from a copy; empty skips the ledger check")
	fs.StringVar(&o.gather.AMQPURL, "amqp-url", "", "RabbitMQ URL; every queue is read without consuming; empty skips the places check")
	fs.StringVar(&o.gather.Main, "queue", queues.DefaultMain, "main queue; the others derive from it (.retry .unknown .held .failed .dead)")
	fs.StringVar(&o.gather.WireMockURL, "wiremock", "", "WireMock base URL (admin API); empty skips the journal check")
	fs.StringVar(&o.gather.SendPath, "send-path", reconcile.DefaultSendPath, "the vendor's send path in the journal")
	fs.StringVar(&o.gather.RefKeyField, "refkey-field", reconcile.DefaultRefKeyField, "JSON field of the send body that carries the refkey")
	fs.IntVar(&o.gather.MaxAttempts, "max-attempts", queues.DefaultMaxAttempts, "the worker's MAX_ATTEMPTS: a dead-lettered message with fewer send attempts and no send that reached the vendor is lost (dead-lettered unsent)")
	fs.StringVar(&o.jsonPath, "json", "", "write the JSON report to this file")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: reconcile -published FILE [-records FILE] [-ledger FILE] [-amqp-url URL] [-queue MAIN] [-wiremock URL] [-max-attempts N] [-json OUT.json]

Checks per published refkey that it ended in exactly one place (acked SENT,
failed, retry, unknown, held or dead-letter queue), reached the vendor at
most once without a 4xx, and that SENT and NOT_SENT agree with WireMock's
journal. Stop the worker first.

Exit codes: 0 every invariant holds; 1 one is broken or nothing was
checked; 2 usage error; 3 a source could not be read.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if o.gather.PublishedPath == "" {
		return o, fmt.Errorf("%w: -published is required", errUsage)
	}
	if o.gather.MaxAttempts < 1 {
		return o, fmt.Errorf("%w: -max-attempts %d: want 1 or more", errUsage, o.gather.MaxAttempts)
	}
	if strings.TrimSpace(o.gather.Main) == "" {
		return o, fmt.Errorf("%w: -queue must not be empty", errUsage)
	}
	return o, nil
}

// run gathers, reconciles, prints the table to stdout, writes the JSON
// report and returns the report's error (wrapping reconcile.ErrInvariant)
// when an invariant is broken.
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	in, err := reconcile.Gather(ctx, o.gather)
	if err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	r := reconcile.Reconcile(in)
	if err := r.WriteTable(stdout); err != nil {
		return fmt.Errorf("print table: %w", err)
	}
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, r); err != nil {
			return err
		}
	}
	for _, s := range skipped(o.gather) {
		fmt.Fprintf(stderr, "reconcile: skipped: %s\n", s)
	}
	return r.Err()
}

func writeJSON(path string, r reconcile.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return fmt.Errorf("write report: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// skipped says which checks lack their flag.
func skipped(g reconcile.GatherOptions) []string {
	var out []string
	if g.RecordsPath == "" || g.AMQPURL == "" {
		out = append(out, reconcile.CheckPlaces+" (needs -records and -amqp-url)")
	}
	if g.RecordsPath == "" {
		out = append(out, reconcile.CheckRoute+" (needs -records)")
	}
	if g.WireMockURL == "" {
		out = append(out, reconcile.CheckJournal+" (needs -wiremock)")
	}
	if g.LedgerPath == "" || g.RecordsPath == "" {
		out = append(out, reconcile.CheckLedger+" (needs -ledger and -records)")
	}
	return out
}
