package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Burst probe sizes: BurstSends messages published at once, to the Go
// worker at BurstConcurrency (another image runs at its own), while
// WireMock holds each send BurstDelay so that sends the worker has in
// flight together overlap in nginx's log. BurstSpare is the one
// connection more than the sends in flight a pool may open (Go's
// transport dials for a waiting request while another frees up:
// vendorapi.Config.MaxConnsPerHost).
const (
	BurstSends       = 20
	BurstConcurrency = 8
	BurstDelay       = 300 * time.Millisecond
	BurstSpare       = 1
)

// BurstConnection is one connection of the burst probe as nginx's log
// shows it ($connection, $connection_requests).
type BurstConnection struct {
	Connection int64 `json:"connection"` // nginx's connection serial number
	// FirstRequest is the lowest $connection_requests of its lines in
	// the probe: 1 = opened during the probe.
	FirstRequest int `json:"first_request"`
	Sends        int `json:"sends"`
	Token        int `json:"token"` // token calls on it
	Other        int `json:"other"` // any other request
}

// BurstMeasure is the burst probe's result: how many connections the
// client used for BurstSends messages at once, how many sends each
// carried, how many sends nginx had in progress at once, and where the
// token call went.
type BurstMeasure struct {
	Published int     `json:"published"`
	DelayS    float64 `json:"delay_s"` // WireMock's hold on each send, s
	// Concurrency is what the lab asked of the worker (the Go worker);
	// 0 = the image's own.
	Concurrency int `json:"concurrency,omitempty"`
	Sends       int `json:"sends"` // send POSTs in nginx's log
	// PeakInFlight is the most sends nginx had in progress at once (each
	// from its line's time minus $request_time to its line's time).
	PeakInFlight     int               `json:"peak_in_flight"`
	Connections      []BurstConnection `json:"connections"` // in order of first line
	SendConnections  int               `json:"send_connections"`
	NewConnections   int               `json:"new_connections"`    // connections opened during the probe (any request)
	MaxPerConnection int               `json:"max_per_connection"` // most sends on one connection
	TokenCalls       int               `json:"token_calls"`
	TokenShared      int               `json:"token_shared"` // token calls on a connection that also carried sends
	// Unknown says why nothing was measured ("" = measured).
	Unknown string `json:"unknown,omitempty"`
}

// AnalyseBurst reads the burst probe's nginx lines (every line since the
// worker started, in log order): connections by serial number, sends and
// token calls on each, the peak of sends in progress at once. Fewer than
// two sends: Unknown.
func AnalyseBurst(entries []vendormock.AccessEntry, sendPath, tokenPath string) BurstMeasure {
	var m BurstMeasure
	idx := map[int64]int{}
	type edge struct {
		t time.Time
		d int
	}
	var edges []edge
	for _, e := range entries {
		i, ok := idx[e.Connection]
		if !ok {
			i = len(m.Connections)
			idx[e.Connection] = i
			m.Connections = append(m.Connections, BurstConnection{Connection: e.Connection, FirstRequest: e.Request})
		}
		c := &m.Connections[i]
		// nginx logs a request when it ends: over HTTP/2 the first
		// stream may end after a later one.
		c.FirstRequest = min(c.FirstRequest, e.Request)
		switch {
		case e.Method == "POST" && e.Path == sendPath:
			c.Sends++
			m.Sends++
			edges = append(edges, edge{entryStart(e), 1}, edge{e.Time, -1})
		case e.Method == "POST" && e.Path == tokenPath:
			c.Token++
			m.TokenCalls++
		default:
			c.Other++
		}
	}
	// A send that ends at the millisecond another starts is not beside it.
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(a.t.Compare(b.t), cmp.Compare(a.d, b.d)) })
	cur := 0
	for _, e := range edges {
		cur += e.d
		m.PeakInFlight = max(m.PeakInFlight, cur)
	}
	for _, c := range m.Connections {
		if c.FirstRequest == 1 {
			m.NewConnections++
		}
		if c.Sends > 0 {
			m.SendConnections++
			m.MaxPerConnection = max(m.MaxPerConnection, c.Sends)
			m.TokenShared += c.Token
		}
	}
	if m.Sends < 2 {
		m.Unknown = fmt.Sprintf("%d send(s) in nginx's log, at least 2 needed", m.Sends)
	}
	return m
}

// Measured says the measure in words: "20 sends on 8 connections (2-3
// each), at most 8 in flight at once; token call: 1, on a connection
// that carried sends".
func (m BurstMeasure) Measured() string {
	if m.Unknown != "" {
		return "unknown (" + m.Unknown + ")"
	}
	lo := m.MaxPerConnection
	for _, c := range m.Connections {
		if c.Sends > 0 {
			lo = min(lo, c.Sends)
		}
	}
	each := fmt.Sprintf("%d-%d sends each", lo, m.MaxPerConnection)
	if lo == m.MaxPerConnection {
		each = fmt.Sprintf("%d send(s) each", lo)
	}
	if m.MaxPerConnection == 1 {
		each += ": a new connection per send"
	}
	s := fmt.Sprintf("%d sends on %d connection(s) (%s), at most %d in flight at once", m.Sends, m.SendConnections, each, m.PeakInFlight)
	if m.Published > 0 && m.Sends < m.Published {
		s += fmt.Sprintf(" (%d of %d published seen)", m.Sends, m.Published)
	}
	switch {
	case m.TokenCalls == 0:
		s += "; no token call seen"
	case m.TokenShared == m.TokenCalls:
		s += fmt.Sprintf("; token call(s) %d, on a connection that then carried sends", m.TokenCalls)
	case m.TokenShared == 0:
		s += fmt.Sprintf("; token call(s) %d, on a connection of its own (no send on it)", m.TokenCalls)
	default:
		s += fmt.Sprintf("; token calls %d, %d on a connection that carried sends", m.TokenCalls, m.TokenShared)
	}
	return s
}

// Trail lists the connections by nginx's serial number, those that
// carried the same grouped: "#5: 1 token + 3 send(s); #6 #8: 3
// send(s); #7: 2 send(s)"; a connection opened before the probe says
// "(from request N)".
func (m BurstMeasure) Trail() string {
	conns := slices.Clone(m.Connections)
	slices.SortFunc(conns, func(a, b BurstConnection) int { return cmp.Compare(a.Connection, b.Connection) })
	var order []string
	groups := map[string][]string{}
	for _, c := range conns {
		var what []string
		if c.Token > 0 {
			what = append(what, fmt.Sprintf("%d token", c.Token))
		}
		if c.Sends > 0 {
			what = append(what, fmt.Sprintf("%d send(s)", c.Sends))
		}
		if c.Other > 0 {
			what = append(what, fmt.Sprintf("%d other", c.Other))
		}
		desc := strings.Join(what, " + ")
		if c.FirstRequest != 1 {
			desc += fmt.Sprintf(" (from request %d)", c.FirstRequest)
		}
		if _, ok := groups[desc]; !ok {
			order = append(order, desc)
		}
		groups[desc] = append(groups[desc], fmt.Sprintf("#%d", c.Connection))
	}
	if len(order) == 0 {
		return "no line"
	}
	var p []string
	for _, d := range order {
		p = append(p, strings.Join(groups[d], " ")+": "+d)
	}
	return strings.Join(p, "; ")
}

// Judge judges the measure only: FAIL when every send went on a
// connection of its own (a new connection per send), or when the sends
// used more connections than nginx ever had sends in flight at once
// plus BurstSpare (the client closed connections it could have kept:
// a pool smaller than its concurrency, docs/studies.md study A); FAIL
// when nothing was measured (never a pass); else PASS. why says it in
// one line.
func (m BurstMeasure) Judge() (verdict, why string) {
	switch {
	case m.Unknown != "":
		return Fail, "not measured: " + m.Unknown
	case m.MaxPerConnection <= 1:
		return Fail, fmt.Sprintf("a new connection per send under a burst: %d connections for %d sends", m.SendConnections, m.Sends)
	case m.SendConnections > m.PeakInFlight+BurstSpare:
		return Fail, fmt.Sprintf("%d connections for at most %d sends in flight at once (+%d allowed): the client closed connections it could have kept", m.SendConnections, m.PeakInFlight, BurstSpare)
	}
	return Pass, fmt.Sprintf("%d connection(s) for at most %d sends in flight at once (+%d allowed)", m.SendConnections, m.PeakInFlight, BurstSpare)
}

// burstRule judges the burst probe (BurstMeasure.Judge); N/A when the
// probe did not run (an audit written before it).
func burstRule(p *Probes) Rule {
	r := Rule{ID: "probe-burst", Name: "Keeps its connections under a burst (no new connection per send; no more connections than sends in flight + 1)",
		Source: "burst probe: messages published at once, WireMock holding each send; nginx's $connection, $connection_requests, $request_time"}
	if p == nil || p.Burst == nil {
		r.Verdict, r.Evidence = NA, "not measured (no burst probe in this audit)"
		if p != nil {
			for _, e := range p.Errors {
				if strings.HasPrefix(e, "burst probe") {
					r.Evidence = "not measured: " + e
				}
			}
		}
		return r
	}
	v, why := p.Burst.Judge()
	r.Verdict = v
	r.Evidence = why + "; measured: " + p.Burst.Measured() + "; connections: " + p.Burst.Trail()
	r.Summary = why
	return r
}

// ProbeBurst publishes BurstSends messages at once to one fresh worker
// (the Go worker at BurstConcurrency; another image at its own) while
// WireMock holds each send BurstDelay, waits until nginx's log holds
// every send, and reads the lines (AnalyseBurst). The stubs are put
// back afterwards. The error is for what keeps the probe from running;
// sends that never reached nginx leave the measure of what did
// (Unknown when too little).
func ProbeBurst(ctx context.Context, t ProbeTarget, run string) (m BurstMeasure, err error) {
	st := t.Stack
	restore, err := holdSends(ctx, st, BurstDelay)
	if err != nil {
		return m, fmt.Errorf("burst probe: %w", err)
	}
	defer func() { err = errors.Join(err, restore()) }()
	from, err := st.AccessLogSize()
	if err != nil {
		return m, err
	}
	wk, err := t.Start(ctx, "burst", StartOptions{Concurrency: BurstConcurrency})
	if err != nil {
		return m, fmt.Errorf("burst probe: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, wk.Stop(cctx))
	}()
	var keys []string
	for i := 1; i <= BurstSends; i++ {
		keys = append(keys, probeKey(run, "burst", i))
	}
	if b, ok := wk.(BurstSender); ok {
		err = b.SendAll(ctx, keys)
	} else {
		for _, k := range keys {
			if err = wk.Send(ctx, k); err != nil {
				break
			}
		}
	}
	if err != nil {
		return m, fmt.Errorf("burst probe: %w", err)
	}
	t.logf("burst probe: %d messages published at once, WireMock holds each send %s", BurstSends, BurstDelay)
	entries, werr := waitSends(ctx, st, from, BurstSends, probeSendTimeout+BurstSends*BurstDelay)
	m = AnalyseBurst(entries, st.Profile.API.SendPath, st.Profile.API.TokenPath)
	m.Published, m.DelayS = BurstSends, BurstDelay.Seconds()
	if t.Configurable {
		m.Concurrency = BurstConcurrency
	}
	if werr != nil && m.Unknown != "" {
		m.Unknown += ": " + werr.Error()
	}
	t.logf("burst probe: %s", m.Measured())
	return m, nil
}
