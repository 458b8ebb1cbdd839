package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/contractcheck"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// contractCheckHelp follows the other help texts in `lab help`.
const contractCheckHelp = `
The contract check (./run.sh contract-check WORKER=image:NAME [PROFILE=...] [OUT=...]):
starts the worker with the contract's environment (docs/worker-contract.md) on
one stack, checks its six queues and their arguments, publishes 3 valid
messages, 1 without a recipient and 1 valid one again after it was sent, stops
it with SIGTERM, and names each gap (queues, records lines against
docs/schemas/records-line.schema.json, sends, routing, never twice, exit).
About a minute; writes OUT/contract-check.md and OUT/worker.log. Exit 1 on a gap.
`

// contractCheckArgs are contract-check's keys.
type contractCheckArgs struct{ worker, profile, out string }

// parseContractCheckArgs reads WORKER (required: a reference worker or
// image:NAME, in the local engine), PROFILE and OUT; any other word is a
// *UsageError.
func parseContractCheckArgs(args []string, getenv func(string) string) (contractCheckArgs, error) {
	var a contractCheckArgs
	src := map[string]string{}
	for _, k := range []string{"WORKER", "PROFILE", "OUT"} {
		v, s := givenValue(args, getenv, k)
		src[k] = s
		switch k {
		case "WORKER":
			a.worker = v
		case "PROFILE":
			a.profile = v
		case "OUT":
			a.out = v
		}
	}
	for _, w := range args {
		k, _, ok := strings.Cut(w, "=")
		if !ok || (k != "WORKER" && k != "PROFILE" && k != "OUT") {
			return a, &UsageError{Key: k, Value: w, Source: "argument", Msg: "contract-check takes WORKER, PROFILE and OUT only"}
		}
	}
	if a.worker == "" || a.worker == vendormock.WorkerGo {
		return a, &UsageError{Key: "WORKER", Value: a.worker, Source: src["WORKER"],
			Msg: "want the worker to check: image:NAME or a reference worker (" + strings.Join(vendormock.WorkerNames()[1:], ", ") + ")"}
	}
	if name, ok := strings.CutPrefix(a.worker, vendormock.WorkerImagePrefix); ok {
		if err := localImage(name); err != nil {
			return a, &UsageError{Key: "WORKER", Value: a.worker, Source: src["WORKER"], Msg: err.Error()}
		}
	} else if _, err := vendormock.WorkerImage(a.worker, func(string) string { return "set" }); err != nil {
		return a, &UsageError{Key: "WORKER", Value: a.worker, Source: src["WORKER"], Msg: err.Error()}
	}
	if a.profile == "" {
		a.profile = bench.DefaultProfile
	}
	if _, err := bench.ResolveProfile(a.profile); err != nil {
		return a, &UsageError{Key: "PROFILE", Value: a.profile, Source: src["PROFILE"], Msg: err.Error()}
	}
	return a, nil
}

// runContractCheck runs `lab contract-check`.
func runContractCheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	a, err := parseContractCheckArgs(args, getenv)
	if err != nil {
		return err
	}
	var cfg bench.Config
	if err := labEnvironment(&cfg, getenv); err != nil {
		return err
	}
	prov := newProvenance(time.Now(), "contract-check", args, []string{"WORKER", "PROFILE", "OUT"}, getenv, cfg.Images)
	perRun := a.out == ""
	if perRun {
		a.out, prov.RunID = outdir.NewRunDir(prov.RunID)
		announceRunDir(stdout, a.out)
	}
	if err := os.MkdirAll(a.out, 0o755); err != nil {
		return fmt.Errorf("contract-check folder: %w", err)
	}
	pdir, _ := bench.ResolveProfile(a.profile)
	gaps, err := contractcheck.Run(ctx, contractcheck.Options{Worker: a.worker, ProfileDir: pdir, Out: a.out, Images: cfg.Images, Session: cfg.Session}, stdout)
	for _, g := range gaps {
		fmt.Fprintf(stdout, "  GAP  %s (%s)\n", g.What, g.Doc)
	}
	if err == nil {
		fmt.Fprintf(stdout, "PASS: %s keeps the worker contract (%s)\n", a.worker, a.out)
	}
	return finishRun(stdout, perRun, a.out, prov.RunID, err)
}
