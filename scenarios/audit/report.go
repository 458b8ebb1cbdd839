package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Files of an audit folder (results/audit/<worker>-<profile>/).
const (
	MarkdownFile = "audit.md"
	HTMLFile     = "audit.html"
	RulesFile    = "audit.json"
	// RaceName is the audit's idle race (fault.AuditIdleRace): its files
	// are RaceName.json and charts/RaceName.svg.
	RaceName = "audit-idle-race"
)

// Figure is one bench run in the audit's figures table, each figure with
// where it comes from.
type Figure struct {
	Worker       string  `json:"worker"`
	RTTMS        int     `json:"rtt_ms"`
	SendsPerS    float64 `json:"sends_per_s"`
	P50MS        float64 `json:"p50_ms"`
	P99MS        float64 `json:"p99_ms"`
	CPUMSPerSend float64 `json:"cpu_ms_per_send"` // -1 = not measured
	Connections  int     `json:"connections"`
	Sends        int     `json:"sends"`
	TLS          string  `json:"tls"`
	// LatencySource and CPUSource say where latency and CPU come from
	// (results.Source* values); connections and TLS always come from
	// nginx.
	LatencySource string `json:"latency_source"`
	CPUSource     string `json:"cpu_source"`
	// NginxP50MS and NginxP99MS are nginx's $request_time of the sends,
	// ms (nginxLatency); -1 = not seen.
	NginxP50MS float64 `json:"nginx_p50_ms"`
	NginxP99MS float64 `json:"nginx_p99_ms"`
	// CgroupCPUMSPerSend is the worker container's CPU per measured send
	// from its cgroup, ms (results.Result.WorkerCgroupCPUMSPerSend); -1 =
	// not seen.
	CgroupCPUMSPerSend float64 `json:"cgroup_cpu_ms_per_send"`
	// SelfCheck is the worker's own latency and CPU against nginx's and
	// the cgroup's (selfCheck), a clause with "DISAGREES" for each off
	// beyond the tolerances.
	SelfCheck string `json:"self_check"`
}

// Chart is one SVG chart of the audit, inlined in the HTML page.
type Chart struct {
	Title string `json:"title"`
	File  string `json:"file"` // relative to the audit folder
	SVG   string `json:"-"`    // the <svg> element, XML prolog removed
	// drawn is the file's bytes when the report drew the chart itself
	// (raceChartByRTT); Write writes it to File.
	drawn []byte
}

// Report is one audit: the rules, the figures and the charts.
type Report struct {
	Worker  string   `json:"worker"`
	Profile string   `json:"profile"`
	Date    string   `json:"date"`
	Pass    bool     `json:"pass"`
	Rules   []Rule   `json:"rules"`
	Figures []Figure `json:"figures"`
	Charts  []Chart  `json:"charts"`
	// Probes are the probes table's lines (probes.json).
	Probes   []ProbeRow `json:"probes"`
	Progress []string   `json:"-"`
	// Provenance is the audit run's commit, command line, machine, images
	// and date; nil in reports written before it existed.
	Provenance *results.Provenance `json:"provenance,omitempty"`
	// ProbesProvenance is probes.json's when the probes ran on their own
	// (./run.sh audit-probes) after the audit; the page names both runs.
	ProbesProvenance *results.Provenance `json:"probes_provenance,omitempty"`
}

// NewReport evaluates in (Evaluate) and gathers the figures and the
// charts of dir (charts/*.svg written by the bench and the idle race).
func NewReport(dir string, in Inputs, date string) (Report, error) {
	if in.Dir == "" {
		in.Dir = dir
	}
	rep := Report{Worker: in.Worker, Profile: in.Profile, Date: date, Rules: Evaluate(in), Probes: probeRows(in)}
	rep.Pass = Passed(rep.Rules)
	if in.Probes != nil {
		rep.ProbesProvenance = in.Probes.Provenance
	}
	for _, r := range in.Bench {
		rep.Figures = append(rep.Figures, in.figure(r))
	}
	charts := []Chart{
		{Title: "Connections carrying sends (nginx)", File: "charts/tcp-connections.svg"},
		{Title: "Worker CPU per send", File: "charts/cpu-per-send.svg"},
		{Title: "p50 send latency", File: "charts/latency-p50.svg"},
		{Title: "p99 send latency", File: "charts/latency-p99.svg"},
		{Title: "Throughput", File: "charts/sends-per-s.svg"},
		{Title: "Idle race: failures per 1,000 sends", File: "charts/" + RaceName + ".svg"},
	}
	for _, c := range charts {
		var b []byte
		var err error
		if c.File == "charts/"+RaceName+".svg" && in.Race != nil && !raceHasIdle(*in.Race) {
			// The idle race's chart has no point for lanes without an
			// idle timeout: the audit draws its own.
			b, err = raceChartByRTT(in.Worker, *in.Race)
			c.drawn = b
		} else {
			b, err = os.ReadFile(filepath.Join(dir, c.File))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
		}
		if err != nil {
			return Report{}, fmt.Errorf("read chart: %w", err)
		}
		svg, err := inlineSVG(b)
		if err != nil {
			return Report{}, fmt.Errorf("chart %s: %w", c.File, err)
		}
		c.SVG = svg
		rep.Charts = append(rep.Charts, c)
	}
	return rep, nil
}

func figureOf(r results.Result) Figure {
	f := Figure{Worker: r.Worker, RTTMS: r.RTTMS, SendsPerS: r.SendsPerS, P50MS: r.LatencyMS.P50, P99MS: r.LatencyMS.P99,
		CPUMSPerSend: r.CPUMSPerSend, Connections: r.TCPConnections, Sends: r.SendRequests,
		LatencySource: results.SourceRecords + " (total_ms)", CPUSource: results.SourceRecords + " (cpu_ms)"}
	if f.Worker == "" {
		f.Worker = vendormock.WorkerGo
	}
	if f.Worker == vendormock.WorkerGo {
		f.Worker += " (" + r.Mode + ")"
	}
	if r.Contract != nil {
		f.LatencySource = r.Contract.Sources["latency p50/p99, sends/s"]
		f.CPUSource = r.Contract.Sources["CPU per send"]
	}
	var tls []string
	for _, v := range []string{"TLSv1.3", "TLSv1.2"} {
		if n := r.TLSVersions[v]; n > 0 {
			tls = append(tls, fmt.Sprintf("%s %d", strings.TrimPrefix(v, "TLSv"), n))
		}
	}
	f.TLS = strings.Join(tls, ", ")
	return f
}

var svgStartRE = regexp.MustCompile(`(?s)^.*?(<svg[\s>])`)

// inlineSVG returns the <svg> element of an SVG file, without the XML
// prolog and comments before it. Errors: no <svg element.
func inlineSVG(b []byte) (string, error) {
	loc := svgStartRE.FindSubmatchIndex(b)
	if loc == nil {
		return "", fmt.Errorf("no <svg> element")
	}
	return string(bytes.TrimSpace(b[loc[2]:])), nil
}

// Load reads an audit folder's result files: bench-*.json (none is an
// error recorded in Inputs.Errors, not returned), faults.json and
// faults-not-applicable.json and RaceName.json when present. Errors: a
// file that exists but does not parse.
func Load(dir, worker, profile string, keepaliveS float64) (Inputs, error) {
	in := Inputs{Worker: worker, Profile: profile, KeepaliveS: keepaliveS, Dir: dir}
	if bench, err := results.ReadResults(dir); err == nil {
		in.Bench = bench
	} else {
		in.Errors = append(in.Errors, "no bench result: "+err.Error())
	}
	var ff fault.FaultsFile
	if err := readJSON(filepath.Join(dir, "faults.json"), &ff); err != nil {
		return in, err
	}
	in.Faults = ff.Faults
	na, err := fault.ReadNotApplicable(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return in, err
	}
	in.NotApplicable = na
	var race fault.IdleRaceResult
	if err := readJSON(filepath.Join(dir, RaceName+".json"), &race); err != nil {
		return in, err
	}
	if race.Scenario != "" {
		in.Race = &race
	}
	var probes Probes
	if err := readJSON(filepath.Join(dir, ProbesFile), &probes); err != nil {
		return in, err
	}
	if probes.Date != "" {
		in.Probes = &probes
	}
	return in, nil
}

// readJSON decodes path into v; a missing file leaves v as it is.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", filepath.Base(path), err)
	}
	return nil
}

// Write writes dir/audit.md, dir/audit.html and dir/audit.json for rep,
// and the charts the report drew itself (Chart.drawn) under dir/charts.
func Write(dir string, rep Report) error {
	for _, c := range rep.Charts {
		if c.drawn == nil {
			continue
		}
		p := filepath.Join(dir, c.File)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write chart: %w", err)
		}
		if err := os.WriteFile(p, c.drawn, 0o644); err != nil {
			return fmt.Errorf("write chart: %w", err)
		}
	}
	md := Markdown(rep)
	if err := os.WriteFile(filepath.Join(dir, MarkdownFile), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", MarkdownFile, err)
	}
	var h bytes.Buffer
	if err := HTML(&h, rep); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, HTMLFile), h.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", HTMLFile, err)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode audit: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, RulesFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", RulesFile, err)
	}
	return nil
}

// verdictLine is the audit's one-line result.
func verdictLine(rep Report) string {
	pass, fail, na := 0, 0, 0
	for _, r := range rep.Rules {
		switch r.Verdict {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			na++
		}
	}
	word := "PASSES"
	if !rep.Pass {
		word = "FAILS"
	}
	return fmt.Sprintf("Worker %s on profile %s %s the audit: %d rules passed, %d failed, %d not applicable.", rep.Worker, rep.Profile, word, pass, fail, na)
}

// Markdown returns audit.md: the verdict, the failures (one line per
// failed rule with its evidence), the rules table, the figures table with
// its sources, and links to the charts.
func Markdown(rep Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Audit: worker %s, profile %s\n\n%s", rep.Worker, rep.Profile, rep.Provenance.Header())
	if pp := rep.ProbesProvenance; pp != nil && (rep.Provenance == nil || pp.RunID != rep.Provenance.RunID) {
		fmt.Fprintf(&b, "Probes (probes.json) re-run on their own: run %s at commit %s, %s, `%s`, load %.2f at start.\n\n",
			pp.RunID, pp.ShortCommit(), pp.Date, pp.CommandLine(), pp.Machine.LoadAvg1)
	}
	fmt.Fprintf(&b, "%s\n\n", verdictLine(rep))
	if rep.Date != "" {
		fmt.Fprintf(&b, "Date: %s. Rules and sources: docs/worker-contract.md.\n\n", rep.Date)
	}
	auditFailures(rep).markdown(&b)
	b.WriteString("## Rules\n\n| rule | verdict | evidence | source |\n|---|---|---|---|\n")
	for _, r := range rep.Rules {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(r.Name), r.Verdict, mdCell(r.Evidence), mdCell(r.Source))
	}
	probesMarkdown(&b, rep.Probes)
	b.WriteString("\n## Figures\n\n" + figuresIntro + "\n\n")
	b.WriteString("| worker | RTT ms | sends/s | p50 ms | p99 ms | nginx p50 / p99 ms | CPU ms/send | cgroup CPU ms/send | connections | sends | TLS | latency source | CPU source | own figures vs outside |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, f := range rep.Figures {
		fmt.Fprintf(&b, "| %s | %d | %.1f | %s | %s | %s / %s | %s | %s | %d | %d | %s | %s | %s | %s |\n", f.Worker, f.RTTMS, f.SendsPerS, ownMS(f.P50MS), ownMS(f.P99MS),
			msCell(f.NginxP50MS), msCell(f.NginxP99MS), cpuCell(f.CPUMSPerSend), cgroupCell(f.CgroupCPUMSPerSend), f.Connections, f.Sends, dash(f.TLS), f.LatencySource, f.CPUSource, mdCell(dash(f.SelfCheck)))
	}
	if len(rep.Charts) > 0 {
		b.WriteString("\n## Charts\n\n")
		for _, c := range rep.Charts {
			fmt.Fprintf(&b, "![%s](%s)\n\n", c.Title, c.File)
		}
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ") }

func cpuCell(v float64) string {
	if v < 0 {
		return "not seen"
	}
	return fmt.Sprintf("%.2f", v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
