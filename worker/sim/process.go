package sim

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/reports"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// process is one life of the worker process: the real Handler, vendor
// client, report Resolver and Sweeper, wired as worker.Run wires them,
// against the models. A crash throws it away; the next one starts with an
// empty token cache and a fresh consume channel.
type process struct {
	handler *worker.Handler
	client  *vendorapi.Client
	sweeper *reports.Sweeper
	push    http.Handler
	ch      *Channel // the consume channel; nil until the next delivery opens one
}

// simStrategy hands the vendor client an *http.Client whose transport is
// the vendor model (vendorapi.Strategy).
type simStrategy struct{ hc *http.Client }

func (s simStrategy) Name() string                          { return "sim" }
func (s simStrategy) Client() (*http.Client, func(), error) { return s.hc, func() {}, nil }
func (s simStrategy) Close() error                          { return nil }

// handlerTimeout is the handler's LedgerTimeout and PublishTimeout in
// real time: far beyond any step, so no real timer decides anything (the
// fault layer models the ledger's deadline by the simulated clock).
const handlerTimeout = time.Hour

// minAge is the report resolver's MinAge: the worker's ShutdownGrace at
// its defaults (the worst-case send time).
var minAge = worker.ShutdownGrace(worker.Config{})

func (w *world) newProcess() (*process, error) {
	client := vendorapi.NewClient("https://vendor.sim", vendorapi.Credentials{ClientID: "sim", ClientSecret: "sim-secret"},
		simStrategy{hc: &http.Client{Transport: w.vendor}}, vendorapi.WithClock(w.clock.Now))
	var sender worker.Sender = client
	if w.opt.Plant.ReplaySends {
		sender = replaySender{client}
	}
	p := &process{client: client}
	p.handler = worker.NewHandler(worker.HandlerConfig{
		Publisher:      w.broker.Publisher("handler"),
		Sender:         sender,
		Ledger:         w.ledger,
		Window:         window.Default(),
		Clock:          w.clock,
		Names:          w.topo.Names,
		MaxAttempts:    w.s.Config.MaxAttempts,
		PublishTimeout: handlerTimeout,
		LedgerTimeout:  handlerTimeout,
		Replica:        "sim",
	})
	if !w.s.Config.Reports() {
		return p, nil
	}
	spec, err := vendorapi.ParseReportSpec(w.vendor.ReportSpec())
	if err != nil {
		return nil, fmt.Errorf("start process: %w", err)
	}
	res := &reports.Resolver{Store: w.ledger, Spec: spec, MinAge: minAge}
	p.sweeper = &reports.Sweeper{Resolver: res}
	if spec.Pull != nil {
		p.sweeper.Puller = reports.ClientPuller{Client: client, Spec: spec}
	}
	if spec.Push != nil {
		p.push = res.Handler(w.vendor.Secret, w.clock.Now)
	}
	return p, nil
}

// pushReport is the vendor's POST of one report to the worker's report
// endpoint (in memory); it returns the status (503 while the process has
// no endpoint).
func (w *world) pushReport(body []byte, sig string) int {
	if w.proc == nil || w.proc.push == nil {
		return http.StatusServiceUnavailable
	}
	req := httptest.NewRequest(http.MethodPost, worker.ReportsPath, bytes.NewReader(body))
	req.Header.Set("X-Signature", sig)
	rec := httptest.NewRecorder()
	w.proc.push.ServeHTTP(rec, req)
	w.note("report push %s -> %d %s", body, rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
	if bytes.Contains(rec.Body.Bytes(), []byte(`"settled"`)) {
		w.outcomes["settled by push"]++
	}
	return rec.Code
}

// replaySender is a planted defect (Plant.ReplaySends): a transport that
// sends again when the first answer was UNKNOWN, as Go's transport may
// replay a POST that carries an idempotency key.
type replaySender struct{ inner worker.Sender }

func (r replaySender) Send(ctx context.Context, n message.Notification) (vendorapi.Result, error) {
	res, err := r.inner.Send(ctx, n)
	if vendorapi.ClassOf(err) == outcome.Unknown {
		return r.inner.Send(ctx, n)
	}
	return res, err
}

func (r replaySender) Close() error { return r.inner.Close() }
