package fault

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

func TestApplies(t *testing.T) {
	replicas := &Scenario{Name: "r", Workers: &WorkersSpec{Count: 2}}
	goOnly := &Scenario{Name: "g", AppliesTo: AppliesTo{Workers: []string{"go"}}}
	contract := &Scenario{Name: "c", AppliesTo: AppliesTo{Workers: []string{WorkerContract}}}
	alimtalk := &Scenario{Name: "a", AppliesTo: AppliesTo{Profiles: []string{"alimtalk"}}}
	open := &Scenario{Name: "o"}
	c8 := &Scenario{Name: "c8", Client: ClientSpec{Concurrency: 8}}
	reuse := &Scenario{Name: "reuse", AppliesTo: AppliesTo{ConnectionReuse: true}}
	tests := []struct {
		name            string
		sc              *Scenario
		worker, profile string
		want            bool
		why             string
	}{
		{"open applies to a reference worker", open, "node-fetch", "sms", true, ""},
		{"replicas apply to go", replicas, "go", "alimtalk", true, ""},
		{"empty worker is go", replicas, "", "alimtalk", true, ""},
		{"replicas never to a contract worker", replicas, "java-shared", "alimtalk", false, "Go worker only"},
		{"concurrency 8 never to a contract worker", c8, "node-fetch", "", false, "prefetch is 1"},
		{"a reused-connection fault skips a worker without keep-alive", reuse, "node-agent-nokeepalive", "", false, "new connection per send"},
		{"a reused-connection fault skips a bare requests.post", reuse, "python-requests", "", false, "new connection per send"},
		{"a reused-connection fault applies to an unknown image", reuse, "image:acme/w:1", "", true, ""},
		{"concurrency 8 applies to go", c8, "go", "", true, ""},
		{"go only refuses an image", goOnly, "image:acme/w:1", "", false, "applies to workers go"},
		{"contract class takes any image", contract, "image:acme/w:1", "", true, ""},
		{"contract class refuses go", contract, "go", "", false, "workers contract"},
		{"profile list refuses another profile", alimtalk, "go", "sms", false, "profiles alimtalk"},
		{"profile list takes its profile", alimtalk, "node-fetch", "alimtalk", true, ""},
		{"unknown profile applies", alimtalk, "go", "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := tt.sc.Applies(tt.worker, tt.profile)
			if got != tt.want || !strings.Contains(why, tt.why) || (tt.want && why != "") {
				t.Errorf("Applies(%q, %q) = %v, %q; want %v, %q", tt.worker, tt.profile, got, why, tt.want, tt.why)
			}
		})
	}
}

func TestAppliesToCheck(t *testing.T) {
	var bad []string
	report := func(field, format string, args ...any) { bad = append(bad, field) }
	AppliesTo{Workers: []string{"go", "node-fetch", WorkerContract}, Profiles: []string{"sms"}}.check(report)
	if len(bad) != 0 {
		t.Fatalf("valid applies_to reported %v", bad)
	}
	AppliesTo{Workers: []string{"python", "image:NAME"}, Profiles: []string{"Bad Name"}}.check(report)
	want := []string{"applies_to.workers[0]", "applies_to.workers[1]", "applies_to.profiles[0]"}
	if strings.Join(bad, ",") != strings.Join(want, ",") {
		t.Errorf("reported %v; want %v", bad, want)
	}
}

func TestAuditIdleRace(t *testing.T) {
	sc := AuditIdleRace(5e9, []int{3, 10}, 15, 5, IdleSettingWorker)
	r := sc.IdleRace
	if r.PauseMin.D() != 4.5e9 || r.PauseMax.D() != 5.5e9 || r.Count != 15 || r.Burst != 5 {
		t.Errorf("spec %+v: want pauses 4.5s..5.5s, 15 sends in bursts of 5", r)
	}
	if c := r.Expect[IdleSettingWorker]; !c.Match(0) || c.Match(1) {
		t.Errorf("expect %v: want exactly 0 failures", r.Expect)
	}
	if d := IdleTimeout(IdleSettingWorker, 5e9, 3, 0); d != 0 {
		t.Errorf("IdleTimeout(worker) = %s; want 0 (the worker's own)", d)
	}
}

// TestRunLeavesOutWhatDoesNotApply: a replica scenario asked for a
// contract worker starts nothing and is listed, with its reason, in
// faults-not-applicable.json.
func TestRunLeavesOutWhatDoesNotApply(t *testing.T) {
	out := t.TempDir()
	var log strings.Builder
	images := vendormock.Images{References: map[string]string{vendormock.EnvImageWorkerJava: "notifier-lab/worker-java:test"}}
	err := Run(context.Background(), Options{Scenario: "rolling-deploy", Catalog: "../catalog", Out: out,
		Profile: "../../vendormock/profiles/alimtalk", Worker: "java-shared", Images: images}, &log)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	na, err := ReadNotApplicable(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(na) != 1 || na[0].Name != "rolling-deploy" || !strings.Contains(na[0].Reason, "Go worker only") {
		t.Errorf("not applicable = %+v; want rolling-deploy, Go worker only", na)
	}
	if !strings.Contains(log.String(), "not applicable to worker java-shared") {
		t.Errorf("log lacks the reason:\n%s", log.String())
	}
}

// TestNotApplicableFileProvenance: the file carries the run's provenance
// and its scenarios; a file of the older shape (a bare list) still reads,
// and a file of neither shape is an error naming it.
func TestNotApplicableFileProvenance(t *testing.T) {
	out := t.TempDir()
	prov := &results.Provenance{Commit: "abc123", Command: []string{"audit", "WORKER=java-shared"}}
	if err := writeNotApplicable(out, []NotApplicable{{Name: "rolling-deploy", Reason: "Go worker only"}}, prov); err != nil {
		t.Fatal(err)
	}
	var l NotApplicableList
	raw, err := os.ReadFile(filepath.Join(out, NotApplicableFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &l); err != nil || l.Provenance == nil || l.Provenance.Commit != "abc123" || len(l.Scenarios) != 1 {
		t.Fatalf("file = %s (%v); want the provenance and one scenario", raw, err)
	}
	if err := writeNotApplicable(out, nil, prov); err != nil {
		t.Fatal(err)
	}
	if na, err := ReadNotApplicable(out); err != nil || na == nil || len(na) != 0 {
		t.Errorf("none left out: %+v, %v; want an empty list", na, err)
	}
	old := `[{"name": "broker-cut", "reason": "no broker reconnect"}]`
	if err := os.WriteFile(filepath.Join(out, NotApplicableFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if na, err := ReadNotApplicable(out); err != nil || len(na) != 1 || na[0].Name != "broker-cut" {
		t.Errorf("older list: %+v, %v; want broker-cut", na, err)
	}
	if err := os.WriteFile(filepath.Join(out, NotApplicableFile), []byte(`{"name": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNotApplicable(out); err == nil || !strings.Contains(err.Error(), NotApplicableFile) {
		t.Errorf("neither shape: err %v; want one naming the file", err)
	}
}
