package fault

import (
	"slices"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// TestWorkerArgsConcurrency: client.concurrency reaches the worker as
// -concurrency, 1 when the file leaves it out.
func TestWorkerArgsConcurrency(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  int
		want string
	}{{"default", 0, "1"}, {"eight", 8, "8"}} {
		t.Run(tt.name, func(t *testing.T) {
			sc := &Scenario{Name: "x", Client: ClientSpec{Concurrency: tt.set}}
			sc.applyDefaults()
			s := &scenarioRun{
				r:    &Runner{Stack: &vendormock.Stack{KeepaliveTimeout: 75 * time.Second}, opts: RunnerOptions{KeepaliveTimeout: 75 * time.Second}},
				sc:   sc,
				topo: queues.DefaultTopology("fault.x"),
			}
			args := s.workerArgs()
			i := slices.Index(args, "-concurrency")
			if i < 0 || i+1 >= len(args) || args[i+1] != tt.want {
				t.Errorf("args %q; want -concurrency %s", args, tt.want)
			}
		})
	}
}
