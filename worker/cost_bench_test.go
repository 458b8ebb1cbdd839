package worker

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// BenchmarkMessagePath is the worker's per-message path as serve runs it
// at concurrency 1 (docs/worker.md, Cost per message): decode, ledger
// Begin and Finish on a real bbolt file, the send, the ack, the Record
// written to a records file, the metrics. Only the broker is faked, at the
// narrowest seam: deliveries come from a channel (the prefetch buffer) and
// acks go to a counting amqp.Acknowledger.
//
//   - vendor=tls: the send is a real vendorapi.Client (pooled) POSTing to a
//     local httptest TLS server, as the lab's worker does; ns/op includes
//     the server's work.
//   - vendor=none: the send returns SENT at once, so every nanosecond and
//     allocation left is the worker's own cost outside the send call.
//
// Extra metrics: send-ns/op is the wall time inside Sender.Send,
// outside-ns/op the rest (ns/op minus send-ns/op), cpu-us/op the process's
// user+sys CPU per message (getrusage; the TLS server's share included for
// vendor=tls), ledger-tx/op the ledger's write transactions per message
// (about 1 with the grouped commit Run sets at concurrency 1, 2 without). The ledger lives in TMPDIR: TMPDIR=/dev/shm matches the
// lab's tmpfs worker state.
func BenchmarkMessagePath(b *testing.B) {
	b.Run("vendor=none", func(b *testing.B) {
		benchMessagePath(b, &instantSender{})
	})
	b.Run("vendor=tls", func(b *testing.B) {
		client := benchTLSClient(b)
		b.Cleanup(func() { _ = client.Close() })
		// Warm the connection and the token outside the timed loop.
		if _, err := client.Send(context.Background(), benchNotification("warm-up")); err != nil {
			b.Fatalf("warm-up send: %v", err)
		}
		benchMessagePath(b, client)
	})
}

// benchMessagePath runs b.N deliveries through consumer.serve with sender
// as the vendor, the handler and consumer wired as Run wires them.
func benchMessagePath(b *testing.B, sender Sender) {
	dir := b.TempDir()
	led, err := ledger.Open(filepath.Join(dir, "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = led.Close() })
	recs, err := records.Open(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = recs.Close() })
	metrics := NewMetrics()
	timed := &timedSender{Sender: sender}
	log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := Config{Concurrency: 1, MaxMessages: b.N, ReconnectMin: time.Millisecond, ReconnectMax: time.Millisecond}
	topo := queues.DefaultTopology("bench")
	c := &consumer{
		cfg: cfg, log: log, records: recs, topology: topo, metrics: metrics, now: time.Now,
		handler: NewHandler(HandlerConfig{
			Publisher: &fakePublisher{}, Sender: timed, Ledger: timedLedger{Ledger: led, m: metrics},
			Window: window.Default(), Clock: window.System{}, Names: topo.Names, Logger: log,
			ReleaseAfterSend: groupCommit(cfg, led), // as Run wires it
		}),
	}
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = benchBody(b, fmt.Sprintf("bench-%d-%d", b.N, i))
	}
	ack := &countingAcker{}
	gen := c.gens.start()
	// The prefetch buffer: the feeder keeps it full, as the broker would
	// with no round trip between an ack and the next delivery.
	deliveries := make(chan amqp.Delivery, 1)
	go func() {
		for i, body := range bodies {
			deliveries <- amqp.Delivery{Acknowledger: ack, DeliveryTag: uint64(i + 1), Body: body,
				ContentType: "application/json", MessageId: "m"}
		}
	}()
	b.ReportAllocs()
	tx0, err := led.WriteTxID()
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := ProcessCPUMS()
	b.ResetTimer()
	start := time.Now()
	_, err = c.serve(context.Background(), gen, c.handler, deliveries, make(chan struct{}))
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := ProcessCPUMS() - cpu0
	if err != errStop {
		b.Fatalf("serve: %v, want errStop after %d messages", err, b.N)
	}
	if got := ack.acks.Load(); got != int64(b.N) {
		b.Fatalf("%d acks, want %d", got, b.N)
	}
	n := float64(b.N)
	if tx1, err := led.WriteTxID(); err == nil {
		b.ReportMetric(float64(tx1-tx0)/n, "ledger-tx/op")
	}
	send := float64(timed.ns.Load())
	b.ReportMetric(send/n, "send-ns/op")
	b.ReportMetric((float64(elapsed.Nanoseconds())-send)/n, "outside-ns/op")
	b.ReportMetric(cpu*1e3/n, "cpu-us/op")
}

// instantSender answers SENT at once with a plausible trace.
type instantSender struct{}

func (instantSender) Send(context.Context, message.Notification) (vendorapi.Result, error) {
	return vendorapi.Result{Code: vendorapi.SuccessCode, MessageKey: "mk",
		Trace: vendorapi.Trace{TotalMS: 1, Reused: true, Proto: "HTTP/1.1", TLSVersion: "1.3", WroteRequest: true}}, nil
}

func (instantSender) Close() error { return nil }

// timedSender sums the wall time spent in its Sender's Send.
type timedSender struct {
	Sender
	ns atomic.Int64
}

func (s *timedSender) Send(ctx context.Context, n message.Notification) (vendorapi.Result, error) {
	t0 := time.Now()
	res, err := s.Sender.Send(ctx, n)
	s.ns.Add(time.Since(t0).Nanoseconds())
	return res, err
}

// countingAcker counts acks; a nack or reject fails the benchmark's count.
type countingAcker struct{ acks, nacks atomic.Int64 }

func (a *countingAcker) Ack(uint64, bool) error        { a.acks.Add(1); return nil }
func (a *countingAcker) Nack(uint64, bool, bool) error { a.nacks.Add(1); return nil }
func (a *countingAcker) Reject(uint64, bool) error     { a.nacks.Add(1); return nil }

func benchNotification(refkey string) message.Notification {
	return message.Notification{RefKey: refkey, Category: message.Info, Recipient: testRecipient,
		TemplateCode: "SHIP_01", Text: "your order shipped", CreatedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
}

func benchBody(b *testing.B, refkey string) []byte {
	body, err := json.Marshal(benchNotification(refkey))
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// benchTLSClient starts a local TLS vendor (token and send endpoints of
// docs/vendor-api.md) and returns the worker's own vendor client for it.
func benchTLSClient(b *testing.B) *vendorapi.Client {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+vendorapi.TokenPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"accesstoken":"tok","type":"Bearer","expired":%q}`, time.Now().Add(time.Hour).Format(time.RFC3339))
	})
	mux.HandleFunc("POST "+vendorapi.MessagePath, func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			RefKey string `json:"refkey"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"code":"1000","description":"success","refkey":%q,"messagekey":"mk"}`, m.RefKey)
	})
	srv := httptest.NewTLSServer(mux)
	b.Cleanup(srv.Close)
	ca := filepath.Join(b.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		b.Fatal(err)
	}
	client, err := NewVendorClient(Config{VendorURL: srv.URL, CAFile: ca, ClientID: "lab", ClientSecret: "s",
		Strategy: vendorapi.PooledName, Concurrency: 1}.WithDefaults())
	if err != nil {
		b.Fatal(err)
	}
	return client
}
