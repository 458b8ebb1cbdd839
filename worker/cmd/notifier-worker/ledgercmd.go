package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

const ledgerUsage = `notifier-worker ledger: read the attempt ledger and record an operator's
verdict on an UNKNOWN message (docs/deployment.md).

Usage:
  notifier-worker ledger list [-state STATE] [-limit N]
  notifier-worker ledger show REFKEY
  notifier-worker ledger resolve REFKEY -as not-sent|sent -by WHO -why TEXT [-min-age D]

  list     entries oldest first: refkey, state, attempts, last update, detail
  show     one entry as JSON (with its resolution, if any)
  resolve  an UNKNOWN (or ATTEMPTING) entry after checking with the vendor:
           not-sent  a re-published copy of the message is then sent
           sent      a re-published copy is then suppressed as a duplicate
           who, when and why are kept in the entry; an ATTEMPTING entry
           younger than the worker's worst-case send time (-min-age,
           default the shutdown grace of $CONCURRENCY with the default
           timeouts: 55s at 1) is refused, its request may still be sent

Every subcommand takes -ledger SPEC (default $LEDGER, else %s):
a bbolt file path or a postgres:// URL. A bbolt file is locked by a running
worker: stop it first (the command gives up after 1 s).
`

// ledgerMain runs `notifier-worker ledger ARGS...` and returns the exit
// status: 0 done, 2 bad usage, 1 any other error (printed to stderr).
func ledgerMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	err := runLedgerCmd(ctx, args, getenv, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "notifier-worker ledger: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "notifier-worker ledger: %v\n", err)
	return 1
}

func runLedgerCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	usage := func() { fmt.Fprintf(stderr, ledgerUsage, worker.DefaultLedgerPath) }
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage()
		if len(args) == 0 {
			return fmt.Errorf("%w: want a subcommand: list, show or resolve", errUsage)
		}
		return flag.ErrHelp
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("notifier-worker ledger "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage
	var cfg worker.Config // only its LedgerPath: -ledger and LEDGER, as the worker reads them
	ledgerFlag := worker.BindFlags(fs, &cfg, "ledger")
	var (
		state, as, by, why string
		limit              int
		minAge             time.Duration
	)
	switch sub {
	case "list":
		fs.StringVar(&state, "state", "", "only entries in this `state` ("+strings.Join(stateNames(), ", ")+")")
		fs.IntVar(&limit, "limit", 0, "at most this many entries; 0 = all")
	case "show":
	case "resolve":
		fs.StringVar(&as, "as", "", "the verdict: not-sent | sent")
		fs.StringVar(&by, "by", "", "who decided (a login or a name)")
		fs.StringVar(&why, "why", "", "why, for example \"vendor support: not received\"")
		fs.DurationVar(&minAge, "min-age", worstCaseSend(getenv), "refuse an ATTEMPTING entry younger than this: the worker's worst-case send time (worker.ShutdownGrace of CONCURRENCY and the default timeouts; give it yourself when the worker runs other timeouts)")
	default:
		usage()
		return fmt.Errorf("%w: unknown subcommand %q: want list, show or resolve", errUsage, sub)
	}
	// The refkey may come before or after the flags.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if err := ledgerFlag.Resolve(getenv); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	spec := cfg.LedgerPath
	want := map[string]int{"list": 0, "show": 1, "resolve": 1}[sub]
	if len(pos) != want {
		return fmt.Errorf("%w: %s takes %d argument(s) (REFKEY), got %q", errUsage, sub, want, pos)
	}
	var filter outcome.Outcome
	if state != "" {
		filter = outcome.Outcome(strings.ToUpper(state))
		if !slices.Contains(stateNames(), string(filter)) {
			return fmt.Errorf("%w: -state %q: want one of %s", errUsage, state, strings.Join(stateNames(), ", "))
		}
	}
	var verdict outcome.Outcome
	if sub == "resolve" {
		switch strings.ToLower(strings.ReplaceAll(as, "_", "-")) {
		case "not-sent":
			verdict = outcome.NotSent
		case "sent":
			verdict = outcome.Sent
		default:
			return fmt.Errorf("%w: -as %q: want not-sent or sent", errUsage, as)
		}
		if strings.TrimSpace(by) == "" || strings.TrimSpace(why) == "" {
			return fmt.Errorf("%w: resolve needs -by WHO and -why TEXT (both are kept in the entry)", errUsage)
		}
		if minAge < 0 {
			return fmt.Errorf("%w: -min-age %s: want 0 or more", errUsage, minAge)
		}
	}
	kind, err := ledger.SpecKind(spec)
	if err != nil {
		return fmt.Errorf("%w: -ledger: %w", errUsage, err)
	}
	// An operator's command never creates a ledger: a mistyped path would
	// otherwise read as an empty ledger ("no UNKNOWN entries").
	if kind == ledger.KindBolt {
		if _, err := os.Stat(spec); err != nil {
			return fmt.Errorf("no ledger at %s (%w): give the worker's ledger with -ledger or LEDGER", spec, err)
		}
	}

	store, err := ledger.OpenStore(ctx, spec)
	if err != nil {
		return err
	}
	defer store.Close()
	switch sub {
	case "list":
		es, err := store.List(ctx, filter, limit)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "REFKEY\tSTATE\tATTEMPTS\tUPDATED\tDETAIL")
		for _, e := range es {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", e.RefKey, e.State, e.Attempts, e.UpdatedAt.UTC().Format(time.RFC3339), e.Detail)
		}
		return tw.Flush()
	case "show":
		e, ok, err := store.Get(ctx, pos[0])
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("show %s: %w", pos[0], ledger.ErrNotFound)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	r := ledger.Resolution{By: by, Why: why, At: time.Now().UTC(), Source: ledger.SourceOperator}
	if err := store.Resolve(ctx, pos[0], verdict, r, minAge); err != nil {
		if errors.Is(err, ledger.ErrAttemptTooRecent) {
			return fmt.Errorf("%w (-min-age %s; docs/deployment.md#resolving-unknown)", err, minAge)
		}
		return err
	}
	fmt.Fprintf(stdout, "resolved %s as %s by %s\n", pos[0], verdict, by)
	return nil
}

// stateNames lists what -state accepts: ATTEMPTING and every outcome a
// ledger entry can hold.
func stateNames() []string {
	names := []string{string(ledger.Attempting)}
	for _, o := range ledger.Finishable {
		names = append(names, string(o))
	}
	return names
}

// worstCaseSend is resolve's default -min-age: how long a worker with
// CONCURRENCY from the environment (1 when unset or not a number) and the
// default timeouts may still be sending a message it began,
// worker.ShutdownGrace (55 s at 1).
func worstCaseSend(getenv func(string) string) time.Duration {
	n, err := strconv.Atoi(getenv("CONCURRENCY"))
	if err != nil || n < 1 {
		n = 1
	}
	return worker.ShutdownGrace(worker.Config{Concurrency: n})
}
