package lab

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestRecordsFollowsAGrowingFile: records appear as their lines complete,
// a missing file is empty, a malformed line is an error naming it.
func TestRecordsFollowsAGrowingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordsFile)
	r := NewRecords(path)
	steps := []struct {
		name    string
		text    string
		wantLen int
	}{
		{"missing file", "", 0},
		{"one record", `{"seq":1,"outcome":"SENT"}` + "\n", 1},
		{"partial line waits", `{"seq":2,"outcome":"UNK`, 1},
		{"line completed", `NOWN"}` + "\n" + `{"seq":3,"outcome":"SENT"}` + "\n", 3},
		{"blank line", "\n", 3},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.text != "" {
				appendFile(t, path, s.text)
			}
			if err := r.Poll(); err != nil {
				t.Fatal(err)
			}
			if r.Len() != s.wantLen {
				t.Fatalf("Len = %d; want %d", r.Len(), s.wantLen)
			}
		})
	}
	if got := r.Counts(); got[outcome.Sent] != 2 || got[outcome.Unknown] != 1 {
		t.Errorf("Counts = %v; want SENT 2, UNKNOWN 1", got)
	}
	if last, ok := r.Last(); !ok || last.Seq != 3 {
		t.Errorf("Last = %+v, %v; want seq 3", last, ok)
	}
	appendFile(t, path, "{not json\n")
	if err := r.Poll(); !errors.Is(err, records.ErrMalformedLine) {
		t.Errorf("Poll after a malformed line = %v; want records.ErrMalformedLine", err)
	}
	if _, ok := NewRecords(filepath.Join(t.TempDir(), "none")).Last(); ok {
		t.Error("Last of an empty file: want ok false")
	}
}

func TestWorkerConfig(t *testing.T) {
	st := &vendormock.Stack{VendorURL: "https://api.vendor.test", ClientID: "lab-client", ClientSecret: "s3cret-value"}
	topo := queues.DefaultTopology("q")
	c := WorkerConfig(worker.Config{}, st, "amqp://broker/", topo, "pooled")
	want := worker.Config{
		AMQPURL: "amqp://broker/", Queue: "q", RetryDelay: topo.RetryDelay, MaxAttempts: topo.MaxAttempts,
		VendorURL: st.VendorURL, CAFile: vendormock.WorkerCAPath, ClientID: "lab-client", Strategy: "pooled",
		RecordsPath: vendormock.WorkerOutDir + "/" + RecordsFile, LedgerPath: vendormock.WorkerOutDir + "/" + LedgerFile,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("WorkerConfig = %+v; want %+v (no profile: no vendor API shape, the worker's defaults)", c, want)
	}
	// The base's knobs pass through; what the lab owns is set over them.
	base := worker.Config{ResponseTimeout: 7 * time.Second, SummaryEvery: 3, Queue: "mine", Strategy: "per-request"}
	if got := WorkerConfig(base, st, "amqp://broker/", topo, "pooled"); got.ResponseTimeout != 7*time.Second || got.SummaryEvery != 3 ||
		got.Queue != "q" || got.Strategy != "pooled" {
		t.Errorf("WorkerConfig(base) = %+v; want the base's ResponseTimeout and SummaryEvery, the lab's queue and strategy", got)
	}
	if strings.Contains(strings.Join(c.Args(), " "), st.ClientSecret) {
		t.Error("the client secret is in the worker's arguments; it must go by environment only")
	}
	if WorkerEnv(st)["VENDOR_CLIENT_SECRET"] != st.ClientSecret {
		t.Error("WorkerEnv lacks the client secret")
	}

	// The second profile's API shape reaches the Go worker in its Config
	// and the environment.
	p, err := vendormock.LoadProfile("vendormock/profiles/sms")
	if err != nil {
		t.Fatal(err)
	}
	st.Profile = p
	c = WorkerConfig(worker.Config{}, st, "amqp://broker/", topo, "pooled")
	env := WorkerEnv(st)
	wantAPI := vendorapi.API{TokenPath: "/oauth2/token", TokenAuth: "form", SendPath: "/sms/v2/messages",
		RefKeyField: "client_ref", CodeField: "result_code"}
	if c.VendorAPI != wantAPI || c.CorrelationHeader != "X-Client-Ref" {
		t.Errorf("vendor API %+v, correlation header %q; want %+v, X-Client-Ref", c.VendorAPI, c.CorrelationHeader, wantAPI)
	}
	if env["VENDOR_TOKEN_AUTH"] != "form" || env["VENDOR_REFKEY_FIELD"] != "client_ref" || env[vendormock.EnvStatusTable] == "" {
		t.Errorf("WorkerEnv lacks the sms profile's API shape or status table; keys %v", slices.Sorted(maps.Keys(env)))
	}
}

func TestHelpers(t *testing.T) {
	if got := LastLines("a\nb\nc\nd\n", 2); got != "c\nd" {
		t.Errorf("LastLines = %q", got)
	}
	var b bytes.Buffer
	pw := PrefixWriter{W: &b, Prefix: "[stack] "}
	if _, err := pw.Write([]byte("one\ntwo\n")); err != nil {
		t.Fatal(err)
	}
	if b.String() != "[stack] one\n[stack] two\n" {
		t.Errorf("PrefixWriter wrote %q", b.String())
	}
	dir := filepath.Join(t.TempDir(), "state")
	if err := StateDir(dir); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o777 {
		t.Errorf("StateDir: mode %v, %v; want 0777", st.Mode().Perm(), err)
	}
}

// TestReplicaArgs: each replica gets its own records and ledger files
// and CPU profile, and not the single worker's stop count.
func TestReplicaArgs(t *testing.T) {
	cfg := worker.Config{Queue: "q", Strategy: "pooled", RecordsPath: "/out/r.jsonl", LedgerPath: "/out/l.db", MaxMessages: 5, CPUProfile: "/out/cpu.pprof"}
	args := ReplicaArgs(cfg)
	got := args(vendormock.ReplicaFiles{ID: "worker-2", RecordsPath: "/out/records-worker-2.jsonl", LedgerFile: "/ledger/ledger.db"})
	want := worker.Config{Queue: "q", Strategy: "pooled", RecordsPath: "/out/records-worker-2.jsonl", LedgerPath: "/ledger/ledger.db", CPUProfile: "/out/cpu-worker-2.pprof"}.Args()
	if !slices.Equal(got, want) {
		t.Errorf("bbolt replica: args %q; want %q", got, want)
	}
	got = args(vendormock.ReplicaFiles{ID: "worker-1", RecordsPath: "/out/records-worker-1.jsonl"})
	want = worker.Config{Queue: "q", Strategy: "pooled", RecordsPath: "/out/records-worker-1.jsonl", CPUProfile: "/out/cpu-worker-1.pprof"}.Args()
	if !slices.Equal(got, want) {
		t.Errorf("postgres replica: args %q; want %q (the ledger URL by environment only)", got, want)
	}
}

// TestRecordSetMerges: records of several files merge in End order,
// renumbered; one file keeps its own numbering.
func TestRecordSetMerges(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "records-worker-1.jsonl"), filepath.Join(dir, "records-worker-2.jsonl")
	appendFile(t, a, `{"seq":1,"refkey":"k1","outcome":"SENT","end":"2026-11-30T03:00:01Z"}`+"\n"+`{"seq":2,"refkey":"k3","outcome":"SENT","end":"2026-11-30T03:00:03Z"}`+"\n")
	appendFile(t, b, `{"seq":1,"refkey":"k2","outcome":"UNKNOWN","end":"2026-11-30T03:00:02Z"}`+"\n")
	one := NewRecordSet(a)
	if err := one.Poll(); err != nil {
		t.Fatal(err)
	}
	if m := one.Merged(); len(m) != 2 || m[1].Seq != 2 {
		t.Errorf("one file merged = %+v", m)
	}
	s := NewRecordSet(a, b, a)
	if err := s.Poll(); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 || len(s.Files()) != 2 || s.Counts()[outcome.Unknown] != 1 {
		t.Fatalf("Len %d, files %d, counts %v; want 3 records of 2 files, 1 UNKNOWN", s.Len(), len(s.Files()), s.Counts())
	}
	var keys []string
	for i, r := range s.Merged() {
		keys = append(keys, r.RefKey)
		if r.Seq != i+1 {
			t.Errorf("merged[%d].Seq = %d; want %d", i, r.Seq, i+1)
		}
	}
	if strings.Join(keys, ",") != "k1,k2,k3" {
		t.Errorf("merged order %v; want k1,k2,k3 (by end)", keys)
	}
	if last, ok := s.Last(); !ok || last.RefKey != "k3" {
		t.Errorf("Last = %+v; want k3", last)
	}
}
