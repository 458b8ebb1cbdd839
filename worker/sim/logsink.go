package sim

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// logSink is a process's log (worker.Config.Logger): the lines of the
// loop and the Handler become the trace's and the scheduler's facts;
// those of a dead process are dropped.
type logSink struct {
	w *world
	p *process
}

func (h *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (h *logSink) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logSink) WithGroup(string) slog.Handler            { return h }

// traced are the attributes a worker line keeps in the trace: none
// measures wall time.
var traced = []string{"refkey", "outcome", "queue", "code", "generation", "delay", "tries", "error", "publish_error", "ack_error"}

// loopEvents are the loop's lines Result.Loop counts, by the name it
// counts them under.
var loopEvents = map[string]string{
	"consuming":                                      "sessions",
	"broker session lost":                            "sessions lost",
	"broker session ended; reconnecting":             "reconnects after a lost session",
	"ledger failed; consuming again once it answers": "stops for a broken ledger",
	"ledger still does not take a write":             "ledger waits refused a write",
	"ledger takes writes again; reconnecting":        "ledger waits that saw a write",
}

// quiet are worker lines the trace leaves out.
var quiet = []string{"standby", "active consumer", "summary", "starting"}

func (h *logSink) Handle(_ context.Context, r slog.Record) error {
	if h.p.dead.Load() {
		return nil
	}
	a := map[string]string{}
	r.Attrs(func(at slog.Attr) bool {
		a[at.Key] = at.Value.String()
		return true
	})
	w, p := h.w, h.p
	if k, ok := loopEvents[r.Message]; ok {
		w.loop[k]++
	}
	if strings.Contains(a["error"], "delivery from a lost channel") || strings.Contains(a["error"], "broker session was lost") {
		w.loop["a delivery of a lost generation refused"]++
	}
	switch r.Message {
	case "handled", "message requeued":
		w.handled(p, a["outcome"], a["queue"], a["code"], a["error"], r.Message != "handled")
		return nil
	case "ledger failed; consuming again once it answers":
		w.ledgerStopped(p, a["error"])
		return nil
	}
	for _, q := range quiet {
		if r.Message == q {
			return nil
		}
	}
	var b strings.Builder
	if len(w.procs) > 1 {
		fmt.Fprintf(&b, "worker-%d: %s", p.rep, r.Message)
	} else {
		b.WriteString("worker: " + r.Message)
	}
	for _, k := range traced {
		if v, ok := a[k]; ok {
			fmt.Fprintf(&b, " %s=%s", k, short(v))
		}
	}
	w.note("%s", b.String())
	return nil
}

// handled is the loop's account of the delivery in hand.
func (w *world) handled(p *process, out, queue, code, errText string, requeued bool) {
	w.outcomes[out]++
	to := queue
	if to == "" {
		to = "acked"
	}
	if requeued {
		to = "requeued"
	}
	w.note("%s -> %s %s code=%q %s", p.current, out, to, code, short(errText))
}

// ledgerStopped is the loop stopping its session for a broken ledger
// (worker.ErrLedger): a step fact for the checker, with the Handler's
// ledger failures since the previous stop.
func (w *world) ledgerStopped(p *process, errText string) {
	if !w.ledgerStop || p.failures < w.stopFailures {
		w.stopFailures = p.failures
	}
	w.ledgerStop = true
	p.failures = 0
	p.stopOutage = p.failOutage
	w.note("session closed: %s", short(errText))
}
