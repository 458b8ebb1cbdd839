// Command notifier-worker consumes notifications from RabbitMQ (one
// consumer, prefetch -concurrency, 1 by default), sends each to the messaging vendor over HTTPS and
// routes it to exactly one place (see package worker and docs/outcomes.md).
//
// "notifier-worker ledger ..." reads and resolves the attempt ledger;
// "notifier-worker direct ..." calls the vendor client in a loop without
// broker or ledger (the lab's DRIVER=direct).
//
// Configuration is by flags, each with an environment fallback where
// noted; the vendor secret is read ONLY from VENDOR_CLIENT_SECRET. Run
// with -h for the list.
//
// Exit status: 0 after SIGTERM/SIGINT (the in-flight message finished and
// acked) or after -max-messages handled messages; 2 for a bad flag or
// configuration (nothing started); 3 when the broker refused the queue
// topology for good (a queue exists with other arguments, for example
// another -queue-type: migrate or delete it; restarting cannot help); 1 for
// any other error (ledger write failure, unreadable CA or ledger file).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	_ "time/tzdata" // the image is FROM scratch: no zoneinfo on disk

	"github.com/notifier-lab/notifier-lab/worker"
)

// errUsage marks a flag or configuration error (exit 2).
var errUsage = errors.New("usage")

func main() {
	if len(os.Args) > 1 && os.Args[1] == "ledger" {
		os.Exit(ledgerMain(context.Background(), os.Args[2:], os.Getenv, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == worker.DirectCommand {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		os.Exit(directMain(ctx, os.Args[2:], os.Getenv, os.Stdout, os.Stderr))
	}
	opts, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "notifier-worker: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process at once
	}()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintf(os.Stderr, "notifier-worker: %v\n", err)
		os.Exit(exitCode(err))
	}
}

// exitCode maps a run error to the exit status of the package doc.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, worker.ErrConfig):
		return 2
	case errors.Is(err, worker.ErrTopology):
		return 3
	}
	return 1
}

func run(ctx context.Context, cfg worker.Config) error {
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return fmt.Errorf("create cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("start cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	return worker.Run(ctx, cfg)
}

// parseFlags parses args into a Config, taking fallbacks from getenv. The
// secret comes only from VENDOR_CLIENT_SECRET. Errors wrap errUsage, or are
// flag.ErrHelp for -h.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (worker.Config, error) {
	return parseFlagsWith("notifier-worker", args, getenv, stderr, nil)
}

// parseFlagsWith is parseFlags for the command or a subcommand named name;
// extra, when not nil, adds the subcommand's own flags before parsing.
func parseFlagsWith(name string, args []string, getenv func(string) string, stderr io.Writer, extra func(*flag.FlagSet)) (worker.Config, error) {
	var c worker.Config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `notifier-worker: consume notifications from RabbitMQ (one consumer,
prefetch -concurrency), send each to the messaging vendor over HTTPS, and route it to
exactly one place: acked (SENT), failed, retry, unknown, held or dead-letter
queue. The vendor secret is read only from VENDOR_CLIENT_SECRET.

Usage: notifier-worker [flags]
       notifier-worker ledger list|show|resolve ...   read the attempt ledger, resolve an UNKNOWN (ledger -h)
       notifier-worker direct -count N ...            the client strategies in a loop, no broker (direct -h)

`)
		fs.PrintDefaults()
	}
	if extra != nil {
		extra(fs) // may replace fs.Usage
	}
	flags := worker.BindFlags(fs, &c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	if err := flags.Resolve(getenv); err != nil {
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	return c, nil
}
