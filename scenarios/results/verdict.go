package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// VerdictFile is the machine-readable verdict of a bench run, written
// beside summary.md (docs/running.md, "Verdict and thresholds").
const VerdictFile = "verdict.json"

// Verdict is OUT/verdict.json: whether the run passed, and every check
// that judged it. A run passes when every check passes; the command then
// exits 0, else 1.
type Verdict struct {
	// Verdict is "pass" or "fail"; Pass the same as a boolean.
	Verdict string `json:"verdict"`
	Pass    bool   `json:"pass"`
	// Checks are in the order of the runs (SortResults), each run's
	// delivery check first, then its thresholds.
	Checks     []Check     `json:"checks"`
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Check is one judged figure of one run.
type Check struct {
	// Name is "delivery" (lost + duplicated messages, limit 0, always
	// judged) or the threshold key ("THRESHOLD_P99_MS",
	// "THRESHOLD_CONNECTIONS").
	Name string `json:"name"`
	Run  string `json:"run"` // "<mode> at <rtt> ms", with the transport when not the default
	// Value is the figure measured and Limit the largest that passes,
	// in Unit ("messages", "ms", "connections"). Value is -1 when the
	// figure was not measured (a run without a reconciler verdict), which
	// fails.
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit"`
	Pass  bool    `json:"pass"`
	// Evidence is the result file that holds Value, relative to OUT.
	Evidence string `json:"evidence"`
	// Detail says more when the check failed ("" otherwise).
	Detail string `json:"detail,omitempty"`
}

// NewVerdict returns the Verdict of checks: "pass" when every one passed
// (and there is at least one).
func NewVerdict(checks []Check, prov *Provenance) Verdict {
	v := Verdict{Pass: len(checks) > 0, Checks: checks, Provenance: prov}
	for _, c := range checks {
		v.Pass = v.Pass && c.Pass
	}
	v.Verdict = "fail"
	if v.Pass {
		v.Verdict = "pass"
	}
	return v
}

// WriteVerdict writes v as indented JSON to dir/VerdictFile.
func WriteVerdict(dir string, v Verdict) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode verdict: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, VerdictFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write verdict: %w", err)
	}
	return nil
}

// ChecksPassed says how many checks a passed verdict holds: "the 1 check
// passed" or "all N checks passed".
func (v Verdict) ChecksPassed() string {
	if len(v.Checks) == 1 {
		return "the 1 check passed"
	}
	return fmt.Sprintf("all %d checks passed", len(v.Checks))
}
