package worker

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// Metrics are the worker's Prometheus metrics, on their own registry (not
// the global one). They are updated from the same Record that is written
// to the records file, so a scrape at the end of a run agrees with the
// records by construction:
//
//	notifier_worker_messages_total{outcome}     messages that ended in a place (one per Record)
//	notifier_worker_send_seconds                histogram of the vendor send call (Record.TotalMS / 1000), sends only
//	notifier_worker_new_connections_total       sends that opened a new connection (not Record.Reused)
//	notifier_worker_tls_handshakes_total        sends that made a TLS handshake (Record.TLSHandshakeMS > 0)
//	notifier_worker_retries_total               NOT_SENT messages re-published to the retry queue
//	notifier_worker_ledger_seconds{op}          histogram of ledger Begin and Finish calls
//
// A nil *Metrics records nothing.
type Metrics struct {
	Registry       *prometheus.Registry
	messages       *prometheus.CounterVec
	send           prometheus.Histogram
	newConns       prometheus.Counter
	tlsHandshakes  prometheus.Counter
	retries        prometheus.Counter
	ledgerDuration *prometheus.HistogramVec
	// byOutcome and ledgerBegin/ledgerFinish are the labelled children,
	// looked up once here instead of per message (WithLabelValues hashes
	// the labels on every call).
	byOutcome                 map[outcome.Outcome]prometheus.Counter
	ledgerBegin, ledgerFinish prometheus.Observer
}

// NewMetrics registers the worker's metrics on a new registry, with every
// outcome's counter present at 0.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_worker_messages_total",
			Help: "Messages handled, by outcome (one per record written).",
		}, []string{"outcome"}),
		send: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "notifier_worker_send_seconds",
			Help: "Duration of the vendor send call (token call included when one was made), in seconds.",
			// 5 ms to about 10 s: the case's sends take 20-75 ms.
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
		newConns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "notifier_worker_new_connections_total",
			Help: "Sends that opened a new connection to the vendor (connection not reused).",
		}),
		tlsHandshakes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "notifier_worker_tls_handshakes_total",
			Help: "Sends that made a TLS handshake.",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "notifier_worker_retries_total",
			Help: "NOT_SENT messages re-published to the retry queue.",
		}),
		ledgerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "notifier_worker_ledger_seconds",
			Help:    "Duration of ledger operations, in seconds.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"op"}),
	}
	m.Registry.MustRegister(m.messages, m.send, m.newConns, m.tlsHandshakes, m.retries, m.ledgerDuration)
	m.byOutcome = make(map[outcome.Outcome]prometheus.Counter, len(outcome.All))
	for _, o := range outcome.All {
		m.byOutcome[o] = m.messages.WithLabelValues(string(o))
	}
	m.ledgerBegin = m.ledgerDuration.WithLabelValues("begin")
	m.ledgerFinish = m.ledgerDuration.WithLabelValues("finish")
	return m
}

// observe counts one handled message from its Record. retryQueue is the
// retry queue's name.
func (m *Metrics) observe(r *records.Record, retryQueue string) {
	if m == nil {
		return
	}
	if c, ok := m.byOutcome[r.Outcome]; ok {
		c.Inc()
	} else {
		m.messages.WithLabelValues(string(r.Outcome)).Inc()
	}
	if r.TotalMS > 0 || r.WroteRequest {
		m.send.Observe(r.TotalMS / 1000)
		if !r.Reused {
			m.newConns.Inc()
		}
		if r.TLSHandshakeMS > 0 {
			m.tlsHandshakes.Inc()
		}
	}
	if r.Outcome == outcome.NotSent && r.Queue == retryQueue {
		m.retries.Inc()
	}
}

// ledgerOp observes one ledger call that began at start on o
// (ledgerBegin or ledgerFinish).
func (m *Metrics) ledgerOp(o func(*Metrics) prometheus.Observer, start time.Time) {
	if m == nil {
		return
	}
	o(m).Observe(time.Since(start).Seconds())
}

func beginOp(m *Metrics) prometheus.Observer  { return m.ledgerBegin }
func finishOp(m *Metrics) prometheus.Observer { return m.ledgerFinish }

// timedLedger measures every Begin and Finish of the Ledger it wraps. It
// keeps the optional abilities of what it wraps (Pinger,
// ledger.WriteChecker), which the consume loop and /healthz find by type
// assertion: an embedded Ledger interface would hide them, and the loop
// would then take messages again while the ledger still failed (issue 27:
// each message taken and requeued unsent burns one quorum delivery).
type timedLedger struct {
	Ledger
	m *Metrics
}

var (
	_ Ledger              = timedLedger{}
	_ Pinger              = timedLedger{}
	_ ledger.WriteChecker = timedLedger{}
)

// Ping is the wrapped ledger's Ping; nil when it has none.
func (l timedLedger) Ping(ctx context.Context) error {
	if p, ok := l.Ledger.(Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// CheckWrite is the wrapped ledger's CheckWrite, else its Ping, else nil
// (ledgerCheck).
func (l timedLedger) CheckWrite(ctx context.Context) error {
	if check := ledgerCheck(l.Ledger); check != nil {
		return check(ctx)
	}
	return nil
}

func (l timedLedger) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (ledger.Decision, ledger.Entry, error) {
	defer l.m.ledgerOp(beginOp, time.Now())
	return l.Ledger.Begin(ctx, refkey, bodyHash, now)
}

func (l timedLedger) Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error {
	defer l.m.ledgerOp(finishOp, time.Now())
	return l.Ledger.Finish(ctx, refkey, bodyHash, attempt, state, detail, now)
}
