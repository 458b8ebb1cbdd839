//go:build integration

package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestMatrixSmall runs a one-scheme slice of the matrix end to end (mtls,
// both drivers, pooled at 8 in flight, a small COUNT): it writes every
// cell, the report and the charts; every send is SENT over at most 8
// connections, and the worker cells reconcile with 0 lost and 0
// duplicates.
func TestMatrixSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		t.Fatalf("lab images: %v\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a", err)
	}
	cfg := DefaultConfig()
	cfg.Images = images // the test is the edge that reads LAB_IMAGE_* and LAB_SESSION
	cfg.Session = os.Getenv(vendormock.EnvSession)
	cfg.Count, cfg.Warmup = 40, 5
	cfg.Schemes = []vendormock.Scheme{vendormock.SchemeMTLS}
	cfg.Modes = []string{vendorapi.PooledName}
	cfg.Concurrencies = []int{8}
	cfg.Out = t.TempDir()
	lw := testlog.New(t)
	if err := Run(ctx, cfg, lw); err != nil {
		t.Fatalf("Run: %v", err)
	}
	cells, err := results.ReadMatrixCells(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 {
		t.Fatalf("%d cells, want 2 (direct and worker)", len(cells))
	}
	for _, c := range cells {
		if c.Check() != "ok" || c.Connections < 1 || c.Connections > 8 || c.ReqPerS <= 0 || c.CPUMSPerReq <= 0 {
			t.Errorf("cell %s: %+v", c.Name(), c)
		}
		if c.Driver == results.DriverWorker && (c.Lost != 0 || c.Duplicates != 0) {
			t.Errorf("worker cell: %d lost, %d duplicates, want 0 and 0 (reconciled)", c.Lost, c.Duplicates)
		}
		// The server side: nginx's error log slice is kept and counted,
		// and nginx's TIME_WAIT was read (issue 28).
		if c.ServerHandshakeErrors == nil || c.NginxTimeWait == nil || c.UpstreamKeepalive != "on" {
			t.Errorf("cell %s: server side missing: handshake errors %v, nginx TIME_WAIT %v, upstream keep-alive %q", c.Name(), c.ServerHandshakeErrors, c.NginxTimeWait, c.UpstreamKeepalive)
		}
		if _, err := os.Stat(filepath.Join(cfg.Out, ErrorLogDir, c.Name()+".log")); err != nil {
			t.Errorf("cell %s: error log slice not kept: %v", c.Name(), err)
		}
		if want := map[string]string{results.DriverWorker: "disk", results.DriverDirect: ""}[c.Driver]; c.WorkerState != want {
			t.Errorf("cell %s: worker_state %q, want %q (where its ledger and records were)", c.Name(), c.WorkerState, want)
		}
	}
	for _, f := range []string{"matrix.md", "charts/matrix-req-per-s-direct.svg", "charts/matrix-cpu-per-req-worker.svg"} {
		if fi, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(lw.String(), "cell 2/2") || !strings.Contains(lw.String(), "ETA") {
		t.Errorf("no progress line with an ETA per cell")
	}
}
