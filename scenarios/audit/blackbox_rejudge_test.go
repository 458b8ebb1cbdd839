package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// copyBlackBox copies a committed black-box audit's report and adapter
// into a temporary folder.
func copyBlackBox(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{BlackBoxJSONFile, "adapter.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "results", "audit", name, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func verdicts(rules []Rule) map[string]string {
	m := map[string]string{}
	for _, r := range rules {
		m[r.ID] = r.Verdict
	}
	return m
}

// TestRejudgeBlackBoxReproducesTheCommittedAudits: judging a committed
// black-box audit's measures again gives its verdicts, and writes its page.
func TestRejudgeBlackBoxReproducesTheCommittedAudits(t *testing.T) {
	for _, name := range []string{"example-dispatch-alimtalk", "example-dispatch-sms"} {
		dir := copyBlackBox(t, name)
		b, _ := os.ReadFile(filepath.Join(dir, BlackBoxJSONFile))
		var old BlackBoxReport
		if err := json.Unmarshal(b, &old); err != nil {
			t.Fatal(err)
		}
		rep, err := RejudgeBlackBox(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, got := verdicts(old.Rules), verdicts(rep.Rules)
		if len(got) != len(want) {
			t.Errorf("%s: %d rules, the committed report has %d", name, len(got), len(want))
		}
		for id, v := range want {
			if got[id] != v {
				t.Errorf("%s: rule %s judged %s again, committed %s", name, id, got[id], v)
			}
		}
		if md, err := os.ReadFile(filepath.Join(dir, MarkdownFile)); err != nil || len(md) == 0 {
			t.Errorf("%s: no %s written: %v", name, MarkdownFile, err)
		}
	}
}

// TestRejudgeBlackBoxJudgesTheMeasures: the negative control. A duplicate
// planted in the steady run's tally turns the duplicates rule to FAIL; the
// verdicts come from the measures, not from the stored verdicts.
func TestRejudgeBlackBoxJudgesTheMeasures(t *testing.T) {
	dir := copyBlackBox(t, "example-dispatch-sms")
	path := filepath.Join(dir, BlackBoxJSONFile)
	b, _ := os.ReadFile(path)
	var rep BlackBoxReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	judge := func(plant bool) string {
		t.Helper()
		planted := false
		for i := range rep.Runs {
			if tl := rep.Runs[i].Tally; tl != nil {
				tl.Duplicates = nil
				if plant && !planted && tl.Sent > 0 {
					tl.Duplicates = []string{"planted-refkey"}
					planted = true
				}
			}
		}
		if plant && !planted {
			t.Fatal("no run with sends to plant a duplicate in")
		}
		b, _ := json.Marshal(rep)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := RejudgeBlackBox(dir)
		if err != nil {
			t.Fatal(err)
		}
		return verdicts(got.Rules)["duplicates"]
	}
	if v := judge(false); v != Pass {
		t.Errorf("duplicates rule with every duplicate removed: %s, want PASS", v)
	}
	if v := judge(true); v != Fail {
		t.Errorf("duplicates rule with a planted duplicate: %s, want FAIL", v)
	}
	if _, err := RejudgeBlackBox(t.TempDir()); err == nil {
		t.Error("an empty folder: no error")
	}
}
