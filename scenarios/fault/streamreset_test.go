package fault

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// server.stream_reset is validated: 1..100, HTTP/2 only, fault kind only.
func TestStreamResetValidation(t *testing.T) {
	h2 := "client: {http_version: \"2\"}\n"
	tests := []struct {
		name, yaml string
		want       []string // nil = valid
	}{
		{"valid", minimal + h2 + "server: {stream_reset: {every: 3}}\n", nil},
		{"every 0", minimal + h2 + "server: {stream_reset: {every: 0}}\n", []string{"server.stream_reset.every: 0: want 1..100"}},
		{"every 101", minimal + h2 + "server: {stream_reset: {every: 101}}\n", []string{"server.stream_reset.every: 101: want 1..100"}},
		{"http 1.1", minimal + "server: {stream_reset: {every: 3}}\n", []string{`server.stream_reset: needs client.http_version "2"`}},
		{"unsafe switch alone", minimal + "client: {unsafe_allow_transport_replay: true}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v; want valid", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidScenario) {
				t.Fatalf("Parse: %v; want an invalid scenario naming %q", err, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// client.unsafe_allow_transport_replay reaches the worker's Config (off
// by default), and a scenario with it applies to the Go worker only.
func TestWorkerConfigUnsafeReplay(t *testing.T) {
	for _, on := range []bool{false, true} {
		sc := &Scenario{Name: "x", Client: ClientSpec{UnsafeAllowTransportReplay: on}}
		sc.applyDefaults()
		s := &scenarioRun{
			r:    &Runner{Stack: &vendormock.Stack{KeepaliveTimeout: 75 * time.Second}, opts: RunnerOptions{KeepaliveTimeout: 75 * time.Second}},
			sc:   sc,
			topo: queues.DefaultTopology("fault.x"),
		}
		w, err := s.workerConfig()
		if err != nil {
			t.Fatal(err)
		}
		if w.UnsafeAllowTransportReplay != on {
			t.Errorf("unsafe_allow_transport_replay %v: worker config %v", on, w.UnsafeAllowTransportReplay)
		}
	}
	sc, err := Parse("x.yaml", []byte(minimal+"client: {unsafe_allow_transport_replay: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := sc.Applies("node-agent-keepalive", ""); ok || !strings.Contains(why, "unsafe_allow_transport_replay") {
		t.Errorf("Applies(contract worker) = %v, %q; want not applicable", ok, why)
	}
}
