//go:build integration

package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// TestIntegrationBinary runs the real notifier-worker binary (built with
// CGO_ENABLED=0): a bad flag exits 2 and starts nothing; queues that exist
// with other arguments exit 3 with one clear line; -max-messages N
// exits 0 after N; SIGTERM exits 0 after finishing; the secret never shows
// in its output.
func TestIntegrationBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "notifier-worker")
	build := exec.Command("go", "build", "-o", bin, "./cmd/notifier-worker")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	url, _ := startRabbit(t)
	v := newFakeVendor(t)
	dir := t.TempDir()
	records := filepath.Join(dir, "records.jsonl")
	env := append(os.Environ(), "AMQP_URL="+url, "VENDOR_URL="+v.srv.URL, "VENDOR_CA_FILE="+v.caFile,
		"VENDOR_CLIENT_ID=lab", "VENDOR_CLIENT_SECRET=lab-secret", "OPS_ADDR=127.0.0.1:0", "WORKER_ID=bin-1")
	command := func(args ...string) (*exec.Cmd, *strings.Builder) {
		cmd := exec.Command(bin, append([]string{"-queue", "it-bin", "-ledger", filepath.Join(dir, "ledger.db"),
			"-records", records, "-strategy", "per-request", "-tls-max", "1.2", "-log-level", "debug"}, args...)...)
		cmd.Env = env
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		return cmd, &out
	}
	exitCode := func(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
		t.Helper()
		errc := make(chan error, 1)
		go func() { errc <- cmd.Wait() }()
		select {
		case err := <-errc:
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			if err != nil {
				t.Fatalf("wait: %v", err)
			}
			return 0
		case <-time.After(d):
			_ = cmd.Process.Kill()
			t.Fatalf("worker did not exit within %v", d)
			return -1
		}
	}

	t.Run("bad flag exits 2", func(t *testing.T) {
		cmd, out := command("-strategy", "turbo")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if code := exitCode(t, cmd, 10*time.Second); code != 2 {
			t.Errorf("exit %d, want 2; output: %s", code, out)
		}
		if !strings.Contains(out.String(), "known strategies: per-request, per-request-resume, pooled, shared-closing") {
			t.Errorf("output does not list the strategies: %s", out)
		}
	})
	t.Run("quorum over classic queues exits 3 with one line", func(t *testing.T) {
		// The queues exist as classic (declared here like an older
		// worker would have); this worker is told to use quorum queues.
		conn, err := amqp.Dial(url)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if err := queues.DefaultTopology("it-bin").Declare(ch); err != nil {
			t.Fatalf("declare classic: %v", err)
		}
		_ = conn.Close()
		cmd, out := command("-queue-type", "quorum")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if code := exitCode(t, cmd, 30*time.Second); code != 3 {
			t.Fatalf("exit %d, want 3; output: %s", code, out)
		}
		var errorLines []string
		for line := range strings.Lines(out.String()) {
			if strings.Contains(line, `"level":"ERROR"`) {
				errorLines = append(errorLines, line)
			}
		}
		if len(errorLines) != 1 {
			t.Fatalf("%d error lines, want 1: %s", len(errorLines), out)
		}
		// RabbitMQ names the first argument it finds different: 3.10.8
		// checks x-overflow (which the quorum topology now declares for
		// at-least-once dead-lettering) before x-queue-type; the line
		// lists every declared argument, the queue type included.
		for _, want := range []string{`"queue":"it-bin"`, `"argument":"x-overflow"`, `"on_broker":"none"`, `"declared":"the value 'reject-publish'`, "x-queue-type=quorum", "migrate or delete"} {
			if !strings.Contains(errorLines[0], want) {
				t.Errorf("error line lacks %s: %s", want, errorLines[0])
			}
		}
		if strings.Contains(out.String(), "reconnecting") {
			t.Errorf("the worker retried a refusal that cannot heal: %s", out)
		}
	})
	t.Run("max messages exits 0", func(t *testing.T) {
		publishN(t, url, "it-bin", "bin", 5)
		cmd, out := command("-max-messages", "5")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if code := exitCode(t, cmd, 60*time.Second); code != 0 {
			t.Fatalf("exit %d, want 0; output: %s", code, out)
		}
		if recs := readRecordFile(t, records); len(recs) != 5 {
			t.Errorf("%d records, want 5", len(recs))
		}
		if strings.Contains(out.String(), "lab-secret") || strings.Contains(out.String(), "+821000005678") {
			t.Errorf("output shows the secret or a recipient in clear")
		}
	})
	t.Run("sigterm exits 0", func(t *testing.T) {
		cmd, out := command()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		publishN(t, url, "it-bin", "term", 3)
		deadline := time.Now().Add(60 * time.Second)
		for len(readRecordFile(t, records)) < 8 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if n := len(readRecordFile(t, records)); n != 8 {
			t.Fatalf("%d records, want 8", n)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := exitCode(t, cmd, 20*time.Second); code != 0 {
			t.Fatalf("exit %d after SIGTERM, want 0; output: %s", code, out)
		}
		t.Logf("worker output:\n%s", out)
		if !strings.Contains(out.String(), `"msg":"stopped"`) {
			t.Errorf("no stopped line: %s", out)
		}
		if strings.Contains(out.String(), "lab-secret") || strings.Contains(out.String(), "+821000005678") {
			t.Errorf("output shows the secret or a recipient in clear")
		}
	})
	if got := v.counts(); len(got) != 8 {
		t.Errorf("vendor saw %d refkeys, want 8", len(got))
	}
}
