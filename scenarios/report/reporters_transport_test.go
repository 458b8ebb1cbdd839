package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestSummaryGroupsBySchemeAndConcurrency: runs of several schemes get a
// scheme column, rows group by scheme then concurrency, the comparison
// pairs runs within a group, and the case's rows sit under https at
// concurrency 1 only. Control: runs of https at 1 alone keep the table
// as it was (no scheme column).
func TestSummaryGroupsBySchemeAndConcurrency(t *testing.T) {
	mk := func(scheme string, c int, mode string, sends float64) results.Result {
		return results.Result{Mode: mode, RTTMS: 3, Count: 1000, Scheme: scheme, Concurrency: c, SendsPerS: sends}
	}
	rs := []results.Result{
		mk("mtls", 1, vendorapi.PooledName, 40), mk("https", 8, vendorapi.PooledName, 300), mk("mtls", 1, vendorapi.PerRequestName, 10),
		mk("", 0, vendorapi.PooledName, 42), mk("", 0, vendorapi.PerRequestName, 40), mk("https", 8, vendorapi.PerRequestName, 100),
	}
	tab := summaryTable(rs)
	if tab.header[0] != "scheme" {
		t.Fatalf("header %q; want a scheme column first", tab.header)
	}
	var order []string
	caseRows := 0
	for _, row := range tab.rows {
		if strings.HasSuffix(row[2], "(case)") {
			caseRows++
			if row[0] != "https" {
				t.Errorf("case row under %s; want under https at concurrency 1 only", row[0])
			}
			continue
		}
		order = append(order, row[0]+" "+row[2])
	}
	want := []string{"https per-request", "https pooled", "https c8 per-request", "https c8 pooled", "mtls per-request", "mtls pooled"}
	if !slices.Equal(order, want) || caseRows != 2 {
		t.Errorf("rows %q (%d case rows); want %q and 2 case rows", order, caseRows, want)
	}
	cmp := Compare(rs)
	if len(cmp) != 3 {
		t.Fatalf("%d comparisons; want one per group", len(cmp))
	}
	for _, c := range cmp {
		want := map[string]float64{"https1": 42.0 / 40, "https8": 3, "mtls1": 4}[c.Scheme+string(rune('0'+c.Concurrency))]
		if c.SendsRatio != want || c.HasCase != (c.Scheme == "https" && c.Concurrency == 1) {
			t.Errorf("%s c%d: ratio %.3f, case %v; want %.3f", c.Scheme, c.Concurrency, c.SendsRatio, c.HasCase, want)
		}
	}
	if plain := summaryTable(rs[3:5]); plain.header[0] == "scheme" {
		t.Error("https at concurrency 1 alone: want no scheme column")
	}
}
