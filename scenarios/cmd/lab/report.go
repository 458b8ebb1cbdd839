package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/notifier-lab/notifier-lab/scenarios/audit"
	"github.com/notifier-lab/notifier-lab/scenarios/defaults"
	"github.com/notifier-lab/notifier-lab/scenarios/fault"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/pageload"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/scenarios/scale"
)

// runReport re-renders the reports of a results folder from its result
// files, offline (no Docker, no stack), by what the folder holds:
//
//	faults.json, *idle-race*.json  faults.md and each race's page
//	             (fault.RenderPages), then by the rest:
//	audit.json   an audit: audit.md and audit.html (its date kept)
//	blackbox.json a black-box audit: audit.md and blackbox.json, its
//	             measures judged again (audit.RejudgeBlackBox)
//	cell-*.json  the matrix: matrix.md and charts/
//	point-*.json a scale run: summary.md and charts/
//	pageload.json a page-load run: summary.md, pageload.json and charts/
//	             from its load-*.json
//	client-defaults.json  a client-defaults run: summary.md and charts/
//	bench-*.json a bench run or a sweep: summary.md and charts/
//	*/audit.json audits' parent folder: the third-party clients'
//	             comparison, clients.md and clients.html
//	*/bench-*.json a folder of repeated bench runs (results/tls-resumption):
//	             summary.md and charts/ with each run's figures and
//	             their median (report.RunsReport)
//
// bulk is BULK for the summary's projection (0: the default). Errors: a
// folder with none of these files, or what a reporter returns.
func runReport(dir string, bulk int, w io.Writer) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		what := "does not exist"
		if err == nil {
			what = "is a file, not a folder"
		} else if !errors.Is(err, fs.ErrNotExist) {
			what = "cannot be read (" + err.Error() + ")"
		}
		return fmt.Errorf("%w: %s %s: name a folder a run wrote (results, results/runs/latest, results/matrix, results/scale, results/audit...)", errUsage, dir, what)
	}
	has := func(pattern string) bool {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		return len(m) > 0
	}
	// The report rewrites summary.md, charts/ and the pages in dir: only in
	// a folder the lab made (docs/running.md#output-folders).
	renderable := false
	for _, p := range []string{audit.RulesFile, audit.BlackBoxJSONFile, "cell-*.json", "point-*.json", "bench-*.json", pageload.SummaryJSON, defaults.ResultFile, filepath.Join("*", audit.RulesFile), filepath.Join("*", "bench-*.json"), "faults.json", "*idle-race*.json"} {
		renderable = renderable || has(p)
	}
	if _, err := os.Stat(filepath.Join(dir, outdir.Marker)); renderable && err != nil {
		return fmt.Errorf("%w: %s carries no %s marker, so the lab did not make it: report rewrites summary.md, charts/ and the pages of a folder a run wrote, never files of yours; name a folder a run wrote (results, results/runs/latest, results/scale...)", errUsage, dir, outdir.Marker)
	}
	faultPages, err := renderFaultPages(dir, w)
	if err != nil {
		return err
	}
	switch {
	case has(audit.RulesFile):
		return reportAudit(dir, w)
	case has(audit.BlackBoxJSONFile):
		rep, err := audit.RejudgeBlackBox(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "black-box audit report rebuilt: %s\n%s\n", filepath.Join(dir, audit.MarkdownFile), rep.Headline())
		return nil
	case has("cell-*.json"):
		return report.MatrixReport(dir, w)
	case has("point-*.json"):
		return scale.Report(dir, w)
	case has(pageload.SummaryJSON):
		return pageload.Report(dir, w)
	case has(defaults.ResultFile):
		return reportDefaults(dir, w)
	case has("bench-*.json"):
		return report.Report(dir, w, report.WithBulk(bulk))
	case has(filepath.Join("*", audit.RulesFile)):
		return writeClients(dir, w)
	case has(filepath.Join("*", "bench-*.json")):
		return report.RunsReport(dir, w)
	case faultPages > 0: // a folder of fault runs only
		return nil
	}
	return fmt.Errorf("%w: %s holds no audit.json, blackbox.json, cell-*.json, point-*.json, bench-*.json, client-defaults.json, */audit.json, */bench-*.json or faults.json: name a folder a run wrote (results, results/matrix, results/scale, results/audit, results/audit/<worker>-<profile>...)", errUsage, dir)
}

// reportDefaults rebuilds a client-defaults folder's summary.md and chart
// from its client-defaults.json, which it leaves as it is.
func reportDefaults(dir string, w io.Writer) error {
	r, err := defaults.ReadResult(dir)
	if err != nil {
		return err
	}
	if err := defaults.WriteReport(dir, r); err != nil {
		return err
	}
	fmt.Fprintf(w, "client-defaults report rebuilt: %s, %s\n", filepath.Join(dir, defaults.SummaryFile), filepath.Join(dir, defaults.ChartFile))
	return nil
}

// renderFaultPages re-renders the folder's fault and idle-race pages
// (fault.RenderPages) and says which.
func renderFaultPages(dir string, w io.Writer) (int, error) {
	wrote, err := fault.RenderPages(dir)
	for _, f := range wrote {
		fmt.Fprintf(w, "rebuilt %s\n", f)
	}
	return len(wrote), err
}

// reportAudit rebuilds an audit folder's report for the worker and the
// profile audit.json names, keeping its date.
func reportAudit(dir string, w io.Writer) error {
	b, err := os.ReadFile(filepath.Join(dir, audit.RulesFile))
	if err != nil {
		return err
	}
	var old audit.Report
	if err := json.Unmarshal(b, &old); err != nil {
		return fmt.Errorf("read %s: %w", audit.RulesFile, err)
	}
	if old.Worker == "" || old.Profile == "" {
		return fmt.Errorf("%s names no worker or profile", filepath.Join(dir, audit.RulesFile))
	}
	rs, err := results.ReadResults(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	keepalive := 0.0
	for _, r := range rs {
		if r.KeepaliveTimeoutS > 0 {
			keepalive = r.KeepaliveTimeoutS
			break
		}
	}
	in, err := audit.Load(dir, old.Worker, old.Profile, keepalive)
	if err != nil {
		return err
	}
	in.Errors = append(in.Errors, audit.KeptErrors(dir, old)...) // a step that did not run stays a failure
	rep, err := audit.NewReport(dir, in, old.Date)
	if err != nil {
		return err
	}
	rep.Provenance = old.Provenance
	if err := audit.Write(dir, rep); err != nil {
		return err
	}
	fmt.Fprintf(w, "audit report of %s on %s rebuilt: %s, %s\n", old.Worker, old.Profile,
		filepath.Join(dir, audit.MarkdownFile), filepath.Join(dir, audit.HTMLFile))
	return nil
}
