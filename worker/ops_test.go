package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

// TestMetricsAfterMessages handles fake messages through the consumer and
// scrapes /metrics: the counters agree with the records (2 SENT on one new
// connection with one TLS handshake, 1 NOT_SENT retried, 1 INVALID), and
// the ledger histogram saw every Begin and Finish.
func TestMetricsAfterMessages(t *testing.T) {
	r := newRig(t, nil, inWindow)
	m := NewMetrics()
	r.h.c.Ledger = timedLedger{Ledger: r.h.c.Ledger, m: m}
	var recs, logs bytes.Buffer
	c := newTestConsumer(r, &recs, &logs, 4)
	c.metrics = m
	c.topology = queues.DefaultTopology(names.Main)
	c.cfg.WorkerID = "replica-a"
	r.h.c.Replica = "replica-a"

	srv := httptest.NewServer(opsHandler(&c.health, nil, m))
	defer srv.Close()

	calls := 0
	r.send.during = func() { // runs in the serve goroutine, before Send answers
		calls++
		switch calls {
		case 1: // SENT on a new connection with a TLS handshake
			r.send.res = vendorapi.Result{Code: "1000", MessageKey: "mk-1", Trace: vendorapi.Trace{TotalMS: 40, TLSHandshakeMS: 12}}
		case 2: // SENT on the reused connection
			r.send.res = vendorapi.Result{Code: "1000", MessageKey: "mk-2", Trace: vendorapi.Trace{TotalMS: 20, Reused: true}}
		case 3: // NOT_SENT (429): retried
			r.send.res = vendorapi.Result{Trace: vendorapi.Trace{TotalMS: 20, Reused: true}}
			r.send.err = &vendorapi.SendError{Class: outcome.NotSent, Op: "send", Code: "429", Err: errors.New("http status 429")}
		}
	}
	ack := &fakeAcker{}
	deliveries := make(chan amqp.Delivery, 4)
	deliveries <- delivery(ack, 1, body(t, "m-1", message.Info), nil)
	deliveries <- delivery(ack, 2, body(t, "m-2", message.Info), nil)
	deliveries <- delivery(ack, 3, body(t, "m-3", message.Info), nil)
	deliveries <- delivery(ack, 4, []byte("not json"), nil) // INVALID
	waitServe(t, serveAsync(context.Background(), c, c.gens.start(), deliveries, make(chan struct{})))

	code, text := get(t, srv, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`notifier_worker_messages_total{outcome="SENT"} 2`,
		`notifier_worker_messages_total{outcome="NOT_SENT"} 1`,
		`notifier_worker_messages_total{outcome="INVALID"} 1`,
		`notifier_worker_messages_total{outcome="UNKNOWN"} 0`,
		`notifier_worker_send_seconds_count 3`,
		`notifier_worker_new_connections_total 1`,
		`notifier_worker_tls_handshakes_total 1`,
		`notifier_worker_retries_total 1`,
		`notifier_worker_ledger_seconds_count{op="begin"} 3`,
		`notifier_worker_ledger_seconds_count{op="finish"} 3`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"active consumer"`) || !c.health.active.Load() {
		t.Errorf("no active consumer line or state after the first delivery")
	}
	if n := strings.Count(logs.String(), `"msg":"active consumer"`); n != 1 {
		t.Errorf("%d active consumer lines, want 1 per session", n)
	}
	if n := strings.Count(recs.String(), `"replica":"replica-a"`); n != 4 {
		t.Errorf("%d records name replica-a, want 4", n)
	}
}

type fakePinger struct{ err error }

func (p fakePinger) Ping(context.Context) error { return p.err }

func TestHealthz(t *testing.T) {
	tests := []struct {
		name           string
		broker, active bool
		ledger         any
		wantCode       int
		wantBody       string
	}{
		{"no broker", false, false, nil, 503, "broker session not open"},
		{"standby", true, false, nil, 200, "standby"},
		{"active", true, true, fakePinger{}, 200, "active"},
		{"ledger down", true, true, fakePinger{errors.New("connection refused")}, 503, "ledger does not answer: connection refused"},
		{"ledger without Ping", true, false, struct{}{}, 200, "standby"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h health
			h.broker.Store(tt.broker)
			h.active.Store(tt.active)
			srv := httptest.NewServer(opsHandler(&h, tt.ledger, NewMetrics()))
			defer srv.Close()
			code, body := get(t, srv, "/healthz")
			if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
				t.Errorf("/healthz = %d %q, want %d %q", code, body, tt.wantCode, tt.wantBody)
			}
		})
	}
}
