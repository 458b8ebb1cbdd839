package pageload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// Files a run writes into OUT.
const (
	SummaryMD   = "summary.md"
	SummaryJSON = "pageload.json" // Summary
	ChartsDir   = "charts"
	ChartPages  = "pageload.svg"         // the image pages
	ChartBack   = "pageload-backend.svg" // the backend-bound page
)

// LoadFile is the per-load file of load id: "load-r3-p100-h2.json".
func LoadFile(id string) string { return "load-" + id + ".json" }

// Setup is what a run measured under, for the summary.
type Setup struct {
	RTTMS      int       `json:"rtt_ms"`
	ProbeMS    []float64 `json:"probe_rtt_ms"` // the measured round trip through each proxy (h1, h2), ms
	Runs       int       `json:"runs"`
	Resources  []int     `json:"resources"`
	APIDelayMS int       `json:"api_delay_ms"`
	ImageBytes int64     `json:"image_bytes"` // every image's PNG bytes together
	Images     int       `json:"images"`
	Chromium   string    `json:"chromium"`
	// NetNS is true when Chromium ran in Toxiproxy's network namespace
	// (loopback to the proxies), false when on the host through Docker's
	// published ports.
	NetNS    bool    `json:"netns"`
	Nginx    string  `json:"nginx"` // the image
	ElapsedS float64 `json:"elapsed_s"`
}

// Summary is OUT/pageload.json: the run's setup, cells and checks.
type Summary struct {
	Provenance *results.Provenance `json:"provenance,omitempty"`
	Setup      Setup               `json:"setup"`
	Cells      []Cell              `json:"cells"`
	Checks     []Check             `json:"checks"`
	Pass       bool                `json:"pass"`
}

// WriteReport writes s as OUT/pageload.json, OUT/summary.md and the two
// charts under OUT/charts. Errors: the file system's, the charts'.
func WriteReport(out string, s Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, SummaryJSON), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(out, ChartsDir), 0o755); err != nil {
		return fmt.Errorf("write charts: %w", err)
	}
	for name, backend := range map[string]bool{ChartPages: false, ChartBack: true} {
		p, err := Chart(s.Cells, backend)
		if err != nil {
			return err
		}
		if err := report.SaveSVG(filepath.Join(out, ChartsDir, name), p, 16*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, SummaryMD), []byte(Markdown(s)), 0o644); err != nil {
		return fmt.Errorf("write summary.md: %w", err)
	}
	return nil
}

// Report re-renders OUT's summary.md, pageload.json and charts from its
// load files and the setup and provenance in pageload.json, judging the
// loads again (./run.sh report OUT). Errors: a missing or unreadable
// file, the writers'.
func Report(out string, w io.Writer) error {
	b, err := os.ReadFile(filepath.Join(out, SummaryJSON))
	if err != nil {
		return fmt.Errorf("read page-load summary: %w", err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("read page-load summary: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(out, "load-*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("read page loads: no load-*.json in %s", out)
	}
	var loads []Load
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read page load: %w", err)
		}
		var l Load
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("read page load %s: %w", filepath.Base(f), err)
		}
		loads = append(loads, l)
	}
	s.Cells = Summarize(loads)
	s.Checks = Judge(loads, s.Cells, slices.Max(s.Setup.Resources))
	s.Pass = Passed(s.Checks)
	if err := WriteReport(out, s); err != nil {
		return err
	}
	for _, c := range s.Checks {
		fmt.Fprintln(w, c.VerdictLine())
	}
	fmt.Fprintf(w, "report: %s/%s and %s/ rewritten from %d loads\n", out, SummaryMD, ChartsDir, len(loads))
	return nil
}

// WriteLoad writes l as OUT/LoadFile(l.ID): indented JSON, its timing
// entries one per line (ms rounded to 0.1).
func WriteLoad(out string, l Load) error {
	b, err := EncodeLoad(l)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, LoadFile(l.ID)), b, 0o644); err != nil {
		return fmt.Errorf("write load %s: %w", l.ID, err)
	}
	return nil
}

// EncodeLoad is WriteLoad's JSON of l; json.Unmarshal reads it back into
// a Load (times rounded to 0.1 ms).
func EncodeLoad(l Load) ([]byte, error) {
	t := l.Timing.round1()
	l.Timing = Timing{}
	head, err := json.MarshalIndent(l, "", " ")
	if err != nil {
		return nil, fmt.Errorf("encode load %s: %w", l.ID, err)
	}
	i := bytes.LastIndex(head, []byte(`"timing": {`))
	if i < 0 {
		return nil, fmt.Errorf("encode load %s: no timing key", l.ID)
	}
	var b bytes.Buffer
	b.Write(head[:i])
	apiErr, _ := json.Marshal(t.APIError)
	nav, err := json.Marshal(t.Nav)
	if err != nil {
		return nil, fmt.Errorf("encode load %s: %w", l.ID, err)
	}
	fmt.Fprintf(&b, "\"timing\": {\n  \"api_error\": %s,\n  \"nav\": %s,\n  \"resources\": [", apiErr, nav)
	for k, e := range t.Resources {
		line, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("encode load %s: %w", l.ID, err)
		}
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n   ")
		b.Write(line)
	}
	b.WriteString("\n  ]\n }\n}\n")
	return b.Bytes(), nil
}

// Markdown is summary.md of s.
func Markdown(s Summary) string {
	var b strings.Builder
	st := s.Setup
	b.WriteString("# Page load: HTTP/1.1 against HTTP/2 in headless Chromium (study C)\n\n")
	b.WriteString(s.Provenance.Header())
	verdict := "FAIL"
	if s.Pass {
		verdict = "PASS"
	}
	fmt.Fprintf(&b, "**Verdict: %s.** Each page loaded %d times over each protocol at %d ms RTT, every load in a new browser context with the cache disabled:\n\n", verdict, st.Runs, st.RTTMS)
	for _, c := range s.Checks {
		fmt.Fprintf(&b, "- %s\n", c.VerdictLine())
	}
	b.WriteString("\n## Load time\n\n")
	b.WriteString("Page time in ms: the page's own Navigation Timing, `loadEventEnd - startTime`; on the backend page, until its API call's answer (Resource Timing `responseEnd` of the fetch, which does not hold the load event back). Median, then p25-p75 and min-max over the loads. Connections: nginx's distinct `$connection` per load. Study C: docs/studies.md.\n\n")
	b.WriteString("| page | HTTP/1.1 ms | HTTP/2 ms | HTTP/2 vs 1.1 | connections per load, h1 / h2 | study C, h1 / h2 ms | study C change (published) |\n|---|---|---|---|---|---|---|\n")
	for _, row := range rows(s.Cells) {
		h1, h2 := row[0], row[1]
		study := "- | -"
		if f, ok := StudyC(h1.Resources); ok {
			study = fmt.Sprintf("%s / %s | %s", ms(f.H1MS), ms(f.H2MS), f.Change)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s / %s | %s |\n", pageLabel(h1.CellKey), cellMS(h1), cellMS(h2),
			change(h1.MedianMS, h2.MedianMS), connLabel(h1), connLabel(h2), study)
	}
	fmt.Fprintf(&b, "\n![page time per page and protocol, beside study C](%s/%s)\n\n![the backend-bound page](%s/%s)\n\n", ChartsDir, ChartPages, ChartsDir, ChartBack)
	b.WriteString("## Setup\n\n")
	probe := "not measured"
	if len(st.ProbeMS) == 2 {
		probe = fmt.Sprintf("%.1f ms (h1 proxy) and %.1f ms (h2 proxy)", st.ProbeMS[0], st.ProbeMS[1])
	}
	where := "in Toxiproxy's network namespace (nsenter): the proxies on 127.0.0.1, no Docker port proxy, and no host interface changes under it"
	if !st.NetNS {
		where = "on the host, through Docker's published ports (nsenter was not available)"
	}
	fmt.Fprintf(&b, "- Path: headless Chromium (%s) %s -> Toxiproxy (latency %d ms per round trip, half each way, and the lab's handshake toxic: a new connection's first byte waits one RTT more, as the TCP handshake does) -> nginx (%s; TLS 1.2/1.3, session cache and tickets off; one server block with ALPN http/1.1 only, one with h2) -> WireMock for the API call (fixed delay %d ms). Measured round trip of one request on a warm connection: %s.\n",
		st.Chromium, where, st.RTTMS, st.Nginx, st.APIDelayMS, probe)
	fmt.Fprintf(&b, "- Pages: %s small images each (%d distinct %dx%d PNGs, %s bytes together, about %.1f KB each), relative URLs under `/run/<load id>/` so nginx's log tells the loads apart; the backend page is its HTML and one `fetch` started from the head.\n",
		joinInts(st.Resources), st.Images, ImageSide, ImageSide, ms(float64(st.ImageBytes)), float64(st.ImageBytes)/float64(max(st.Images, 1))/1000)
	fmt.Fprintf(&b, "- Each load: a new browser context (its own connections, disposed after the load), `Network.setCacheDisabled`, the host name mapped to 127.0.0.1 (no DNS), the run's CA trusted by its SPKI hash. The loads are interleaved (run 1 of every page and protocol, then run 2, ...), HTTP/1.1 first in odd runs and HTTP/2 first in even ones, after one warm-up load per protocol that is not counted. %d loads in %.0f s.\n\n",
		loadsOf(s.Cells), st.ElapsedS)
	b.WriteString("## Beside study C\n\n")
	b.WriteString(besideStudy(s))
	b.WriteString("\n## Files\n\n")
	fmt.Fprintf(&b, "`%s` (setup, cells, checks), one `load-<run>-<page>-<proto>.json` per load (the page's timing entries, nginx's view of the load: connections and their ids, protocols, statuses), `charts/`.\n", SummaryJSON)
	return b.String()
}

// besideStudy explains where and why the lab's figures differ from
// study C's.
func besideStudy(s Summary) string {
	var b strings.Builder
	st := s.Setup
	h1, ok1 := findCell(s.Cells, PageName(100), ProtoH1)
	h2, ok2 := findCell(s.Cells, PageName(100), ProtoH2)
	if ok1 && ok2 && h1.Loads > 0 && h2.Loads > 0 {
		f, _ := StudyC(100)
		fmt.Fprintf(&b, "- **The shape holds, the size differs.** At 100 images the lab's HTTP/2 page takes %s of HTTP/1.1's time (%s ms vs %s ms, %s); study C's took %s (%s vs %s ms, %s). The lab's absolute times are %.1fx and %.1fx the study's.\n",
			pct(h2.MedianMS/h1.MedianMS), ms(h2.MedianMS), ms(h1.MedianMS), change(h1.MedianMS, h2.MedianMS),
			pct(f.H2MS/f.H1MS), ms(f.H2MS), ms(f.H1MS), f.Change, h1.MedianMS/f.H1MS, h2.MedianMS/f.H2MS)
	}
	most := 0
	for _, n := range st.Resources {
		most = max(most, n)
	}
	inRow := (most + StudyConnectionsH1 - 1) / StudyConnectionsH1
	fmt.Fprintf(&b, "- **Round trips set the time here.** Study C gives no RTT. The lab adds %d ms to every round trip, so at %d images HTTP/1.1 pays about %d requests in a row on each of six connections, each connection after its TCP and TLS handshakes, where HTTP/2 asks for every image at once on one connection: the gap is wider than the study's, and by this count it grows with the RTT (a run at another `RTT=` shows it; this one ran at one).\n",
		st.RTTMS, most, inRow)
	if ok1 && ok2 && h1.Loads > 0 && h2.Loads > 0 {
		same := "as study C says browsers do (6 and 1)"
		if h1.ConnMin != StudyConnectionsH1 || h1.ConnMax != StudyConnectionsH1 || h2.ConnMax != StudyConnectionsH2 {
			same = fmt.Sprintf("where study C says browsers open %d and %d", StudyConnectionsH1, StudyConnectionsH2)
		}
		fmt.Fprintf(&b, "- **Connections.** At 100 images Chromium opened %s HTTP/1.1 connection(s) per load and %s HTTP/2, %s; nginx's log counted them.\n",
			connLabel(h1), connLabel(h2), same)
	}
	fmt.Fprintf(&b, "- **The machine and the path differ.** Study C ran nginx 1.29.6 on a machine it does not describe, over a real network; the lab runs %s and Chromium on %s, through Toxiproxy, whose latency toxic delays data in chunks and whose handshake toxic adds the TCP handshake's round trip. Its DNS variance (1-3 s lookups, which the study removed by pinning the address) has no counterpart: the lab maps the name to 127.0.0.1.\n",
		cmpOr(st.Nginx, "nginx"), machineOf(s.Provenance))
	if f, ok := StudyC(0); ok {
		if bh1, ok := findCell(s.Cells, BackendPage, ProtoH1); ok && bh1.Loads > 0 {
			bh2, _ := findCell(s.Cells, BackendPage, ProtoH2)
			verdict := "within the noise band of the check above, as in the study"
			if math.Abs(bh2.MedianMS-bh1.MedianMS) > NoiseBand(bh1, bh2) {
				verdict = "outside the noise band of the check above, unlike the study"
			}
			fmt.Fprintf(&b, "- **The backend-bound page.** Study C: %s vs %s ms (%s, as published) on a real page; the lab: %s vs %s ms (%s) on a page whose one API call waits %d ms in WireMock: %s. The page time is the backend's delay plus a few round trips.\n",
				ms(f.H1MS), ms(f.H2MS), f.Change, ms(bh1.MedianMS), ms(bh2.MedianMS), change(bh1.MedianMS, bh2.MedianMS), st.APIDelayMS, verdict)
		}
	}
	return b.String()
}

// machineOf describes the run's machine from its provenance.
func machineOf(p *results.Provenance) string {
	if p == nil {
		return "this machine"
	}
	return fmt.Sprintf("a %d-core machine shared with other runs (load %.1f at the start)", p.Machine.Cores, p.Machine.LoadAvg1)
}

// rows pairs each page's h1 and h2 cells.
func rows(cells []Cell) [][2]Cell {
	var out [][2]Cell
	for _, c := range cells {
		if c.Proto != ProtoH1 {
			continue
		}
		h2, _ := findCell(cells, c.Page, ProtoH2)
		out = append(out, [2]Cell{c, h2})
	}
	return out
}

func pageLabel(k CellKey) string {
	if k.Backend() {
		return "backend-bound (one API call)"
	}
	return fmt.Sprintf("%d images", k.Resources)
}

func cellMS(c Cell) string {
	if c.Loads == 0 {
		return "no load"
	}
	s := fmt.Sprintf("**%s** (%s-%s; %s-%s)", ms(c.MedianMS), ms(c.P25MS), ms(c.P75MS), ms(c.MinMS), ms(c.MaxMS))
	if c.Failed > 0 {
		s += fmt.Sprintf(", %d failed", c.Failed)
	}
	return s
}

func connLabel(c Cell) string {
	if c.Loads == 0 {
		return "-"
	}
	if c.ConnMin == c.ConnMax {
		return fmt.Sprint(c.ConnMin)
	}
	return fmt.Sprintf("%d-%d", c.ConnMin, c.ConnMax)
}

func loadsOf(cells []Cell) int {
	n := 0
	for _, c := range cells {
		n += c.Loads + c.Failed
	}
	return n
}

func pct(r float64) string { return fmt.Sprintf("%.0f%%", r*100) }

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// wholeTicks are gonum's default ticks labelled as whole ms.
type wholeTicks struct{}

// Ticks implements plot.Ticker.
func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = ms(ts[i].Value)
		}
	}
	return ts
}

// Colours of the chart: the lab's bars solid, the study's lighter.
var (
	colorH1      = color.RGBA{R: 0xd6, G: 0x60, B: 0x4d, A: 0xff}
	colorH2      = color.RGBA{R: 0x43, G: 0x93, B: 0xc3, A: 0xff}
	colorStudyH1 = color.RGBA{R: 0xf4, G: 0xa5, B: 0x82, A: 0xff}
	colorStudyH2 = color.RGBA{R: 0x92, G: 0xc5, B: 0xde, A: 0xff}
)

// Chart is the bar chart of the image pages (backend false) or of the
// backend-bound page: the lab's median per protocol beside study C's
// figure. Errors: no cell to draw, gonum/plot's.
func Chart(cells []Cell, backend bool) (*plot.Plot, error) {
	var groups []string
	var series [4]plotter.Values
	for _, row := range rows(cells) {
		if row[0].Backend() != backend {
			continue
		}
		groups = append(groups, pageLabel(row[0].CellKey))
		f, ok := StudyC(row[0].Resources)
		if !ok {
			f = StudyFigure{H1MS: math.NaN(), H2MS: math.NaN()}
		}
		for i, v := range []float64{row[0].MedianMS, row[1].MedianMS, f.H1MS, f.H2MS} {
			if math.IsNaN(v) {
				v = 0
			}
			series[i] = append(series[i], v)
		}
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("page-load chart: no cells")
	}
	p := plot.New()
	p.Title.Text = "Page time, median: the lab beside study C"
	if backend {
		p.Title.Text = "Backend-bound page, median: the lab beside study C"
	}
	p.Title.Padding = vg.Points(8)
	p.Y.Label.Text = "page time, ms"
	p.Y.Tick.Marker = wholeTicks{}
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(12)
	width := vg.Points(16)
	labels := []string{"lab HTTP/1.1", "lab HTTP/2", "study C HTTP/1.1", "study C HTTP/2"}
	colors := []color.Color{colorH1, colorH2, colorStudyH1, colorStudyH2}
	ymax := 0.0
	for k, vals := range series {
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("page-load chart: %w", err)
		}
		bars.Color = colors[k]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(k)-1.5) * width
		p.Add(bars)
		p.Legend.Add(labels[k], bars)
		var xys plotter.XYs
		var text []string
		for i, v := range vals {
			ymax = math.Max(ymax, v)
			xys = append(xys, plotter.XY{X: float64(i), Y: v})
			text = append(text, ms(v))
		}
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: text})
		if err != nil {
			return nil, fmt.Errorf("page-load chart: %w", err)
		}
		l.Offset = vg.Point{X: bars.Offset, Y: vg.Points(2)}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign = draw.XCenter
			l.TextStyle[i].Font.Size = vg.Points(6)
		}
		p.Add(l)
	}
	p.Y.Max = math.Max(ymax*1.45, 1)
	p.X.Min, p.X.Max = -0.6, float64(len(groups))-0.4
	p.NominalX(groups...)
	return p, nil
}
