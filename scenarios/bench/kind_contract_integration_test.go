//go:build integration

package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// runContractBench runs the bench with WORKER=worker at one RTT and small
// COUNT and returns its one result.
func runContractBench(t *testing.T, worker string, count int) results.Result {
	t.Helper()
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		t.Fatalf("lab images: %v\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a", err)
	}
	cfg := DefaultConfig()
	cfg.Images = images // the test is the edge that reads LAB_IMAGE_* and LAB_SESSION
	cfg.Session = os.Getenv(vendormock.EnvSession)
	cfg.Worker, cfg.Count, cfg.Warmup, cfg.RTTs = worker, count, 2, []int{3}
	cfg.Out = filepath.Join(t.TempDir(), "results")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := Run(ctx, cfg, testlog.New(t)); err != nil {
		t.Fatalf("Run WORKER=%s: %v", worker, err)
	}
	rs, err := results.ReadResults(cfg.Out)
	if err != nil || len(rs) != 1 {
		t.Fatalf("results: %v (%d); want one run", err, len(rs))
	}
	return rs[0]
}

// TestContractWorkerWithoutRecords runs an image that consumes and acks
// but never calls the vendor nor writes a record (workers/acker): the run
// ends, the result names what is missing, and the figures from outside
// still come out (nginx: no connection; journal: no send); where each
// message ended is not measured (acked messages leave no trace).
func TestContractWorkerWithoutRecords(t *testing.T) {
	out, err := exec.Command("../../workers/acker/build.sh").Output()
	if err != nil {
		t.Fatalf("build the acker image (workers/acker/build.sh): %v", err)
	}
	image := strings.TrimSpace(string(out))
	r := runContractBench(t, "image:"+image, 10)
	cc := r.Contract
	if cc == nil {
		t.Fatal("no contract check in the result")
	}
	missing := strings.Join(cc.Missing, "\n")
	for _, want := range []string{"wrote no records file", "called the vendor for none of the 12 messages"} {
		if !strings.Contains(missing, want) {
			t.Errorf("Missing %q lacks %q", cc.Missing, want)
		}
	}
	if cc.Consumed != 12 || cc.Records != 0 || cc.ExitCode != nil {
		t.Errorf("consumed %d, records %d, exit %v; want 12, 0, stopped by the lab", cc.Consumed, cc.Records, cc.ExitCode)
	}
	if r.TCPConnections != 0 || r.JournalCount != 0 || r.CPUMSPerSend != -1 {
		t.Errorf("connections %d, journal %d, CPU %.2f; want 0, 0, -1 (not measured)", r.TCPConnections, r.JournalCount, r.CPUMSPerSend)
	}
	if r.Reconcile == nil || r.Reconcile.JournalSends != 0 {
		t.Errorf("reconcile %+v; want the journal checked, 0 sends", r.Reconcile)
	}
	if cc.Sources["TCP connections, connections per send"] != results.SourceNginx || !strings.HasPrefix(cc.Sources["where each message ended, lost"], results.SourceNotMeasure) {
		t.Errorf("sources %v: want connections from nginx, where each message ended not measured", cc.Sources)
	}
}

// TestContractWorkerNodeNoKeepAlive runs the Node worker whose Agent has
// keep-alive off: it keeps the contract, and nginx counts one connection
// per send (the negative control of connection reuse).
func TestContractWorkerNodeNoKeepAlive(t *testing.T) {
	r := runContractBench(t, "node-agent-nokeepalive", 20)
	if r.Contract == nil || len(r.Contract.Missing) != 0 {
		t.Fatalf("contract %+v: want every part kept", r.Contract)
	}
	if r.Outcomes[outcome.Sent] != 22 || r.SendRequests != 22 {
		t.Errorf("outcomes %v, sends %d; want 22 SENT, 22 sends", r.Outcomes, r.SendRequests)
	}
	if r.TCPConnections != r.SendRequests {
		t.Errorf("%d connections for %d sends; want one per send", r.TCPConnections, r.SendRequests)
	}
	if r.CPUMSPerSend <= 0 || r.LatencyMS.P50 <= 0 {
		t.Errorf("CPU %.2f ms/send, p50 %.1f ms: want both from the records", r.CPUMSPerSend, r.LatencyMS.P50)
	}
}
