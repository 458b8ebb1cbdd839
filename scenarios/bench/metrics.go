package bench

import (
	"fmt"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// StackSendPath is the send endpoint of st's vendor profile (api.send_path;
// docs/worker-contract.md), or SendPath when st has no profile.
func StackSendPath(st *vendormock.Stack) string {
	if st == nil || st.Profile == nil || st.Profile.API.SendPath == "" {
		return results.SendPath
	}
	return st.Profile.API.SendPath
}

// RefKey returns the refkey of the i-th (1-based) warm-up or measured
// message of one bench run: "<runID>-<mode>-<rtt>ms-w0001" for warm-up,
// "...-m0001" for measured. The letter is for people reading the files;
// Metrics tells warm-up from measured by the published list, never by the
// refkey.
func RefKey(runID, mode string, rttMS int, warmup bool, i int) string {
	kind := "m"
	if warmup {
		kind = "w"
	}
	return fmt.Sprintf("%s-%s-%dms-%s%04d", runID, mode, rttMS, kind, i)
}

// maxErrors bounds Metrics.Errors.
const maxErrors = 20

// Metrics aggregates the worker's records of one bench run, in the manner of
// vegeta's Metrics: Add accumulates, Close derives rates and percentiles.
// Records are told apart by the run's published list (NewMetrics): a
// refkey published valid with Warmup set is warm-up, one published valid
// without it is measured. Warm-up records only count in Outcomes and as the
// CPU baseline; measured ones make every other field. Records of any other
// refkey (malformed messages, or none published) count in Outcomes only.
// Fields are valid after Close.
type Metrics struct {
	Latency      results.Latency    // httptrace total_ms of measured records that made a send call, ms
	Phases       results.Phases     // p50 of their connect / TLS handshake / TTFB, ms
	PhasesP99    results.Phases     // p99 of their connect / TLS handshake / TTFB, ms
	CDF          []results.CDFPoint // LatencyCDFOf their total, CDFPoints quantiles
	SendsPerS    float64            // Measured / WallS
	WallS        float64            // earliest measured Start to latest measured End, s
	CPUMSPerSend float64            // see Close; -1 = unknown
	// ClientCPUMSPerSend is the mean over measured sends of the CPU the
	// worker spent inside the send call (Record.SendCPUMS), ms: the client
	// strategy's own cost, without ledger, broker and records work.
	ClientCPUMSPerSend float64
	ClientReused       int                     // measured records whose trace says reused
	ClientResumed      int                     // measured records whose trace says the TLS session was resumed
	ClientTLS          map[string]int          // measured records' negotiated TLS version -> count
	Measured           int                     // measured records
	Warmups            int                     // warm-up records
	Outcomes           map[outcome.Outcome]int // outcome -> count, every record
	Errors             []string                // distinct error texts, at most 20

	totals, connects, handshakes, ttfbs []float64
	sendCPU                             float64
	first, last                         time.Time
	// cpu holds each worker process's CPU marks, by Record.Replica: a
	// record's CPUMS and Seq count in its own process only.
	cpu map[string]*cpuMarks
	// kind maps a published refkey to whether it is warm-up (true) or
	// measured (false).
	kind map[string]bool
}

// NewMetrics returns Metrics for a run whose published list is published
// (the driver's published file: reconcile.Published.Warmup marks warm-up).
func NewMetrics(published []reconcile.Published) *Metrics {
	m := &Metrics{kind: make(map[string]bool, len(published))}
	for _, p := range published {
		if p.Valid && p.RefKey != "" {
			m.kind[p.RefKey] = p.Warmup
		}
	}
	return m
}

// Add accumulates one record.
func (m *Metrics) Add(r records.Record) {
	if m.Outcomes == nil {
		m.Outcomes = map[outcome.Outcome]int{}
		m.ClientTLS = map[string]int{}
	}
	m.Outcomes[r.Outcome]++
	if r.Error != "" && len(m.Errors) < maxErrors && !slices.Contains(m.Errors, r.Error) {
		m.Errors = append(m.Errors, r.Error)
	}
	warm, published := m.kind[r.RefKey]
	switch {
	case !published:
	case warm:
		m.Warmups++
		m.marks(r.Replica).warm(r)
	default:
		m.Measured++
		m.marks(r.Replica).measured(r)
		if m.first.IsZero() || r.Start.Before(m.first) {
			m.first = r.Start
		}
		if r.End.After(m.last) {
			m.last = r.End
		}
		if r.Reused {
			m.ClientReused++
		}
		if r.TLSResumed {
			m.ClientResumed++
		}
		if r.TLSVersion != "" {
			m.ClientTLS[r.TLSVersion]++
		}
		if r.TotalMS > 0 {
			m.sendCPU += r.SendCPUMS
			m.totals = append(m.totals, r.TotalMS)
			m.connects = append(m.connects, r.ConnectMS)
			m.handshakes = append(m.handshakes, r.TLSHandshakeMS)
			m.ttfbs = append(m.ttfbs, r.TTFBMS)
		}
	}
}

// Close derives the rates and percentiles. CPUMSPerSend is the workers'
// own user+sys CPU over the measured sends only, worker process by worker
// process (Record.Replica; CPUMS and Seq are per process): for each, CPUMS
// of its last measured record - CPUMS of its last warm-up record over its
// measured records, or without warm-up records its first measured record
// as the baseline over its measured records - 1, so process start-up
// never counts; CPUMSPerSend is the sum of those CPU deltas over the sum
// of those counts. It is -1 when a record says a worker could not read
// its CPU time (CPUMS -1). Fields stay 0 when there is nothing to derive
// them from.
func (m *Metrics) Close() {
	if m.Outcomes == nil {
		m.Outcomes = map[outcome.Outcome]int{}
		m.ClientTLS = map[string]int{}
	}
	if m.Measured > 0 && m.last.After(m.first) {
		m.WallS = m.last.Sub(m.first).Seconds()
		m.SendsPerS = float64(m.Measured) / m.WallS
	}
	var cpu float64
	var sends int
	for _, c := range m.cpu {
		d, n, ok := c.delta()
		if !ok {
			m.CPUMSPerSend, sends = -1, 0 // a worker could not read its CPU time
			break
		}
		cpu, sends = cpu+d, sends+n
	}
	if sends > 0 {
		m.CPUMSPerSend = cpu / float64(sends)
	}
	if len(m.totals) > 0 {
		m.ClientCPUMSPerSend = m.sendCPU / float64(len(m.totals))
		sorted := slices.Sorted(slices.Values(m.totals))
		m.Latency = results.Latency{
			P50:  results.Percentile(sorted, 0.50),
			P90:  results.Percentile(sorted, 0.90),
			P99:  results.Percentile(sorted, 0.99),
			Max:  sorted[len(sorted)-1],
			Mean: stat.Mean(sorted, nil),
		}
		m.Phases, m.PhasesP99 = phasesAt(m.connects, m.handshakes, m.ttfbs, 0.5), phasesAt(m.connects, m.handshakes, m.ttfbs, 0.99)
		m.CDF = results.LatencyCDFOf(sorted, results.CDFPoints)
	}
}

// phasesAt returns the q-quantile of each phase's samples, ms.
func phasesAt(connects, handshakes, ttfbs []float64, q float64) results.Phases {
	at := func(v []float64) float64 { return results.Percentile(slices.Sorted(slices.Values(v)), q) }
	return results.Phases{ConnectMS: at(connects), TLSHandshakeMS: at(handshakes), TTFBMS: at(ttfbs)}
}

// ConnStats is what nginx's access log says about the send requests
// (POST SendPath) of one bench run, warm-up included.
type ConnStats struct {
	SendRequests   int            // POST SendPath lines
	TCPConnections int            // distinct $connection values among them
	TLSVersions    map[string]int // $ssl_protocol -> count among them
	// MaxRequestsPerConn is the largest $connection_requests seen on a send.
	MaxRequestsPerConn int
	// SessionsResumed is the distinct $connection values among them whose
	// TLS handshake resumed a session ($ssl_session_reused "r").
	SessionsResumed int
	// UpstreamMeanMS is the mean $upstream_response_time of the proxied
	// sends among them, ms (nginx's log has ms resolution; the mean over
	// hundreds is finer); 0 when none was proxied.
	UpstreamMeanMS float64
}

// CountConnections counts the send requests in entries by nginx
// connection. Toxiproxy opens one upstream connection per client
// connection, so distinct $connection values are the worker's TCP
// connections (docs/topology.md#counting-connections); this is how the case
// counted them.
func CountConnections(entries []vendormock.AccessEntry) ConnStats {
	return CountConnectionsTo(entries, results.SendPath)
}

// CountConnectionsTo is CountConnections for the send path sendPath.
func CountConnectionsTo(entries []vendormock.AccessEntry, sendPath string) ConnStats {
	s := ConnStats{TLSVersions: map[string]int{}}
	conns, resumed := map[int64]bool{}, map[int64]bool{}
	var upSum float64
	var upN int
	for _, e := range entries {
		if e.Method != "POST" || e.Path != sendPath {
			continue
		}
		s.SendRequests++
		conns[e.Connection] = true
		proto := e.TLSProtocol
		if proto == "" {
			proto = "none"
		}
		s.TLSVersions[proto]++
		s.MaxRequestsPerConn = max(s.MaxRequestsPerConn, e.Request)
		if e.SessionReused {
			resumed[e.Connection] = true
		}
		if e.UpstreamTime >= 0 {
			upSum += e.UpstreamTime * 1000
			upN++
		}
	}
	if upN > 0 {
		s.UpstreamMeanMS = upSum / float64(upN)
	}
	s.TCPConnections = len(conns)
	s.SessionsResumed = len(resumed)
	return s
}

// CountJournalSends returns how many POST SendPath requests WireMock's
// journal holds, and how many refkeys appear more than once among them
// (the vendor does not de-duplicate: a repeat is a second notification).
func CountJournalSends(journal []vendormock.JournalEntry) (sends, repeatedRefKeys int) {
	return CountJournalSendsTo(journal, results.SendPath)
}

// CountJournalSendsTo is CountJournalSends for the send path sendPath.
func CountJournalSendsTo(journal []vendormock.JournalEntry, sendPath string) (sends, repeatedRefKeys int) {
	seen := map[string]int{}
	for _, j := range journal {
		if j.Method != "POST" || j.Path != sendPath {
			continue
		}
		sends++
		if j.RefKey != "" {
			seen[j.RefKey]++
		}
	}
	for _, n := range seen {
		if n > 1 {
			repeatedRefKeys++
		}
	}
	return sends, repeatedRefKeys
}

// marks returns replica's CPU marks, made on first use.
func (m *Metrics) marks(replica string) *cpuMarks {
	if m.cpu == nil {
		m.cpu = map[string]*cpuMarks{}
	}
	c := m.cpu[replica]
	if c == nil {
		c = &cpuMarks{}
		m.cpu[replica] = c
	}
	return c
}

// cpuMarks are one worker process's records that bound its measured CPU.
type cpuMarks struct {
	lastWarm, firstMeas, lastMeas *records.Record
	measuredN                     int
}

func (c *cpuMarks) warm(r records.Record) {
	if c.lastWarm == nil || r.Seq > c.lastWarm.Seq {
		c.lastWarm = &r
	}
}

func (c *cpuMarks) measured(r records.Record) {
	c.measuredN++
	if c.firstMeas == nil || r.Seq < c.firstMeas.Seq {
		c.firstMeas = &r
	}
	if c.lastMeas == nil || r.Seq > c.lastMeas.Seq {
		c.lastMeas = &r
	}
}

// delta returns the process's CPU over its measured sends (ms) and how
// many sends that CPU covers; ok is false when a bounding record says the
// CPU could not be read. A process without measured records, or with one
// and no warm-up, covers none.
func (c *cpuMarks) delta() (cpu float64, sends int, ok bool) {
	if c.lastMeas == nil {
		return 0, 0, true
	}
	if c.lastMeas.CPUMS < 0 || c.firstMeas.CPUMS < 0 || (c.lastWarm != nil && c.lastWarm.CPUMS < 0) {
		return 0, 0, false
	}
	if c.lastWarm != nil {
		return c.lastMeas.CPUMS - c.lastWarm.CPUMS, c.measuredN, true
	}
	return c.lastMeas.CPUMS - c.firstMeas.CPUMS, c.measuredN - 1, true
}
