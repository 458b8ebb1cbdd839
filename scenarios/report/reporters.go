package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Reporter writes one report of a set of results, in the manner of
// vegeta's reporters: every report is a func(io.Writer) error, so each is
// tested against a golden file.
type Reporter func(io.Writer) error

// CaseFigure is one row of the case's published table: the figures this
// lab reproduces. Source: docs/case.md, "The case this
// reproduces" (worker -> Toxiproxy -> nginx -> WireMock with an 18 ms fixed
// delay, 1,000 sends plus 50 warm-up at concurrency 1, worker on 1 core,
// per-request engine on TLS 1.2, pooled on TLS 1.3; the worker there ran on
// the JVM).
type CaseFigure struct {
	RTTMS          int
	Mode           string
	SendsPerS      float64
	P50MS, P99MS   float64
	CPUMSPerSend   float64
	WallS          float64 // for Count sends
	Count          int     // measured sends (1,000)
	TCPConnections int     // warm-up included (1,050 = 1,000 + 50)
}

// caseFigures is the published table (docs/case.md#published-table), row by
// row.
var caseFigures = []CaseFigure{
	{3, vendorapi.PerRequestName, 39.9, 24.6, 30.0, 7.96, 25.0, 1000, 1050},
	{3, vendorapi.PooledName, 42.2, 23.3, 29.8, 5.47, 23.7, 1000, 1},
	{10, vendorapi.PerRequestName, 15.6, 63.7, 74.4, 11.75, 64.0, 1000, 1050},
	{10, vendorapi.PooledName, 27.9, 35.5, 41.3, 6.28, 35.8, 1000, 1},
}

// CaseFigures returns a copy of the case's published table (see
// CaseFigure for the source).
func CaseFigures() []CaseFigure { return slices.Clone(caseFigures) }

// CaseFigureFor returns the case's published row for an RTT and mode, and
// false when the case did not measure that pair (it measured 3 and 10 ms).
func CaseFigureFor(rttMS int, mode string) (CaseFigure, bool) {
	for _, f := range caseFigures {
		if f.RTTMS == rttMS && f.Mode == mode {
			return f, true
		}
	}
	return CaseFigure{}, false
}

// Comparison is pooled against per-request at one RTT: the sends/s ratio
// (pooled / per-request) and the p50 difference (per-request - pooled, ms),
// for the lab and, where the case measured that RTT, for the case.
type Comparison struct {
	RTTMS             int
	SendsRatio        float64 // lab: pooled sends/s / per-request sends/s
	P50DiffMS         float64 // lab: per-request p50 - pooled p50, ms
	HasCase           bool
	CaseSendsRatio    float64
	CaseP50DiffMS     float64
	PerRequestTLSMax  string // the lab's per-request TLS cap
	PooledTLSVersions string // what the pooled client negotiated, from nginx
	Scheme            string // the runs' scheme (http, https, mtls)
	Concurrency       int    // the runs' concurrency
}

// Compare returns one Comparison per group (scheme and concurrency) and
// RTT at which results hold both a per-request and a pooled run, in group
// then RTT order. The case's figures are set for https at concurrency 1
// only.
func Compare(rs []results.Result) []Comparison {
	var out []Comparison
	for _, g := range groups(rs) {
		grs := inGroup(rs, g)
		for _, rtt := range rtts(grs) {
			pr, okPR := find(grs, rtt, vendorapi.PerRequestName)
			po, okPO := find(grs, rtt, vendorapi.PooledName)
			if !okPR || !okPO {
				continue
			}
			c := Comparison{RTTMS: rtt, Scheme: g.Scheme, Concurrency: g.Concurrency, P50DiffMS: pr.LatencyMS.P50 - po.LatencyMS.P50,
				PerRequestTLSMax: pr.TLSMax, PooledTLSVersions: FormatCounts(po.TLSVersions)}
			if pr.SendsPerS > 0 {
				c.SendsRatio = po.SendsPerS / pr.SendsPerS
			}
			cpr, ok1 := CaseFigureFor(rtt, vendorapi.PerRequestName)
			cpo, ok2 := CaseFigureFor(rtt, vendorapi.PooledName)
			if ok1 && ok2 && g.IsCase() {
				c.HasCase = true
				c.CaseSendsRatio = cpo.SendsPerS / cpr.SendsPerS
				c.CaseP50DiffMS = cpr.P50MS - cpo.P50MS
			}
			out = append(out, c)
		}
	}
	return out
}

func rtts(rs []results.Result) []int {
	var out []int
	for _, r := range rs {
		if !slices.Contains(out, r.RTTMS) {
			out = append(out, r.RTTMS)
		}
	}
	slices.Sort(out)
	return out
}

func modes(rs []results.Result) []string {
	var out []string
	for _, r := range rs {
		if !slices.Contains(out, r.Mode) {
			out = append(out, r.Mode)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return results.ModeRank(a) - results.ModeRank(b) })
	return out
}

func find(rs []results.Result, rtt int, mode string) (results.Result, bool) {
	for _, r := range rs {
		if r.RTTMS == rtt && r.Mode == mode {
			return r, true
		}
	}
	return results.Result{}, false
}

// table is a header and rows of cells, rendered by mdTable and textTable.
type table struct {
	header []string
	rows   [][]string
}

// summaryTable returns the header and rows of the main table: per (RTT,
// mode) our row, then the case's row for the same pair when it exists.
func summaryTable(rs []results.Result) (t table) {
	t.header = []string{"RTT", "client", "sends/s", "p50 ms", "p99 ms", "CPU ms/send",
		wallHeader(rs), "TCP conns"}
	sorted := slices.Clone(rs)
	results.SortResults(sorted)
	// Runs of several schemes or concurrencies: a first column names the
	// group ("mtls c8"), rows come group by group.
	group := groupColumn(rs)
	if group {
		t.header = append([]string{"scheme"}, t.header...)
	}
	row := func(r results.Result, cells ...string) []string {
		if group {
			return append([]string{results.GroupOf(r).Label()}, cells...)
		}
		return cells
	}
	for _, r := range sorted {
		t.rows = append(t.rows, row(r,
			fmt.Sprintf("%d ms", r.RTTMS), clientLabel(r),
			f1(r.SendsPerS), f1(r.LatencyMS.P50), f1(r.LatencyMS.P99), cpuLabel(r.CPUMSPerSend),
			f1(r.WallS)+" s", thousands(r.TCPConnections),
		))
		if c, ok := CaseFigureFor(r.RTTMS, r.Mode); ok && results.GroupOf(r).IsCase() {
			t.rows = append(t.rows, row(r,
				fmt.Sprintf("%d ms", c.RTTMS), c.Mode+" (case)",
				f1(c.SendsPerS), f1(c.P50MS), f1(c.P99MS), f2(c.CPUMSPerSend),
				caseWallLabel(c, r.Count), thousands(c.TCPConnections),
			))
		}
	}
	return t
}

// comparisonTable returns the header and rows of the pooled/per-request table.
func comparisonTable(rs []results.Result) (t table) {
	t.header = []string{"RTT", "sends/s pooled / per-request (lab)", "(case)", "p50 per-request - pooled ms (lab)", "(case)"}
	group := groupColumn(rs)
	if group {
		t.header = append([]string{"scheme"}, t.header...)
	}
	for _, c := range Compare(rs) {
		caseRatio, caseDiff := "-", "-"
		if c.HasCase {
			caseRatio, caseDiff = f2(c.CaseSendsRatio)+"x", f1(c.CaseP50DiffMS)
		}
		row := []string{fmt.Sprintf("%d ms", c.RTTMS), f2(c.SendsRatio) + "x", caseRatio, f1(c.P50DiffMS), caseDiff}
		if group {
			row = append([]string{results.Group{Scheme: c.Scheme, Concurrency: c.Concurrency}.Label()}, row...)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// detailTable returns per-run facts behind the main table.
func detailTable(rs []results.Result) (t table) {
	t.header = []string{"RTT", "client", "TLS (nginx)", "reused (client)", "outcomes", "journal", "p90 ms", "max ms", "TLS handshake p50 ms", "CPU ms/send in send call", "worker state", "self-check RTT ms", "reconcile"}
	sorted := slices.Clone(rs)
	results.SortResults(sorted)
	for _, r := range sorted {
		t.rows = append(t.rows, []string{
			fmt.Sprintf("%d ms", r.RTTMS), clientLabel(r), FormatCounts(r.TLSVersions),
			fmt.Sprintf("%d/%d", r.ClientReused, r.Measured), FormatCounts(r.Outcomes),
			strconv.Itoa(r.JournalCount), f1(r.LatencyMS.P90), f1(r.LatencyMS.Max), handshakeCell(r), f2(r.ClientCPUMSPerSend), dash(r.WorkerState), f1(r.SelfCheckRTTMS),
			reconcileLabel(r),
		})
	}
	return t
}

// handshakeCell is the TLS handshake p50 of a run, or "not seen" when the
// worker did not report it (a contract worker whose records carry no
// phases): never 0.0 for a value nobody measured (issue 30).
func handshakeCell(r results.Result) string {
	if !r.PhasesSeen() {
		return "not seen"
	}
	return f1(r.PhaseP50MS.TLSHandshakeMS)
}

// reconcileLabel is the reconciler's verdict with its duplicates and lost
// counts, or "-" for a result without one.
func reconcileLabel(r results.Result) string {
	if r.Reconcile == nil {
		return "-"
	}
	return fmt.Sprintf("%s (%d duplicates, %d lost)", r.Reconcile.Verdict(), r.Reconcile.Duplicates, r.Reconcile.Lost)
}

// clientLabel is the mode, with the per-request TLS cap when set.
func clientLabel(r results.Result) string {
	if r.TLSMax != "" {
		return fmt.Sprintf("%s (TLS <= %s)", r.Mode, r.TLSMax)
	}
	return r.Mode
}

// caseWallMark flags a case wall time scaled to another COUNT; notes
// explains it.
const caseWallMark = " *"

// CaseWallS returns the case's wall time for count sends at its published
// rate: c.WallS scaled from c.Count sends to count, s. The case's rows sit
// beside the lab's, whose runs may have another COUNT.
func CaseWallS(c CaseFigure, count int) float64 {
	if c.Count <= 0 || count == c.Count {
		return c.WallS
	}
	return c.WallS * float64(count) / float64(c.Count)
}

// caseWallLabel is CaseWallS for the table, marked when scaled.
func caseWallLabel(c CaseFigure, count int) string {
	s := f1(CaseWallS(c, count)) + " s"
	if count != c.Count {
		s += caseWallMark
	}
	return s
}

// scaledCaseWall reports whether a case row of rs has its wall time
// scaled (a result with a case row and another COUNT).
func scaledCaseWall(rs []results.Result) bool {
	return slices.ContainsFunc(rs, func(r results.Result) bool {
		c, ok := CaseFigureFor(r.RTTMS, r.Mode)
		return ok && r.Count != c.Count
	})
}

// notes are the caveats printed under the tables.
func notes(rs []results.Result) []string {
	n := []string{
		"Rows marked (case) are the case's published figures (1,000 sends + 50 warm-up, JVM worker, per-request on TLS 1.2).",
		"Latency is the worker's httptrace total per measured send; percentiles are nearest-rank (gonum stat.Quantile, Empirical).",
		"CPU ms/send is the worker process's own user+sys CPU over the measured sends, divided by their number.",
		"TCP conns counts distinct nginx connections that carried POST " + results.SendPath + ", warm-up included, as the case counted.",
	}
	if scaledCaseWall(rs) {
		n = append(n, "This run measured "+countLabel(rs)+" sends per run; case wall times marked *"+
			" are the case's (for 1,000 sends) scaled to the row's COUNT at the case's rate, so the column compares like with like.")
	}
	return n
}

// environmentLine describes where rs were measured (from the first result).
func environmentLine(rs []results.Result) string {
	if len(rs) == 0 {
		return ""
	}
	e := rs[0].Environment
	return fmt.Sprintf("Measured %s with %s on %d CPUs (kernel %s), %s images; %s.",
		e.Date, e.GoVersion, e.CPUs, e.Kernel, e.Images.Kind, e.HostNote)
}

// NewMarkdownReporter returns a Reporter that writes the summary as
// Markdown (OUT/summary.md): the main table laid out like the case's, with
// the case's row under each of ours, the pooled/per-request comparison per
// RTT, per-run details and notes.
func NewMarkdownReporter(rs []results.Result, opts ...ReportOption) Reporter {
	o := newReportOptions(opts)
	return func(w io.Writer) error {
		var b strings.Builder
		b.WriteString(summaryTitle(rs))
		b.WriteString(provenanceHeader(rs))
		b.WriteString(verdictLine(o.verdict))
		if len(rs) > 0 {
			fmt.Fprintf(&b, "%s measured sends after %s warm-up sends per run, vendor delay %s ms, worker on 1 CPU.\n\n",
				countLabel(rs), rangeLabel(rs, func(r results.Result) int { return r.Warmup }),
				rangeLabel(rs, func(r results.Result) int { return r.ServerDelayMS }))
			b.WriteString(networkLine(rs) + "\n\n")
		}
		mdTable(&b, summaryTable(rs))
		b.WriteString("\n## Pooled vs per-request\n\n")
		if cmp := comparisonTable(rs); len(cmp.rows) > 0 {
			mdTable(&b, cmp)
		} else {
			b.WriteString("Not available: no RTT was measured with both modes.\n")
		}
		b.WriteString("\n## Details\n\n")
		mdTable(&b, detailTable(rs))
		b.WriteString(settlementSection(rs))
		writeNetworkSections(&b, rs, o)
		b.WriteString(gapSection(rs))
		b.WriteString(contractSection(rs))
		b.WriteString("\n## Notes\n\n")
		for _, n := range notes(rs) {
			b.WriteString("- " + n + "\n")
		}
		if e := environmentLine(rs); e != "" {
			b.WriteString("\n" + e + "\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
}

// NewTextReporter returns a Reporter that writes the main table and the
// comparison as aligned text for a terminal.
func NewTextReporter(rs []results.Result) Reporter {
	return func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		textTable(tw, summaryTable(rs))
		if err := tw.Flush(); err != nil {
			return err
		}
		if cmp := comparisonTable(rs); len(cmp.rows) > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
			textTable(tw, cmp)
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		foot := "\n(case) = the case's published figures; see summary.md for notes.\n"
		if scaledCaseWall(rs) {
			foot += "* = the case's wall time for 1,000 sends, scaled to the row's COUNT.\n"
		}
		_, err := io.WriteString(w, foot)
		return err
	}
}

func mdTable(b *strings.Builder, t table) {
	b.WriteString("| " + strings.Join(t.header, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(t.header)) + "\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

func textTable(w io.Writer, t table) {
	fmt.Fprintln(w, strings.Join(t.header, "\t")+"\t")
	for _, r := range t.rows {
		fmt.Fprintln(w, strings.Join(r, "\t")+"\t")
	}
}

// cpuLabel formats CPU ms per send, "n/a" when unknown (< 0).
func cpuLabel(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return f2(v)
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// thousands formats n with comma separators: 1050 -> "1,050".
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// WriteReport writes OUT/summary.md and OUT/charts/*.svg for rs and the
// text summary to w. It is the end of Run and the whole of `lab report`.
func WriteReport(out string, rs []results.Result, w io.Writer, opts ...ReportOption) error {
	path := filepath.Join(out, "summary.md")
	// Sections other reports own (the fault scenarios, the idle race) are
	// kept: they sit between "<!-- name:begin -->" and "<!-- name:end -->".
	var kept []byte
	if old, err := os.ReadFile(path); err == nil {
		kept = markedSections(old)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create summary: %w", err)
	}
	if err := NewMarkdownReporter(rs, opts...)(f); err != nil {
		f.Close()
		return fmt.Errorf("write summary: %w", err)
	}
	if len(kept) > 0 {
		if _, err := f.Write(append([]byte("\n"), kept...)); err != nil {
			f.Close()
			return fmt.Errorf("write summary: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if err := WriteCharts(filepath.Join(out, "charts"), rs); err != nil {
		return err
	}
	if err := WriteSweepCharts(filepath.Join(out, "charts"), rs); err != nil {
		return err
	}
	if err := WriteGapCharts(filepath.Join(out, "charts"), rs); err != nil {
		return err
	}
	if err := NewTextReporter(rs)(w); err != nil {
		return fmt.Errorf("print summary: %w", err)
	}
	return nil
}

// dash returns s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// markedSections returns every "<!-- name:begin -->" ... "<!-- name:end -->"
// block of a summary, markers included, in order, a blank line between two
// and one newline after the last (as the fault reports' appendSection
// leaves them, so that a report rewrites such a summary byte for byte);
// nil when there is none. A begin marker without its end is dropped.
func markedSections(md []byte) []byte {
	var out []byte
	rest := md
	for {
		i := bytes.Index(rest, []byte("<!-- "))
		if i < 0 {
			return out
		}
		rest = rest[i:]
		j := bytes.Index(rest, []byte(":begin -->"))
		nl := bytes.IndexByte(rest, '\n')
		if j < 0 || (nl >= 0 && j > nl) {
			rest = rest[len("<!-- "):]
			continue
		}
		name := rest[len("<!-- "):j]
		end := []byte("<!-- " + string(name) + ":end -->")
		k := bytes.Index(rest, end)
		if k < 0 {
			return out
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = append(out, rest[:k+len(end)]...)
		out = append(out, '\n')
		rest = rest[k+len(end):]
	}
}
