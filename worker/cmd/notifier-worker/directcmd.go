package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/notifier-lab/notifier-lab/worker"
)

const directUsage = `notifier-worker direct: call the vendor client in a loop, -concurrency
sends at a time, with no broker, ledger or routing, and write one record
per send (-records) with the worker's trace and CPU fields; print a JSON
summary line on stdout. It measures what the HTTP client costs apart from
the rest of the worker (the lab's DRIVER=direct; docs/studies.md).

Usage: notifier-worker direct -count N [-warmup N] [vendor flags]

`

// directMain runs `notifier-worker direct ARGS...` and returns the exit
// status: 0 done (failed sends are counted, not errors), 2 bad usage, 1
// any other error.
func directMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var opts worker.DirectOptions
	cfg, err := parseFlagsWith("notifier-worker direct", args, getenv, stderr, func(fs *flag.FlagSet) {
		worker.BindDirectFlags(fs, &opts)
		fs.Usage = func() {
			fmt.Fprint(fs.Output(), directUsage)
			fs.PrintDefaults()
		}
	})
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "notifier-worker direct: %v\n", err)
		return 2
	}
	sum, err := worker.RunDirect(ctx, cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "notifier-worker direct: %v\n", err)
		return exitCode(err)
	}
	if err := json.NewEncoder(stdout).Encode(sum); err != nil {
		fmt.Fprintf(stderr, "notifier-worker direct: write summary: %v\n", err)
		return 1
	}
	return 0
}
