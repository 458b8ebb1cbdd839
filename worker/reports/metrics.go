package reports

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the report metrics, registered on the worker's registry so
// /metrics serves them:
//
//	notifier_worker_reports_total{source,verdict}      reports applied, by source (report, pull) and Verdict
//	notifier_worker_reports_refused_total{reason}      pushed reports refused: forged (authentication) or malformed
//	notifier_worker_reports_settle_seconds{source}     histogram: UNKNOWN (Entry.UpdatedAt) to settlement, seconds
//	notifier_worker_reports_past_horizon               gauge: UNKNOWN entries past the horizon left for an operator (last Sweep)
//
// A nil *Metrics records nothing.
type Metrics struct {
	reports     *prometheus.CounterVec
	refused     *prometheus.CounterVec
	settle      *prometheus.HistogramVec
	pastHorizon prometheus.Gauge
}

// Refusal reasons of notifier_worker_reports_refused_total.
const (
	RefusedForged    = "forged"
	RefusedMalformed = "malformed"
)

// NewMetrics registers the report metrics on reg, the refusal reasons
// present at 0. Errors: a metric of the same name is already registered.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_worker_reports_total",
			Help: "Delivery reports applied, by source (report = pushed, pull) and verdict.",
		}, []string{"source", "verdict"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifier_worker_reports_refused_total",
			Help: "Pushed delivery reports refused, by reason (forged, malformed).",
		}, []string{"reason"}),
		settle: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "notifier_worker_reports_settle_seconds",
			Help: "Time from an UNKNOWN outcome to its settlement by a report, in seconds.",
			// 100 ms to about 1.5 days.
			Buckets: prometheus.ExponentialBuckets(0.1, 4, 10),
		}, []string{"source"}),
		pastHorizon: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "notifier_worker_reports_past_horizon",
			Help: "UNKNOWN entries with no report past the vendor's horizon, left for an operator (last sweep).",
		}),
	}
	for _, c := range []prometheus.Collector{m.reports, m.refused, m.settle, m.pastHorizon} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.refused.WithLabelValues(RefusedForged)
	m.refused.WithLabelValues(RefusedMalformed)
	return m, nil
}

func (m *Metrics) report(source string, v Verdict) {
	if m != nil {
		m.reports.WithLabelValues(source, string(v)).Inc()
	}
}

func (m *Metrics) refuse(reason string) {
	if m != nil {
		m.refused.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) settled(source string, after time.Duration) {
	if m != nil {
		m.settle.WithLabelValues(source).Observe(after.Seconds())
	}
}

func (m *Metrics) setPastHorizon(n int) {
	if m != nil {
		m.pastHorizon.Set(float64(n))
	}
}
