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
	"path/filepath"
	"sync"
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
func startRabbit(t testing.TB) (string, testcontainers.Container) {
	t.Helper()
	image := os.Getenv("LAB_IMAGE_RABBITMQ")
	if image == "" {
		t.Fatal("LAB_IMAGE_RABBITMQ is not set: build the images (vendormock/images/ensure-images.sh) and load them: set -a; . .lab/images.env; set +a")
	}
	vendormock.EnsureTestcontainersEnv()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := vendormock.StartContainer(ctx, testcontainers.ContainerRequest{
		Image:              image,
		ExposedPorts:       []string{"5672/tcp"},
		HostConfigModifier: vendormock.PublishOnLoopback([]string{"5672/tcp"}, nil),
		WaitingFor:         wait.ForLog("Server startup complete").WithStartupTimeout(60 * time.Second),
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
// docs/vendor-api.md; it counts sends per refkey.
type fakeVendor struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	sends  map[string]int
	// hold, when set, is called in the send handler before it answers
	// (to make a send be in flight at a chosen moment).
	hold func(refkey string)
}

func newFakeVendor(t testing.TB) *fakeVendor {
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
func publishN(t testing.TB, url, queue, prefix string, n int) {
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
func queueDepth(t testing.TB, url, queue string) int {
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

func readRecordFile(t testing.TB, path string) []records.Record {
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

func integrationConfig(t testing.TB, url string, v *fakeVendor, strategy string, maxMessages int) Config {
	t.Helper()
	dir := t.TempDir()
	return Config{
		AMQPURL: url, VendorURL: v.srv.URL, CAFile: v.caFile, ClientID: "lab", ClientSecret: "lab-secret",
		Strategy: strategy, TLSMax: "1.2", LedgerPath: filepath.Join(dir, "ledger.db"),
		RecordsPath: filepath.Join(dir, "records.jsonl"), MaxMessages: maxMessages,
		ReconnectMin: 100 * time.Millisecond, ReconnectMax: time.Second, LogLevel: "warn",
		// Tests hold a send at the fake vendor while they act on the
		// broker (rabbitmqctl, a killed node), which takes many seconds on
		// a loaded CI machine: the default 10 s would end the held send
		// UNKNOWN before the fault it is held for.
		ResponseTimeout: 2 * time.Minute,
	}
}

// runAsync runs the worker and returns its result channel.
func runAsync(ctx context.Context, cfg Config) <-chan error {
	out := make(chan error, 1)
	go func() { out <- Run(ctx, cfg) }()
	return out
}

func waitRun(t testing.TB, ch <-chan error, d time.Duration) {
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
