//go:build integration

package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// These tests start a real RabbitMQ (image from LAB_IMAGE_RABBITMQ, see
// vendormock/images/ensure-images.sh and .lab/images.env) with testcontainers-go and
// run the worker in-process against an httptest TLS vendor.
//
//	go test -tags integration -run Integration ./worker/

// startRabbit starts RabbitMQ and returns its AMQP URL and the container.
func startRabbit(t *testing.T) (string, testcontainers.Container) {
	t.Helper()
	image := os.Getenv("LAB_IMAGE_RABBITMQ")
	if image == "" {
		t.Fatal("LAB_IMAGE_RABBITMQ is not set: build the images (vendormock/images/ensure-images.sh) and load them: set -a; . .lab/images.env; set +a")
	}
	vendormock.EnsureTestcontainersEnv()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        image,
			ExposedPorts: []string{"5672/tcp"},
			WaitingFor:   wait.ForLog("Server startup complete").WithStartupTimeout(60 * time.Second),
		},
		Started: true,
	})
	t.Cleanup(func() {
		if c != nil {
			tctx, tcancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer tcancel()
			if err := c.Terminate(tctx); err != nil {
				t.Logf("terminate rabbitmq: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatalf("start rabbitmq (%s): %v", image, err)
	}
	host, err := c.Host(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port, err := c.MappedPort(ctx, "5672/tcp")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("amqp://guest:guest@%s:%s/", host, port.Port()), c
}

// fakeVendor is an httptest TLS server speaking the vendor API of
// DESIGN.md; it counts sends per refkey.
type fakeVendor struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	sends  map[string]int
	// hold, when set, is called in the send handler before it answers
	// (to make a send be in flight at a chosen moment).
	hold func(refkey string)
}

func newFakeVendor(t *testing.T) *fakeVendor {
	t.Helper()
	v := &fakeVendor{sends: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/token", func(w http.ResponseWriter, r *http.Request) {
		if id, secret, ok := r.BasicAuth(); !ok || id != "lab" || secret != "lab-secret" {
			http.Error(w, "bad credentials", http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{
			"accesstoken": "tok-1", "type": "Bearer", "expired": time.Now().Add(time.Hour).Format(time.RFC3339),
		})
	})
	mux.HandleFunc("POST /v3/message", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-1" {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		var m struct {
			RefKey string `json:"refkey"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		v.mu.Lock()
		v.sends[m.RefKey]++
		n := v.sends[m.RefKey]
		hold := v.hold
		v.mu.Unlock()
		if hold != nil {
			hold(m.RefKey)
		}
		_ = json.NewEncoder(w).Encode(map[string]string{
			"code": "1000", "description": "success", "refkey": m.RefKey, "messagekey": fmt.Sprintf("mk-%s-%d", m.RefKey, n),
		})
	})
	v.srv = httptest.NewTLSServer(mux)
	t.Cleanup(v.srv.Close)
	v.caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: v.srv.Certificate().Raw})
	if err := os.WriteFile(v.caFile, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *fakeVendor) counts() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]int, len(v.sends))
	for k, n := range v.sends {
		out[k] = n
	}
	return out
}

// publishN declares the topology and publishes n valid info messages
// (refkeys prefix-1 .. prefix-n) with publisher confirms.
func publishN(t *testing.T, url, queue, prefix string, n int) {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatalf("dial broker: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := queues.DefaultTopology(queue).Declare(ch); err != nil {
		t.Fatalf("declare topology: %v", err)
	}
	pub, err := NewConfirmPublisher(ch)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 1; i <= n; i++ {
		b, err := message.Notification{
			RefKey: fmt.Sprintf("%s-%d", prefix, i), Category: message.Info, Recipient: "+821000005678",
			TemplateCode: "SHIP_01", Text: "shipped", CreatedAt: time.Now(),
		}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish(ctx, queue, amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: b}); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
}

// queueDepth returns the ready message count of queue.
func queueDepth(t *testing.T, url, queue string) int {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("inspect %s: %v", queue, err)
	}
	return q.Messages
}

func readRecordFile(t *testing.T, path string) []records.Record {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []records.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r records.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("record %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

func integrationConfig(t *testing.T, url string, v *fakeVendor, strategy string, maxMessages int) Config {
	t.Helper()
	dir := t.TempDir()
	return Config{
		AMQPURL: url, VendorURL: v.srv.URL, CAFile: v.caFile, ClientID: "lab", ClientSecret: "lab-secret",
		Strategy: strategy, TLSMax: "1.2", LedgerPath: filepath.Join(dir, "ledger.db"),
		RecordsPath: filepath.Join(dir, "records.jsonl"), MaxMessages: maxMessages,
		ReconnectMin: 100 * time.Millisecond, ReconnectMax: time.Second, LogLevel: "warn",
	}
}

// runAsync runs the worker and returns its result channel.
func runAsync(ctx context.Context, cfg Config) <-chan error {
	out := make(chan error, 1)
	go func() { out <- Run(ctx, cfg) }()
	return out
}

func waitRun(t *testing.T, ch <-chan error, d time.Duration) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(d):
		t.Fatalf("Run did not return within %v", d)
	}
}

// TestIntegrationPublishN: N messages published, the worker handles N
// (both strategies), each reaches the vendor once, all acked, queue empty.
func TestIntegrationPublishN(t *testing.T) {
	url, _ := startRabbit(t)
	t.Run("unroutable publish is an error", func(t *testing.T) {
		conn, err := amqp.Dial(url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		pub, err := NewConfirmPublisher(ch)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := pub.Publish(ctx, "no-such-queue", amqp.Publishing{Body: []byte("x")}); !errors.Is(err, ErrUnroutable) {
			t.Errorf("publish to a missing queue: %v, want ErrUnroutable", err)
		}
		if _, err := ch.QueueDeclare("it-exists", true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish(ctx, "it-exists", amqp.Publishing{Body: []byte("x")}); err != nil {
			t.Errorf("publish to an existing queue after a return: %v", err)
		}
	})
	const n = 20
	for _, strategy := range []string{"per-request", "pooled"} {
		t.Run(strategy, func(t *testing.T) {
			v := newFakeVendor(t)
			queue := "it-" + strategy
			publishN(t, url, queue, strategy, n)
			cfg := integrationConfig(t, url, v, strategy, n)
			cfg.Queue = queue
			waitRun(t, runAsync(context.Background(), cfg), 60*time.Second)

			recs := readRecordFile(t, cfg.RecordsPath)
			if len(recs) != n {
				t.Fatalf("%d records, want %d", len(recs), n)
			}
			reused := 0
			for i, r := range recs {
				if r.Outcome != outcome.Sent || r.Seq != i+1 || r.TLSVersion == "" {
					t.Errorf("record %d: %+v", i, r)
				}
				if r.Reused {
					reused++
				}
			}
			if strategy == "pooled" && reused < n-1 {
				t.Errorf("pooled: %d of %d sends reused a connection, want >= %d", reused, n, n-1)
			}
			if strategy == "per-request" {
				if reused != 0 {
					t.Errorf("per-request: %d sends reused a connection, want 0", reused)
				}
				if recs[0].TLSVersion != "TLS 1.2" {
					t.Errorf("per-request TLS %q, want TLS 1.2 (capped)", recs[0].TLSVersion)
				}
			}
			counts := v.counts()
			for i := 1; i <= n; i++ {
				if c := counts[fmt.Sprintf("%s-%d", strategy, i)]; c != 1 {
					t.Errorf("refkey %s-%d reached the vendor %d times, want 1", strategy, i, c)
				}
			}
			if d := queueDepth(t, url, queue); d != 0 {
				t.Errorf("main queue holds %d messages after the run, want 0 (all acked)", d)
			}
		})
	}
}

// TestIntegrationConnectionDrop: the broker closes every connection while
// a send is in flight; the send finishes (SENT) but its ack cannot be
// delivered; the worker reconnects, resumes at prefetch 1, the in-flight
// message comes back redelivered and the ledger suppresses a second send
// (DUPLICATE). Every message reaches the vendor exactly once; SIGTERM (ctx)
// then stops the worker with nil.
func TestIntegrationConnectionDrop(t *testing.T) {
	url, c := startRabbit(t)
	v := newFakeVendor(t)
	inFlight, release := make(chan struct{}), make(chan struct{})
	v.hold = func(refkey string) {
		if refkey == "a-5" {
			close(inFlight)
			<-release
		}
	}
	queue := "it-drop"
	cfg := integrationConfig(t, url, v, "pooled", 0)
	cfg.Queue = queue
	const first, second = 10, 10
	publishN(t, url, queue, "a", first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runAsync(ctx, cfg)

	waitRecords := func(n int) []records.Record {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			recs := readRecordFile(t, cfg.RecordsPath)
			if len(recs) >= n {
				return recs
			}
			select {
			case err := <-done:
				t.Fatalf("worker stopped early: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("only %d of %d records after 60 s", len(recs), n)
			}
		}
	}
	select {
	case <-inFlight:
	case <-time.After(60 * time.Second):
		t.Fatal("send of a-5 never started")
	}
	ectx, ecancel := context.WithTimeout(context.Background(), 30*time.Second)
	code, _, err := c.Exec(ectx, []string{"rabbitmqctl", "close_all_connections", "integration test drop"})
	ecancel()
	if err != nil || code != 0 {
		close(release)
		t.Fatalf("rabbitmqctl close_all_connections: code %d err %v", code, err)
	}
	time.Sleep(200 * time.Millisecond) // let the worker see the close
	close(release)
	publishN(t, url, queue, "b", second)
	// first + second messages, plus the redelivery of a-5.
	recs := waitRecords(first + second + 1)
	cancel()
	waitRun(t, done, 30*time.Second)

	var a5 []records.Record
	for _, r := range recs {
		if r.RefKey == "a-5" {
			a5 = append(a5, r)
		}
	}
	if len(a5) != 2 || a5[0].Outcome != outcome.Sent || a5[0].AckError == "" ||
		a5[1].Outcome != outcome.Duplicate || !a5[1].Redelivered {
		t.Errorf("a-5 records %+v, want SENT with an ack error, then a redelivered DUPLICATE", a5)
	}
	counts := v.counts()
	for _, p := range []struct {
		prefix string
		n      int
	}{{"a", first}, {"b", second}} {
		for i := 1; i <= p.n; i++ {
			if got := counts[fmt.Sprintf("%s-%d", p.prefix, i)]; got != 1 {
				t.Errorf("refkey %s-%d reached the vendor %d times, want 1", p.prefix, i, got)
			}
		}
	}
	if d := queueDepth(t, url, queue); d != 0 {
		t.Errorf("main queue holds %d after the run, want 0", d)
	}
}

// TestIntegrationBinary runs the real notifier-worker binary (built with
// CGO_ENABLED=0): a bad flag exits 2 and starts nothing; -max-messages N
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
		if !strings.Contains(out.String(), "known strategies: per-request, pooled") {
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
		for _, want := range []string{`"queue":"it-bin"`, `"argument":"x-queue-type"`, `"on_broker":"'classic'"`, `"declared":"'quorum'"`, "migrate or delete"} {
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
