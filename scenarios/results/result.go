package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// SendPath is the alimtalk vendor's send endpoint
// (docs/vendor-api.md#message); only POST requests to the stack's send path
// (StackSendPath) count as sends in the access log and the journal.
const SendPath = "/v3/message"

// AllModes are the client strategies a run compares by default (the
// case's two), in report order.
var AllModes = []string{vendorapi.PerRequestName, vendorapi.PooledName}

// KnownModes are every client strategy a run may compare (MODES), in
// report order: the per-request client, the per-request client with a
// shared TLS session cache (vendorapi.PerRequestResume, docs/network.md),
// the pooled client, and the shared client whose engine closes every
// connection (vendorapi.SharedClosing, docs/studies.md).
var KnownModes = []string{vendorapi.PerRequestName, vendorapi.PerRequestResumeName, vendorapi.PooledName, vendorapi.SharedClosingName}

// Result is one bench run (one mode at one RTT), written as
// OUT/bench-<mode>-<rtt>ms.json. The JSON keys are a contract that other
// tools read: keep them, add freely. Latencies and CPU are
// milliseconds, durations seconds.
type Result struct {
	Mode   string `json:"mode"`   // one of KnownModes (a contract worker's runs: its own name)
	RTTMS  int    `json:"rtt_ms"` // RTT added by Toxiproxy, ms
	Count  int    `json:"count"`  // measured sends of this run (COUNT, capped per point: PointCounts)
	Warmup int    `json:"warmup"` // warm-up sends before them (WARMUP, capped per point: PointCounts)
	// CountRequested and WarmupRequested are COUNT and WARMUP as asked,
	// written when PointCounts capped them for this RTT (0 otherwise).
	CountRequested  int `json:"count_requested,omitempty"`
	WarmupRequested int `json:"warmup_requested,omitempty"`
	// TCPHandshake is TCP_HANDSHAKE: "on" when Toxiproxy's handshake toxic
	// made a new connection cost its TCP round trip, "off" for stock
	// Toxiproxy (the case's conditions). "" in results written before the
	// knob existed means "off".
	TCPHandshake  string `json:"tcp_handshake"`
	ServerDelayMS int    `json:"server_delay_ms"` // WireMock fixed delay on a send, ms
	// Malformed is how many malformed messages were mixed among the
	// measured ones (MALFORMED); each must end INVALID in the dead-letter queue.
	Malformed int `json:"malformed,omitempty"`
	// TLSMax is the per-request or shared-closing client's highest TLS
	// version ("1.2", "1.3"); "" for pooled, which negotiates the highest
	// both sides speak.
	TLSMax string `json:"tls_max,omitempty"`
	// IdleConnTimeoutS is the pooled client's idle timeout, s (0 for
	// per-request); KeepaliveTimeoutS is nginx's keepalive_timeout, s.
	IdleConnTimeoutS  float64 `json:"idle_conn_timeout_s,omitempty"`
	KeepaliveTimeoutS float64 `json:"keepalive_timeout_s"`

	// Client side, from the worker's records (Metrics).
	SendsPerS  float64 `json:"sends_per_s"`  // measured sends / WallS
	LatencyMS  Latency `json:"latency_ms"`   // httptrace total of the measured sends, ms
	PhaseP50MS Phases  `json:"phase_p50_ms"` // p50 of the trace phases of the measured sends, ms
	PhaseP99MS Phases  `json:"phase_p99_ms"` // p99 of the trace phases of the measured sends, ms
	// LatencyCDF is the distribution of the measured sends' latency:
	// CDFPoints quantiles from 0 (fastest) to 1 (slowest), ms.
	LatencyCDF   []CDFPoint `json:"latency_cdf_ms,omitempty"`
	CPUMSPerSend float64    `json:"cpu_ms_per_send"` // worker user+sys CPU per measured send, ms; -1 = unknown
	// ClientCPUMSPerSend is the worker's CPU inside the send call per
	// measured send, ms (the client strategy alone; Metrics).
	ClientCPUMSPerSend float64 `json:"cpu_ms_per_send_client"`
	// WorkerState is where the ledger and records lived: "tmpfs" or "disk".
	WorkerState  string  `json:"worker_state"`
	WallS        float64 `json:"wall_s"`        // first measured send's start to last one's end, s
	ClientReused int     `json:"client_reused"` // measured sends whose trace says the connection was reused
	// ClientResumed is the measured sends whose new connection resumed a
	// TLS session, by the worker's trace (per-request-resume).
	ClientResumed int                     `json:"client_resumed,omitempty"`
	Measured      int                     `json:"measured"` // measured records the worker wrote (should equal Count)
	Outcomes      map[outcome.Outcome]int `json:"outcomes"` // outcome -> count over all handled messages, warm-up included
	Errors        []string                `json:"errors,omitempty"`

	// Server side, from nginx's access log and WireMock's journal.
	TCPConnections int            `json:"tcp_connections"` // distinct nginx $connection values carrying POST /v3/message, warm-up included
	TLSVersions    map[string]int `json:"tls_versions"`    // nginx $ssl_protocol -> count over POST /v3/message, warm-up included
	SendRequests   int            `json:"send_requests"`   // POST /v3/message lines in nginx's access log
	JournalCount   int            `json:"journal_count"`   // POST /v3/message in WireMock's journal
	// TLSSessionsResumed is the connections among TCPConnections whose TLS
	// handshake resumed a session by nginx's $ssl_session_reused ("r"),
	// warm-up included: the server's word that resumption happened.
	TLSSessionsResumed int `json:"tls_sessions_resumed"`
	// TLSResumption is the TLS_RESUMPTION nginx ran with: "on" (session
	// cache and tickets) or "" (the profile's, off in the lab's).
	TLSResumption string `json:"tls_resumption,omitempty"`
	// NginxCPUMSPerSend and ProxyCPUMSPerSend are nginx's and Toxiproxy's
	// container CPU (cgroup user+sys) from the worker's start to its stop,
	// over SendRequests, ms: the server side's work per send, handshakes
	// included. -1 = not read (no cgroup files on this host); absent in
	// files written before they were measured.
	// UpstreamMSMean is the mean of nginx's $upstream_response_time over
	// the proxied sends (warm-up included), ms: WireMock's answer as nginx
	// waited for it. 0 when none was proxied or before it was kept.
	UpstreamMSMean    float64 `json:"upstream_ms_mean,omitempty"`
	NginxCPUMSPerSend float64 `json:"nginx_cpu_ms_per_send,omitempty"`
	ProxyCPUMSPerSend float64 `json:"proxy_cpu_ms_per_send,omitempty"`
	// WorkerCgroupCPUMSPerSend is the worker container's CPU (cgroup
	// user+sys, every process in it) per measured send, ms, read by the
	// lab while the worker ran: from the end of the last warm-up send to
	// the end of the last send in nginx's log (scenarios/bench
	// CgroupCPUPerSend). The outside figure beside the worker's own
	// CPUMSPerSend. -1 = not read; absent (0) in files written before it
	// was measured.
	WorkerCgroupCPUMSPerSend float64 `json:"worker_cgroup_cpu_ms_per_send,omitempty"`

	// Stack.
	StackStartS    float64 `json:"stack_start_s"`     // cold start of the four containers, s (once per lab run)
	SelfCheckRTTMS float64 `json:"self_check_rtt_ms"` // probe round trip through Toxiproxy before the run, ms
	// SelfCheckNewConnMS is a new connection's time to its first response
	// byte through Toxiproxy before the run, ms (>= 2 RTT when
	// TCP_HANDSHAKE=on); 0 when not measured.
	SelfCheckNewConnMS float64 `json:"self_check_new_conn_ms,omitempty"`
	// ProbeRTTP50MS is the p50 of netmodel.ProbeCount probe round trips on one
	// established connection through Toxiproxy from the host before the
	// run (vendormock.Stack.ProbeRoundTrips), ms: the RTT plus what a
	// round trip costs beyond it (forwarding, nginx's answer, the host's
	// path to Toxiproxy). 0 when not measured.
	ProbeRTTP50MS float64 `json:"probe_rtt_p50_ms,omitempty"`
	// TimeWait counts the worker's TIME_WAIT sockets during the run (the
	// side that closes first keeps them); nil when not sampled.
	TimeWait  *TimeWait `json:"time_wait,omitempty"`
	AccessLog string    `json:"access_log"` // nginx access log slice of this run, relative to OUT

	Environment Environment `json:"environment"`
	// Reconcile is the reconciler's verdict on this run (package
	// scenarios/reconcile): every published message in exactly one place,
	// no duplicate send, records and ledger agreeing with the journal. nil
	// in results written before it existed.
	Reconcile *reconcile.Report `json:"reconcile,omitempty"`
	// Settlement is what became of the run's UNKNOWN sends (the records'
	// count is Outcomes["UNKNOWN"]): left for an operator, settled by
	// source, time to settle; nil in results written before it existed.
	Settlement *Settlement `json:"settlement,omitempty"`
	// Workers, Ledger and QueueType are the run's WORKERS, LEDGER and
	// QUEUE_TYPE; 0 and "" in results of one worker on its bbolt file.
	Workers   int    `json:"workers,omitempty"`
	Ledger    string `json:"ledger,omitempty"`
	QueueType string `json:"queue_type,omitempty"`
	// BrokerNodes is the run's BROKER_NODES; 0 in results of one node.
	BrokerNodes int `json:"broker_nodes,omitempty"`
	// Active is the run's ACTIVE ("competing": every replica consumes);
	// "" under single active consumer. RateLimit is what the access log
	// shows under RATE_LIMIT; nil without one.
	Active    string          `json:"active,omitempty"`
	RateLimit *RateLimitCheck `json:"rate_limit,omitempty"`
	// Gaps is a run whose messages arrived with gaps (ARRIVALS other than
	// back-to-back): each measured send's idle gap, latency and reuse, and
	// the split by gap (GapStudy); nil for a back-to-back run.
	Gaps *GapStudy `json:"gaps,omitempty"`
	// Scheme, Concurrency, HTTPVersion and PoolSize are the run's SCHEME,
	// CONCURRENCY, HTTP_VERSION and the pooled client's idle pool
	// (POOL_SIZE, or the concurrency when 0; 0 for per-request). "" and 0
	// in results written before they existed (https, 1, "1.1").
	Scheme      string `json:"scheme"`
	Concurrency int    `json:"concurrency"`
	HTTPVersion string `json:"http_version"`
	PoolSize    int    `json:"pool_size"`
	// Protocols counts the sends by nginx's $server_protocol ("HTTP/1.1",
	// "HTTP/2.0"), warm-up included.
	Protocols map[string]int `json:"protocols,omitempty"`
	// MetricsCheck compares every replica's /metrics with its records
	// (runs on replicas only, Config.Replicated).
	MetricsCheck *MetricsCheck `json:"metrics_check,omitempty"`
	// Worker is the worker under test of this run (WORKER): "go" or a
	// contract worker's name; "" in results written before it existed.
	Worker string `json:"worker,omitempty"`
	// Contract is what the lab saw of a contract worker's run: what of
	// docs/worker-contract.md it did not keep, and where each figure comes
	// from. nil for the Go worker.
	Contract *ContractCheck `json:"contract,omitempty"`
	// Profile is the vendor profile's name (PROFILE's folder, e.g.
	// "alimtalk"); "" in results written before it existed.
	Profile string `json:"profile,omitempty"`
	// Provenance is the run's commit, command line, machine, images and
	// date; nil in results written before it existed.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Latency holds percentiles of send latencies in ms. Percentiles use the
// empirical (nearest-rank) definition of gonum's stat.Quantile with
// stat.Empirical on sorted data: Pq is the smallest latency x such that at
// least q of the samples are <= x; no interpolation, so every value is a
// latency that was measured.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Phases are p50s of the httptrace phases of the measured sends, ms. A
// phase that did not happen (connect and TLS handshake on a reused
// connection) counts as 0.
type Phases struct {
	ConnectMS      float64 `json:"connect"`
	TLSHandshakeMS float64 `json:"tls_handshake"`
	TTFBMS         float64 `json:"ttfb"`
}

// CDFPoint is one point of a latency distribution: the Q-quantile (0..1,
// nearest-rank) is MS milliseconds.
type CDFPoint struct {
	Q  float64 `json:"q"`
	MS float64 `json:"ms"`
}

// CDFPoints is how many quantiles a Result keeps of its latency
// distribution (0, 0.01, ..., 1).
const CDFPoints = 101

// LatencyCDFOf returns n >= 2 evenly spaced quantiles of sorted ascending
// data, from q = 0 (the minimum) to q = 1 (the maximum), by Percentile's
// nearest-rank definition; nil for empty data or n < 2.
func LatencyCDFOf(sorted []float64, n int) []CDFPoint {
	if len(sorted) == 0 || n < 2 {
		return nil
	}
	out := make([]CDFPoint, n)
	for i := range out {
		q := float64(i) / float64(n-1)
		out[i] = CDFPoint{Q: q, MS: Percentile(sorted, q)}
	}
	return out
}

// Environment describes where a Result was measured.
type Environment struct {
	GoVersion string     `json:"go_version"` // driver's Go (the worker image is built with the same toolchain)
	CPUs      int        `json:"cpus"`       // host CPUs (the worker is limited to 1)
	Images    ImagesInfo `json:"images"`
	Kernel    string     `json:"kernel"`
	Date      string     `json:"date"`      // RFC 3339, UTC, when the run ended
	HostNote  string     `json:"host_note"` // OS, CPU model, memory; plus LAB_HOST_NOTE when set
}

// ImagesInfo names the container images of a run.
type ImagesInfo struct {
	Kind      string `json:"kind"` // "official" or "offline"
	RabbitMQ  string `json:"rabbitmq"`
	Nginx     string `json:"nginx"`
	WireMock  string `json:"wiremock"`
	Toxiproxy string `json:"toxiproxy"`
	Worker    string `json:"worker"`
	// Postgres is the PostgreSQL image of LEDGER=postgres runs; "" when
	// none ran.
	Postgres string `json:"postgres,omitempty"`
}

// ImagesInfoOf is the ImagesInfo of a vendormock image set.
func ImagesInfoOf(im vendormock.Images) ImagesInfo {
	return ImagesInfo{Kind: im.Kind, RabbitMQ: im.RabbitMQ, Nginx: im.Nginx, WireMock: im.WireMock,
		Toxiproxy: im.Toxiproxy, Worker: im.Worker, Postgres: im.Postgres}
}

// ResultFileName returns "bench-<mode>-<rtt>ms.json".
func ResultFileName(mode string, rttMS int) string {
	return fmt.Sprintf("bench-%s-%dms.json", mode, rttMS)
}

// ResultFile is the file of r in OUT: ResultFileName for a run at the
// default transport (https, concurrency 1, HTTP/1.1, default pool), else
// with the transport after the RTT ("bench-pooled-3ms-mtls-c8-h2.json",
// Transport.FileSuffix), so runs of several schemes share one OUT.
func ResultFile(r Result) string {
	t := Transport{Scheme: vendormock.Scheme(r.Scheme), Concurrency: r.Concurrency, HTTPVersion: r.HTTPVersion, PoolSize: r.PoolSize}
	return fmt.Sprintf("bench-%s-%dms%s.json", r.Mode, r.RTTMS, t.FileSuffix(r.Mode))
}

// AccessLogFileName returns "nginx/access-<mode>-<rtt>ms.log" (relative to OUT).
func AccessLogFileName(mode string, rttMS int) string {
	return filepath.Join("nginx", fmt.Sprintf("access-%s-%dms.log", mode, rttMS))
}

// WriteResult writes r as indented JSON to dir/ResultFile(r).
func WriteResult(dir string, r Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ResultFile(r)), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// ReadResults reads the dir/bench-*.json files of the newest run in dir
// (ReadRun), sorted by SortResults: files another run left in the folder
// are never read as this run's. It errors when a file does not parse or
// none is found.
func ReadResults(dir string) ([]Result, error) {
	rs, _, err := ReadRun(dir)
	return rs, err
}

// ReadRun reads every dir/bench-*.json and keeps the newest run's
// (LatestRun); skipped names the files of other runs it left out, sorted.
// Errors as ReadResults.
func ReadRun(dir string) (rs []Result, skipped []string, err error) {
	paths, err := filepath.Glob(filepath.Join(dir, "bench-*.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("list results: %w", err)
	}
	if len(paths) == 0 {
		return nil, nil, fmt.Errorf("read results: no bench-*.json in %s", dir)
	}
	all := make([]Result, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, fmt.Errorf("read result: %w", err)
		}
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, nil, fmt.Errorf("parse result %s: %w", p, err)
		}
		all = append(all, r)
	}
	keep := LatestRun(all)
	for i, r := range all {
		if keep[i] {
			rs = append(rs, r)
		} else {
			skipped = append(skipped, paths[i])
		}
	}
	SortResults(rs)
	return rs, skipped, nil
}

// LatestRun marks which of rs belong to the newest run among them: the
// run id (Provenance.RunID) with the latest Provenance.Date (RFC 3339 UTC,
// so it sorts as text; the larger run id on a tie). Results without
// provenance form one run older than any with it. keep[i] is true for
// rs[i] of that run.
func LatestRun(rs []Result) (keep []bool) {
	var newest *Provenance
	for _, r := range rs {
		p := r.Provenance
		if p != nil && (newest == nil || cmp.Or(cmp.Compare(p.Date, newest.Date), cmp.Compare(p.RunID, newest.RunID)) > 0) {
			newest = p
		}
	}
	keep = make([]bool, len(rs))
	for i, r := range rs {
		switch {
		case newest == nil:
			keep[i] = true
		case r.Provenance != nil:
			keep[i] = r.Provenance.RunID == newest.RunID
		}
	}
	return keep
}

// SortResults orders results by scheme (http, https, mtls) and
// concurrency (Group), then RTT, then mode in allowed order
// (per-request, pooled), then mode name.
func SortResults(rs []Result) {
	slices.SortStableFunc(rs, func(a, b Result) int {
		return cmp.Or(CompareGroups(GroupOf(a), GroupOf(b)), cmp.Compare(a.RTTMS, b.RTTMS), cmp.Compare(ModeRank(a.Mode), ModeRank(b.Mode)), cmp.Compare(a.Mode, b.Mode))
	})
}

func ModeRank(m string) int {
	if i := slices.Index(KnownModes, m); i >= 0 {
		return i
	}
	return len(KnownModes)
}
