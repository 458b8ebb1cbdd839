package fault

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// FaultsFile is the content of results/faults.json.
type FaultsFile struct {
	Date   string    `json:"date"`
	Faults []Verdict `json:"faults"`
	// Pass is true when every fault passed.
	Pass bool `json:"pass"`
	// Provenance is the last writing run's commit, command line, machine,
	// images and date; nil in files written before it existed.
	Provenance *results.Provenance `json:"provenance,omitempty"`
}

// WriteFaults writes OUT/faults.json and OUT/faults.md, appends (or
// replaces) a faults section in OUT/summary.md that links to them, and
// prints the table to w. Faults of earlier runs with other names stay in
// faults.json (a scenario run alone replaces its own entry only). prov
// (nil for none) is recorded in faults.json as the writing run's.
func WriteFaults(out string, vs []Verdict, prov *results.Provenance, w io.Writer) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create results dir: %w", err)
	}
	path := filepath.Join(out, "faults.json")
	merged := mergeVerdicts(path, vs)
	f := FaultsFile{Date: time.Now().UTC().Format(time.RFC3339), Faults: merged, Pass: true, Provenance: prov}
	for _, v := range merged {
		f.Pass = f.Pass && v.Pass
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode faults: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write faults: %w", err)
	}
	if err := writeFaultsPage(out, merged, prov); err != nil {
		return err
	}
	if err := appendSection(filepath.Join(out, "summary.md"), "faults", faultsSection(merged), prov); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return WriteFaultsTable(w, vs, false)
}

// writeFaultsPage writes OUT/faults.md: the provenance header (prov, nil
// for none) and the table of vs.
func writeFaultsPage(out string, vs []Verdict, prov *results.Provenance) error {
	var md strings.Builder
	md.WriteString("# Fault scenarios\n\n" + prov.Header() + "Each fault of `scenarios/catalog/` run through the real RabbitMQ, Toxiproxy, nginx and WireMock, then reconciled (`./run.sh SCENARIO=all`). Observed: where each published message ended; journal: POSTs that reached WireMock.\n\n")
	if err := WriteFaultsTable(&md, vs, true); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "faults.md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write faults.md: %w", err)
	}
	return nil
}

// mergeVerdicts keeps earlier verdicts of other scenarios from path.
func mergeVerdicts(path string, vs []Verdict) []Verdict {
	var old FaultsFile
	if b, err := os.ReadFile(path); err == nil {
		if json.Unmarshal(b, &old) != nil {
			old = FaultsFile{} // unreadable: start afresh rather than keep half of it
		}
	}
	seen := map[string]bool{}
	for _, v := range vs {
		seen[v.Name] = true
	}
	var out []Verdict
	for _, v := range old.Faults {
		if !seen[v.Name] {
			out = append(out, v)
		}
	}
	out = append(out, vs...)
	slices.SortStableFunc(out, func(a, b Verdict) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// WriteFaultsTable writes one row per fault: as a Markdown table when md,
// else aligned text.
func WriteFaultsTable(w io.Writer, vs []Verdict, md bool) error {
	head := []string{"fault", "tool", "expected", "observed", "journal", "checks", "dup", "lost", "unknown left", "settle p50/p99", "pass"}
	rows := [][]string{}
	for _, v := range vs {
		exp := formatExpected(v.Expected.Outcomes)
		if v.Expected.Journal != nil {
			exp += ", journal " + v.Expected.Journal.String()
		}
		if v.Expected.Duplicates > 0 {
			exp += fmt.Sprintf(", duplicates %d (planted)", v.Expected.Duplicates)
		}
		if v.Expected.Lost > 0 {
			exp += fmt.Sprintf(", lost %d (planted)", v.Expected.Lost)
		}
		checks := "-"
		var cs []string
		for _, c := range v.Checks {
			if strings.HasPrefix(c.What, "journal") {
				cs = append(cs, fmt.Sprintf("journal %d at step %d (want %s)", c.Got, c.Step, c.Want))
				continue
			}
			cs = append(cs, fmt.Sprintf("%s: %d (want %s)", c.What, c.Got, c.Want))
		}
		if len(cs) > 0 {
			checks = strings.Join(cs, "; ")
		}
		rows = append(rows, []string{v.Name, v.Tool, exp, formatCounts(v.Observed), fmt.Sprint(v.JournalCount), checks,
			fmt.Sprint(v.Duplicates), fmt.Sprint(v.Lost), fmt.Sprint(v.UnknownLeft), settleCell(v), verdictWord(v)})
	}
	if md {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		for _, v := range vs {
			if v.Void != "" {
				fmt.Fprintf(w, "\n%s void (the lab's doing, not the worker's): %s\n", v.Name, v.Void)
			} else if !v.Pass {
				fmt.Fprintf(w, "\n%s failed: %s\n", v.Name, strings.Join(v.Failures, "; "))
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pass := 0
	for _, v := range vs {
		switch {
		case v.Pass:
			pass++
		case v.Void != "":
			fmt.Fprintf(w, "%s void (the lab's doing, not the worker's): %s\n", v.Name, v.Void)
		default:
			fmt.Fprintf(w, "%s failed: %s\n", v.Name, strings.Join(v.Failures, "; "))
		}
	}
	_, err := fmt.Fprintf(w, "%d of %d faults passed\n", pass, len(vs))
	return err
}

func faultsSection(vs []Verdict) string {
	pass, dup, lost := 0, 0, 0
	for _, v := range vs {
		if v.Pass {
			pass++
		}
		dup += v.Duplicates
		lost += v.Lost
	}
	return fmt.Sprintf("## Fault scenarios\n\n%d of %d faults passed; %d duplicates and %d lost across all of them. Per fault: [faults.md](faults.md), data: [faults.json](faults.json).\n", pass, len(vs), dup, lost)
}

// appendSection replaces the section between "<!-- name:begin -->" and
// "<!-- name:end -->" in path (creating the file or appending the section
// when absent), leaving the rest of the file as it was.
//
// A summary.md that does not start with a title (a new one, or one only
// these sections wrote: a folder of fault runs without a bench) gets
// "# Summary" and prov's provenance header first.
func appendSection(path, name, body string, prov *results.Provenance) error {
	begin, end := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	block := begin + "\n" + strings.TrimRight(body, "\n") + "\n" + end + "\n"
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	s := string(old)
	if !strings.HasPrefix(s, "# ") {
		s = "# Summary\n\n" + prov.Header() + strings.TrimLeft(s, "\n")
	}
	if i := strings.Index(s, begin); i >= 0 {
		if j := strings.Index(s[i:], end); j >= 0 {
			s = s[:i] + block + strings.TrimPrefix(s[i+j+len(end):], "\n")
		}
	} else {
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			s = strings.TrimRight(s, "\n") + "\n\n"
		}
		s += block
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// settleCell is the time to settle of v's UNKNOWN settled by a vendor
// report: "p50 / p99 ms (n, by source)", "-" when none.
func settleCell(v Verdict) string {
	t := v.TimeToSettle
	if t == nil {
		return "-"
	}
	var by []string
	for _, k := range sortedKeys(v.SettledBy) {
		by = append(by, fmt.Sprintf("%s %d", k, v.SettledBy[k]))
	}
	return fmt.Sprintf("%.0f / %.0f ms (n %d; %s)", t.P50MS, t.P99MS, t.N, strings.Join(by, ", "))
}
