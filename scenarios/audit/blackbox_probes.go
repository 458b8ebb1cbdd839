package audit

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// BlackBoxProbesName is the name that selects the probes in a black-box
// audit's Only list, and their folder in OUT.
const BlackBoxProbesName = "probes"

// BlackBoxTarget returns a ProbeTarget for the team's image run from its
// adapter file alone, on e's stack: Start purges the adapter's queues
// (consumed and routed: what a previous probe left must not be sent
// again during this one), starts a fresh container of the image
// (BlackBoxEnv.StartWorker, named "probe-<name>", its log appended to
// e.Dir/worker.log) and waits until it consumes; Send publishes one
// message in the team's schema (Adapter.Render, BlackBoxEnv.Publish) and
// returns once the broker confirmed it; the journal finds refkeys where
// the adapter says (BlackBoxEnv.Journal: refkey.body_path or
// refkey.header, else the profile's refkey field). The probes need no
// more: one message with refkey k, then k in WireMock's journal or a
// send in nginx's log. The image picks HTTP/1.1 or HTTP/2 and its
// concurrency itself (StartOptions are ignored); SendAll publishes a
// burst over one channel. keepalive is the vendor keep-alive the stack's nginx runs at.
func BlackBoxTarget(e *BlackBoxEnv, keepalive time.Duration, log io.Writer) ProbeTarget {
	t := ProbeTarget{Stack: e.Stack, Worker: e.Image, Keepalive: keepalive, Log: log}
	t.Journal = func(ctx context.Context) ([]vendormock.JournalEntry, error) {
		sends, _, err := e.Journal(ctx)
		return sends, err
	}
	t.Start = func(ctx context.Context, name string, _ StartOptions) (ProbeWorker, error) {
		left, _, err := e.ReadQueues(ctx, true)
		if err != nil {
			return nil, fmt.Errorf("purge queues before probe worker %s: %w", name, err)
		}
		if len(left) > 0 {
			t.logf("%d message(s) left in the adapter's queues by earlier runs: purged before %s", len(left), name)
		}
		wname := "probe-" + name
		wk, err := e.StartWorker(ctx, wname)
		if err != nil {
			e.StopWorker(context.WithoutCancel(ctx), wk, wname)
			return nil, fmt.Errorf("start probe worker %s: %w", name, err)
		}
		return &blackBoxWorker{env: e, wk: wk, name: wname}, nil
	}
	return t
}

// blackBoxWorker is a ProbeWorker started by BlackBoxTarget.
type blackBoxWorker struct {
	env  *BlackBoxEnv
	wk   *vendormock.Worker
	name string
}

func (w *blackBoxWorker) Send(ctx context.Context, refkey string) error {
	return w.env.Publish(ctx, []string{refkey})
}

func (w *blackBoxWorker) SendAll(ctx context.Context, refkeys []string) error {
	return w.env.Publish(ctx, refkeys)
}

// Stop stops the container and keeps its log; how it exited is logged.
func (w *blackBoxWorker) Stop(ctx context.Context) error {
	if exit := w.env.StopWorker(ctx, w.wk, w.name); exit != "" {
		w.env.Log("probe worker %s %s before it was stopped", w.name, exit)
	}
	return nil
}

// blackBoxProbeRules are the rules the probes judge in a black-box
// audit: the idle timeout against the vendor's keep-alive (idleRule,
// from the idle probe's measure only), the connections under a burst
// (burstRule) and POST replay (the replay
// probe's journal: a refkey sent again after the vendor took it and the
// connection was reset fails; no lane measured is N/A, never a pass).
func blackBoxProbeRules(p *Probes, image string, keepalive time.Duration) []Rule {
	idle := idleRule(Inputs{Worker: image, KeepaliveS: keepalive.Seconds(), Probes: p}, nil)
	replay := Rule{ID: "probe-replay", Name: "Never sends a POST again after the vendor took it and the connection was reset (replay probe)",
		Source: "replay probe: stream-reset proxy in the vendor path, WireMock's journal per refkey"}
	replayed, measured, where, clean := replayProbeEvidence(p)
	switch {
	case p == nil || p.Replay == nil:
		replay.Verdict, replay.Summary = NA, "unknown: the replay probe did not run"
		if p != nil {
			for _, e := range p.Errors {
				if strings.HasPrefix(e, "replay probe") {
					replay.Summary = "unknown: " + e
				}
			}
		}
	case replayed > 0:
		replay.Verdict, replay.Summary = Fail, fmt.Sprintf("%d refkey(s) sent again: %s", replayed, strings.Join(where, "; "))
	case measured == 0:
		replay.Verdict, replay.Summary = NA, "unknown: "+strings.Join(clean, "; ")
	default:
		replay.Verdict, replay.Summary = Pass, strings.Join(clean, "; ")
	}
	replay.Evidence = replay.Summary
	return []Rule{idle, burstRule(p), replay}
}

// addProbes puts the probes' measures on the report: their table, their
// rules (blackBoxProbeRules), and the verdict again.
func (rep *BlackBoxReport) addProbes(p *Probes, keepalive time.Duration) {
	rep.Probes = p
	rep.ProbeRows = probeRows(Inputs{Worker: rep.Image, Probes: p})
	rep.Rules = append(rep.Rules, blackBoxProbeRules(p, rep.Image, keepalive)...)
	rep.Pass = Passed(rep.Rules)
}
