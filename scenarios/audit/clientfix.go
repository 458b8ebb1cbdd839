package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// FixedVariants maps each ThirdPartyClients worker to the WORKER whose
// audit verifies its one-line fix (ClientNote.Fix): its "-fixed" variant
// (vendormock.FixedSuffix; the worker READMEs' "Fixed variants"), or for
// python-requests python-session, since its fix, one requests.Session, is
// exactly that worker.
var FixedVariants = map[string]string{
	"python-requests": "python-session",
	"python-session":  "python-session" + vendormock.FixedSuffix,
	"python-httpx":    "python-httpx" + vendormock.FixedSuffix,
	"java-okhttp":     "java-okhttp" + vendormock.FixedSuffix,
	"java-apache":     "java-apache" + vendormock.FixedSuffix,
	"node-axios":      "node-axios" + vendormock.FixedSuffix,
	"node-got":        "node-got" + vendormock.FixedSuffix,
}

// FixedClients returns the fixed variants to audit after the defaults
// (`./run.sh audit-clients FIXED=1`), in ThirdPartyClients order, without
// the fixes that are themselves a default (python-session).
func FixedClients() []string {
	var out []string
	for _, w := range ThirdPartyClients {
		if f := FixedVariants[w]; f != "" && !slices.Contains(ThirdPartyClients, f) {
			out = append(out, f)
		}
	}
	return out
}

// FixCheck is what the audit of a fix says about the rules its default
// failed: the "fix verified" column of the comparison.
type FixCheck struct {
	Fixed  string `json:"fixed"`  // WORKER of the fix (FixedVariants)
	Folder string `json:"folder"` // its audit folder; "" = not re-run
	// Rules are the library rules (not the harness's limits) the default
	// failed, each with its verdict in the fixed run: "idle timeout rule PASS".
	Rules []string `json:"rules"`
	// Still are the rules of Rules that still fail; New the library rules
	// the fixed run fails that the default did not fail (passed, or did not
	// run).
	Still, New   []string
	RaceFailures int  `json:"race_failures"` // the fixed run's idle race; -1 = not run
	RaceSends    int  `json:"race_sends"`
	Verified     bool `json:"verified"` // re-run, and every rule of Rules passes
}

// ruleShort names a rule in the "fix verified" column.
var ruleShort = map[string]string{
	"idle-timeout":          "idle timeout rule",
	"client-replay":         "client re-sends",
	"post-never-replayed":   "POST repeated",
	"connections-per-send":  "connection reuse",
	"pool-stall":            "stall",
	"duplicates":            "duplicates",
	"lost-vendor-never-got": "lost (vendor)",
	"lost-records-missing":  "lost (records)",
	"tls-version":           "TLS 1.3",
}

// libraryRule reports whether a rule's failure is about the library (not
// the battery, not the harness's known limits).
func libraryRule(id string) bool {
	_, harness := harnessLimits[id]
	return !harness && id != "battery"
}

// checkFix fills def.Fix from the fixed run (nil = not re-run).
func checkFix(def *ClientRow, fixed *ClientRow) {
	fc := FixCheck{Fixed: FixedVariants[def.Worker], RaceFailures: -1}
	// The rules the default fails on the library's own runs (not only
	// through the harness's known limits), judged again on the fixed run
	// the same way.
	failed := map[string]bool{}
	for id, r := range def.libRules {
		if r.Verdict == Fail && libraryRule(id) {
			failed[id] = true
		}
	}
	if fixed == nil {
		def.Fix = fc
		return
	}
	fc.Folder, fc.RaceFailures, fc.RaceSends = fixed.Folder, fixed.RaceFailures, fixed.RaceSends
	for _, id := range slices.Sorted(maps.Keys(failed)) {
		fr := fixed.libRules[id]
		v := cmpOr(fr.Verdict, "not evaluated")
		line := shortName(id) + " " + v
		if v == Fail {
			// Why it still fails: the fixed run's evidence may name a cause
			// other than the default's (a harness limit, another fault).
			line += " (" + clip(fr.summary(), 160) + ")"
		}
		fc.Rules = append(fc.Rules, line)
		if v != Pass {
			fc.Still = append(fc.Still, shortName(id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(fixed.libRules)) {
		if fixed.libRules[id].Verdict == Fail && libraryRule(id) && !failed[id] {
			fc.New = append(fc.New, shortName(id))
		}
	}
	fc.Verified = len(fc.Still) == 0
	def.Fix = fc
}

func shortName(id string) string {
	if s, ok := ruleShort[id]; ok {
		return s
	}
	return strings.TrimPrefix(id, "fault-")
}

// clip shortens s to about n bytes, at a word, with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndex(s[:n], " "); i > 0 {
		n = i
	}
	return s[:n] + " ..."
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// fixText is the "fix verified" cell of a default's row.
func fixText(r ClientRow) string {
	fc := r.Fix
	if fc.Folder == "" {
		return fmt.Sprintf("not re-run (no %s-%s audit)", fc.Fixed, r.Profile)
	}
	var parts []string
	if len(fc.Rules) == 0 {
		parts = append(parts, "the default failed no rule about the library")
	} else {
		parts = append(parts, strings.Join(fc.Rules, ", "))
	}
	if fc.RaceFailures >= 0 {
		parts = append(parts, fmt.Sprintf("idle race %d failures in %d sends", fc.RaceFailures, fc.RaceSends))
	}
	verdict := "verified"
	if !fc.Verified {
		verdict = "NOT verified (still failing: " + strings.Join(fc.Still, ", ") + ")"
	}
	s := verdict + ": " + strings.Join(parts, ", ")
	if len(fc.New) > 0 {
		s += "; the fixed run also fails (the default did not fail it, or did not run it): " + strings.Join(fc.New, ", ")
	}
	return s + " (" + fc.Folder + ")"
}

// fixVerifiedCell is fixText for every profile of worker, "; "-joined.
func fixVerifiedCell(c Comparison, worker string) string {
	var parts []string
	for _, r := range c.Rows {
		if r.Worker == worker {
			parts = append(parts, r.Profile+": "+fixText(r))
		}
	}
	return strings.Join(parts, "; ")
}

// fixSummary replaces "not re-run" with what the folders hold: how many
// fixes were re-run, which are verified, which not, which not re-run.
func fixSummary(c Comparison) string {
	var verified, not, missing []string
	for _, r := range c.Rows {
		name := r.Worker + " on " + r.Profile
		switch {
		case r.Fix.Folder == "":
			missing = append(missing, name)
		case r.Fix.Verified:
			verified = append(verified, name)
		default:
			not = append(not, name)
		}
	}
	rerun := len(verified) + len(not)
	s := fmt.Sprintf("The fixes are the libraries' documented settings (the worker READMEs' \"Fixed variants\"). Re-run with the fix applied: %d of %d", rerun, len(c.Rows))
	if len(verified) > 0 {
		s += "; verified (every rule about the library that the default failed passes, judged without the harness's broker-cut and malformed runs): " + strings.Join(verified, ", ")
	}
	if len(not) > 0 {
		s += "; not verified (a rule still fails): " + strings.Join(not, ", ")
	}
	if len(missing) > 0 {
		s += "; not re-run: " + strings.Join(missing, ", ") + " (`./run.sh audit-clients FIXED=1` audits the fixed variants)"
	}
	return s + "."
}

// fixedLines are the "With the fix applied" section: one line per fixed
// variant's audit (not a client of its own), and the fix that is itself a
// default.
func fixedLines(c Comparison) []string {
	var out []string
	for _, r := range c.Fixed {
		of := strings.TrimSuffix(r.Worker, vendormock.FixedSuffix)
		out = append(out, findingLine(r)+" (the fix of "+of+": "+clientNotes[of].Fix+")")
	}
	for _, w := range ThirdPartyClients {
		if f := FixedVariants[w]; slices.Contains(ThirdPartyClients, f) {
			out = append(out, fmt.Sprintf("%s: its fix (%s) is %s, a client of its own above", w, clientNotes[w].Fix, f))
		}
	}
	return out
}
