package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/audit"
	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// blackBoxHelp follows auditHelp in `lab help`.
const blackBoxHelp = `
The black-box audit (./run.sh audit ADAPTER=path/to/adapter.yaml [WORKER=image:NAME]
PROFILE=...): runs a team's worker image as it is, from the adapter file
(docs/auditing.md#the-adapter-file: the environment names it reads, its queues,
one message in its own schema, where the refkey is in the vendor request), and
judges from outside only: WireMock's journal, nginx's log, the broker's queues.
Scenarios: steady (COUNT messages, default 50), tls-stall, response-timeout,
broker-cut; then the registered probes. Rules that need a records file say
"not judged: no records". Writes OUT/audit.md and blackbox.json. Exit 1 when
a rule failed.
`

// blackBoxArgs is a black-box audit's configuration: the adapter, its
// image, the bench keys it reads (PROFILE, COUNT, OUT) and whether it was
// asked for at all (ADAPTER given).
type blackBoxArgs struct {
	adapter     *audit.Adapter
	adapterPath string
	image       string
	cfg         bench.Config
	countGiven  bool
}

// splitAdapter removes ADAPTER=... from args and returns its value
// (the environment's when no word gives it).
func splitAdapter(args []string, getenv func(string) string) (path string, rest []string) {
	if getenv != nil {
		path = getenv("ADAPTER")
	}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "ADAPTER="); ok {
			path = v
			continue
		}
		rest = append(rest, a)
	}
	return path, rest
}

// parseBlackBoxArgs validates a black-box audit's arguments before
// anything starts: the adapter file (every problem named with its
// field), WORKER (image:NAME only, and in the local engine), the other
// audit keys. ok is false when no ADAPTER was given. Errors are
// *UsageError.
func parseBlackBoxArgs(args []string, getenv func(string) string) (b blackBoxArgs, ok bool, err error) {
	path, rest := splitAdapter(args, getenv)
	if path == "" {
		return b, false, nil
	}
	b.adapterPath = path
	a, err := audit.LoadAdapter(path)
	if err != nil {
		return b, true, &UsageError{Key: "ADAPTER", Value: path, Source: "argument", Msg: err.Error()}
	}
	b.adapter = a
	worker, wsrc := givenValue(rest, getenv, "WORKER")
	// WORKER and OUT are this command's own: OUT is checked against what
	// a black-box audit writes, not the contract audit's files.
	var restNoWorker []string
	out, outSrc := givenValue(rest, getenv, "OUT")
	for _, x := range rest {
		if !strings.HasPrefix(x, "WORKER=") && !strings.HasPrefix(x, "OUT=") {
			restNoWorker = append(restNoWorker, x)
		}
	}
	if out != "" {
		if err := outdir.CheckFresh(out, audit.BlackBoxOutputs); err != nil {
			return b, true, &UsageError{Key: "OUT", Value: out, Source: outSrc, Msg: err.Error()}
		}
	}
	b.image = a.Image
	if worker != "" {
		name, isImage := strings.CutPrefix(worker, vendormock.WorkerImagePrefix)
		if !isImage || strings.TrimSpace(name) == "" {
			return b, true, &UsageError{Key: "WORKER", Value: worker, Source: wsrc,
				Msg: "with ADAPTER the worker is an image as its team ships it; allowed: image:NAME (or image: in the adapter file)"}
		}
		b.image = name
	}
	if b.image == "" {
		return b, true, &UsageError{Key: "ADAPTER", Value: path, Source: "argument",
			Msg: "no image: set image: in the adapter file or give WORKER=image:NAME"}
	}
	if err := localImage(b.image); err != nil {
		return b, true, &UsageError{Key: "WORKER", Value: b.image, Source: "adapter or argument", Msg: err.Error()}
	}
	noEnv := func(k string) string {
		if k == "WORKER" || k == "ADAPTER" || k == "OUT" {
			return ""
		}
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
	cfg, err := auditArgs(restNoWorker, noEnv)
	if err != nil {
		return b, true, err
	}
	b.countGiven = given(restNoWorker, noEnv, "COUNT")
	if b.countGiven && cfg.Count > 1000 {
		return b, true, &UsageError{Key: "COUNT", Value: fmt.Sprint(cfg.Count), Source: "argument", Msg: "the black-box steady scenario takes 1..1000 messages"}
	}
	if out != "" {
		cfg.Out = out
	}
	b.cfg = cfg
	return b, true, nil
}

// runBlackBox runs `lab audit ADAPTER=...`.
func runBlackBox(ctx context.Context, b blackBoxArgs, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg := b.cfg
	if err := labEnvironment(&cfg, getenv); err != nil {
		return err
	}
	cfg.Provenance = newProvenance(time.Now(), "audit", args, append(benchKeyNames(), "ADAPTER"), getenv, cfg.Images)
	perRun := !given(args, getenv, "OUT")
	if perRun {
		cfg.Out, cfg.Provenance.RunID = outdir.NewRunDir(cfg.Provenance.RunID)
		announceRunDir(stdout, cfg.Out)
	}
	pdir, err := bench.ResolveProfile(cfg.Profile)
	if err != nil {
		return err
	}
	count := audit.DefaultBlackBoxCount
	if b.countGiven {
		count = cfg.Count
	}
	err = audit.RunBlackBox(ctx, audit.BlackBoxOptions{
		Adapter: b.adapter, Image: b.image, ProfileDir: pdir, Out: cfg.Out, Count: count,
		Images: cfg.Images, Session: cfg.Session, Provenance: cfg.Provenance,
	}, stdout)
	if raw, rerr := os.ReadFile(b.adapterPath); rerr == nil {
		_ = os.WriteFile(filepath.Join(cfg.Out, "adapter.yaml"), raw, 0o644)
	}
	return finishRun(stdout, perRun, cfg.Out, cfg.Provenance.RunID, err)
}
