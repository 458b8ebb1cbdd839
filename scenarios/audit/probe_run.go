package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// ProbesFile is the probes' result file in an audit's folder.
const ProbesFile = "probes.json"

// Probes is ProbesFile: what the probes measured of the client from
// outside (nginx's access log, WireMock's journal). A probe that did not
// run is nil; one that ran but saw too little says Unknown.
type Probes struct {
	Provenance *results.Provenance `json:"provenance,omitempty"`
	Worker     string              `json:"worker"`
	Date       string              `json:"date"`
	Idle       *IdleMeasure        `json:"idle,omitempty"`
	Burst      *BurstMeasure       `json:"burst,omitempty"`
	Replay     *ReplayMeasure      `json:"replay,omitempty"`
	Response   *ResponseMeasure    `json:"response,omitempty"`
	// StatedIdle is the idle timeout a black-box adapter file states
	// (shown beside the idle measure, never judged); nil = none stated.
	StatedIdle *AdapterStated `json:"stated_idle,omitempty"`
	// Errors are the probes that could not run, one sentence each.
	Errors []string `json:"errors,omitempty"`
}

// ProbeOptions configure RunProbes.
type ProbeOptions struct {
	Run string // a short id in the probes' refkeys
	// Ladder is the idle probe's doubling part (IdleGaps; nil = the default).
	Ladder []time.Duration
	// StreamResetImage is the replay probe's proxy image; "" = the replay
	// probe does not run (Errors says so).
	StreamResetImage string
	// GoWorker runs the replay probe over HTTP/1.1 and HTTP/2 (the Go
	// worker chooses); any other worker's client picks by ALPN.
	GoWorker bool
	// ResponseDelay is the response probe's vendor delay (0 = ResponseProbeDelay).
	ResponseDelay time.Duration
}

// RunProbes runs the idle, burst, replay and response timeout probes one
// after another on t, and returns what each measured; a probe that fails to
// run is named in Errors and the others still run.
func RunProbes(ctx context.Context, t ProbeTarget, o ProbeOptions) Probes {
	p := Probes{Worker: t.Worker, Date: time.Now().UTC().Format(time.RFC3339)}
	if o.Run == "" {
		o.Run = fmt.Sprintf("%04x", rand.IntN(0x10000))
	}
	fail := func(what string, err error) {
		p.Errors = append(p.Errors, what+": "+err.Error())
		t.logf("ERROR: %s: %v", what, err)
	}
	if m, err := ProbeIdle(ctx, t, o.Run, IdleGaps(t.Keepalive, o.Ladder)); err != nil {
		fail("idle probe", err)
	} else {
		p.Idle = &m
		t.logf("idle probe: %s", m.Measured())
	}
	if ctx.Err() != nil {
		return p
	}
	if m, err := ProbeBurst(ctx, t, o.Run); err != nil {
		fail("burst probe", err)
	} else {
		p.Burst = &m
	}
	if ctx.Err() != nil {
		return p
	}
	if o.StreamResetImage == "" {
		fail("replay probe", errors.New("no stream-reset proxy image (LAB_IMAGE_STREAMRESET)"))
	} else if m, err := ProbeReplay(ctx, t, o.Run, o.StreamResetImage, o.GoWorker); err != nil {
		fail("replay probe", err)
	} else {
		p.Replay = &m
	}
	if ctx.Err() != nil {
		return p
	}
	delay := o.ResponseDelay
	if delay <= 0 {
		delay = ResponseProbeDelay
	}
	if m, err := ProbeResponse(ctx, t, o.Run, delay); err != nil {
		fail("response probe", err)
	} else {
		p.Response = &m
	}
	return p
}

// runProbes starts a stack of its own for the audit's probes (the
// profile, nginx at the keep-alive), runs RunProbes on the worker under
// test and writes out/ProbesFile. Errors: the stack does not start, the
// file cannot be written; a probe that fails is in the file's Errors.
func runProbes(ctx context.Context, o Options, cfg bench.Config, sel vendormock.WorkerSelection, pdir string, keepalive time.Duration, out string, w io.Writer) (err error) {
	work := filepath.Join(workRoot(), ".lab", "audit", filepath.Base(out)+"-probes-"+time.Now().UTC().Format("20060102T150405"))
	st, err := vendormock.Start(ctx, vendormock.Options{
		ProfileDir: pdir, ServerDelayMS: -1, KeepaliveTimeout: keepalive, Images: o.Images, Session: cfg.Session,
		WorkDir: filepath.Join(work, "stack"), Log: lab.PrefixWriter{W: w, Prefix: "[probe] [stack] "},
	})
	if err != nil {
		return fmt.Errorf("start probe stack: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		err = errors.Join(err, st.Close(cctx))
	}()
	t, closeT, err := LabTarget(st, sel, keepalive, work, nil, w)
	if err != nil {
		return err
	}
	defer closeT()
	p := RunProbes(ctx, t, ProbeOptions{Ladder: cfg.AuditIdleLadder, StreamResetImage: o.Images.StreamReset, GoWorker: !sel.Contract})
	p.Provenance = cfg.Provenance
	return writeProbes(out, p)
}

func writeProbes(dir string, p Probes) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode probes: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ProbesFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write probes: %w", err)
	}
	return nil
}

// ProbeFolder runs the probes for the worker and profile of o.Config
// into o.Config.Out (an audit's folder): out/ProbesFile, nothing else.
// Errors: a bad profile or worker, the stack, the file.
func ProbeFolder(ctx context.Context, o Options, w io.Writer) error {
	cfg := o.Config
	profile, pdir, err := LoadProfile(cfg.Profile)
	if err != nil {
		return err
	}
	sel, err := vendormock.WorkerImage(cfg.Worker, o.Images.Var)
	if err != nil {
		return fmt.Errorf("select worker: %w", err)
	}
	out, err := filepath.Abs(cfg.Out)
	if err != nil {
		return fmt.Errorf("resolve OUT: %w", err)
	}
	keepalive := cfg.KeepaliveTimeout
	if keepalive <= 0 {
		keepalive = profile.Nginx.KeepaliveTimeout
	}
	fmt.Fprintf(w, "[audit] probes of %s on %s (keep-alive %s) into %s\n", sel.Name, profile.Name, keepalive, out)
	return runProbes(ctx, o, cfg, sel, pdir, keepalive, out, w)
}
