package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// Thresholds fail a run like k6's: a p99 or a connection count above its
// limit fails that check, the last printed line names the threshold, the
// value and the result file, and the error wraps ErrThreshold; a value at
// the limit passes, and without thresholds only delivery is judged.
func TestThresholds(t *testing.T) {
	ok := &reconcile.Report{OK: true}
	pooled := results.Result{Mode: "pooled", RTTMS: 3, LatencyMS: results.Latency{P99: 24.3}, TCPConnections: 1, Reconcile: ok}
	perReq := results.Result{Mode: "per-request", RTTMS: 3, LatencyMS: results.Latency{P99: 39.4123}, TCPConnections: 1050, Reconcile: ok}
	rs := []results.Result{perReq, pooled}
	tests := []struct {
		name     string
		th       Thresholds
		checks   int
		failLine string // "" = the verdict passes
	}{
		{"none: delivery only", Thresholds{}, 2, ""},
		{"p99 at the limit passes", Thresholds{P99MS: 39.4123}, 4, ""},
		{"p99 above the limit", Thresholds{P99MS: 30}, 4, "THRESHOLD_P99_MS=30 crossed: per-request at 3 ms: 39.4 ms > 30 (out/bench-per-request-3ms.json)"},
		{"connections above the limit", Thresholds{Connections: 8}, 4, "THRESHOLD_CONNECTIONS=8 crossed: per-request at 3 ms: 1050 connections > 8 (out/bench-per-request-3ms.json)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := results.NewVerdict(Judge(rs, tt.th), nil)
			if len(v.Checks) != tt.checks {
				t.Errorf("%d checks, want %d: %+v", len(v.Checks), tt.checks, v.Checks)
			}
			var buf bytes.Buffer
			err := ThresholdError(&buf, "out", v)
			if tt.failLine == "" {
				if err != nil || !v.Pass || v.Verdict != "pass" {
					t.Fatalf("verdict %s, error %v; want pass", v.Verdict, err)
				}
				return
			}
			if !errors.Is(err, ErrThreshold) || v.Pass || v.Verdict != "fail" {
				t.Fatalf("verdict %s, error %v; want fail wrapping ErrThreshold", v.Verdict, err)
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, tt.failLine) {
				t.Errorf("last line %q; want it to name %q", last, tt.failLine)
			}
		})
	}
}

// A run that was not reconciled fails its delivery check with value -1,
// even without thresholds: an unmeasured run is not a pass.
func TestJudgeUnreconciledFails(t *testing.T) {
	v := results.NewVerdict(Judge([]results.Result{{Mode: "pooled", RTTMS: 3}}, Thresholds{}), nil)
	if v.Pass || v.Checks[0].Value != -1 || v.Checks[0].Name != "delivery" {
		t.Errorf("verdict %+v; want a failed delivery check with value -1", v)
	}
}

// verdict.json is what other tools read: verdict, pass and each check
// with its value, limit and evidence file.
func TestWriteVerdict(t *testing.T) {
	dir := t.TempDir()
	r := results.Result{Mode: "pooled", RTTMS: 10, LatencyMS: results.Latency{P99: 31.8}, Reconcile: &reconcile.Report{OK: true}}
	if err := results.WriteVerdict(dir, results.NewVerdict(Judge([]results.Result{r}, Thresholds{P99MS: 30}), nil)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, results.VerdictFile))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Verdict string `json:"verdict"`
		Checks  []struct {
			Name     string  `json:"name"`
			Value    float64 `json:"value"`
			Limit    float64 `json:"limit"`
			Pass     bool    `json:"pass"`
			Evidence string  `json:"evidence"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Verdict != "fail" || len(got.Checks) != 2 {
		t.Fatalf("verdict.json = %s", b)
	}
	c := got.Checks[1]
	if c.Name != "THRESHOLD_P99_MS" || c.Value != 31.8 || c.Limit != 30 || c.Pass || c.Evidence != "bench-pooled-10ms.json" {
		t.Errorf("threshold check = %+v", c)
	}
}
