package bench

import (
	"fmt"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestKindFor: each point runs the worker kind its Config asks for; a
// contract worker's baseline (the Go worker's pooled run) is not the
// contract kind.
func TestKindFor(t *testing.T) {
	replicated := DefaultConfig()
	replicated.Workers = 2
	contract := DefaultConfig()
	contract.Worker, contract.Baseline = "image:acme/worker:1", true
	for _, tt := range []struct {
		name string
		cfg  Config
		mode string
		want string
	}{
		{"one worker", DefaultConfig(), vendorapi.PooledName, "*bench.singleKind"},
		{"replicas", replicated, vendorapi.PerRequestName, "*bench.replicasKind"},
		{"contract worker", contract, WorkerMode(contract.Worker), "*bench.contractKind"},
		{"contract baseline", contract, vendorapi.PooledName, "*bench.singleKind"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprintf("%T", NewBench(PointOptions{Config: tt.cfg}).kindFor(tt.mode)); got != tt.want {
				t.Errorf("kindFor(%s) = %s; want %s", tt.mode, got, tt.want)
			}
		})
	}
}

// TestPointName: the folder and worker name of a point.
func TestPointName(t *testing.T) {
	if got := PointName(vendorapi.PooledName, 10); got != "pooled-10ms" {
		t.Errorf("PointName = %q; want pooled-10ms", got)
	}
}
