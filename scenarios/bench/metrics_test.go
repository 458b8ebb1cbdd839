package bench

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

func TestRefKey(t *testing.T) {
	if got := RefKey("r1", "pooled", 10, true, 7); got != "r1-pooled-10ms-w0007" {
		t.Errorf("RefKey(warm-up) = %q", got)
	}
	if got := RefKey("r1", "per-request", 3, false, 1000); got != "r1-per-request-3ms-m1000" {
		t.Errorf("RefKey(measured) = %q", got)
	}
}

// benchRun is a run's records and its published list.
type benchRun struct {
	recs []records.Record
	pub  []reconcile.Published
}

// sendRecords makes warm+meas SENT records handled back to back, each
// taking stepMS of wall time and cpuMS of CPU, and the published list that
// marks the first warm as warm-up; total_ms of measured record i (1-based)
// is float64(i).
func sendRecords(warm, meas int, stepMS, cpuMS float64) benchRun {
	t0 := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	step := time.Duration(stepMS * float64(time.Millisecond))
	var b benchRun
	for i := 0; i < warm+meas; i++ {
		r := records.Record{
			Seq: i + 1, Outcome: outcome.Sent,
			Start: t0.Add(time.Duration(i) * step), End: t0.Add(time.Duration(i+1) * step),
			CPUMS: 100 + cpuMS*float64(i+1), TLSVersion: "TLS 1.3",
		}
		if i < warm {
			r.RefKey = RefKey("run", "pooled", 10, true, i+1)
			r.TotalMS = 1000 // must never show in latencies
		} else {
			r.RefKey = RefKey("run", "pooled", 10, false, i-warm+1)
			r.TotalMS = float64(i - warm + 1)
			r.ConnectMS = 2
			r.TLSHandshakeMS = 5
			r.TTFBMS = r.TotalMS - 1
			r.Reused = i%2 == 0
		}
		b.recs = append(b.recs, r)
		b.pub = append(b.pub, reconcile.Published{Seq: i + 1, RefKey: r.RefKey, Valid: true, Warmup: i < warm})
	}
	return b
}

// metricsOf runs recs through NewMetrics(pub).
func metricsOf(t *testing.T, pub []reconcile.Published, recs []records.Record) *Metrics {
	t.Helper()
	m := NewMetrics(pub)
	for _, r := range recs {
		m.Add(r)
	}
	m.Close()
	return m
}

// TestMetricsKindFromPublished: warm-up and measured come from the
// published list, not from the refkey's spelling.
func TestMetricsKindFromPublished(t *testing.T) {
	rec := func(seq int, key string) records.Record {
		return records.Record{Seq: seq, RefKey: key, Outcome: outcome.Sent, TotalMS: 10, CPUMS: float64(seq)}
	}
	recs := []records.Record{rec(1, "a-w0001"), rec(2, "b"), rec(3, "c-m0001"), rec(4, "bad")}
	pub := []reconcile.Published{
		{Seq: 1, RefKey: "a-w0001", Valid: true}, // looks warm-up, published measured
		{Seq: 2, RefKey: "b", Valid: true, Warmup: true},
		{Seq: 3, RefKey: "bad", Valid: false}, // malformed: neither
	}
	m := metricsOf(t, pub, recs)
	if m.Warmups != 1 || m.Measured != 1 {
		t.Errorf("Warmups %d Measured %d; want 1 and 1 (c-m0001 was never published)", m.Warmups, m.Measured)
	}
	if m.Outcomes[outcome.Sent] != 4 {
		t.Errorf("Outcomes = %v; want SENT 4 (every record)", m.Outcomes)
	}
	if none := metricsOf(t, nil, recs); none.Measured != 0 || none.Warmups != 0 {
		t.Errorf("without a published list: Warmups %d Measured %d; want 0 and 0", none.Warmups, none.Measured)
	}
}

func TestMetrics(t *testing.T) {
	tests := []struct {
		name     string
		run      benchRun
		shuffle  bool
		wantMeas int
		wantWall float64
		wantRate float64
		wantCPU  float64
		wantP50  float64
		wantP99  float64
		wantMax  float64
	}{
		// 100 measured sends of 25 ms each: 2.5 s, 40 sends/s; 3 ms CPU
		// each; the warm-up's 1000 ms latencies and CPU are excluded.
		{"with warm-up", sendRecords(5, 100, 25, 3), false, 100, 2.5, 40, 3, 50, 99, 100},
		{"records out of order", sendRecords(5, 100, 25, 3), true, 100, 2.5, 40, 3, 50, 99, 100},
		// No warm-up: the first measured record is the CPU baseline.
		{"without warm-up", sendRecords(0, 10, 100, 2), false, 10, 1, 10, 2, 5, 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := tt.run.recs
			if tt.shuffle {
				recs = append([]records.Record(nil), recs...)
				for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
					recs[i], recs[j] = recs[j], recs[i]
				}
			}
			m := metricsOf(t, tt.run.pub, recs)
			near := func(name string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v; want %v", name, got, want)
				}
			}
			if m.Measured != tt.wantMeas {
				t.Errorf("Measured = %d; want %d", m.Measured, tt.wantMeas)
			}
			near("WallS", m.WallS, tt.wantWall)
			near("SendsPerS", m.SendsPerS, tt.wantRate)
			near("CPUMSPerSend", m.CPUMSPerSend, tt.wantCPU)
			near("P50", m.Latency.P50, tt.wantP50)
			near("P99", m.Latency.P99, tt.wantP99)
			near("Max", m.Latency.Max, tt.wantMax)
			near("Phases.TLSHandshakeMS", m.Phases.TLSHandshakeMS, 5)
			if m.Outcomes[outcome.Sent] != len(recs) {
				t.Errorf("Outcomes = %v; want SENT %d", m.Outcomes, len(recs))
			}
			if m.ClientReused != tt.wantMeas/2 {
				t.Errorf("ClientReused = %d; want %d", m.ClientReused, tt.wantMeas/2)
			}
		})
	}
}

func TestMetricsOutcomesAndErrors(t *testing.T) {
	m := NewMetrics(nil)
	for i, o := range []outcome.Outcome{outcome.Sent, outcome.Unknown, outcome.Sent, outcome.Invalid, outcome.NotSent} {
		r := records.Record{Seq: i + 1, Outcome: o, RefKey: RefKey("r", "pooled", 3, false, i+1)}
		m.kind[r.RefKey] = false
		if o != outcome.Sent {
			r.Error = "failed: " + string(o)
		}
		if o == outcome.Invalid {
			r.RefKey = ""
		}
		m.Add(r)
	}
	m.kind[RefKey("r", "pooled", 3, false, 6)] = false
	m.Add(records.Record{Seq: 6, Outcome: outcome.Unknown, Error: "failed: UNKNOWN", RefKey: RefKey("r", "pooled", 3, false, 6)})
	m.Close()
	want := map[outcome.Outcome]int{"SENT": 2, "UNKNOWN": 2, "INVALID": 1, "NOT_SENT": 1}
	if !reflect.DeepEqual(m.Outcomes, want) {
		t.Errorf("Outcomes = %v; want %v", m.Outcomes, want)
	}
	if m.Measured != 5 {
		t.Errorf("Measured = %d; want 5 (the INVALID record has no refkey)", m.Measured)
	}
	if len(m.Errors) != 3 {
		t.Errorf("Errors = %q; want 3 distinct", m.Errors)
	}
	// Records without a send trace give no latency.
	if m.Latency != (results.Latency{}) {
		t.Errorf("Latency = %+v; want zero", m.Latency)
	}
}

func TestMetricsUnknownCPU(t *testing.T) {
	b := sendRecords(2, 10, 25, 3)
	b.recs[11].CPUMS = -1
	m := metricsOf(t, b.pub, b.recs)
	if m.CPUMSPerSend != -1 {
		t.Errorf("CPUMSPerSend = %v; want -1 when the worker could not read its CPU", m.CPUMSPerSend)
	}
}

func TestMetricsClientCPU(t *testing.T) {
	// The in-send CPU is averaged over measured sends only; a warm-up send
	// (the token call) and a message without a send call do not count.
	b := sendRecords(1, 4, 25, 3)
	recs := b.recs
	recs[0].SendCPUMS = 50 // warm-up
	for i, v := range []float64{0.1, 0.2, 0.3, 0.4} {
		recs[1+i].SendCPUMS = v
	}
	noSend := recs[4]
	noSend.RefKey = RefKey("run", "pooled", 10, false, 99)
	noSend.Seq, noSend.TotalMS, noSend.SendCPUMS = 99, 0, 7
	pub := append(b.pub, reconcile.Published{Seq: 99, RefKey: noSend.RefKey, Valid: true})
	m := metricsOf(t, pub, append(recs, noSend))
	if got, want := m.ClientCPUMSPerSend, 0.25; math.Abs(got-want) > 1e-9 {
		t.Errorf("ClientCPUMSPerSend = %v, want %v", got, want)
	}
}

func TestMetricsEmpty(t *testing.T) {
	m := NewMetrics(nil)
	m.Close()
	if m.SendsPerS != 0 || m.WallS != 0 || m.CPUMSPerSend != 0 || m.Outcomes == nil {
		t.Errorf("empty Metrics after Close = %+v", m)
	}
}

func TestCountConnections(t *testing.T) {
	send := func(conn int64, req int, proto string) vendormock.AccessEntry {
		return vendormock.AccessEntry{Connection: conn, Request: req, TLSProtocol: proto, Method: "POST", Path: results.SendPath, Status: 200}
	}
	tests := []struct {
		name    string
		entries []vendormock.AccessEntry
		want    ConnStats
	}{
		{"empty", nil, ConnStats{TLSVersions: map[string]int{}}},
		{"per-request: token and send on a fresh connection each", []vendormock.AccessEntry{
			{Connection: 1, Request: 1, TLSProtocol: "TLSv1.2", Method: "POST", Path: "/v1/token"},
			send(2, 1, "TLSv1.2"), send(3, 1, "TLSv1.2"), send(4, 1, "TLSv1.2"),
		}, ConnStats{SendRequests: 3, TCPConnections: 3, TLSVersions: map[string]int{"TLSv1.2": 3}, MaxRequestsPerConn: 1}},
		{"pooled: token and sends on one connection", []vendormock.AccessEntry{
			{Connection: 9, Request: 1, TLSProtocol: "TLSv1.3", Method: "POST", Path: "/v1/token"},
			send(9, 2, "TLSv1.3"), send(9, 3, "TLSv1.3"), send(9, 4, "TLSv1.3"),
		}, ConnStats{SendRequests: 3, TCPConnections: 1, TLSVersions: map[string]int{"TLSv1.3": 3}, MaxRequestsPerConn: 4}},
		{"other methods and paths ignored", []vendormock.AccessEntry{
			{Connection: 1, Method: "GET", Path: results.SendPath}, {Connection: 2, Method: "POST", Path: "/__admin/x"},
			send(5, 1, ""),
		}, ConnStats{SendRequests: 1, TCPConnections: 1, TLSVersions: map[string]int{"none": 1}, MaxRequestsPerConn: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CountConnections(tt.entries); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CountConnections = %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestCountJournalSends(t *testing.T) {
	j := []vendormock.JournalEntry{
		{Method: "POST", Path: "/v1/token"},
		{Method: "POST", Path: results.SendPath, RefKey: "a"},
		{Method: "POST", Path: results.SendPath, RefKey: "b"},
		{Method: "POST", Path: results.SendPath, RefKey: "a"},
		{Method: "POST", Path: results.SendPath, RefKey: ""},
		{Method: "GET", Path: results.SendPath, RefKey: "c"},
	}
	sends, repeated := CountJournalSends(j)
	if sends != 4 || repeated != 1 {
		t.Errorf("CountJournalSends = %d, %d; want 4, 1", sends, repeated)
	}
}

// TestStackSendPath: the bench counts sends at the profile's send path, so
// a second profile's sends are counted and alimtalk's path is not.
func TestStackSendPath(t *testing.T) {
	if got := StackSendPath(nil); got != results.SendPath {
		t.Errorf("StackSendPath(nil) = %q; want %q", got, results.SendPath)
	}
	p, err := vendormock.LoadProfile("vendormock/profiles/sms")
	if err != nil {
		t.Fatal(err)
	}
	path := StackSendPath(&vendormock.Stack{Profile: p})
	if path != "/sms/v2/messages" {
		t.Fatalf("StackSendPath(sms) = %q; want /sms/v2/messages", path)
	}
	j := []vendormock.JournalEntry{
		{Method: "POST", Path: path, RefKey: "a"}, {Method: "POST", Path: results.SendPath, RefKey: "b"},
	}
	if sends, _ := CountJournalSendsTo(j, path); sends != 1 {
		t.Errorf("CountJournalSendsTo(sms path) = %d sends; want 1", sends)
	}
	e := []vendormock.AccessEntry{
		{Connection: 1, Method: "POST", Path: path}, {Connection: 2, Method: "POST", Path: results.SendPath},
	}
	if cs := CountConnectionsTo(e, path); cs.SendRequests != 1 || cs.TCPConnections != 1 {
		t.Errorf("CountConnectionsTo(sms path) = %+v; want 1 request on 1 connection", cs)
	}
}

// TestMetricsCPUPerReplica: with several worker processes (replicas) each
// record's CPUMS and Seq are its own process's, so the CPU per send is
// each process's CPU over its measured sends, summed. Failed before: the
// last measured record of one process was taken against the last warm-up
// record of another (scale's 2- and 4-worker points showed one worker's
// CPU spread over every worker's sends).
func TestMetricsCPUPerReplica(t *testing.T) {
	replica := func(name string, cpuBase float64, warm, meas int, cpuMS float64) benchRun {
		b := sendRecords(warm, meas, 25, cpuMS)
		for i := range b.recs {
			b.recs[i].Replica = name
			b.recs[i].CPUMS += cpuBase
			b.recs[i].RefKey = name + "-" + b.recs[i].RefKey
			b.pub[i].RefKey = b.recs[i].RefKey
		}
		return b
	}
	a := replica("worker-1", 0, 2, 10, 3)    // 30 ms over 10 sends
	b := replica("worker-2", 5000, 2, 30, 1) // 30 ms over 30 sends
	m := metricsOf(t, append(a.pub, b.pub...), append(a.recs, b.recs...))
	if m.Measured != 40 {
		t.Fatalf("Measured = %d; want 40", m.Measured)
	}
	if got, want := m.CPUMSPerSend, 60.0/40; math.Abs(got-want) > 1e-9 {
		t.Errorf("CPUMSPerSend = %v; want %v (each replica's CPU over its own sends, summed)", got, want)
	}
	// Without warm-up each replica's first measured record is its baseline.
	a, b = replica("worker-1", 0, 0, 11, 3), replica("worker-2", 900, 0, 31, 1)
	m = metricsOf(t, append(a.pub, b.pub...), append(a.recs, b.recs...))
	if got, want := m.CPUMSPerSend, 60.0/40; math.Abs(got-want) > 1e-9 {
		t.Errorf("without warm-up: CPUMSPerSend = %v; want %v", got, want)
	}
	// One replica that could not read its CPU makes the figure unknown.
	b = replica("worker-2", 0, 2, 30, 1)
	b.recs[len(b.recs)-1].CPUMS = -1
	m = metricsOf(t, append(a.pub, b.pub...), append(a.recs, b.recs...))
	if m.CPUMSPerSend != -1 {
		t.Errorf("a replica without CPU: CPUMSPerSend = %v; want -1", m.CPUMSPerSend)
	}
}

// TestCountConnectionsResumed: a connection counts as resumed when nginx
// logged $ssl_session_reused "r" on a send it carried (the token call's
// connection and other paths do not count), and the upstream mean skips
// what nginx answered itself (-1).
func TestCountConnectionsResumed(t *testing.T) {
	e := func(conn int64, path string, reused bool, upS float64) vendormock.AccessEntry {
		return vendormock.AccessEntry{Connection: conn, Request: 1, TLSProtocol: "TLSv1.2", SessionReused: reused,
			Method: "POST", Path: path, Status: 200, UpstreamTime: upS}
	}
	got := CountConnections([]vendormock.AccessEntry{
		e(1, "/v1/token", true, 0.003), // not a send
		e(2, results.SendPath, false, 0.020),
		e(3, results.SendPath, true, 0.021),
		e(4, results.SendPath, true, 0.022),
		e(5, results.SendPath, true, -1), // answered by nginx, not proxied
	})
	if got.SessionsResumed != 3 || got.TCPConnections != 4 {
		t.Errorf("resumed %d of %d connections, want 3 of 4", got.SessionsResumed, got.TCPConnections)
	}
	if math.Abs(got.UpstreamMeanMS-21) > 1e-9 {
		t.Errorf("upstream mean %v ms, want 21 (20, 21, 22; the unproxied one skipped)", got.UpstreamMeanMS)
	}
}

// TestPerSendMS: cgroup readings to ms per send, and -1 when a reading
// failed or nothing was sent.
func TestPerSendMS(t *testing.T) {
	from, to := serverCPU{nginx: 1e9, proxy: 2e9}, serverCPU{nginx: 1e9 + 35e6, proxy: 2e9 + 70e6}
	if n, p := perSendMS(from, to, 35); math.Abs(n-1) > 1e-9 || math.Abs(p-2) > 1e-9 {
		t.Errorf("perSendMS = %v, %v; want 1 and 2 ms per send", n, p)
	}
	if n, p := perSendMS(serverCPU{err: errors.New("no cgroup")}, to, 35); n != -1 || p != -1 {
		t.Errorf("a failed reading gave %v, %v; want -1, -1", n, p)
	}
	if n, _ := perSendMS(from, to, 0); n != -1 {
		t.Errorf("no sends gave %v, want -1", n)
	}
}
