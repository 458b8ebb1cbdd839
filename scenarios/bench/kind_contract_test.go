package bench

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

func TestWorkerMode(t *testing.T) {
	tests := []struct{ worker, want string }{
		{"node-fetch", "node-fetch"},
		{"java-shared", "java-shared"},
		{"image:acme/Worker:1.2", "image-acme-worker-1.2"},
		{"image:registry.local:5000/x_y", "image-registry.local-5000-x-y"},
	}
	for _, tt := range tests {
		t.Run(tt.worker, func(t *testing.T) {
			if got := WorkerMode(tt.worker); got != tt.want {
				t.Errorf("WorkerMode(%q) = %q; want %q", tt.worker, got, tt.want)
			}
		})
	}
}

func TestRunModes(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"go keeps MODES", Config{Worker: "go", Modes: []string{"per-request", "pooled"}}, []string{"per-request", "pooled"}},
		{"empty is go", Config{Modes: []string{"pooled"}}, []string{"pooled"}},
		{"contract worker replaces MODES", Config{Worker: "node-fetch", Modes: []string{"per-request", "pooled"}}, []string{"node-fetch"}},
		{"baseline adds Go pooled", Config{Worker: "java-shared", Baseline: true}, []string{"java-shared", "pooled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.RunModes(); !slices.Equal(got, tt.want) {
				t.Errorf("RunModes() = %v; want %v", got, tt.want)
			}
		})
	}
}

func TestContractCheckRecords(t *testing.T) {
	now := time.Now()
	full := []records.Record{
		{RefKey: "a", Outcome: outcome.Sent, Start: now, End: now, TotalMS: 20, CPUMS: 100, TLSVersion: "1.3"},
		{RefKey: "b", Outcome: outcome.Sent, Start: now, End: now, TotalMS: 21, CPUMS: 104, TLSVersion: "1.3"},
	}
	bare := []records.Record{{RefKey: "a", Outcome: outcome.Sent}, {RefKey: "b", Outcome: outcome.Sent}}
	tests := []struct {
		name        string
		recs        []records.Record
		err         error
		consumed    int
		wantMissing []string // substrings, one per Missing entry, in order
		wantLatency string
	}{
		{"full records keep the contract", full, nil, 2, nil, results.SourceRecords + " (total_ms)"},
		{"no records file", nil, os.ErrNotExist, 2, []string{"wrote no records file"}, results.SourceNginx + " ($request_time, server side)"},
		{"nothing consumed", nil, os.ErrNotExist, 0, []string{"consumed nothing", "wrote no records file"}, results.SourceNginx + " ($request_time, server side)"},
		{"too few records", full[:1], nil, 2, []string{"wrote 1 records for 2 messages"}, results.SourceRecords + " (total_ms)"},
		{"records without timings or CPU", bare, nil, 2, []string{"no total_ms", "no cpu_ms"}, results.SourceNginx + " ($request_time, server side)"},
		{"unreadable records", nil, errors.New("records line 3: malformed"), 2, []string{"unreadable"}, results.SourceNginx + " ($request_time, server side)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := &results.ContractCheck{Expected: 2, Consumed: tt.consumed}
			checkRecords(cc, tt.recs, tt.err, tt.consumed)
			if len(cc.Missing) != len(tt.wantMissing) {
				t.Fatalf("Missing = %q; want %d entries like %q", cc.Missing, len(tt.wantMissing), tt.wantMissing)
			}
			for i, w := range tt.wantMissing {
				if !strings.Contains(cc.Missing[i], w) {
					t.Errorf("Missing[%d] = %q; want it to contain %q", i, cc.Missing[i], w)
				}
			}
			if got := cc.Sources["latency p50/p99, sends/s"]; got != tt.wantLatency {
				t.Errorf("latency source = %q; want %q", got, tt.wantLatency)
			}
			if cc.Sources["TCP connections, connections per send"] != results.SourceNginx {
				t.Errorf("connections must come from nginx; sources %v", cc.Sources)
			}
		})
	}
}

func TestResolveProfileByName(t *testing.T) {
	for _, name := range []string{"alimtalk", "sms", "vendormock/profiles/sms"} {
		dir, err := ResolveProfile(name)
		if err != nil || !strings.HasSuffix(dir, "vendormock/profiles/"+strings.TrimPrefix(name, "vendormock/profiles/")) {
			t.Errorf("ResolveProfile(%q) = %q, %v; want the profile's folder", name, dir, err)
		}
	}
	if _, err := ResolveProfile("no-such-profile"); err == nil {
		t.Error("ResolveProfile of an unknown name: want an error")
	}
}
