//go:build integration

package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/wiremock/go-wiremock"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// labImage returns the local image named by env (see .lab/images.env,
// written by vendormock/images/ensure-images.sh); the test fails, never
// skips, when it is missing.
func labImage(t *testing.T, env string) string {
	t.Helper()
	if v := os.Getenv(env); v != "" {
		return v
	}
	b, err := os.ReadFile("../../.lab/images.env")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "export "), "=")
			if ok && k == env && strings.Trim(v, `"'`) != "" {
				return strings.Trim(v, `"'`)
			}
		}
	}
	t.Fatalf("%s is not set and not in .lab/images.env: run ./run.sh (or vendormock/images/ensure-images.sh) to build the images", env)
	return ""
}

func startContainer(t *testing.T, ctx context.Context, req testcontainers.ContainerRequest, port string) string {
	t.Helper()
	req.HostConfigModifier = vendormock.PublishOnLoopback(req.ExposedPorts, req.HostConfigModifier)
	c, err := vendormock.StartContainer(ctx, req)
	t.Cleanup(func() {
		if c != nil {
			if err := c.Terminate(context.Background()); err != nil {
				t.Errorf("terminate %s: %v", req.Image, err)
			}
		}
	})
	if err != nil {
		t.Fatalf("start %s: %v", req.Image, err)
	}
	p, err := c.MappedPort(ctx, port)
	if err != nil {
		t.Fatalf("port %s of %s: %v", port, req.Image, err)
	}
	return "127.0.0.1:" + p.Port()
}

// TestGatherIntegration publishes one message into every queue of a real
// RabbitMQ, sends requests to a real WireMock, and checks that Gather
// reads them all without consuming anything and that Reconcile judges the
// run: one refkey sent twice, everything else where it belongs.
func TestGatherIntegration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	rabbit := startContainer(t, ctx, testcontainers.ContainerRequest{
		Image:        labImage(t, "LAB_IMAGE_RABBITMQ"),
		ExposedPorts: []string{"5672/tcp"},
		Env:          map[string]string{"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-rabbit loopback_users []"},
		WaitingFor: wait.ForAll(wait.ForLog("Server startup complete"), wait.ForListeningPort("5672/tcp").SkipInternalCheck()).
			WithDeadline(90 * time.Second),
	}, "5672/tcp")
	wm := startContainer(t, ctx, testcontainers.ContainerRequest{
		Image:        labImage(t, "LAB_IMAGE_WIREMOCK"),
		Cmd:          []string{"--port", "8080", "--disable-banner"},
		ExposedPorts: []string{"8080/tcp"},
		WaitingFor:   wait.ForHTTP("/__admin/health").WithPort("8080/tcp").WithStartupTimeout(90 * time.Second),
	}, "8080/tcp")
	amqpURL := "amqp://guest:guest@" + rabbit + "/"
	wmURL := "http://" + wm

	// Queues: the worker's topology, one message where each outcome goes.
	names := queues.NamesFor("it-notifications")
	conn, err := amqp.Dial(amqpURL)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := queues.DefaultTopology(names.Main).Declare(ch); err != nil {
		t.Fatalf("declare topology: %v", err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	publish := func(queue, refkey, msgID, outcome, reason, expiration string) {
		t.Helper()
		body := fmt.Sprintf(`{"refkey":%q,"category":"info","recipient":"+821000005678"}`, refkey)
		if refkey == "" {
			body = "{not json"
		}
		h := amqp.Table{}
		if outcome != "" {
			h[queues.HeaderOutcome], h[queues.HeaderReason] = outcome, reason
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, amqp.Publishing{
			Headers: h, MessageId: msgID, Body: []byte(body), DeliveryMode: amqp.Persistent, Expiration: expiration,
		})
		if err != nil {
			t.Fatalf("publish to %s: %v", queue, err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish to %s not confirmed: %v", queue, err)
		}
	}
	publish(names.Unknown, "u1", "m-u1", "UNKNOWN", "read: connection reset by peer", "")
	publish(names.Failed, "f1", "m-f1", "REJECTED", "vendor rejected it", "")
	publish(names.Dead, "", "bad-1", "INVALID", "invalid message: body is not JSON", "")
	publish(names.Held, "h1", "m-h1", "OUTSIDE_SEND_WINDOW", "outside send window", "600000")
	publish(names.Retry, "r1", "m-r1", "NOT_SENT", "definitely not sent; retry", "")
	publish(names.Main, "p1", "m-p1", "", "", "")

	// Vendor: a send stub, then the requests the "worker" made.
	if err := wiremock.NewClient(wmURL).StubFor(wiremock.Post(wiremock.URLPathEqualTo(DefaultSendPath)).
		WillReturnResponse(wiremock.NewResponse().WithJSONBody(map[string]string{"code": "1000", "description": "success"}).
			WithHeaders(map[string]string{"Content-Type": "application/json"}).WithStatus(200))); err != nil {
		t.Fatalf("stub: %v", err)
	}
	for _, k := range []string{"a", "b", "u1", "f1", "b"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, wmURL+DefaultSendPath, strings.NewReader(fmt.Sprintf(`{"refkey":%q}`, k)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("send %s: %v", k, err)
		}
		resp.Body.Close()
	}
	if resp, err := http.Post(wmURL+"/v1/token", "application/json", nil); err == nil { // unmatched: 404
		resp.Body.Close()
	}

	// Files: published, records, ledger.
	dir := t.TempDir()
	var pub bytes.Buffer
	for i, k := range []string{"a", "b", "u1", "f1", "h1", "r1", "p1"} {
		if err := WritePublished(&pub, Published{Seq: i + 1, RefKey: k, MessageID: "m-" + k, Valid: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := WritePublished(&pub, Published{Seq: 8, MessageID: "bad-1"}); err != nil {
		t.Fatal(err)
	}
	pubPath := filepath.Join(dir, "published.jsonl")
	recPath := filepath.Join(dir, "records.jsonl")
	ledgerPath := filepath.Join(dir, "ledger.db")
	writeFile(t, pubPath, pub.String())
	writeFile(t, recPath, strings.Join([]string{
		`{"seq":1,"refkey":"a","outcome":"SENT","queue":""}`,
		`{"seq":2,"refkey":"b","outcome":"SENT","queue":""}`,
		`{"seq":3,"refkey":"u1","outcome":"UNKNOWN","queue":"it-notifications.unknown"}`,
		`{"seq":4,"refkey":"f1","outcome":"REJECTED","queue":"it-notifications.failed"}`,
		`{"seq":5,"refkey":"h1","outcome":"OUTSIDE_SEND_WINDOW","queue":"it-notifications.held"}`,
		`{"seq":6,"refkey":"r1","outcome":"NOT_SENT","queue":"it-notifications.retry"}`,
		`{"seq":7,"refkey":"","outcome":"INVALID","queue":"it-notifications.dead"}`,
	}, "\n")+"\n")
	l, err := ledger.Open(ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for k, s := range map[string]outcome.Outcome{"a": outcome.Sent, "b": outcome.Sent, "u1": outcome.Unknown, "f1": outcome.Rejected, "r1": outcome.NotSent} {
		_, e, err := l.Begin(context.Background(), k, "", now)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Finish(context.Background(), k, "", e.Attempts, s, "", now); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()

	opts := GatherOptions{PublishedPath: pubPath, RecordsPath: recPath, LedgerPath: ledgerPath, AMQPURL: amqpURL, Main: names.Main, WireMockURL: wmURL}
	in, err := Gather(ctx, opts)
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	if n := len(in.Journal); n != 6 {
		t.Errorf("journal has %d requests, want 6 (5 sends, 1 token)", n)
	}
	r := Reconcile(in)
	var table bytes.Buffer
	_ = r.WriteTable(&table)
	t.Logf("report:\n%s", table.String())
	if r.Lost != 0 || r.Duplicates != 1 || r.DuplicateRefKeys[0] != "b" {
		t.Errorf("lost %d duplicates %v, want 0 and [b]", r.Lost, r.DuplicateRefKeys)
	}
	want := map[outcome.Outcome]int{"SENT": 2, "UNKNOWN": 1, "REJECTED": 1, "OUTSIDE_SEND_WINDOW": 1, "NOT_SENT": 1, "PENDING": 1, "INVALID": 1}
	if !mapsEqual(r.ByOutcome, want) {
		t.Errorf("by_outcome = %v, want %v", r.ByOutcome, want)
	}
	for _, v := range r.Violations {
		if v.RefKey != "b" {
			t.Errorf("unexpected violation %+v", v)
		}
	}

	// Nothing was consumed: a second read finds the same, now redelivered.
	again, err := ReadQueues(ctx, amqpURL, names.All())
	if err != nil {
		t.Fatalf("second read: %v", err)
	}
	for _, q := range names.All() {
		if len(again[q]) != 1 {
			t.Errorf("queue %s holds %d messages after reading, want 1", q, len(again[q]))
		} else if !again[q][0].Redelivered {
			t.Errorf("queue %s: the message read before is not marked redelivered", q)
		}
	}

	// A consumer (a running worker) makes reading an error.
	cch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := cch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := cch.Consume(names.Main, "it-worker", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadQueues(ctx, amqpURL, names.All()); !errors.Is(err, ErrQueueInUse) {
		t.Errorf("with a consumer: err = %v, want ErrQueueInUse", err)
	}
	cch.Close()
	if _, err := ReadQueues(ctx, amqpURL, []string{"it-no-such-queue"}); !errors.Is(err, ErrNoQueue) {
		t.Errorf("missing queue: err = %v, want ErrNoQueue", err)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
