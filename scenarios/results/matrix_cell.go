package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// Drivers of a matrix cell (the lab's DRIVER).
const (
	// DriverDirect runs `notifier-worker direct` in the worker container:
	// the client strategies in a loop, no broker, ledger or routing. It
	// measures what the HTTP client costs.
	DriverDirect = "direct"
	// DriverWorker is the whole worker: broker, ledger, routing and the
	// client (the bench's path).
	DriverWorker = "worker"
)

// MatrixLatency are percentiles of the measured sends' total_ms, ms.
type MatrixLatency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
}

// MatrixCell is the result of one matrix cell (OUT/cell-<name>.json).
type MatrixCell struct {
	Scheme        string  `json:"scheme"` // http, https, mtls
	Driver        string  `json:"driver"` // direct, worker
	Mode          string  `json:"mode"`   // per-request (study A: fresh), pooled (keepalive)
	Concurrency   int     `json:"concurrency"`
	HTTPVersion   string  `json:"http_version"`
	PoolSize      int     `json:"pool_size,omitempty"` // pooled idle pool
	TLSMax        string  `json:"tls_max,omitempty"`   // per-request TLS cap
	RTTMS         int     `json:"rtt_ms"`
	Count         int     `json:"count"`
	Warmup        int     `json:"warmup"`
	ServerDelayMS int     `json:"server_delay_ms"`
	ReqPerS       float64 `json:"req_per_s"` // measured sends / wall time
	WallS         float64 `json:"wall_s"`
	// LatencyMS: percentiles of the measured sends' httptrace total.
	LatencyMS MatrixLatency `json:"latency_ms"`
	// CPUMSPerReq is the worker container's process CPU (user+sys) per
	// measured send, ms; CPUS the same over all measured sends, s (study
	// A's "CPU s" for 800 requests).
	CPUMSPerReq float64 `json:"cpu_ms_per_req"`
	CPUS        float64 `json:"cpu_s"`
	// ClientCPUMSPerReq is the CPU spent inside the send calls per send,
	// ms (above concurrency 1 it includes the other sends in flight).
	ClientCPUMSPerReq float64 `json:"client_cpu_ms_per_req"`
	// Connections the server accepted for sends (distinct nginx
	// $connection among POST /v3/message lines, warm-up included).
	Connections int                     `json:"connections"`
	Protocols   map[string]int          `json:"protocols"` // $server_protocol -> sends
	Outcomes    map[outcome.Outcome]int `json:"outcomes"`
	Errors      []string                `json:"errors,omitempty"`
	// Lost and Duplicates are the reconciler's (worker driver only; -1
	// when not reconciled).
	Lost       int `json:"lost"`
	Duplicates int `json:"duplicates"`
	// WorkerState is where a worker cell's ledger and records lived while
	// it ran: "disk" or "tmpfs" (Result.WorkerState); "" for a direct cell,
	// which has neither, and in cells written before it existed.
	WorkerState string `json:"worker_state,omitempty"`
	// ServerHandshakeErrors are the failed TLS handshakes nginx's error
	// log holds for the cell (its slice of the log is kept as
	// OUT/nginx-error/<cell>.log); nil in cells written before it was
	// kept. Study A's server logged such errors while its client counted
	// none.
	ServerHandshakeErrors *vendormock.HandshakeErrors `json:"server_tls_handshake_errors,omitempty"`
	// ClientTimeWait is the worker container's TIME_WAIT sockets while the
	// cell ran (the side that closes first keeps them): nil when not
	// sampled.
	ClientTimeWait *TimeWait `json:"client_time_wait,omitempty"`
	// NginxTimeWait is nginx's new TIME_WAIT sockets over the cell; nil
	// when not counted.
	NginxTimeWait *NginxTimeWait `json:"nginx_time_wait,omitempty"`
	// UpstreamKeepalive is nginx's keep-alive to WireMock: "on" or "off"
	// ("" in cells written before it was a setting: on).
	UpstreamKeepalive string      `json:"upstream_keepalive,omitempty"`
	Environment       Environment `json:"environment"`
	// Provenance is the run's commit, command line, machine, images and
	// date; nil in cells written before it existed.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// NginxTimeWait counts TIME_WAIT sockets in nginx's network namespace at
// a cell's start and end: towards its clients (Toxiproxy's connections)
// and towards WireMock (remote port 8080). The difference is the cell's
// (a socket of an earlier cell that expired meanwhile, 60 s after its
// close, makes it an undercount).
type NginxTimeWait struct {
	ClientStart   int `json:"client_start"`
	ClientEnd     int `json:"client_end"`
	UpstreamStart int `json:"upstream_start"`
	UpstreamEnd   int `json:"upstream_end"`
}

// NewClient is the cell's new TIME_WAIT towards nginx's clients (>= 0).
func (t NginxTimeWait) NewClient() int { return max(t.ClientEnd-t.ClientStart, 0) }

// NewUpstream is the cell's new TIME_WAIT towards WireMock (>= 0).
func (t NginxTimeWait) NewUpstream() int { return max(t.UpstreamEnd-t.UpstreamStart, 0) }

// Name is the cell's name: "<driver>-<scheme>-<mode>-c<concurrency>".
func (c MatrixCell) Name() string {
	return MatrixCellName(c.Driver, c.Scheme, c.Mode, c.Concurrency)
}

// MatrixCellName is a cell's name: "<driver>-<scheme>-<mode>-c<concurrency>".
func MatrixCellName(driver, scheme, mode string, concurrency int) string {
	return fmt.Sprintf("%s-%s-%s-c%d", driver, scheme, mode, concurrency)
}

// MatrixCellFileName is the file of a cell in OUT.
func MatrixCellFileName(c MatrixCell) string { return "cell-" + c.Name() + ".json" }

// Check says whether every send was SENT (the direct driver records its
// measured sends only, the worker every message) and, for the worker, no
// message was lost or sent twice.
func (c MatrixCell) Check() string {
	var bad []string
	want := c.Count + c.Warmup
	if c.Driver == DriverDirect {
		want = c.Count
	}
	if c.Outcomes[outcome.Sent] != want {
		bad = append(bad, fmt.Sprintf("SENT %d of %d", c.Outcomes[outcome.Sent], want))
	}
	switch {
	case c.Driver != DriverWorker:
		// The direct driver sends without a broker: nothing to reconcile.
	case c.Lost < 0 || c.Duplicates < 0:
		// -1: no reconciler verdict; an unmeasured run is not a pass.
		bad = append(bad, "not reconciled")
	case c.Lost != 0 || c.Duplicates != 0:
		bad = append(bad, fmt.Sprintf("%d lost, %d duplicates", c.Lost, c.Duplicates))
	}
	if len(bad) == 0 {
		return "ok"
	}
	return "CHECK: " + strings.Join(bad, "; ")
}

// WriteMatrixCell writes c as indented JSON to dir/MatrixCellFileName(c).
func WriteMatrixCell(dir string, c MatrixCell) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode matrix cell: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, MatrixCellFileName(c)), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write matrix cell: %w", err)
	}
	return nil
}

// ReadMatrixCells reads every dir/cell-*.json.
func ReadMatrixCells(dir string) ([]MatrixCell, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "cell-*.json"))
	if err != nil {
		return nil, fmt.Errorf("list matrix cells: %w", err)
	}
	var out []MatrixCell
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read matrix cell: %w", err)
		}
		var c MatrixCell
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("read matrix cell %s: %w", filepath.Base(p), err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read matrix cells: no cell-*.json in %s", dir)
	}
	return out, nil
}
