package audit

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// A page whose probes ran on their own after the audit names both runs;
// one whose probes ran inside the audit names one (the negative control).
func TestMarkdownNamesTheProbesRun(t *testing.T) {
	audit := &results.Provenance{RunID: "20261205T042425Z-3e1a7d2", Commit: "3e1a7d22b198", Command: []string{"audit"}}
	probes := &results.Provenance{RunID: "20261205T051236Z-fc3b1d2", Commit: "fc3b1d29ef55", Command: []string{"audit-probes", "OUT=results/audit/go-alimtalk"}}
	md := Markdown(Report{Worker: "go", Profile: "alimtalk", Provenance: audit, ProbesProvenance: probes})
	if !strings.Contains(md, "re-run on their own: run 20261205T051236Z-fc3b1d2 at commit fc3b1d2") {
		t.Errorf("page does not name the probes' own run:\n%s", md[:min(len(md), 600)])
	}
	md = Markdown(Report{Worker: "go", Profile: "alimtalk", Provenance: audit, ProbesProvenance: audit})
	if strings.Contains(md, "re-run on their own") {
		t.Errorf("probes run inside the audit named as a run of their own:\n%s", md[:min(len(md), 600)])
	}
}
