//go:build integration

package defaults

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// TestClientDefaultsSmall runs three real clients against the stack at a
// 5 ms RTT, 4 calls each (about 40 s with the stack's start): nginx logs
// every call; curl with every URL keeps one connection, Node's agent:
// false opens one per call (the negative side: a count that always said 1
// would fail here), and fetch opens at most two; the files are written.
func TestClientDefaultsSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		t.Fatalf("lab images: %v\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a", err)
	}
	clients := os.Getenv(EnvImageClients)
	if clients == "" {
		t.Fatalf("%s is empty: vendormock/images/ensure-images.sh builds the client image (LAB_IMAGES=offline)", EnvImageClients)
	}
	cfg := DefaultConfig()
	cfg.RTTMS, cfg.Calls = 5, 4
	cfg.Clients = []string{"node-fetch", "node-agent-false", "curl-multi"}
	cfg.Images, cfg.ClientsImage, cfg.Session = images, clients, os.Getenv(vendormock.EnvSession)
	cfg.Out = t.TempDir()
	if err := Run(ctx, cfg, testlog.New(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	r, err := ReadResult(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sequential) != 3 || len(r.Wave) != 0 {
		t.Fatalf("%d sequential and %d wave rows, want 3 and 0", len(r.Sequential), len(r.Wave))
	}
	want := map[string][2]int{"node-fetch": {1, 2}, "node-agent-false": {4, 4}, "curl-multi": {1, 1}}
	for _, row := range r.Sequential {
		lo, hi := want[row.Name][0], want[row.Name][1]
		if row.Count.Requests != 4 || row.Errors != 0 || len(row.MS) != 4 || row.Count.Connections < lo || row.Count.Connections > hi {
			t.Errorf("%s: nginx %d requests on %d connections, %d errors, %d times; want 4 on %d..%d, 0, 4",
				row.Name, row.Count.Requests, row.Count.Connections, row.Errors, len(row.MS), lo, hi)
		}
	}
	for _, f := range []string{ResultFile, SummaryFile, ChartFile} {
		if fi, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
