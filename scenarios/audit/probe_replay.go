package audit

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Replay probe sizes: sends per lane, every ReplayEvery-th send POST
// reset after the vendor accepted it, and how long the journal is
// watched after the last send for a re-send.
const (
	ReplaySends  = 4
	ReplayEvery  = 2
	ReplaySettle = 10 * time.Second
)

// ReplayKey is one probe refkey as WireMock's journal saw it.
type ReplayKey struct {
	RefKey   string `json:"refkey"`
	Requests int    `json:"requests"` // POSTs on the send path with this refkey
	// AgainAfterMS is the time from the first request to the second in
	// the journal, ms (-1 when not seen twice or not timed).
	AgainAfterMS float64 `json:"again_after_ms"`
}

// ReplayLane is one worker of the replay probe.
type ReplayLane struct {
	Lane string `json:"lane"` // LaneGoH1, LaneGoH2 (the Go worker), LaneChoice or LaneVendorH1
	// Resets are the sends the proxy reset, by how: "HTTP/1.1" (TCP reset
	// with no answer) or "HTTP/2" (RST_STREAM PROTOCOL_ERROR).
	Resets   map[string]int `json:"resets"`
	Keys     []ReplayKey    `json:"keys"`
	Replayed []string       `json:"replayed,omitempty"` // refkeys in the journal more than once
	// Unknown says why the lane measured nothing ("" = measured).
	Unknown string `json:"unknown,omitempty"`
}

// ReplayMeasure is the replay probe's result.
type ReplayMeasure struct {
	Every int          `json:"every"` // every Nth send POST reset after the vendor accepted it
	Lanes []ReplayLane `json:"lanes"`
	// Skipped says why LaneVendorH1 did not run ("" = it ran, or the
	// worker is the Go worker).
	Skipped string `json:"skipped,omitempty"`
}

// resetLineRE matches the stream-reset proxy's log line of one reset
// (vendormock/streamreset: "reset HTTP/1.1 POST /v3/message #2 (x-refkey
// "k") with a TCP reset ..." or "reset HTTP/2 POST ... with PROTOCOL_ERROR").
var resetLineRE = regexp.MustCompile(`reset (HTTP/1\.1|HTTP/2) POST \S+ #\d+ \(\S+ "([^"]*)"\)`)

// CountResets counts the proxy's reset lines by protocol, for the
// refkeys starting with prefix (all when the correlation header was not
// logged: "").
func CountResets(logs, prefix string) map[string]int {
	out := map[string]int{}
	for _, m := range resetLineRE.FindAllStringSubmatch(logs, -1) {
		if m[2] == "" || strings.HasPrefix(m[2], prefix) {
			out[m[1]]++
		}
	}
	return out
}

// AnalyseReplay reads the journal for the lane's refkeys: how many send
// POSTs each reached the vendor with, and when the second came. A key
// with more than one was sent again: by the client on its own or by the
// worker; AgainAfterMS tells them apart (a transport replays within
// milliseconds, a retry queue after its delay).
func AnalyseReplay(journal []vendormock.JournalEntry, sendPath string, keys []string) (out []ReplayKey, replayed []string) {
	for _, k := range keys {
		rk := ReplayKey{RefKey: k, AgainAfterMS: -1}
		var times []time.Time
		for _, e := range journal {
			if e.Method == "POST" && e.Path == sendPath && e.RefKey == k {
				rk.Requests++
				times = append(times, e.LoggedAt)
			}
		}
		if len(times) > 1 && !times[0].IsZero() && !times[1].IsZero() {
			slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
			rk.AgainAfterMS = float64(times[1].Sub(times[0]).Microseconds()) / 1000
		}
		if rk.Requests > 1 {
			replayed = append(replayed, k)
		}
		out = append(out, rk)
	}
	return out, replayed
}

// Measured says a lane's result in words.
func (l ReplayLane) Measured() string {
	if l.Unknown != "" {
		return l.Lane + ": unknown (" + l.Unknown + ")"
	}
	resets := 0
	var how []string
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for k := range l.Resets {
			if !yield(k) {
				return
			}
		}
	}) {
		resets += l.Resets[p]
		how = append(how, fmt.Sprintf("%d over %s", l.Resets[p], p))
	}
	s := fmt.Sprintf("%s: %d send(s) of %d refkeys reset after the vendor accepted them (%s)", l.Lane, resets, len(l.Keys), strings.Join(how, ", "))
	if len(l.Replayed) == 0 {
		return s + "; none sent again (journal: 1 request each)"
	}
	var parts []string
	for _, k := range l.Keys {
		if k.Requests > 1 {
			p := fmt.Sprintf("%s %d times", k.RefKey, k.Requests)
			if k.AgainAfterMS >= 0 {
				p += fmt.Sprintf(", again after %.0f ms", k.AgainAfterMS)
			}
			parts = append(parts, p)
		}
	}
	return s + fmt.Sprintf("; SENT AGAIN: %s", strings.Join(parts, "; "))
}

// Replay lane names: the Go worker's two (it chooses its protocol), and
// another image's: its client's choice by ALPN, then, when it chose
// HTTP/2, HTTP/1.1 forced by the vendor side (the proxy offers only
// http/1.1), since the issue asks both protocols of a client that speaks
// both.
const (
	LaneGoH1     = "HTTP/1.1"
	LaneGoH2     = "HTTP/2 offered"
	LaneChoice   = "the client's choice"
	LaneVendorH1 = "HTTP/1.1 (the vendor offers only http/1.1)"
)

// replayLaneSpec is one lane of the replay probe: the worker's protocol
// (the Go worker) and the proxy's ALPN.
type replayLaneSpec struct {
	name      string
	h2        bool // StartOptions.H2
	http1Only bool // the proxy offers only http/1.1
}

// ProbeReplay puts the stream-reset proxy into the vendor path (every
// ReplayEvery-th send POST reset after WireMock accepted it, over HTTP/2
// with RST_STREAM PROTOCOL_ERROR and over HTTP/1.1 with a TCP reset and
// no answer) and sends ReplaySends notifications one after another per
// lane, each lane with a fresh proxy and worker; the journal then shows
// whether any was sent again. The Go worker runs two lanes (LaneGoH1,
// LaneGoH2); another worker LaneChoice (the protocol its client picks by
// ALPN: the proxy offers h2 and http/1.1) and, when the proxy reset its
// sends over HTTP/2, LaneVendorH1 (the proxy offers only http/1.1).
// image is the proxy's image (Images.StreamReset). The error is for what
// keeps the probe from running; a lane that saw no reset is Unknown.
func ProbeReplay(ctx context.Context, t ProbeTarget, run, image string, goWorker bool) (m ReplayMeasure, err error) {
	m.Every = ReplayEvery
	lanes := []replayLaneSpec{{name: LaneChoice}, {name: LaneVendorH1, http1Only: true}}
	if goWorker {
		lanes = []replayLaneSpec{{name: LaneGoH1}, {name: LaneGoH2, h2: true}}
	}
	for i, ln := range lanes {
		if ln.http1Only && m.Lanes[0].Resets["HTTP/2"] == 0 {
			m.Skipped = LaneVendorH1 + " not run: the proxy reset none of the client's sends over HTTP/2 (its own choice was HTTP/1.1, or nothing was reset), so the lane above is its HTTP/1.1 one"
			t.logf("replay probe: %s", m.Skipped)
			break
		}
		prefix := probeKey(run, fmt.Sprintf("replay%d", i), 0)
		lane, err := replayLaneWithProxy(ctx, t, ln, image, prefix[:len(prefix)-1], fmt.Sprintf("replay-%d", i))
		if err != nil {
			return m, err
		}
		t.logf("replay probe: %s", lane.Measured())
		m.Lanes = append(m.Lanes, lane)
	}
	return m, nil
}

// replayLaneWithProxy starts the proxy for one lane, runs the lane and
// counts the proxy's resets (by its log: the correlation header it logs
// may be absent in a worker's requests), then stops the proxy.
func replayLaneWithProxy(ctx context.Context, t ProbeTarget, ln replayLaneSpec, image, prefix, worker string) (lane ReplayLane, err error) {
	p, err := t.Stack.StartStreamReset(ctx, vendormock.StreamResetOptions{Image: image, Every: ReplayEvery, H1: true, HTTP1Only: ln.http1Only})
	if err != nil {
		return lane, fmt.Errorf("replay probe: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, p.Stop(cctx))
	}()
	lane, err = replayLane(ctx, t, ln.name, ln.h2, prefix, worker)
	if err != nil {
		return lane, err
	}
	logs, err := p.Logs(ctx)
	if err != nil {
		return lane, fmt.Errorf("replay probe: %w", err)
	}
	lane.Resets = CountResets(logs, "")
	if n := sumCounts(lane.Resets); n == 0 && lane.Unknown == "" {
		lane.Unknown = "the proxy reset none of its sends: nothing provoked"
	}
	return lane, nil
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// replayLane runs one worker through the proxy: ReplaySends sends, each
// awaited in the journal, then ReplaySettle for late re-sends.
func replayLane(ctx context.Context, t ProbeTarget, name string, h2 bool, prefix, worker string) (lane ReplayLane, err error) {
	st := t.Stack
	lane.Lane = name
	wk, err := t.Start(ctx, worker, StartOptions{H2: h2})
	if err != nil {
		return lane, fmt.Errorf("replay probe: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, wk.Stop(cctx))
	}()
	var keys []string
	for i := 1; i <= ReplaySends; i++ {
		k := fmt.Sprintf("%s%d", prefix, i)
		keys = append(keys, k)
		if err := wk.Send(ctx, k); err != nil {
			return lane, fmt.Errorf("replay probe: %w", err)
		}
		if err := waitProbeJournal(ctx, t, k, probeSendTimeout); err != nil {
			lane.Unknown = fmt.Sprintf("send %s: %v", k, err)
			break
		}
	}
	if err := lab.Sleep(ctx, ReplaySettle); err != nil {
		return lane, err
	}
	journal, err := t.journal(ctx)
	if err != nil {
		return lane, fmt.Errorf("replay probe: %w", err)
	}
	lane.Keys, lane.Replayed = AnalyseReplay(journal, st.Profile.API.SendPath, keys)
	return lane, nil
}

// waitProbeJournal polls WireMock's journal until it holds a send of refkey.
func waitProbeJournal(ctx context.Context, t ProbeTarget, refkey string, timeout time.Duration) error {
	st := t.Stack
	deadline := time.Now().Add(timeout)
	for {
		js, err := t.journal(ctx)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(js, func(e vendormock.JournalEntry) bool {
			return e.RefKey == refkey && e.Path == st.Profile.API.SendPath
		}) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not in WireMock's journal after %s", timeout)
		}
		if err := lab.Sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// replayProbeEvidence is the replay probe's part of the client-replay
// rule: the refkeys its lanes saw sent again (each fails the rule, with
// no catalog fault needed to provoke it), the lanes that measured, the
// lines naming the replays, and the lines of the lanes that saw none or
// measured nothing (shown, never read as a pass).
func replayProbeEvidence(p *Probes) (replayed, measured int, where, clean []string) {
	if p == nil || p.Replay == nil {
		return 0, 0, nil, nil
	}
	for _, l := range p.Replay.Lanes {
		switch {
		case l.Unknown != "":
			clean = append(clean, "replay probe "+l.Measured())
		case len(l.Replayed) > 0:
			measured++
			replayed += len(l.Replayed)
			where = append(where, "replay probe "+l.Measured())
		default:
			measured++
			clean = append(clean, "replay probe "+l.Measured())
		}
	}
	return replayed, measured, where, clean
}
