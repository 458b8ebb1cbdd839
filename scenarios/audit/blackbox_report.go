package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// BlackBoxReport is a black-box audit's page: the rules judged from
// outside, each scenario and probe with its evidence, and the rules that
// need a records file listed as not judged.
type BlackBoxReport struct {
	Mode      string           `json:"mode"` // "black-box"
	Image     string           `json:"image"`
	Profile   string           `json:"profile"`
	Consume   string           `json:"consume_queue"`
	Routes    []string         `json:"routes"`
	Pass      bool             `json:"pass"`
	Rules     []Rule           `json:"rules"`
	Runs      []BlackBoxResult `json:"runs"`
	NotJudged []Rule           `json:"not_judged"`
	// Probes is what the probes measured (also OUT/probes.json); nil when
	// they did not run (Only left them out).
	Probes     *Probes             `json:"probes,omitempty"`
	ProbeRows  []ProbeRow          `json:"probe_rows,omitempty"`
	Provenance *results.Provenance `json:"provenance,omitempty"`
}

// RecordsRules are the rules of the contract audit that read the
// worker's records file (docs/worker-contract.md#the-audit): in black-box
// mode each says "not judged: no records".
var RecordsRules = []Rule{
	{ID: "contract", Name: "Keeps the worker contract (records, routing, exit)", Source: "records file"},
	{ID: "client-replays", Name: "The client never re-sends a POST on its own (journal against the worker's recorded calls)", Source: "records file, journal"},
	{ID: "send-stall", Name: "No send stalls in the client (records' total_ms)", Source: "records file"},
	{ID: "lost-records-missing", Name: "No sent notification missing from the worker's records", Source: "records file, journal"},
	{ID: "outcomes", Name: "Each fault's outcomes (SENT, NOT_SENT, UNKNOWN...) as the worker classified them", Source: "records file"},
	{ID: "latency-cpu", Name: "Latency and CPU per send as the worker measures them (total_ms, cpu_ms)", Source: "records file"},
}

// NewBlackBoxReport judges the runs.
func NewBlackBoxReport(image, profile string, a *Adapter, runs []BlackBoxResult, prov *results.Provenance) BlackBoxReport {
	rep := BlackBoxReport{Mode: "black-box", Image: image, Profile: profile, Consume: a.Queues.Consume,
		Routes: a.Routes(), Runs: runs, Provenance: prov}
	var dups, lost, stuck, requeued, notRun []string
	measured := 0
	for _, r := range runs {
		t := r.Tally
		if t == nil {
			if r.Error != "" {
				notRun = append(notRun, r.Name+": "+r.Error)
			}
			continue
		}
		measured++
		for _, k := range t.Duplicates {
			dups = append(dups, r.Name+": "+k)
		}
		for _, k := range t.Lost {
			lost = append(lost, r.Name+": "+k)
		}
		for _, k := range t.Unhandled {
			stuck = append(stuck, r.Name+": "+k)
		}
		for _, k := range t.SentAndQueued {
			requeued = append(requeued, r.Name+": "+k)
		}
	}
	over := fmt.Sprintf("over %d scenarios", measured)
	if len(notRun) > 0 {
		over += "; not measured: " + strings.Join(notRun, "; ")
	}
	count := func(id, name, source string, found []string, what string) Rule {
		r := Rule{ID: id, Name: name, Source: source, Verdict: Pass}
		r.Summary = fmt.Sprintf("%d %s", len(found), what)
		if len(found) > 0 {
			r.Summary += ": " + firstKeys(found)
		}
		if len(found) > 0 || len(notRun) > 0 || measured == 0 {
			r.Verdict = Fail
		}
		r.Evidence = r.Summary + "; " + over
		return r
	}
	rep.Rules = append(rep.Rules,
		count("duplicates", "No notification sent twice", "WireMock's journal (sends per refkey, a 4xx answer not counted)", dups, "refkeys sent twice or more"),
		count("lost", "No notification lost (published; no send in the journal, in no queue)", "WireMock's journal, the broker's queues", lost, "lost"),
		count("handled", "Every message handled (none left in the consumed queue, taken and never acked)", "the broker's queues once the worker stopped", stuck, "never handled"),
		count("requeued-after-send", "No sent message queued again (it would be handled twice)", "WireMock's journal, the broker's queues", requeued, "sent and still queued"),
	)
	rep.Rules = append(rep.Rules, steadyRules(runs)...)
	for _, r := range runs {
		rep.Rules = append(rep.Rules, Rule{ID: "run-" + r.Name, Name: "Scenario or probe " + r.Name, Verdict: r.Verdict,
			Summary: r.Summary, Evidence: strings.Join(append([]string{r.Summary}, r.Evidence...), "; "), Source: "journal, nginx, queues"})
	}
	for _, r := range RecordsRules {
		r.Verdict, r.Summary, r.Evidence = NA, "not judged: no records", "not judged: no records (black-box mode reads no records file; docs/worker-contract.md#records is how a worker gets this rule)"
		if r.ID == "latency-cpu" {
			r.Evidence += "; " + outsideFigures(runs)
		}
		rep.NotJudged = append(rep.NotJudged, r)
	}
	rep.Pass = Passed(rep.Rules)
	return rep
}

// steadyRules are the steady scenario's connection and TLS rules, from
// nginx's log.
func steadyRules(runs []BlackBoxResult) []Rule {
	reuse := Rule{ID: "reuse", Name: "Reuses its connection", Source: "nginx's $connection", Verdict: NA, Summary: "unknown: the steady scenario did not run or nginx's log was not read"}
	tls := Rule{ID: "tls13", Name: "Negotiates TLS 1.3", Source: "nginx's $ssl_protocol", Verdict: NA, Summary: reuse.Summary}
	for _, r := range runs {
		if r.Name != "steady" || r.Nginx == nil || r.Nginx.Sends == 0 {
			continue
		}
		f := r.Nginx
		cps := f.NewConnectionsPerSend()
		reuse.Verdict = Pass
		if cps > ConnectionsPerSendMax {
			reuse.Verdict = Fail
		}
		reuse.Summary = fmt.Sprintf("%.2f new connections per send after the first (%d connections, %d sends, %d token calls, nginx's $connection; at most %.2f passes)", cps, f.Connections, f.Sends, f.Tokens, ConnectionsPerSendMax)
		if cps >= OneConnectionPerSend-0.05 {
			reuse.Summary += ": one new connection per send"
		}
		tls.Verdict = Pass
		if len(f.TLS) != 1 || f.TLS[0] != "TLSv1.3" {
			tls.Verdict = Fail
		}
		tls.Summary = "seen: " + strings.Join(f.TLS, ", ")
	}
	reuse.Evidence, tls.Evidence = reuse.Summary, tls.Summary
	return []Rule{reuse, tls}
}

// Headline is the verdict line: "PASS: ..." or "FAIL: n of m rules".
func (rep BlackBoxReport) Headline() string {
	failed := 0
	for _, r := range rep.Rules {
		if r.Verdict == Fail {
			failed++
		}
	}
	if rep.Pass {
		return fmt.Sprintf("PASS: %s on %s, black-box: every rule judged from outside passed (%d rules need records: not judged)", rep.Image, rep.Profile, len(rep.NotJudged))
	}
	return fmt.Sprintf("FAIL: %s on %s, black-box: %d of %d rules failed", rep.Image, rep.Profile, failed, len(rep.Rules))
}

// Markdown renders the page: the verdict, failures first, the rules, each
// scenario's evidence, and the rules not judged.
func (rep BlackBoxReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Black-box audit: %s on %s\n\n", rep.Image, rep.Profile)
	if rep.Provenance != nil {
		b.WriteString(rep.Provenance.Header())
	}
	fmt.Fprintf(&b, "**%s**\n\n", rep.Headline())
	fmt.Fprintf(&b, "Judged from outside only: WireMock's journal, nginx's access log and the broker's queues (`%s` consumed; routes: %s). No records file is read.\n\n",
		rep.Consume, cmpOrNone(rep.Routes))
	var fails []string
	for _, r := range rep.Rules {
		if r.Verdict == Fail {
			fails = append(fails, fmt.Sprintf("- **%s**: FAIL: %s", r.Name, cellText(r.Evidence)))
		}
	}
	if len(fails) > 0 {
		b.WriteString("## Failures\n\n" + strings.Join(fails, "\n") + "\n\n")
	}
	b.WriteString("## Rules\n\n| rule | verdict | evidence | source |\n|---|---|---|---|\n")
	for _, r := range rep.Rules {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.Name, r.Verdict, cellText(r.Evidence), r.Source)
	}
	if rep.ProbeRows != nil {
		probesMarkdown(&b, rep.ProbeRows)
		b.WriteString("\nEach probe started its own container of the image; their stdout and stderr: `" + BlackBoxProbesName + "/worker.log`.\n")
	}
	b.WriteString("\n## Scenarios and probes\n\n")
	for _, r := range rep.Runs {
		fmt.Fprintf(&b, "### %s: %s\n\n%s\n\n- %s\n", r.Name, r.Verdict, r.Description, r.Summary)
		for _, e := range r.Evidence {
			fmt.Fprintf(&b, "- %s\n", e)
		}
		fmt.Fprintf(&b, "- took %.0f s; the worker's stdout and stderr: `%s/worker.log`\n\n", r.Seconds, r.Name)
	}
	b.WriteString("## Not judged: no records\n\nThese rules read the worker's records file ([docs/worker-contract.md](../../../docs/worker-contract.md#records)); a worker that writes it is audited with them by `./run.sh audit WORKER=image:NAME`.\n\n")
	for _, r := range rep.NotJudged {
		fmt.Fprintf(&b, "- %s (%s): not judged: no records\n", r.Name, r.Source)
	}
	return b.String()
}

// cmpOrNone joins names, "none" for none.
func cmpOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := slices.Clone(names)
	for i := range q {
		q[i] = "`" + q[i] + "`"
	}
	return strings.Join(q, ", ")
}

// cellText makes s safe in a markdown table cell.
func cellText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}

// WriteBlackBox writes OUT/audit.md and OUT/audit.json.
func WriteBlackBox(out string, rep BlackBoxReport) error {
	j, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode black-box report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, BlackBoxJSONFile), append(j, '\n'), 0o644); err != nil {
		return fmt.Errorf("write black-box report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, MarkdownFile), []byte(rep.Markdown()), 0o644); err != nil {
		return fmt.Errorf("write black-box report: %w", err)
	}
	return nil
}

// BlackBoxJSONFile is a black-box audit's machine-readable report (not
// audit.json, which is a contract audit's; `./run.sh report` rebuilds
// either: RejudgeBlackBox).
const BlackBoxJSONFile = "blackbox.json"

// outsideFigures is the latency and CPU the lab saw from outside in the
// steady scenario: nginx's send p50/p99 ($request_time) and the worker
// container's cgroup CPU per send after the first; "not seen" for each
// it could not read.
func outsideFigures(runs []BlackBoxResult) string {
	p50, p99, cpu := -1.0, -1.0, -1.0
	for _, r := range runs {
		if r.Name != "steady" {
			continue
		}
		if f := r.Nginx; f != nil && f.Sends > 0 {
			p50, p99 = f.P50MS, f.P99MS
		}
		cpu = r.CgroupCPUMSPerSend
	}
	return fmt.Sprintf("from outside (steady): nginx send p50 %s ms, p99 %s ms ($request_time, server side); the container's CPU %s ms per send after the first (cgroup)",
		msCell(p50), msCell(p99), cgroupCell(cpu))
}

// RejudgeBlackBox rebuilds a black-box audit folder's report from what
// the run measured, offline: its scenarios' and probes' results in
// blackbox.json and the adapter.yaml the run copied, judged again by
// today's rules, and written back (audit.md, blackbox.json; its
// provenance kept). The vendor keep-alive the probes are judged against
// is the one the idle probe recorded. Errors: a file missing or
// malformed, or the adapter no longer valid.
func RejudgeBlackBox(dir string) (BlackBoxReport, error) {
	b, err := os.ReadFile(filepath.Join(dir, BlackBoxJSONFile))
	if err != nil {
		return BlackBoxReport{}, fmt.Errorf("read black-box report: %w", err)
	}
	var old BlackBoxReport
	if err := json.Unmarshal(b, &old); err != nil {
		return BlackBoxReport{}, fmt.Errorf("read black-box report: %s: %w", filepath.Join(dir, BlackBoxJSONFile), err)
	}
	a, err := LoadAdapter(filepath.Join(dir, "adapter.yaml"))
	if err != nil {
		return BlackBoxReport{}, err
	}
	rep := NewBlackBoxReport(old.Image, old.Profile, a, old.Runs, old.Provenance)
	if old.Probes != nil {
		var keepalive time.Duration
		if old.Probes.Idle != nil {
			keepalive = time.Duration(old.Probes.Idle.KeepaliveS * float64(time.Second))
		}
		rep.addProbes(old.Probes, keepalive)
	}
	return rep, WriteBlackBox(dir, rep)
}
