package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// plainVendor is a plain-HTTP vendor (SCHEME=http) answering every token
// call and send with success after delay, counting sends in flight.
type plainVendor struct {
	srv            *httptest.Server
	sends          atomic.Int64
	inflight, peak atomic.Int64
}

func startPlainVendor(t *testing.T, delay time.Duration) *plainVendor {
	t.Helper()
	v := &plainVendor{}
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case vendorapi.TokenPath:
			fmt.Fprintf(w, `{"accesstoken":"tok","type":"Bearer","expired":%q}`, time.Now().Add(time.Hour).Format(time.RFC3339))
		case vendorapi.MessagePath:
			n := v.inflight.Add(1)
			for p := v.peak.Load(); n > p && !v.peak.CompareAndSwap(p, n); p = v.peak.Load() {
			}
			time.Sleep(delay)
			v.inflight.Add(-1)
			v.sends.Add(1)
			var m struct {
				RefKey string `json:"refkey"`
			}
			_ = json.NewDecoder(r.Body).Decode(&m)
			fmt.Fprintf(w, `{"code":"1000","description":"success","refkey":%q,"messagekey":"mk"}`, m.RefKey)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(v.srv.Close)
	return v
}

// TestRunDirect: the direct driver sends Count messages (plus warm-up,
// unrecorded) Concurrency at a time over plain HTTP, writes one record per
// measured send with trace and CPU fields, and sums them up.
func TestRunDirect(t *testing.T) {
	for _, tc := range []struct {
		name        string
		strategy    string
		concurrency int
	}{
		{"pooled at 1", vendorapi.PooledName, 1},
		{"pooled at 4", vendorapi.PooledName, 4},
		{"per-request at 4", vendorapi.PerRequestName, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := startPlainVendor(t, 10*time.Millisecond)
			path := filepath.Join(t.TempDir(), "direct.jsonl")
			cfg := Config{VendorURL: v.srv.URL, ClientID: "lab", ClientSecret: "s", Strategy: tc.strategy,
				Concurrency: tc.concurrency, RecordsPath: path}
			sum, err := RunDirect(context.Background(), cfg, DirectOptions{Count: 12, Warmup: 4})
			if err != nil {
				t.Fatalf("RunDirect: %v", err)
			}
			if sum.Sends != 12 || sum.Outcomes[outcome.Sent] != 12 || v.sends.Load() != 16 {
				t.Errorf("summary %+v, vendor saw %d sends; want 12 measured SENT and 16 in all", sum, v.sends.Load())
			}
			if sum.Scheme != "http" || sum.Concurrency != tc.concurrency || sum.PerS <= 0 || sum.CPUMS <= 0 {
				t.Errorf("summary %+v: want scheme http, concurrency %d, rate and CPU > 0", sum, tc.concurrency)
			}
			if p := v.peak.Load(); p != int64(tc.concurrency) {
				t.Errorf("peak sends in flight at the vendor %d, want %d", p, tc.concurrency)
			}
			rs, err := records.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 12 {
				t.Fatalf("%d records, want 12", len(rs))
			}
			reused := 0
			for i, r := range rs {
				if r.Seq != i+1 || r.Outcome != outcome.Sent || r.TotalMS <= 0 || r.CPUMS <= 0 || r.Proto != "HTTP/1.1" {
					t.Errorf("record %d: %+v", i, r)
				}
				if r.Reused {
					reused++
				}
			}
			if tc.strategy == vendorapi.PooledName && reused != 12 {
				t.Errorf("%d of 12 pooled sends reused a connection after warm-up, want 12", reused)
			}
			if tc.strategy == vendorapi.PerRequestName && reused != 0 {
				t.Errorf("%d per-request sends reused a connection, want 0", reused)
			}
		})
	}
}

// TestRunDirectBadOptions: a count below 1 is refused with ErrConfig.
func TestRunDirectBadOptions(t *testing.T) {
	cfg := Config{VendorURL: "http://127.0.0.1:1", ClientID: "lab", ClientSecret: "s"}
	_, err := RunDirect(context.Background(), cfg, DirectOptions{Count: 0})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "count 0") {
		t.Errorf("RunDirect count 0: %v, want ErrConfig naming the count", err)
	}
}
