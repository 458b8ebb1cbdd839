package audit

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// BlackBoxProbe measures one behaviour of any worker image from outside
// (issue 30, item 1: idle timeout ladder, POST replay, response timeout,
// connections and TLS from nginx's log). It gets a BlackBoxEnv whose Dir
// is the probe's own folder; it starts and stops the worker itself
// (StartWorker, StopWorker, which keeps the worker's log in Dir) and
// returns its result, Verdict NA with Summary "unknown: ..." for a value
// it could not see.
type BlackBoxProbe struct {
	Name string
	Run  func(ctx context.Context, env *BlackBoxEnv) BlackBoxResult
}

// BlackBoxProbes are run by RunBlackBox after its scenarios, each in
// OUT/probe-<name>/, for a measure the probes of scenarios/audit/probe_*.go
// do not take (those run after these, on BlackBoxTarget, into
// OUT/probes/ and the page's Probes table): RegisterBlackBoxProbe from an
// init function. None is registered today.
var BlackBoxProbes []BlackBoxProbe

// RegisterBlackBoxProbe appends p to BlackBoxProbes (call it from init).
func RegisterBlackBoxProbe(p BlackBoxProbe) { BlackBoxProbes = append(BlackBoxProbes, p) }

// BlackBoxOptions configure RunBlackBox.
type BlackBoxOptions struct {
	Adapter    *Adapter
	Image      string // the worker image ("" = Adapter.Image)
	ProfileDir string
	Out        string
	Count      int      // steady's messages (0 = DefaultBlackBoxCount)
	Only       []string // scenario and probe names to run (nil = all)
	Images     vendormock.Images
	Session    string
	Provenance *results.Provenance
}

// DefaultBlackBoxCount is the steady scenario's messages.
const DefaultBlackBoxCount = 50

// BlackBoxOutputs are the files and folders a black-box audit writes
// into OUT (outdir.Fresh empties only these).
var BlackBoxOutputs = outdir.Owned{
	Files: []string{"audit.md", "blackbox.json", "adapter.yaml", ProbesFile},
	Dirs: map[string][]string{
		BlackBoxProbesName: {"*"}, "steady": {"*"}, "tls-stall": {"*"}, "response-timeout": {"*"}, "broker-cut": {"*"},
	},
}

// RunBlackBox audits a worker image from outside: one stack on the
// profile, then each BlackBoxScenarios scenario and each BlackBoxProbes
// probe with a fresh worker container, then the idle, replay and
// response timeout probes (RunProbes on BlackBoxTarget, in
// OUT/probes/, measures in OUT/probes.json; Only selects them by
// BlackBoxProbesName), then OUT/audit.md and OUT/blackbox.json. Rules that need the records file are listed as "not
// judged: no records". Errors: the stack's, a folder that cannot be
// written, ErrFailed when a scenario or probe failed (after the report).
func RunBlackBox(ctx context.Context, o BlackBoxOptions, w io.Writer) error {
	image := cmp.Or(o.Image, o.Adapter.Image)
	if image == "" {
		return fmt.Errorf("black-box audit: no image: give WORKER=image:NAME or image: in the adapter file")
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return fmt.Errorf("resolve OUT: %w", err)
	}
	owned := outdir.Owned{Files: BlackBoxOutputs.Files, Dirs: maps.Clone(BlackBoxOutputs.Dirs)}
	for _, p := range BlackBoxProbes {
		owned.Dirs["probe-"+p.Name] = []string{"*"}
	}
	if err := outdir.Fresh(out, "audit-"+time.Now().UTC().Format("20060102T150405"), owned); err != nil {
		return fmt.Errorf("audit folder: %w", err)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(w, "[blackbox] "+format+"\n", args...) }
	logf("starting the stack (profile %s)", o.ProfileDir)
	work := filepath.Join(workRoot(), ".lab", "blackbox", filepath.Base(out)+"-"+time.Now().UTC().Format("20060102T150405"))
	st, err := vendormock.Start(ctx, vendormock.Options{
		ProfileDir: o.ProfileDir, ServerDelayMS: -1, Images: o.Images, Session: o.Session, WorkDir: work,
	})
	if err != nil {
		return fmt.Errorf("start stack: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		_ = st.Close(cctx)
	}()
	bp, err := st.AddProxy(ctx, "broker", blackBoxBrokerPort, vendormock.AliasRabbitMQ+":5672", 0)
	if err != nil {
		return fmt.Errorf("broker proxy: %w", err)
	}
	seq := &atomic.Int64{}
	prefix := "bb" + time.Now().UTC().Format("150405")
	env := func(dir string) *BlackBoxEnv {
		_ = os.MkdirAll(dir, 0o755)
		return &BlackBoxEnv{Stack: st, Adapter: o.Adapter, Image: image, Dir: dir, State: filepath.Join(work, "state", filepath.Base(dir)), Log: logf,
			BrokerProxy: &BrokerCut{Disable: bp.Disable, Enable: bp.Enable}, seq: seq, prefix: prefix}
	}
	count := cmp.Or(o.Count, DefaultBlackBoxCount)
	var runs []BlackBoxResult
	for _, sc := range BlackBoxScenarios(count) {
		if o.Only != nil && !slices.Contains(o.Only, sc.Name) {
			continue
		}
		logf("scenario %s: %s", sc.Name, sc.Description)
		res := sc.Run(ctx, env(filepath.Join(out, sc.Name)))
		res.Description = sc.Description
		logf("  %s: %s", res.Verdict, res.Summary)
		runs = append(runs, res)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, p := range BlackBoxProbes {
		if o.Only != nil && !slices.Contains(o.Only, p.Name) {
			continue
		}
		logf("probe %s", p.Name)
		res := p.Run(ctx, env(filepath.Join(out, "probe-"+p.Name)))
		res.Name = cmp.Or(res.Name, p.Name)
		logf("  %s: %s", res.Verdict, res.Summary)
		runs = append(runs, res)
	}
	var probes *Probes
	keepalive := st.KeepaliveTimeout
	if o.Only == nil || slices.Contains(o.Only, BlackBoxProbesName) {
		logf("probes: idle timeout ladder (keep-alive %s), POST replay, response timeout", keepalive)
		pe := env(filepath.Join(out, BlackBoxProbesName))
		p := RunProbes(ctx, BlackBoxTarget(pe, keepalive, lab.PrefixWriter{W: w, Prefix: "[blackbox] "}), ProbeOptions{StreamResetImage: o.Images.StreamReset})
		p.Provenance, p.StatedIdle = o.Provenance, o.Adapter.StatedIdle()
		if err := writeProbes(out, p); err != nil {
			return err
		}
		probes = &p
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	rep := NewBlackBoxReport(image, st.Profile.Name, o.Adapter, runs, o.Provenance)
	if probes != nil {
		rep.addProbes(probes, keepalive)
	}
	if err := WriteBlackBox(out, rep); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\nreport: %s\n", rep.Headline(), filepath.Join(out, MarkdownFile))
	if !rep.Pass {
		return fmt.Errorf("%w: %s on profile %s (see %s)", ErrFailed, image, st.Profile.Name, filepath.Join(out, MarkdownFile))
	}
	return nil
}
