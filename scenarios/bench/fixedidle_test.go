package bench

import (
	"io"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// TestContractResultFixedIdle: a fixed variant's result records the idle
// timeout the lab gave it (keep-alive - 1 s), which the audit's idle rule
// reads; a default client's result keeps what the point set (the control).
func TestContractResultFixedIdle(t *testing.T) {
	st := &vendormock.Stack{KeepaliveTimeout: 75 * time.Second}
	for _, tt := range []struct {
		sel  vendormock.WorkerSelection
		want float64
	}{
		{vendormock.WorkerSelection{Name: "java-okhttp-fixed", IdleFromKeepalive: true}, 74},
		{vendormock.WorkerSelection{Name: "java-okhttp"}, 90},
	} {
		b := &Bench{sel: tt.sel, stack: st, w: io.Discard}
		r := results.Result{IdleConnTimeoutS: 90, LatencyMS: results.Latency{P50: 1}}
		b.contractResult(&r, &results.ContractCheck{Worker: tt.sel.Name, Sources: map[string]string{}}, nil)
		if r.IdleConnTimeoutS != tt.want {
			t.Errorf("%s: idle_conn_timeout_s %g; want %g", tt.sel.Name, r.IdleConnTimeoutS, tt.want)
		}
	}
}
