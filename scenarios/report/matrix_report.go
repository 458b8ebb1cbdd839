package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// StudyACell is one row of study A's full matrix (docs/studies.md): Go
// net/http on loopback, 800 requests, 2 CPUs. CPUS is the client's CPU
// for the case, s; NaN where the study gives none.
type StudyACell struct {
	Scheme, Mode                  string // Mode: vendorapi.PerRequestName (fresh) or PooledName (keepalive)
	Concurrency                   int
	ReqPerS, P50MS, P99MS, P999MS float64
	CPUS                          float64
}

var nan = math.NaN()

// studyA are study A's published figures (docs/studies.md, "Full matrix").
var studyA = []StudyACell{
	{Scheme: "http", Mode: vendorapi.PerRequestName, Concurrency: 1, ReqPerS: 2504.8, P50MS: 0.370, P99MS: 0.731, P999MS: 1.110, CPUS: nan},
	{Scheme: "http", Mode: vendorapi.PerRequestName, Concurrency: 8, ReqPerS: 13633.2, P50MS: 0.386, P99MS: 3.241, P999MS: 4.442, CPUS: 0.343},
	{Scheme: "http", Mode: vendorapi.PerRequestName, Concurrency: 32, ReqPerS: 7314.9, P50MS: 2.122, P99MS: 45.863, P999MS: 46.799, CPUS: nan},
	{Scheme: "http", Mode: vendorapi.PooledName, Concurrency: 1, ReqPerS: 7000.5, P50MS: 0.127, P99MS: 0.327, P999MS: 0.668, CPUS: nan},
	{Scheme: "http", Mode: vendorapi.PooledName, Concurrency: 8, ReqPerS: 56862.6, P50MS: 0.089, P99MS: 1.348, P999MS: 1.594, CPUS: 0.091},
	{Scheme: "http", Mode: vendorapi.PooledName, Concurrency: 32, ReqPerS: 46648.0, P50MS: 0.370, P99MS: 3.302, P999MS: 3.864, CPUS: nan},
	{Scheme: "https", Mode: vendorapi.PerRequestName, Concurrency: 1, ReqPerS: 787.6, P50MS: 1.193, P99MS: 2.244, P999MS: 2.600, CPUS: 1.214},
	{Scheme: "https", Mode: vendorapi.PerRequestName, Concurrency: 8, ReqPerS: 2071.6, P50MS: 3.407, P99MS: 15.730, P999MS: 25.888, CPUS: 2.042},
	{Scheme: "https", Mode: vendorapi.PerRequestName, Concurrency: 32, ReqPerS: 2071.6, P50MS: 13.842, P99MS: 38.460, P999MS: 43.258, CPUS: 2.103},
	{Scheme: "https", Mode: vendorapi.PooledName, Concurrency: 1, ReqPerS: 6025.4, P50MS: 0.155, P99MS: 0.378, P999MS: 0.835, CPUS: 0.192},
	{Scheme: "https", Mode: vendorapi.PooledName, Concurrency: 8, ReqPerS: 26831.7, P50MS: 0.128, P99MS: 3.535, P999MS: 6.915, CPUS: 0.176},
	{Scheme: "https", Mode: vendorapi.PooledName, Concurrency: 32, ReqPerS: 9106.1, P50MS: 0.585, P99MS: 24.448, P999MS: 32.222, CPUS: 0.469},
	{Scheme: "mtls", Mode: vendorapi.PerRequestName, Concurrency: 1, ReqPerS: 538.7, P50MS: 1.749, P99MS: 3.419, P999MS: 4.505, CPUS: 2.004},
	{Scheme: "mtls", Mode: vendorapi.PerRequestName, Concurrency: 8, ReqPerS: 1804.8, P50MS: 4.018, P99MS: 10.616, P999MS: 12.248, CPUS: 2.468},
	{Scheme: "mtls", Mode: vendorapi.PerRequestName, Concurrency: 32, ReqPerS: 1053.0, P50MS: 26.320, P99MS: 85.840, P999MS: 130.521, CPUS: 3.617},
	{Scheme: "mtls", Mode: vendorapi.PooledName, Concurrency: 1, ReqPerS: 5172.1, P50MS: 0.186, P99MS: 0.367, P999MS: 0.600, CPUS: 0.226},
	{Scheme: "mtls", Mode: vendorapi.PooledName, Concurrency: 8, ReqPerS: 27285.5, P50MS: 0.121, P99MS: 3.216, P999MS: 5.191, CPUS: 0.181},
	{Scheme: "mtls", Mode: vendorapi.PooledName, Concurrency: 32, ReqPerS: 11469.9, P50MS: 0.567, P99MS: 28.485, P999MS: 37.941, CPUS: 0.387},
}

// studyAKeepaliveConns are the connections study A's server accepted with
// keep-alive over http, by concurrency (docs/studies.md).
var studyAKeepaliveConns = map[int]int{1: 0, 8: 8, 32: 39}

// StudyA returns study A's published matrix.
func StudyA() []StudyACell { return slices.Clone(studyA) }

func studyAFor(scheme, mode string, conc int) (StudyACell, bool) {
	for _, s := range studyA {
		if s.Scheme == scheme && s.Mode == mode && s.Concurrency == conc {
			return s, true
		}
	}
	return StudyACell{}, false
}

// findCell returns the cell of cs with these keys.
func findCell(cs []results.MatrixCell, driver, scheme, mode string, conc int) (results.MatrixCell, bool) {
	for _, c := range cs {
		if c.Driver == driver && c.Scheme == scheme && c.Mode == mode && c.Concurrency == conc {
			return c, true
		}
	}
	return results.MatrixCell{}, false
}

// studyMode is study A's name of a strategy: fresh (per-request),
// keepalive (pooled); a strategy study A did not have (per-request-resume,
// shared-closing) keeps its own name.
func studyMode(mode string) string {
	switch mode {
	case vendorapi.PerRequestName:
		return "fresh"
	case vendorapi.PooledName:
		return "keepalive"
	}
	return mode
}

// otherModesNote is ", and shared-closing by its own name" for the
// strategies of modes that study A did not have, "" when there are none.
func otherModesNote(modes []string) string {
	var other []string
	for _, m := range modes {
		if m != vendorapi.PerRequestName && m != vendorapi.PooledName {
			other = append(other, m)
		}
	}
	if len(other) == 0 {
		return ""
	}
	return "; " + strings.Join(other, ", ") + " (not in study A) by its own name"
}

// matrixModes returns the client strategies present in cs: the known ones
// in results.KnownModes order, then any other in name order. A matrix run
// with MODES="per-request pooled shared-closing" reports all three.
func matrixModes(cs []results.MatrixCell) []string {
	var modes, other []string
	for _, m := range results.KnownModes {
		if slices.ContainsFunc(cs, func(c results.MatrixCell) bool { return c.Mode == m }) {
			modes = append(modes, m)
		}
	}
	for _, c := range cs {
		if !slices.Contains(results.KnownModes, c.Mode) && !slices.Contains(other, c.Mode) {
			other = append(other, c.Mode)
		}
	}
	slices.Sort(other)
	return append(modes, other...)
}

// ratio formats a/b as "2.80x", "–" when either is missing.
func ratio(a, b float64) string {
	if !(a > 0) || !(b > 0) || math.IsNaN(a) || math.IsNaN(b) {
		return "–"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "x"
}

// matrixAxes returns the drivers, schemes and concurrencies present in cs,
// in report order.
func matrixAxes(cs []results.MatrixCell) (drivers, schemes []string, concs []int) {
	for _, d := range []string{results.DriverDirect, results.DriverWorker} {
		if slices.ContainsFunc(cs, func(c results.MatrixCell) bool { return c.Driver == d }) {
			drivers = append(drivers, d)
		}
	}
	for _, s := range []string{"http", "https", "mtls"} {
		if slices.ContainsFunc(cs, func(c results.MatrixCell) bool { return c.Scheme == s }) {
			schemes = append(schemes, s)
		}
	}
	for _, c := range cs {
		if !slices.Contains(concs, c.Concurrency) {
			concs = append(concs, c.Concurrency)
		}
	}
	slices.Sort(concs)
	return drivers, schemes, concs
}

// workerStates names where the worker cells' ledger and records lived
// ("disk", "tmpfs", "disk and tmpfs"), "not recorded" for worker cells
// written before MatrixCell.WorkerState existed, "" without worker cells.
func workerStates(cs []results.MatrixCell) string {
	var states []string
	for _, c := range cs {
		if c.Driver != results.DriverWorker {
			continue
		}
		st := c.WorkerState
		if st == "" {
			st = "not recorded"
		}
		if !slices.Contains(states, st) {
			states = append(states, st)
		}
	}
	slices.Sort(states)
	return strings.Join(states, " and ")
}

// MatrixMarkdown renders the matrix report: the concurrency-1 throughput
// ratios and the CPU ratios at concurrency 8 beside study A's, the full
// matrix per driver, the connections, the HTTP client's share of the
// worker's CPU, and the checks of the matrix.
func MatrixMarkdown(cs []results.MatrixCell) string {
	var b strings.Builder
	drivers, schemes, concs := matrixAxes(cs)
	modes := matrixModes(cs)
	first := cs[0]
	fmt.Fprintf(&b, "# The published matrix\n\n")
	b.WriteString(first.Provenance.Header())
	fmt.Fprintf(&b, "RTT %d ms, SERVER_DELAY_MS=%d, HTTP/%s, %d measured + %d warm-up sends per cell, worker container 1 CPU. "+
		"Study A (docs/studies.md): Go net/http on loopback, 2 CPUs, 800 + 50 requests. Absolute figures depend on the machine; "+
		"compare the ratios. fresh = per-request, keepalive = pooled%s.\n\n",
		first.RTTMS, first.ServerDelayMS, first.HTTPVersion, first.Count, first.Warmup, otherModesNote(modes))
	if set := matrixSettings(cs); set != "" {
		fmt.Fprintf(&b, "Settings beyond study A's: %s.\n\n", set)
	}
	if ws := workerStates(cs); ws != "" {
		fmt.Fprintf(&b, "Worker cells: the ledger and records on %s (worker_state).\n\n", ws)
	}
	fmt.Fprintf(&b, "Machine: %s\n\n", environmentSummary(first.Environment))

	fmt.Fprintf(&b, "## Throughput at concurrency 1: keepalive / fresh\n\n")
	fmt.Fprintf(&b, "| scheme |")
	for _, d := range drivers {
		fmt.Fprintf(&b, " %s fresh req/s | %s keepalive req/s | %s ratio |", d, d, d)
	}
	fmt.Fprintf(&b, " study A ratio |\n|---|%s---|\n", strings.Repeat("---|---|---|", len(drivers)))
	for _, s := range schemes {
		fmt.Fprintf(&b, "| %s |", s)
		for _, d := range drivers {
			f, _ := findCell(cs, d, s, vendorapi.PerRequestName, 1)
			k, _ := findCell(cs, d, s, vendorapi.PooledName, 1)
			fmt.Fprintf(&b, " %s | %s | %s |", f1(f.ReqPerS), f1(k.ReqPerS), ratio(k.ReqPerS, f.ReqPerS))
		}
		sf, _ := studyAFor(s, vendorapi.PerRequestName, 1)
		sk, _ := studyAFor(s, vendorapi.PooledName, 1)
		fmt.Fprintf(&b, " %s |\n", ratio(sk.ReqPerS, sf.ReqPerS))
	}

	fmt.Fprintf(&b, "\n## CPU at concurrency 8: fresh / keepalive\n\n| scheme |")
	for _, d := range drivers {
		fmt.Fprintf(&b, " %s |", d)
	}
	fmt.Fprintf(&b, " study A |\n|---|%s---|\n", strings.Repeat("---|", len(drivers)))
	for _, s := range schemes {
		fmt.Fprintf(&b, "| %s |", s)
		for _, d := range drivers {
			f, _ := findCell(cs, d, s, vendorapi.PerRequestName, 8)
			k, _ := findCell(cs, d, s, vendorapi.PooledName, 8)
			fmt.Fprintf(&b, " %s |", ratio(f.CPUMSPerReq, k.CPUMSPerReq))
		}
		sf, _ := studyAFor(s, vendorapi.PerRequestName, 8)
		sk, _ := studyAFor(s, vendorapi.PooledName, 8)
		fmt.Fprintf(&b, " %s |\n", ratio(sf.CPUS, sk.CPUS))
	}

	for _, d := range drivers {
		fmt.Fprintf(&b, "\n## Full matrix, driver %s\n\n", d)
		fmt.Fprintf(&b, "| scheme | mode | conc | req/s | p50 ms | p99 ms | p99.9 ms | CPU ms/req | CPU s | connections | protocol | check | study A req/s | study A p99.9 ms |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range schemes {
			for _, m := range modes {
				for _, n := range concs {
					c, ok := findCell(cs, d, s, m, n)
					if !ok {
						continue
					}
					sa, _ := studyAFor(s, m, n)
					fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n",
						s, studyMode(m), n, f1(c.ReqPerS), f3(c.LatencyMS.P50), f3(c.LatencyMS.P99), f3(c.LatencyMS.P999),
						f3(c.CPUMSPerReq), f3(c.CPUS), c.Connections, FormatCounts(c.Protocols), c.Check(), f1(sa.ReqPerS), f3(sa.P999MS))
				}
			}
		}
	}

	fmt.Fprintf(&b, "\n## Connections accepted with keepalive\n\n| scheme | driver |")
	for _, n := range concs {
		fmt.Fprintf(&b, " conc %d |", n)
	}
	fmt.Fprintf(&b, "\n|---|---|%s\n", strings.Repeat("---|", len(concs)))
	for _, s := range schemes {
		for _, d := range drivers {
			fmt.Fprintf(&b, "| %s | %s |", s, d)
			for _, n := range concs {
				c, _ := findCell(cs, d, s, vendorapi.PooledName, n)
				fmt.Fprintf(&b, " %d |", c.Connections)
			}
			fmt.Fprintf(&b, "\n")
		}
	}
	fmt.Fprintf(&b, "| http | study A |")
	for _, n := range concs {
		if v, ok := studyAKeepaliveConns[n]; ok {
			fmt.Fprintf(&b, " %d |", v)
		} else {
			fmt.Fprintf(&b, " – |")
		}
	}
	fmt.Fprintf(&b, "\n\nOurs count the warm-up sends' connections too; study A's fresh mode accepted one connection per request.\n")

	if slices.Contains(drivers, results.DriverDirect) && slices.Contains(drivers, results.DriverWorker) {
		fmt.Fprintf(&b, "\n## The HTTP client's share of the worker's CPU per send\n\n")
		fmt.Fprintf(&b, "direct CPU ms/req ÷ worker CPU ms/req: what the client strategy costs out of everything the worker does per message (broker, ledger, routing, records).\n\n")
		fmt.Fprintf(&b, "| scheme | mode |")
		for _, n := range concs {
			fmt.Fprintf(&b, " conc %d |", n)
		}
		fmt.Fprintf(&b, "\n|---|---|%s\n", strings.Repeat("---|", len(concs)))
		for _, s := range schemes {
			for _, m := range modes {
				fmt.Fprintf(&b, "| %s | %s |", s, studyMode(m))
				for _, n := range concs {
					dc, _ := findCell(cs, results.DriverDirect, s, m, n)
					wc, _ := findCell(cs, results.DriverWorker, s, m, n)
					share := "–"
					if dc.CPUMSPerReq > 0 && wc.CPUMSPerReq > 0 {
						share = strconv.FormatFloat(100*dc.CPUMSPerReq/wc.CPUMSPerReq, 'f', 0, 64) + "%"
					}
					fmt.Fprintf(&b, " %s |", share)
				}
				fmt.Fprintf(&b, "\n")
			}
		}
	}

	b.WriteString(serverSideMarkdown(cs))
	fmt.Fprintf(&b, "\n## Checks\n\n")
	for _, line := range MatrixChecks(cs) {
		fmt.Fprintf(&b, "- %s\n", line)
	}
	return b.String()
}

// MatrixChecks states the matrix's checks, one line each. Study A's two
// orderings (docs/case.md) are findings, "REPRODUCED: ..." or "NOT
// REPRODUCED: ...", never failures: at concurrency 1 with the direct driver
// the keepalive/fresh ratio rises from http to https to mtls, and fresh
// mtls costs more CPU per request than fresh https (sub-second cells on a
// shared machine can swap them). The delivery checks are "PASS: ..." or
// "FAIL: ..." (a FAIL makes the matrix exit 1): every cell SENT
// everything, the worker cells lost nothing and sent nothing twice, pooled
// cells stayed within their pool.
func MatrixChecks(cs []results.MatrixCell) []string {
	var out []string
	mark := func(ok bool, s string) {
		if ok {
			out = append(out, "PASS: "+s)
		} else {
			out = append(out, "FAIL: "+s)
		}
	}
	study := func(ok bool, s string) {
		if ok {
			out = append(out, "REPRODUCED: "+s)
		} else {
			out = append(out, "NOT REPRODUCED: "+s+" (study A's ordering; a finding of this run, not a failure)")
		}
	}
	r := func(s string) float64 {
		f, ok1 := findCell(cs, results.DriverDirect, s, vendorapi.PerRequestName, 1)
		k, ok2 := findCell(cs, results.DriverDirect, s, vendorapi.PooledName, 1)
		if !ok1 || !ok2 || f.ReqPerS <= 0 {
			return nan
		}
		return k.ReqPerS / f.ReqPerS
	}
	rh, rs, rm := r("http"), r("https"), r("mtls")
	if !math.IsNaN(rh) && !math.IsNaN(rs) && !math.IsNaN(rm) {
		study(rh < rs && rs < rm, fmt.Sprintf("direct, concurrency 1: keepalive/fresh req/s rises http %.2fx < https %.2fx < mtls %.2fx", rh, rs, rm))
	}
	fs, ok1 := findCell(cs, results.DriverDirect, "https", vendorapi.PerRequestName, 1)
	fm, ok2 := findCell(cs, results.DriverDirect, "mtls", vendorapi.PerRequestName, 1)
	if ok1 && ok2 {
		study(fm.CPUMSPerReq > fs.CPUMSPerReq, fmt.Sprintf("direct, concurrency 1: fresh mtls %.3f ms CPU/req > fresh https %.3f", fm.CPUMSPerReq, fs.CPUMSPerReq))
	}
	for _, c := range cs {
		pooled := c.Mode == vendorapi.PooledName
		switch {
		case pooled && c.HTTPVersion == "2" && c.Scheme != "http":
			h2 := c.Protocols["HTTP/2.0"]
			mark(c.Connections == 1 && h2 == sum(c.Protocols), fmt.Sprintf("%s: h2 pooled: %d connection(s), %d of %d sends HTTP/2.0 (want 1 and all)",
				c.Name(), c.Connections, h2, sum(c.Protocols)))
		case pooled && c.PoolSize >= c.Concurrency && c.Connections > c.Concurrency:
			mark(false, fmt.Sprintf("%s: %d connections with a pool of %d", c.Name(), c.Connections, c.PoolSize))
		case pooled && c.PoolSize < c.Concurrency:
			mark(c.Connections > c.Concurrency, fmt.Sprintf("%s: POOL_SIZE=%d below concurrency %d churns connections: %d accepted (want more than %d)",
				c.Name(), c.PoolSize, c.Concurrency, c.Connections, c.Concurrency))
		}
		if chk := c.Check(); chk != "ok" {
			mark(false, c.Name()+": "+chk)
		}
	}
	if !slices.ContainsFunc(out, func(s string) bool { return strings.HasPrefix(s, "FAIL: ") }) {
		mark(true, fmt.Sprintf("all %d cells SENT every message; worker cells 0 lost, 0 duplicates; pooled cells within their pool's connections", len(cs)))
	}
	return out
}

// sum adds the values of m.
func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// environmentSummary is a one-line description of the machine.
func environmentSummary(e results.Environment) string {
	return environmentLine([]results.Result{{Environment: e}})
}

func f3(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// WriteMatrixReport writes OUT/matrix.md and OUT/charts/ for cs and prints
// the checks to w.
func WriteMatrixReport(out string, cs []results.MatrixCell, w io.Writer) error {
	if len(cs) == 0 {
		return fmt.Errorf("matrix report: no cells")
	}
	md := MatrixMarkdown(cs)
	if err := os.WriteFile(filepath.Join(out, "matrix.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write matrix report: %w", err)
	}
	if err := writeMatrixCharts(filepath.Join(out, "charts"), cs); err != nil {
		return err
	}
	for _, line := range MatrixChecks(cs) {
		Logf(w, "%s", line)
	}
	Logf(w, "matrix report: %s, charts in %s", filepath.Join(out, "matrix.md"), filepath.Join(out, "charts"))
	return nil
}

// MatrixReport rebuilds OUT/matrix.md and OUT/charts/ from OUT/cell-*.json.
func MatrixReport(out string, w io.Writer) error {
	cs, err := results.ReadMatrixCells(out)
	if err != nil {
		return err
	}
	return WriteMatrixReport(out, cs, w)
}

// writeMatrixCharts writes, per driver, requests/s and CPU per request by
// scheme and concurrency, a bar per strategy present (matrixModes).
func writeMatrixCharts(dir string, cs []results.MatrixCell) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create charts dir: %w", err)
	}
	drivers, schemes, concs := matrixAxes(cs)
	modes := matrixModes(cs)
	for _, d := range drivers {
		for _, ch := range []struct {
			file, title, ylabel, format string
			value                       func(results.MatrixCell) float64
		}{
			{"matrix-req-per-s-" + d + ".svg", "Requests/s, driver " + d, "req/s", "%.0f", func(c results.MatrixCell) float64 { return c.ReqPerS }},
			{"matrix-cpu-per-req-" + d + ".svg", "CPU per request, driver " + d, "ms CPU / req", "%.2f", func(c results.MatrixCell) float64 { return c.CPUMSPerReq }},
		} {
			var groups []string
			vals := map[string][]float64{}
			for _, s := range schemes {
				for _, n := range concs {
					groups = append(groups, fmt.Sprintf("%s c%d", s, n))
					for _, m := range modes {
						v := nan
						if c, ok := findCell(cs, d, s, m, n); ok {
							v = ch.value(c)
						}
						vals[m] = append(vals[m], v)
					}
				}
			}
			p := plot.New()
			p.Title.Text = ch.title
			p.Y.Label.Text = ch.ylabel
			p.Y.Min = 0
			p.Legend.Top = true
			ymax := 0.0
			for k, m := range modes {
				pv := make(plotter.Values, len(groups))
				for i, v := range vals[m] {
					if v > 0 {
						pv[i] = v
						ymax = max(ymax, v)
					}
				}
				bars, err := plotter.NewBarChart(pv, vg.Points(10))
				if err != nil {
					return fmt.Errorf("plot %s: %w", ch.file, err)
				}
				bars.Color = seriesColor(m, false)
				bars.LineStyle.Width = 0
				bars.Offset = vg.Length(float64(k)-float64(len(modes)-1)/2) * vg.Points(10)
				p.Add(bars)
				label := m
				if sm := studyMode(m); sm != m {
					label = sm + " (" + m + ")"
				}
				p.Legend.Add(label, bars)
			}
			p.Y.Max = max(ymax*1.3, 1)
			p.NominalX(groups...)
			p.X.Tick.Label.Rotation = math.Pi / 4
			p.X.Tick.Label.XAlign = -1
			if err := SaveSVG(filepath.Join(dir, ch.file), p, 22*vg.Centimeter, 11*vg.Centimeter); err != nil {
				return fmt.Errorf("write chart %s: %w", ch.file, err)
			}
		}
	}
	return nil
}
