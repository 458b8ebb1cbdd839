package bench

import (
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

func TestTransportConfigureAndPool(t *testing.T) {
	tests := []struct {
		name       string
		tr         results.Transport
		mode       string
		want       worker.Config // Concurrency, HTTPVersion, PoolSize
		wantPool   int
		wantSuffix string
	}{
		{"zero is the default", results.Transport{}, vendorapi.PooledName,
			worker.Config{Concurrency: 1, HTTPVersion: "1.1"}, 1, ""},
		{"pooled at 8: pool 8", results.Transport{Scheme: "https", Concurrency: 8}, vendorapi.PooledName,
			worker.Config{Concurrency: 8, HTTPVersion: "1.1"}, 8, "-https-c8"},
		{"pool size 2 at 8", results.Transport{Scheme: "https", Concurrency: 8, PoolSize: 2}, vendorapi.PooledName,
			worker.Config{Concurrency: 8, HTTPVersion: "1.1", PoolSize: 2}, 2, "-https-c8-pool2"},
		{"per-request keeps no pool", results.Transport{Scheme: "mtls", Concurrency: 8, PoolSize: 2, HTTPVersion: "2"}, vendorapi.PerRequestName,
			worker.Config{Concurrency: 8, HTTPVersion: "2", PoolSize: 2}, 0, "-mtls-c8-h2"},
		{"pool equal to the concurrency is the default", results.Transport{Scheme: "http", Concurrency: 4, PoolSize: 4}, vendorapi.PooledName,
			worker.Config{Concurrency: 4, HTTPVersion: "1.1", PoolSize: 4}, 4, "-http-c4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := worker.Config{Strategy: tt.mode}
			ConfigureTransport(tt.tr, &got)
			if want := tt.want; got.Concurrency != want.Concurrency || got.HTTPVersion != want.HTTPVersion || got.PoolSize != want.PoolSize || got.Strategy != tt.mode {
				t.Errorf("ConfigureTransport: concurrency %d, http version %q, pool size %d, strategy %q; want %d, %q, %d, unchanged",
					got.Concurrency, got.HTTPVersion, got.PoolSize, got.Strategy, want.Concurrency, want.HTTPVersion, want.PoolSize)
			}
			if got := tt.tr.PoolFor(tt.mode); got != tt.wantPool {
				t.Errorf("PoolFor(%s) = %d; want %d", tt.mode, got, tt.wantPool)
			}
			if got := tt.tr.FileSuffix(tt.mode); got != tt.wantSuffix {
				t.Errorf("suffix %q; want %q", got, tt.wantSuffix)
			}
		})
	}
}

// TestBenchWorkerConfigCarriesTransport: the bench's worker gets the
// config's concurrency, HTTP version and pool size.
func TestBenchWorkerConfigCarriesTransport(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Concurrency, cfg.HTTPVersion, cfg.PoolSize = 8, "2", 2
	b := NewBench(PointOptions{Config: cfg, Stack: &vendormock.Stack{KeepaliveTimeout: 75e9}})
	c, _, err := b.workerConfig(queues.DefaultTopology(queues.DefaultMain), vendorapi.PooledName, 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	if c.Concurrency != 8 || c.HTTPVersion != "2" || c.PoolSize != 2 {
		t.Errorf("concurrency %d, http version %q, pool size %d; want 8, 2, 2", c.Concurrency, c.HTTPVersion, c.PoolSize)
	}
}

func TestResultFileAndTransportFields(t *testing.T) {
	var r results.Result
	r.Mode, r.RTTMS = vendorapi.PooledName, 3
	if got := results.ResultFile(r); got != "bench-pooled-3ms.json" {
		t.Errorf("default run: %s; want the file name results had before SCHEME", got)
	}
	r.SetTransport(results.Transport{Scheme: "mtls", Concurrency: 8, HTTPVersion: "2"}, r.Mode, CountProtocols(
		[]vendormock.AccessEntry{{Method: "POST", Path: results.SendPath, ServerProtocol: "HTTP/2.0"}, {Method: "POST", Path: "/v1/token", ServerProtocol: "HTTP/2.0"}}))
	if r.Scheme != "mtls" || r.Concurrency != 8 || r.HTTPVersion != "2" || r.PoolSize != 8 || r.Protocols["HTTP/2.0"] != 1 || len(r.Protocols) != 1 {
		t.Errorf("result transport %s %d %s %d %v; want mtls 8 2 8 and one HTTP/2.0 send", r.Scheme, r.Concurrency, r.HTTPVersion, r.PoolSize, r.Protocols)
	}
	if got := results.ResultFile(r); got != "bench-pooled-3ms-mtls-c8-h2.json" {
		t.Errorf("mtls h2 c8: %s", got)
	}
}
