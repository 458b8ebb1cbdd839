package reports

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// scrape returns the value of the counter or gauge name whose labels
// include every pair of kv ("label", "value", ...) on reg; -1 when absent.
func scrape(t *testing.T, reg *prometheus.Registry, name string, kv ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(kv); i += 2 {
				if have[kv[i]] != kv[i+1] {
					continue metrics
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

func TestNewMetricsRefusesASecondRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if got := scrape(t, reg, "notifier_worker_reports_refused_total", "reason", RefusedForged); got != 0 {
		t.Errorf("refused_total{forged} = %v before any report; want 0 (present)", got)
	}
	m.refuse(RefusedForged)
	if got := scrape(t, reg, "notifier_worker_reports_refused_total", "reason", RefusedForged); got != 1 {
		t.Errorf("refused_total{forged} = %v; want 1", got)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("a second NewMetrics on one registry succeeded")
	}
	var none *Metrics
	none.report("report", Settled) // a nil *Metrics records nothing
}
