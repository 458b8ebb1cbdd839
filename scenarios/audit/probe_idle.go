package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Idle probe defaults: the doubling part of the ladder stops below the
// keep-alive; two rungs bracket the keep-alive itself (IdleGaps).
var (
	// DefaultIdleLadder is the doubling part of the idle probe's ladder, s.
	DefaultIdleLadder = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second}
	// IdleBelowKeepalive is how far below the vendor's keep-alive the
	// ladder's last rung under it sits: above the idle timeout the lab
	// gives a worker it configures (keep-alive minus 1 s,
	// vendormock.FixedIdleMargin and netmodel.IdleConnMargin), below the
	// keep-alive minus any RTT the lab adds (up to 10 ms).
	IdleBelowKeepalive = 500 * time.Millisecond
	// IdleAboveKeepalive is how far above the keep-alive the ladder's
	// last rung sits: a client that reuses a connection idle this long
	// would send on connections the vendor has closed.
	IdleAboveKeepalive = 5 * time.Second
	// idleNginxMargin is how much longer than the ladder's longest gap
	// nginx keeps idle connections during the probe, so that any new
	// connection is the client's doing.
	idleNginxMargin = 30 * time.Second
	// probeSendTimeout bounds the wait for one probe send in nginx's log.
	probeSendTimeout = 60 * time.Second
)

// IdleGaps returns the idle probe's ladder for a vendor keep-alive: 0
// (back to back: does the client reuse at all?), the ladder's rungs
// below keepalive - IdleBelowKeepalive (DefaultIdleLadder when ladder is
// nil), then keepalive - IdleBelowKeepalive and keepalive +
// IdleAboveKeepalive. Sorted, no duplicates.
func IdleGaps(keepalive time.Duration, ladder []time.Duration) []time.Duration {
	if ladder == nil {
		ladder = DefaultIdleLadder
	}
	below := keepalive - IdleBelowKeepalive
	gaps := []time.Duration{0}
	for _, g := range ladder {
		if g > 0 && (keepalive <= 0 || g < below) {
			gaps = append(gaps, g)
		}
	}
	if keepalive > 0 {
		if below > 0 {
			gaps = append(gaps, below)
		}
		gaps = append(gaps, keepalive+IdleAboveKeepalive)
	}
	slices.Sort(gaps)
	return slices.Compact(gaps)
}

// ParseIdleLadder parses a ladder key's value: comma-separated seconds
// ("1,2,4,8"), each > 0. Errors name the bad entry.
func ParseIdleLadder(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 0 || v > 3600 {
			return nil, fmt.Errorf("idle ladder %q: %q is not seconds in (0, 3600]", s, f)
		}
		out = append(out, time.Duration(v*float64(time.Second)))
	}
	return out, nil
}

// IdleObservation is one send of the idle probe after the first, as
// nginx's access log shows it.
type IdleObservation struct {
	GapS       float64 `json:"gap_s"`  // the pause the probe asked for, s (-1 when not known)
	IdleS      float64 `json:"idle_s"` // how long the client's last connection had been idle when the send started, s
	Reused     bool    `json:"reused"` // the send went on a connection that served a request before
	Connection int64   `json:"connection"`
}

// IdleMeasure is the idle probe's result: the client's idle timeout lies
// in (ReusedUpToS, NewFromS], or above ReusedUpToS when NewFromS is nil.
type IdleMeasure struct {
	KeepaliveS   float64           `json:"keepalive_s"`  // the vendor's keep-alive the worker was configured for
	NginxIdleS   float64           `json:"nginx_idle_s"` // nginx keepalive_timeout during the probe
	GapsS        []float64         `json:"gaps_s"`       // the ladder
	Observations []IdleObservation `json:"observations"` // one per send after the first
	Reuse        bool              `json:"reuse"`        // the client reused a connection at least once
	ReusedUpToS  float64           `json:"reused_up_to_s"`
	NewFromS     *float64          `json:"new_from_s,omitempty"`
	// Irregular counts new connections after an idle shorter than
	// ReusedUpToS (a connection dropped for another reason).
	Irregular int `json:"irregular,omitempty"`
	// Unknown says why nothing was measured ("" = measured).
	Unknown string `json:"unknown,omitempty"`
	// Facts are the TLS, ALPN, resumption and header facts of the same
	// lines (AnalyseFacts).
	Facts *ClientFacts `json:"facts,omitempty"`
}

// sendEntries returns the POSTs on sendPath, in log order.
func sendEntries(entries []vendormock.AccessEntry, sendPath string) []vendormock.AccessEntry {
	var out []vendormock.AccessEntry
	for _, e := range entries {
		if e.Method == "POST" && e.Path == sendPath {
			out = append(out, e)
		}
	}
	return out
}

// entryStart is when nginx began reading the request: the line's time
// minus $request_time.
func entryStart(e vendormock.AccessEntry) time.Time {
	return e.Time.Add(-time.Duration(e.RequestTime * float64(time.Second)))
}

// AnalyseIdle reads the idle probe's nginx lines (every line the probe's
// worker caused, in log order, any path): for each send after the first,
// the connection it went on (new: $connection_requests 1) and how long
// the connection the client used last had been idle (its last line's end
// to this send's start). gaps, when as long as the sends after the first,
// are the pauses asked for. The measure is (ReusedUpToS, NewFromS]:
// the longest idle after which the client reused, the shortest longer
// idle after which it opened a new connection. Fewer than two sends:
// Unknown.
func AnalyseIdle(entries []vendormock.AccessEntry, sendPath string, gaps []time.Duration) IdleMeasure {
	var m IdleMeasure
	for _, g := range gaps {
		m.GapsS = append(m.GapsS, g.Seconds())
	}
	sends := sendEntries(entries, sendPath)
	if len(sends) < 2 {
		m.Unknown = fmt.Sprintf("%d send(s) in nginx's log, at least 2 needed", len(sends))
		return m
	}
	lastEnd := map[int64]time.Time{}
	prevConn, si := int64(0), 0
	for _, e := range entries {
		isSend := e.Method == "POST" && e.Path == sendPath
		if isSend && si > 0 {
			start := entryStart(e)
			o := IdleObservation{GapS: -1, Reused: e.Request > 1, Connection: e.Connection}
			if si-1 < len(gaps) && len(gaps) == len(sends)-1 {
				o.GapS = gaps[si-1].Seconds()
			}
			c := prevConn
			if o.Reused {
				c = e.Connection
			}
			if end, ok := lastEnd[c]; ok {
				o.IdleS = roundMS(start.Sub(end).Seconds())
			}
			m.Observations = append(m.Observations, o)
		}
		if isSend {
			prevConn = e.Connection
			si++
		}
		if e.Time.After(lastEnd[e.Connection]) {
			lastEnd[e.Connection] = e.Time
		}
	}
	for _, o := range m.Observations {
		if o.Reused {
			m.Reuse = true
			m.ReusedUpToS = max(m.ReusedUpToS, o.IdleS)
		}
	}
	for _, o := range m.Observations {
		switch {
		case o.Reused:
		case o.IdleS > m.ReusedUpToS || !m.Reuse:
			if m.NewFromS == nil || o.IdleS < *m.NewFromS {
				v := o.IdleS
				m.NewFromS = &v
			}
		default:
			m.Irregular++
		}
	}
	return m
}

func roundMS(s float64) float64 { return float64(int64(s*1000+0.5)) / 1000 }

// Measured says the measure in words: "between 2.06 s and 4.07 s",
// "none up to 80.1 s", "keeps no idle connection", "unknown (...)".
func (m IdleMeasure) Measured() string {
	switch {
	case m.Unknown != "":
		return "unknown (" + m.Unknown + ")"
	case !m.Reuse:
		return fmt.Sprintf("keeps no idle connection (a new connection after every send, from %s s idle)", fmtS(derefOr(m.NewFromS, 0)))
	case m.NewFromS == nil:
		return fmt.Sprintf("none up to %s s (reused a connection idle %s s)", fmtS(m.ReusedUpToS), fmtS(m.ReusedUpToS))
	}
	s := fmt.Sprintf("between %s s and %s s (reused after %s s idle, a new connection after %s s)", fmtS(m.ReusedUpToS), fmtS(*m.NewFromS), fmtS(m.ReusedUpToS), fmtS(*m.NewFromS))
	if m.Irregular > 0 {
		s += fmt.Sprintf("; %d new connection(s) after a shorter idle", m.Irregular)
	}
	return s
}

func derefOr(p *float64, d float64) float64 {
	if p == nil {
		return d
	}
	return *p
}

// fmtS prints seconds with up to 2 decimals: "4", "74.5", "2.06".
func fmtS(s float64) string { return strconv.FormatFloat(float64(int64(s*100+0.5))/100, 'f', -1, 64) }

// ProbeIdle measures the client's idle timeout: nginx's keepalive_timeout
// set to the longest gap + 30 s, one worker, one send, then one send
// after each gap of the ladder (each gap counted from the previous send's
// line in nginx's log), stopping at the first gap after which the client
// opened a new connection (an idle timeout only grows with the idle).
// The worker is configured for t.Keepalive. The error is for what keeps
// the probe from running at all; a send that never reached nginx ends it
// with the measure so far (Unknown when too little was seen).
func ProbeIdle(ctx context.Context, t ProbeTarget, run string, gaps []time.Duration) (m IdleMeasure, err error) {
	st := t.Stack
	longest := slices.Max(gaps)
	nginxIdle := longest + idleNginxMargin
	if err := st.ReloadNginx(ctx, vendormock.NginxVariant{KeepaliveTimeout: nginxIdle}); err != nil {
		return m, fmt.Errorf("idle probe: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, st.ReloadNginx(cctx, vendormock.NginxVariant{KeepaliveTimeout: t.Keepalive}))
	}()
	from, err := st.AccessLogSize()
	if err != nil {
		return m, err
	}
	wk, err := t.Start(ctx, "idle", StartOptions{})
	if err != nil {
		return m, fmt.Errorf("idle probe: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, wk.Stop(cctx))
	}()
	t.logf("idle probe: nginx keepalive_timeout %s, gaps %v", nginxIdle, gaps)
	var asked []time.Duration
	var entries []vendormock.AccessEntry
	var why string
	for i := 0; i <= len(gaps); i++ {
		if i > 0 {
			last := sendEntries(entries, st.Profile.API.SendPath)
			if err := lab.Sleep(ctx, time.Until(last[len(last)-1].Time.Add(gaps[i-1]))); err != nil {
				return m, err
			}
			asked = append(asked, gaps[i-1])
		}
		if err := wk.Send(ctx, probeKey(run, "idle", i)); err != nil {
			return m, fmt.Errorf("idle probe: %w", err)
		}
		entries, err = waitSends(ctx, st, from, i+1, probeSendTimeout)
		if err != nil {
			why = fmt.Sprintf("send %d of the ladder: %v", i+1, err)
			break
		}
		if i > 0 {
			if s := sendEntries(entries, st.Profile.API.SendPath); s[len(s)-1].Request == 1 {
				t.logf("idle probe: a new connection after a %s gap: stop", gaps[i-1])
				break
			}
			t.logf("idle probe: the connection reused after a %s gap", gaps[i-1])
		}
	}
	m = AnalyseIdle(entries, st.Profile.API.SendPath, asked)
	facts := AnalyseFacts(entries, st.Profile.API.SendPath)
	m.Facts = &facts
	m.KeepaliveS, m.NginxIdleS = t.Keepalive.Seconds(), nginxIdle.Seconds()
	m.GapsS = nil
	for _, g := range gaps {
		m.GapsS = append(m.GapsS, g.Seconds())
	}
	if why != "" {
		if m.Unknown != "" {
			m.Unknown += "; " + why
		} else {
			m.Unknown = why
		}
	}
	return m, nil
}

// ErrProbeWait: a probe's send did not show in nginx's log in time.
var ErrProbeWait = errors.New("not in nginx's log")

// waitSends polls nginx's log from offset from until it holds n sends,
// and returns every line from there.
func waitSends(ctx context.Context, st *vendormock.Stack, from int64, n int, timeout time.Duration) ([]vendormock.AccessEntry, error) {
	deadline := time.Now().Add(timeout)
	for {
		entries, _, err := st.ReadAccessLog(from)
		if err != nil {
			return entries, err
		}
		if len(sendEntries(entries, st.Profile.API.SendPath)) >= n {
			return entries, nil
		}
		if time.Now().After(deadline) {
			return entries, fmt.Errorf("%w after %s", ErrProbeWait, timeout)
		}
		if err := lab.Sleep(ctx, 25*time.Millisecond); err != nil {
			return entries, err
		}
	}
}
