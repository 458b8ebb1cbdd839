package fault

import (
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// TestWorkerConfigConcurrency: client.concurrency reaches the worker's
// Concurrency, 1 when the file leaves it out; the worker's shutdown grace
// follows it.
func TestWorkerConfigConcurrency(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  int
		want int
	}{{"default", 0, 1}, {"eight", 8, 8}} {
		t.Run(tt.name, func(t *testing.T) {
			sc := &Scenario{Name: "x", Client: ClientSpec{Concurrency: tt.set}}
			sc.applyDefaults()
			s := &scenarioRun{
				r:    &Runner{Stack: &vendormock.Stack{KeepaliveTimeout: 75 * time.Second}, opts: RunnerOptions{KeepaliveTimeout: 75 * time.Second}},
				sc:   sc,
				topo: queues.DefaultTopology("fault.x"),
			}
			c, err := s.workerConfig()
			if err != nil || c.Concurrency != tt.want {
				t.Errorf("concurrency %d, %v; want %d", c.Concurrency, err, tt.want)
			}
			if g, want := worker.ShutdownGrace(c), time.Duration(tt.want+3)*10*time.Second+time.Duration(tt.want)*10*time.Second+worker.ShutdownMargin; g != want {
				t.Errorf("grace %s; want %s", g, want)
			}
		})
	}
}

// TestWorkerConfigClient: the client's timeouts and clock start reach the
// worker's Config (zero timeouts leave the worker's defaults).
func TestWorkerConfigClient(t *testing.T) {
	sc := &Scenario{Name: "x", Client: ClientSpec{Strategy: "per-request", ResponseTimeout: Duration(2 * time.Second),
		ClockStart: "2026-11-30T20:49:54+09:00"}}
	sc.applyDefaults()
	s := &scenarioRun{r: &Runner{Stack: &vendormock.Stack{}}, sc: sc, topo: queues.DefaultTopology("fault.x")}
	c, err := s.workerConfig()
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 30, 11, 49, 54, 0, time.UTC)
	if c.ResponseTimeout != 2*time.Second || c.DialTimeout != 0 || c.TLSMax != "1.2" || !c.ClockStart.Equal(clock) {
		t.Errorf("response timeout %s, dial timeout %s, tls max %q, clock start %s; want 2s, 0s, 1.2, %s",
			c.ResponseTimeout, c.DialTimeout, c.TLSMax, c.ClockStart, clock)
	}
	sc.Client.ClockStart = "20:49"
	if _, err := s.workerConfig(); err == nil {
		t.Error("clock start 20:49: want an error")
	}
}
