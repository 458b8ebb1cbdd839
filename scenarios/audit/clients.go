package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// ThirdPartyClients are the WORKER names of the contract workers around
// HTTP clients nobody here wrote (workers/python, workers/java,
// workers/node READMEs), in the comparison page's order.
var ThirdPartyClients = []string{"python-requests", "python-session", "python-httpx", "java-okhttp", "java-apache", "node-axios", "node-got"}

// Files of the comparison page, written in the audits' parent folder.
const (
	ClientsMarkdown = "clients.md"
	ClientsHTML     = "clients.html"
)

// ClientRTT is one bench RTT of a client's audit, beside the Go worker's
// pooled run at the same RTT.
type ClientRTT struct {
	RTTMS       int     `json:"rtt_ms"`
	Connections int     `json:"connections"` // nginx $connection values carrying sends
	Sends       int     `json:"sends"`       // POSTs in nginx's log
	ConnPerSend float64 `json:"conn_per_send"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms"`
	CPUMS       float64 `json:"cpu_ms_per_send"`    // -1 = not measured
	GoCPUMS     float64 `json:"go_cpu_ms_per_send"` // the Go worker's pooled run; -1 = none
	GoP50MS     float64 `json:"go_p50_ms"`
	// NginxP50MS and CgroupCPUMS are the same sends from outside: nginx's
	// $request_time p50 and the container's cgroup CPU per send
	// (Figure); -1 = not seen.
	NginxP50MS  float64 `json:"nginx_p50_ms"`
	CgroupCPUMS float64 `json:"cgroup_cpu_ms_per_send"`
}

// ClientRow is one audit of the comparison: a client on a profile.
type ClientRow struct {
	Worker   string      `json:"worker"`
	Profile  string      `json:"profile"`
	Folder   string      `json:"folder"` // relative to the comparison's folder
	Date     string      `json:"date"`
	Count    int         `json:"count"` // bench COUNT of the audit
	Pass     bool        `json:"pass"`
	Failures []Rule      `json:"failures"`
	RTTs     []ClientRTT `json:"rtts"`
	// The rules the page shows as columns.
	Idle, Replay, ClientReplay, Stall, Duplicates, Lost, RecordsLost Rule
	FaultsPass, FaultsFail, FaultsNA                                 int
	FaultFailures                                                    []string // names of the failed fault scenarios
	Note                                                             ClientNote
	Machine                                                          string
	// Provenance is the audit run's (from its audit.json); nil for an
	// audit written before the lab recorded it.
	Provenance *results.Provenance `json:"provenance,omitempty"`
	// RaceFailures and RaceSends are the idle race's UNKNOWN or NOT_SENT
	// sends and all its sends; RaceFailures is -1 when the race did not run.
	RaceFailures, RaceSends int
	// Fix is what the audit of the row's fix says (FixedVariants); empty
	// on a fixed variant's own row.
	Fix   FixCheck        `json:"fix"`
	rules map[string]Rule // by rule ID
	// libRules are the rules evaluated without the fault runs of the
	// harness's known limits (harnessLimits): what the library alone
	// passes or fails, for checkFix.
	libRules map[string]Rule
}

// Comparison is the page: one row per audit of a third-party client with
// its defaults (Rows), and the audits of their fixed variants (Fixed,
// FixedClients), which verify the fixes and are not clients of their own.
type Comparison struct {
	Rows  []ClientRow `json:"rows"`
	Fixed []ClientRow `json:"fixed"`
	// Changes are the lines ("- ...") of parent/ChangesFile: the verdicts
	// that changed when the audits were last regenerated, written by
	// whoever regenerated them; none when the file is missing.
	Changes []string `json:"changes,omitempty"`
}

// ChangesFile lists, one "- " line each, the verdicts that changed when
// the committed audits were last regenerated (docs/auditing.md); the
// comparison page shows it under "Verdicts changed".
const ChangesFile = "verdict-changes.md"

// readChanges reads ChangesFile's "- " lines.
func readChanges(parent string) []string {
	b, err := os.ReadFile(filepath.Join(parent, ChangesFile))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
			out = append(out, v)
		}
	}
	return out
}

// Compare reads every audit folder under parent (parent/*/audit.json) of
// a ThirdPartyClients worker or of a FixedClients variant and re-evaluates
// its rules from its result files (Load, Evaluate), so the page needs no
// stack; each default's Fix comes from the audit of its fix on the same
// profile when one is there. Errors: a folder whose files do not parse; no
// audit of a third-party client.
func Compare(parent string) (Comparison, error) {
	var c Comparison
	paths, err := filepath.Glob(filepath.Join(parent, "*", RulesFile))
	if err != nil {
		return c, err
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return c, err
		}
		var old Report
		if err := json.Unmarshal(b, &old); err != nil {
			return c, fmt.Errorf("read %s: %w", p, err)
		}
		fixed := slices.Contains(FixedClients(), old.Worker)
		if !fixed && !slices.Contains(ThirdPartyClients, old.Worker) {
			continue
		}
		dir := filepath.Dir(p)
		row, err := compareRow(dir, old)
		if err != nil {
			return c, fmt.Errorf("%s: %w", dir, err)
		}
		row.Folder = filepath.Base(dir)
		if fixed {
			c.Fixed = append(c.Fixed, row)
		} else {
			c.Rows = append(c.Rows, row)
		}
	}
	if len(c.Rows) == 0 {
		return c, fmt.Errorf("no audit of a third-party client (%s) under %s", strings.Join(ThirdPartyClients, ", "), parent)
	}
	order := append(slices.Clone(ThirdPartyClients), FixedClients()...)
	for _, rows := range [][]ClientRow{c.Rows, c.Fixed} {
		slices.SortStableFunc(rows, func(a, b ClientRow) int {
			if d := slices.Index(order, a.Worker) - slices.Index(order, b.Worker); d != 0 {
				return d
			}
			return strings.Compare(a.Profile, b.Profile)
		})
	}
	for i := range c.Rows {
		var fixed *ClientRow
		for _, rows := range [][]ClientRow{c.Rows, c.Fixed} {
			for j := range rows {
				if rows[j].Worker == FixedVariants[c.Rows[i].Worker] && rows[j].Profile == c.Rows[i].Profile {
					fixed = &rows[j]
				}
			}
		}
		checkFix(&c.Rows[i], fixed)
	}
	c.Changes = readChanges(parent)
	return c, nil
}

func compareRow(dir string, old Report) (ClientRow, error) {
	keepalive := 0.0
	if rs, err := results.ReadResults(dir); err == nil {
		for _, r := range rs {
			if r.KeepaliveTimeoutS > 0 {
				keepalive = r.KeepaliveTimeoutS
				break
			}
		}
	}
	in, err := Load(dir, old.Worker, old.Profile, keepalive)
	if err != nil {
		return ClientRow{}, err
	}
	in.Errors = append(in.Errors, KeptErrors(dir, old)...)
	rules := Evaluate(in)
	row := ClientRow{Worker: old.Worker, Profile: old.Profile, Date: old.Date, Pass: Passed(rules), Note: clientNotes[old.Worker],
		Provenance: old.Provenance, RaceFailures: -1, rules: map[string]Rule{}, libRules: map[string]Rule{}}
	for _, r := range Evaluate(withoutHarnessLimits(in)) {
		row.libRules[r.ID] = r
	}
	if in.Race != nil {
		row.RaceFailures = 0
		for _, rr := range in.Race.Rows {
			row.RaceFailures += rr.Failures
			row.RaceSends += rr.Sends
		}
	}
	for _, r := range rules {
		row.rules[r.ID] = r
		switch {
		case r.Verdict == Fail:
			row.Failures = append(row.Failures, r)
		}
		switch {
		case r.ID == "idle-timeout":
			row.Idle = r
		case r.ID == "post-never-replayed":
			row.Replay = r
		case r.ID == "client-replay":
			row.ClientReplay = r
		case r.ID == "pool-stall":
			row.Stall = r
		case r.ID == "duplicates":
			row.Duplicates = r
		case r.ID == "lost-vendor-never-got":
			row.Lost = r
		case r.ID == "lost-records-missing":
			row.RecordsLost = r
		case strings.HasPrefix(r.ID, "fault-"):
			switch r.Verdict {
			case Pass:
				row.FaultsPass++
			case Fail:
				row.FaultsFail++
				row.FaultFailures = append(row.FaultFailures, strings.TrimPrefix(r.ID, "fault-"))
			default:
				row.FaultsNA++
			}
		}
	}
	goRuns := map[int]results.Result{}
	for _, r := range in.Bench {
		if r.Worker == vendormock.WorkerGo || r.Worker == "" {
			goRuns[r.RTTMS] = r
		}
	}
	for _, r := range in.workerRuns() {
		row.Count = r.Count
		if row.Machine == "" {
			e := r.Environment
			row.Machine = strings.TrimSpace(fmt.Sprintf("%d CPUs, kernel %s, %s images; %s", e.CPUs, e.Kernel, e.Images.Kind, e.HostNote))
		}
		rt := ClientRTT{RTTMS: r.RTTMS, Connections: r.TCPConnections, Sends: r.SendRequests, P50MS: r.LatencyMS.P50, P99MS: r.LatencyMS.P99,
			CPUMS: r.CPUMSPerSend, GoCPUMS: -1, GoP50MS: -1}
		if r.SendRequests > 0 {
			rt.ConnPerSend = float64(r.TCPConnections) / float64(r.SendRequests)
		}
		f := in.figure(r)
		rt.NginxP50MS, rt.CgroupCPUMS = f.NginxP50MS, f.CgroupCPUMSPerSend
		if g, ok := goRuns[r.RTTMS]; ok {
			rt.GoCPUMS, rt.GoP50MS = g.CPUMSPerSend, g.LatencyMS.P50
		}
		row.RTTs = append(row.RTTs, rt)
	}
	slices.SortFunc(row.RTTs, func(a, b ClientRTT) int { return a.RTTMS - b.RTTMS })
	return row, nil
}

// WriteComparison writes parent/clients.md and parent/clients.html.
func WriteComparison(parent string, c Comparison) error {
	if err := os.WriteFile(filepath.Join(parent, ClientsMarkdown), []byte(ComparisonMarkdown(c)), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ClientsMarkdown, err)
	}
	f, err := os.Create(filepath.Join(parent, ClientsHTML))
	if err != nil {
		return fmt.Errorf("write %s: %w", ClientsHTML, err)
	}
	if err := comparisonPage.Execute(f, c); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", ClientsHTML, err)
	}
	return f.Close()
}

// findingLine is a row's one line at the top of the page: the verdict and
// each failed rule with its evidence.
func findingLine(r ClientRow) string {
	if r.Pass {
		return fmt.Sprintf("%s on %s: PASS, no rule failed", r.Worker, r.Profile)
	}
	var parts, harness []string
	for _, f := range r.Failures {
		if why, ok := harnessLimits[f.ID]; ok {
			harness = append(harness, strings.TrimPrefix(f.ID, "fault-")+" ("+why+")")
			continue
		}
		parts = append(parts, f.Name+": "+f.summary())
	}
	line := fmt.Sprintf("%s on %s: FAIL %d rules", r.Worker, r.Profile, len(r.Failures))
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, " | ")
	} else {
		line += ", none about the library"
	}
	if len(harness) > 0 {
		line += "; the harness's known limits (docs/worker-contract.md#what-the-reference-workers-do-not-do, not the library): " + strings.Join(harness, ", ")
	}
	return line
}

// harnessLimits are the fault rules the contract workers' shared harness
// fails by design, whatever HTTP library it wraps
// (docs/worker-contract.md#what-the-reference-workers-do-not-do); their
// evidence stays on each audit's page.
var harnessLimits = map[string]string{
	"fault-broker-cut": "no broker reconnect",
	"fault-malformed":  "looser message validation",
	"contract":         "records and routing are the harness's, not the library's",
}

// withoutHarnessLimits is in without the fault runs the shared harness
// fails by design (harnessLimits' fault-* rules: broker-cut, malformed),
// so a rule such as "lost (records)" that fails only through them is
// judged on the library's own runs.
func withoutHarnessLimits(in Inputs) Inputs {
	in.Faults = slices.DeleteFunc(slices.Clone(in.Faults), func(v fault.Verdict) bool {
		_, harness := harnessLimits["fault-"+v.Name]
		return harness
	})
	return in
}

// ComparisonMarkdown returns clients.md: failures first (one line per
// client with evidence), what each library does by default with its
// source and fix, then the figures and the rules side by side.
func ComparisonMarkdown(c Comparison) string {
	var b strings.Builder
	b.WriteString("# Third-party HTTP clients on the vendor path\n\n")
	b.WriteString("Each row is one audit (`./run.sh audit WORKER=<client> PROFILE=<profile>`, or all of them with `./run.sh audit-clients`); rules and sources: docs/worker-contract.md#the-audit. Rebuilt offline from the result files with `./run.sh report results/audit`.\n\n")
	clientFailures(c).markdown(&b)
	if len(c.Changes) > 0 {
		b.WriteString("## Verdicts changed\n\nWhen the audits were last regenerated (" + ChangesFile + " names the commits):\n\n")
		for _, l := range c.Changes {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		b.WriteString("\n")
	}
	b.WriteString("## What each library does by default\n\n| client | default (library source) | what it costs here | fix (one line) | fix verified |\n|---|---|---|---|---|\n")
	seen := map[string]bool{}
	for _, r := range c.Rows {
		if seen[r.Worker] {
			continue
		}
		seen[r.Worker] = true
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Worker, mdCell(r.Note.Default), mdCell(r.Note.Cost), mdCell(r.Note.Fix), mdCell(fixVerifiedCell(c, r.Worker)))
	}
	b.WriteString("\n" + fixSummary(c) + "\n")
	b.WriteString("\n## With the fix applied\n\n")
	for _, l := range fixedLines(c) {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	b.WriteString("\n## Figures (bench: connections from nginx, latency and CPU from the worker's records, beside nginx's p50 and the container's cgroup CPU)\n\n")
	b.WriteString("| client | profile | COUNT | RTT ms | connections / sends | per send | p50 ms | p99 ms | nginx p50 ms | CPU ms/send | cgroup CPU ms/send | Go worker CPU ms/send | Go p50 ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range c.Rows {
		for _, t := range r.RTTs {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d / %d | %.3f | %.1f | %.1f | %s | %s | %s | %s | %s |\n", r.Worker, r.Profile, r.Count, t.RTTMS,
				t.Connections, t.Sends, t.ConnPerSend, t.P50MS, t.P99MS, msCell(t.NginxP50MS), cpuCell(t.CPUMS), cgroupCell(t.CgroupCPUMS), cpuCell(t.GoCPUMS), cpuCell(t.GoP50MS))
		}
	}
	b.WriteString("\n## Rules side by side\n\n| client | profile | idle race at its own idle timeout | re-sends on its own | POST repeated | stall | duplicates | lost (the vendor never got it) | lost (the worker's records miss it) | faults (pass / fail / n.a.) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range c.Rows {
		faults := fmt.Sprintf("%d / %d / %d", r.FaultsPass, r.FaultsFail, r.FaultsNA)
		if len(r.FaultFailures) > 0 {
			faults += ": failed " + strings.Join(r.FaultFailures, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Worker, r.Profile, ruleCell(r.Idle), ruleCell(r.ClientReplay),
			ruleCell(r.Replay), ruleCell(r.Stall), ruleCell(r.Duplicates), ruleCell(r.Lost), ruleCell(r.RecordsLost), faults)
	}
	b.WriteString("\nEach audit's own page (rules with full evidence, charts): ")
	var links []string
	for _, r := range append(slices.Clone(c.Rows), c.Fixed...) {
		links = append(links, fmt.Sprintf("[%s](%s/%s)", r.Folder, r.Folder, MarkdownFile))
	}
	b.WriteString(strings.Join(links, ", ") + ".\n")
	machines := map[string]bool{}
	for _, r := range c.Rows {
		if r.Machine != "" && !machines[r.Machine] {
			machines[r.Machine] = true
			fmt.Fprintf(&b, "\nMachine (%s): %s\n", r.Folder, r.Machine)
		}
	}
	b.WriteString(provenanceSection(slices.Concat(c.Rows, c.Fixed)))
	return b.String()
}

// provenanceSection lists where each row's audit came from: its commit
// (+dirty), date, command and the load at its start, or that it was not
// recorded; then whether all rows share one commit.
func provenanceSection(rows []ClientRow) string {
	var b strings.Builder
	b.WriteString("\n## Provenance\n\n| audit | commit | date | command | load at start |\n|---|---|---|---|---|\n")
	commits := map[string]bool{}
	for _, r := range rows {
		p := r.Provenance
		if p == nil {
			commits["not recorded"] = true
			fmt.Fprintf(&b, "| %s | not recorded | %s | - | - |\n", r.Folder, mdCell(r.Date))
			continue
		}
		commits[p.ShortCommit()] = true
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %.2f |\n", r.Folder, p.ShortCommit(), p.Date, mdCell(strings.Join(p.Command, " ")), p.Machine.LoadAvg1)
	}
	if len(commits) == 1 {
		for c := range commits {
			fmt.Fprintf(&b, "\nEvery audit on this page ran at commit %s.\n", c)
		}
	} else {
		fmt.Fprintf(&b, "\nThe audits on this page ran at %d different commits (or without a record): compare their figures with care.\n", len(commits))
	}
	return b.String()
}

func ruleCell(r Rule) string {
	if r.Verdict == "" {
		return "-"
	}
	return mdCell(r.Verdict + ": " + r.Evidence)
}

// KeptErrors returns the battery failures (rules "battery") of an earlier
// report of dir, so that a report rebuilt from the files still says so: a
// step that could not start its stack ("bench: start stack: ...",
// "faults: start stack: ...") while dir has no bench-*.json or no
// faults.json; any other (a delivery check that failed) always.
func KeptErrors(dir string, old Report) []string {
	has := func(pattern string) bool {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		return len(m) > 0
	}
	var out []string
	for _, r := range old.Rules {
		if r.ID != "battery" {
			continue
		}
		started := !strings.Contains(r.Evidence, "start stack:") // the step ran and found something: always kept
		switch {
		case !started && strings.HasPrefix(r.Evidence, "bench:") && has("bench-*.json"):
		case !started && strings.HasPrefix(r.Evidence, "faults:") && has("faults.json"):
		case strings.HasPrefix(r.Evidence, "no bench result"): // Load says it again
		default:
			out = append(out, r.Evidence)
		}
	}
	return out
}
