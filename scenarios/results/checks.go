package results

import (
	"strings"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// MetricsCheck compares each replica's /metrics, scraped at the end of a
// run before the replicas stop, with its records file: messages by
// outcome must be equal. It is the metrics_check of a bench file.
type MetricsCheck struct {
	OK       bool             `json:"ok"`
	Detail   string           `json:"detail"` // "" when OK, else what disagrees
	Replicas []ReplicaMetrics `json:"replicas"`
}

// ReplicaMetrics is one replica's side of a MetricsCheck.
type ReplicaMetrics struct {
	ID      string                  `json:"id"`                // "worker-1"
	Metrics map[outcome.Outcome]int `json:"metrics"`           // MessagesMetric by outcome (zeros left out)
	Records map[outcome.Outcome]int `json:"records"`           // its records by outcome
	Error   string                  `json:"error,omitempty"`   // the scrape or parse failed
	Handled int                     `json:"handled,omitempty"` // its records, all outcomes
}

// ContractCheck is what the lab saw of a contract worker's run, and what
// of the worker contract it did not do (docs/worker-contract.md).
type ContractCheck struct {
	Worker   string `json:"worker"`   // the WORKER value
	Image    string `json:"image"`    // its container image
	Expected int    `json:"expected"` // messages published to the main queue
	Consumed int    `json:"consumed"` // messages that left the main queue
	Records  int    `json:"records"`  // lines in the records file
	// ExitCode is the worker's exit status; nil when the lab stopped it.
	ExitCode *int `json:"exit_code,omitempty"`
	// Missing names each part of the contract the worker did not keep,
	// one sentence each, with what follows for the figures; empty when it
	// kept them all.
	Missing []string `json:"missing,omitempty"`
	// Sources maps each figure of the summary to where it came from
	// (Source* values).
	Sources map[string]string `json:"sources"`
}

// SourcePhasesKey is ContractCheck.Sources' key for the client-side
// connect and TLS handshake phases.
const SourcePhasesKey = "connect, TLS handshake (client side)"

// PhasesSeen reports whether r's connect and TLS handshake phases were
// seen: always for the Go worker (its own trace), for a contract worker
// only when its records carried them (Sources[SourcePhasesKey]); a run
// written before the key existed reads as not seen.
func (r Result) PhasesSeen() bool {
	if r.Contract == nil {
		return true
	}
	return strings.HasPrefix(r.Contract.Sources[SourcePhasesKey], SourceRecords)
}

// Where a figure of a contract worker's run comes from.
const (
	SourceRecords    = "worker records"
	SourceNginx      = "nginx access log"
	SourceJournal    = "WireMock journal"
	SourceQueues     = "queues + records (reconciler)"
	SourceNotMeasure = "not measured"
)

// TimeWait is what the worker's TCP connections left behind during one
// run, sampled from the worker container's network namespace while it ran.
type TimeWait struct {
	Last    int `json:"last"`    // TIME_WAIT sockets at the last sample before the worker exited
	Peak    int `json:"peak"`    // largest count over the samples
	Samples int `json:"samples"` // samples taken (one per progress tick)
}

// Add records one sample.
func (t *TimeWait) Add(n int) {
	t.Last, t.Peak = n, max(t.Peak, n)
	t.Samples++
}
