package bench

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

const sampleMetrics = `# HELP notifier_worker_messages_total Messages handled, by outcome (one per record written).
# TYPE notifier_worker_messages_total counter
notifier_worker_messages_total{outcome="SENT"} 21
notifier_worker_messages_total{outcome="UNKNOWN"} 1
notifier_worker_messages_total{outcome="NOT_SENT"} 0
# HELP notifier_worker_retries_total NOT_SENT messages re-published to the retry queue.
# TYPE notifier_worker_retries_total counter
notifier_worker_retries_total 0
`

func TestMessagesByOutcome(t *testing.T) {
	got, err := messagesByOutcome(sampleMetrics)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[outcome.Sent] != 21 || got[outcome.Unknown] != 1 {
		t.Errorf("messagesByOutcome = %v; want SENT 21, UNKNOWN 1 (zeros left out)", got)
	}
	for name, text := range map[string]string{
		"metric absent":  "# TYPE other_total counter\nother_total 1\n",
		"not the format": "notifier_worker_messages_total{outcome=\"SENT\" 3\n",
		"no label":       "# TYPE notifier_worker_messages_total counter\nnotifier_worker_messages_total 3\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := messagesByOutcome(text); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestCheckMetrics: the check passes only when every replica's counters
// equal its records; a standby with nothing on either side agrees.
func TestCheckMetrics(t *testing.T) {
	sent := func(n int) map[outcome.Outcome]int { return map[outcome.Outcome]int{outcome.Sent: n} }
	tests := []struct {
		name   string
		reps   []results.ReplicaMetrics
		wantOK bool
		detail string
	}{
		{"active and standby agree", []results.ReplicaMetrics{{ID: "worker-1", Metrics: sent(21), Records: sent(21)}, {ID: "worker-2", Metrics: map[outcome.Outcome]int{}, Records: map[outcome.Outcome]int{}}}, true, ""},
		{"one count off", []results.ReplicaMetrics{{ID: "worker-1", Metrics: sent(20), Records: sent(21)}}, false, "worker-1: metrics SENT 20, records SENT 21"},
		{"an outcome missing", []results.ReplicaMetrics{{ID: "worker-1", Metrics: sent(21), Records: map[outcome.Outcome]int{outcome.Sent: 21, outcome.Unknown: 1}}}, false, "worker-1"},
		{"scrape failed", []results.ReplicaMetrics{{ID: "worker-2", Error: "connection refused"}}, false, "worker-2: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkMetrics(tt.reps)
			if c.OK != tt.wantOK || !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("checkMetrics = ok %v, detail %q; want ok %v, detail containing %q", c.OK, c.Detail, tt.wantOK, tt.detail)
			}
		})
	}
}

// TestConfigReplicated: the default bench runs one worker; any of the
// three knobs away from its default runs replicas.
func TestConfigReplicated(t *testing.T) {
	c := DefaultConfig()
	if c.Replicated() {
		t.Error("default config runs replicas")
	}
	for name, f := range map[string]func(*Config){
		"workers 2": func(c *Config) { c.Workers = 2 },
		"postgres":  func(c *Config) { c.Ledger = "postgres" },
		"quorum":    func(c *Config) { c.QueueType = "quorum" },
	} {
		c := DefaultConfig()
		f(&c)
		if !c.Replicated() {
			t.Errorf("%s: not replicated", name)
		}
	}
}
