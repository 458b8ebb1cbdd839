package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// Report reads the newest run's OUT/bench-*.json (results.ReadRun) and
// writes the report (WriteReport): the `lab report OUT` command. Files of
// other runs in OUT are left out, and w is told which.
func Report(out string, w io.Writer, opts ...ReportOption) error {
	rs, skipped, err := results.ReadRun(out)
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "left out %d bench file(s) of other runs in %s (not this run's; run id %s is reported): %s\n\n",
			len(skipped), out, rs[0].Provenance.RunID, strings.Join(skipped, ", "))
	}
	if v := runVerdict(out, rs); v != nil {
		opts = append(opts, WithVerdict(v))
	}
	return WriteReport(out, rs, w, opts...)
}

// runVerdict reads OUT/verdict.json when it is the verdict of rs's run
// (the same provenance run id), else nil: a stale verdict is never shown
// beside another run's figures.
func runVerdict(out string, rs []results.Result) *results.Verdict {
	b, err := os.ReadFile(filepath.Join(out, results.VerdictFile))
	if err != nil || len(rs) == 0 || rs[0].Provenance == nil {
		return nil
	}
	var v results.Verdict
	if json.Unmarshal(b, &v) != nil || v.Provenance == nil || v.Provenance.RunID != rs[0].Provenance.RunID {
		return nil
	}
	return &v
}

// NoteOthers tells w which bench files in out are not rs's own (an
// earlier run's into the same OUT), as Report does: a run's own report
// covers only its results. Nothing is said when there are none. Errors:
// the folder's listing.
func NoteOthers(out string, rs []results.Result, w io.Writer) error {
	files, err := filepath.Glob(filepath.Join(out, "bench-*.json"))
	if err != nil {
		return fmt.Errorf("list bench files: %w", err)
	}
	own := map[string]bool{}
	for _, r := range rs {
		own[results.ResultFile(r)] = true
	}
	var others []string
	for _, f := range files {
		if name := filepath.Base(f); !own[name] {
			others = append(others, name)
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(w, "left out %d bench file(s) of other runs in %s (not this run's; this run is reported): %s\n\n",
			len(others), out, strings.Join(others, ", "))
	}
	return nil
}
