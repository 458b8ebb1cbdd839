package fault

import (
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestWorkerConfigIdleTimeout: a pooled scenario without client.idle_conn_timeout
// gets the bench's idle-timeout rule (netmodel.IdleConnTimeout of the
// server's keepalive_timeout and the scenario's RTT); one that sets it
// keeps its own.
func TestWorkerConfigIdleTimeout(t *testing.T) {
	const rtt = 40
	for _, tt := range []struct {
		name string
		set  time.Duration
		want time.Duration
	}{
		{"rule", 0, netmodel.IdleConnTimeout(75*time.Second, rtt)},
		{"set", 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := &Scenario{Name: "x", Client: ClientSpec{Strategy: vendorapi.PooledName, IdleConnTimeout: Duration(tt.set)}}
			sc.Network.RTTMS = rtt
			sc.applyDefaults()
			s := &scenarioRun{
				r:    &Runner{Stack: &vendormock.Stack{KeepaliveTimeout: 75 * time.Second}, opts: RunnerOptions{KeepaliveTimeout: 75 * time.Second}},
				sc:   sc,
				topo: queues.DefaultTopology("fault.x"),
			}
			c, err := s.workerConfig()
			if err != nil || c.IdleConnTimeout != tt.want {
				t.Errorf("idle conn timeout %s, %v; want %s", c.IdleConnTimeout, err, tt.want)
			}
		})
	}
}
