package fault

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// TestTLSStallRunsForEveryClient: a TLS handshake stall is about the
// HTTP client, so one runs for every worker: tls-stall (the Go worker's
// per-request client and 1 s handshake timeout) for go, and
// tls-stall-any-client, which sets none of the client's timeouts, for
// every contract worker and any image. Before tls-stall-any-client every
// contract audit listed tls-stall "not applicable" and ran no stall.
func TestTLSStallRunsForEveryClient(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Scenario{}
	for _, sc := range scs {
		byName[sc.Name] = sc
	}
	any := byName["tls-stall-any-client"]
	if any == nil || byName["tls-stall"] == nil {
		t.Fatal("the catalog has no tls-stall or tls-stall-any-client")
	}
	if c := any.Client; c.Strategy == "per-request" || c.TLSHandshakeTimeout != 0 || c.DialTimeout != 0 || c.ResponseTimeout != 0 {
		t.Errorf("tls-stall-any-client sets the client %+v: want no per-request client and none of the Go worker's timeouts", c)
	}
	workers := append(slices.DeleteFunc(vendormock.WorkerNames(), func(n string) bool { return n == vendormock.WorkerGo || n == vendormock.WorkerImagePrefix+"NAME" }), "image:acme/notifier:1.4")
	for _, w := range workers {
		if ok, why := any.Applies(w, "alimtalk"); !ok {
			t.Errorf("tls-stall-any-client does not apply to %s: %s", w, why)
		}
	}
	if ok, _ := byName["tls-stall"].Applies(vendormock.WorkerGo, "alimtalk"); !ok {
		t.Error("tls-stall does not apply to the Go worker")
	}
	if ok, _ := any.Applies(vendormock.WorkerGo, "alimtalk"); ok {
		t.Error("tls-stall-any-client applies to the Go worker, which runs tls-stall with its own flags")
	}
}
