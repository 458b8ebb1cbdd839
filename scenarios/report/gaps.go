package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// GapChartFile is the chart of one run with gaps: every measured send's
// latency against the gap before it, reused and new connections apart.
func GapChartFile(mode string, rttMS int) string {
	return fmt.Sprintf("gaps-%s-%dms.svg", mode, rttMS)
}

// GapHistChartFile is the latency histogram of one run with gaps, reused
// and new connections stacked: the bimodal distribution.
func GapHistChartFile(mode string, rttMS int) string {
	return fmt.Sprintf("gaps-hist-%s-%dms.svg", mode, rttMS)
}

// gapSection is the summary's "Traffic with gaps" section: per run with a
// GapStudy, its arrivals and time scale, the table per gap bucket, the
// overall medians beside the case's production figures, and the shape
// check; "" when no run has gaps.
func gapSection(rs []results.Result) string {
	var b strings.Builder
	for _, r := range rs {
		g := r.Gaps
		if g == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n## Traffic with gaps\n\n")
			fmt.Fprintf(&b, "The case's production follow-up (docs/case.md, \"Production follow-up\"): the vendor call's median was %.1f ms before the fix (a new connection each) and %.1f ms after it, not the %.1f ms of the sends that reused a connection, because sparse notifications arrive tens of seconds apart and the JDK client closes a connection idle for %.0f s. These runs publish the measured messages at gaps while the worker runs; a send's gap is the time since the previous send ended (its handling start minus that message's end).\n",
				results.CaseBeforeP50MS, results.CaseAfterP50MS, results.CaseReusedP50MS, results.CaseClientIdleS)
		}
		fmt.Fprintf(&b, "\n### %s, %d ms RTT: ARRIVALS=%s\n\n", r.Mode, r.RTTMS, g.Arrivals)
		if g.TimeScale > 1 {
			fmt.Fprintf(&b, "TIME_SCALE=%d: the run divided every gap, the client's idle timeout and nginx's keepalive_timeout by %d (the run's idle timeout %.3f s, keepalive_timeout %.3f s); gaps below are multiplied back to the case's time. RTT, think time and handshakes are not scaled.\n\n",
				g.TimeScale, g.TimeScale, g.ClientIdleS/float64(g.TimeScale), g.KeepaliveS/float64(g.TimeScale))
		}
		fmt.Fprintf(&b, "Client idle timeout %s s (the pooled client's; %s), nginx keepalive_timeout %s s, case time. %d measured sends.\n\n",
			trimF(g.ClientIdleS), idleNote(r.Mode), trimF(g.KeepaliveS), g.Overall.N)
		mdTable(&b, gapTable(g))
		fmt.Fprintf(&b, "\n| median | lab | case (production) |\n|---|---|---|\n")
		fmt.Fprintf(&b, "| all sends | %s ms | %.1f ms after the fix (%.1f ms before) |\n", f1(g.Overall.P50MS), results.CaseAfterP50MS, results.CaseBeforeP50MS)
		fmt.Fprintf(&b, "| reused connection | %s ms | %.1f ms |\n", medianLabel(g.Overall.Reused, g.Overall.P50ReusedMS), results.CaseReusedP50MS)
		fmt.Fprintf(&b, "| new connection | %s ms | - |\n", medianLabel(g.Overall.N-g.Overall.Reused, g.Overall.P50NewMS))
		fmt.Fprintf(&b, "| reuse share | %s | - |\n", shareLabel(g.Overall))
		b.WriteString(gapBeside(r, g))
		sh := g.Shape()
		fmt.Fprintf(&b, "\nShape checks (the case's shape):\n\n- %s the overall median (%s ms) lies between the reused (%s ms) and the new-connection (%s ms) medians\n",
			passLabel(sh.MedianBetween), f1(g.Overall.P50MS), f1(g.Overall.P50ReusedMS), f1(g.Overall.P50NewMS))
		fmt.Fprintf(&b, "- %s the reuse share falls where the gap passes the idle timeout (%s s): %s below it (want >= %.0f%%), %s at or above it (want <= %.0f%%)\n",
			passLabel(sh.ReuseFalls), trimF(g.ClientIdleS), pct(sh.ReuseBelow), results.MinReuseBelow*100, pct(sh.ReuseAbove), results.MaxReuseAbove*100)
		fmt.Fprintf(&b, "\nCharts: [latency against gap](charts/%s), [latency histogram](charts/%s).\n", GapChartFile(r.Mode, r.RTTMS), GapHistChartFile(r.Mode, r.RTTMS))
	}
	return b.String()
}

// gapBeside says by how much the run's medians differ from the case's
// production figures and why, from the run's own settings: the vendor's
// think time (the lab keeps the load test's SERVER_DELAY_MS; the case
// publishes no production think time), the new connection's penalty
// (the fixed client's handshake here against the old TLS 1.2 engine that
// built a client per send) and where the overall median sits between the
// two modes, which follows the reuse share the case does not publish.
func gapBeside(r results.Result, g *results.GapStudy) string {
	o := g.Overall
	if o.Reused == 0 || o.Reused == o.N {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nBeside the case (by how much and why; docs/studies.md, \"Traffic with gaps\"):\n\n")
	fmt.Fprintf(&b, "- reused sends: %s ms against production's %.1f ms (%+.1f ms): the lab's vendor thinks %d ms per send (SERVER_DELAY_MS, the case's load test) and the case publishes no think time for production's vendor, so the milliseconds do not compare: compare the shape.\n",
		f1(o.P50ReusedMS), results.CaseReusedP50MS, o.P50ReusedMS-results.CaseReusedP50MS, r.ServerDelayMS)
	fmt.Fprintf(&b, "- a new connection costs %.1f ms here (new - reused median: the %s client's own handshake, TCP_HANDSHAKE=%s) against %.1f ms in production before the fix (%.1f - %.1f: a TLS 1.2 engine and a client built per send).\n",
		o.P50NewMS-o.P50ReusedMS, r.Mode, cmp.Or(r.TCPHandshake, "off"), results.CaseBeforeP50MS-results.CaseReusedP50MS, results.CaseBeforeP50MS, results.CaseReusedP50MS)
	fmt.Fprintf(&b, "- the overall median sits %.2f of the way from the reused median to the new one (production: %.2f, with its before-fix median as the new one): the position follows the reuse share, %s here, which the case does not publish.\n",
		(o.P50MS-o.P50ReusedMS)/(o.P50NewMS-o.P50ReusedMS), (results.CaseAfterP50MS-results.CaseReusedP50MS)/(results.CaseBeforeP50MS-results.CaseReusedP50MS), shareLabel(o))
	return b.String()
}

// idleNote says whether the run's client used the idle timeout.
func idleNote(mode string) string {
	if mode == "pooled" {
		return "this run's"
	}
	return "this client keeps no connection, so it never reuses one"
}

// gapTable is one row per gap bucket.
func gapTable(g *results.GapStudy) (t table) {
	t.header = []string{"gap (case time)", "x idle timeout", "sends", "reused", "reuse share", "p50 ms", "p50 reused ms", "p50 new ms"}
	for _, k := range g.Buckets {
		rangeS := fmt.Sprintf("%s-%s s", trimF(k.LoS), trimF(k.HiS))
		rangeX := fmt.Sprintf("%s-%s", trimF(k.LoS/g.ClientIdleS), trimF(k.HiS/g.ClientIdleS))
		if k.HiS == 0 {
			rangeS, rangeX = ">= "+trimF(k.LoS)+" s", ">= "+trimF(k.LoS/g.ClientIdleS)
		}
		t.rows = append(t.rows, []string{rangeS, rangeX, thousands(k.N), thousands(k.Reused), shareLabel(k.GapStats),
			medianLabel(k.N, k.P50MS), medianLabel(k.Reused, k.P50ReusedMS), medianLabel(k.N-k.Reused, k.P50NewMS)})
	}
	o := g.Overall
	t.rows = append(t.rows, []string{"all", "", thousands(o.N), thousands(o.Reused), shareLabel(o),
		medianLabel(o.N, o.P50MS), medianLabel(o.Reused, o.P50ReusedMS), medianLabel(o.N-o.Reused, o.P50NewMS)})
	return t
}

func medianLabel(n int, v float64) string {
	if n == 0 {
		return "-"
	}
	return f1(v)
}

func shareLabel(s results.GapStats) string {
	if s.N == 0 {
		return "-"
	}
	return pct(s.ReuseShare())
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "- (no sends)"
	}
	return fmt.Sprintf("%.0f%%", v*100)
}

func passLabel(ok bool) string {
	if ok {
		return "pass:"
	}
	return "FAIL:"
}

// trimF formats v with up to 2 decimals, trailing zeros dropped.
func trimF(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

var (
	reusedColor = color.RGBA{R: 0x2c, G: 0x6f, B: 0xbb, A: 0xff}
	newColor    = color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}
	gapRefColor = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
)

// GapPlot plots r's sends: latency against the gap before each (case
// time), reused and new connections in two colours, the client's idle
// timeout as a vertical line and the case's three production medians as
// horizontal ones.
func GapPlot(r results.Result) (*plot.Plot, error) {
	g := r.Gaps
	if g == nil || len(g.Sends) == 0 {
		return nil, fmt.Errorf("plot gaps %s at %d ms: no sends with gaps in the result", r.Mode, r.RTTMS)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Latency by gap: %s, %d ms, ARRIVALS=%s, TIME_SCALE=%d", r.Mode, r.RTTMS, g.Arrivals, g.TimeScale)
	p.X.Label.Text = "gap since the previous send, s (case time)"
	p.Y.Label.Text = "send latency, ms"
	var reused, fresh plotter.XYs
	maxX, maxY := g.ClientIdleS*1.2, results.CaseBeforeP50MS
	for _, s := range g.Sends {
		xy := plotter.XY{X: s.GapS, Y: s.MS}
		if s.Reused {
			reused = append(reused, xy)
		} else {
			fresh = append(fresh, xy)
		}
		maxX, maxY = math.Max(maxX, s.GapS), math.Max(maxY, s.MS)
	}
	for _, set := range []struct {
		label string
		xys   plotter.XYs
		c     color.Color
		shape draw.GlyphDrawer
	}{{"reused connection", reused, reusedColor, draw.CircleGlyph{}}, {"new connection", fresh, newColor, draw.TriangleGlyph{}}} {
		if len(set.xys) > 0 {
			if err := addPoints(p, set.label, set.xys, set.c, set.shape); err != nil {
				return nil, err
			}
		}
	}
	if err := addLine(p, fmt.Sprintf("client idle timeout %s s", trimF(g.ClientIdleS)), plotter.XYs{{X: g.ClientIdleS, Y: 0}, {X: g.ClientIdleS, Y: maxY * 1.05}}, gapRefColor, true); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		label string
		v     float64
	}{{"case: median after the fix", results.CaseAfterP50MS}, {"case: median of reused sends", results.CaseReusedP50MS}, {"case: median before the fix", results.CaseBeforeP50MS}} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: c.v}, {X: maxX, Y: c.v}})
		if err != nil {
			return nil, fmt.Errorf("plot gaps: %w", err)
		}
		l.Color, l.Dashes, l.Width = gapRefColor, []vg.Length{vg.Points(1), vg.Points(3)}, vg.Points(0.8)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s %.1f ms", c.label, c.v), l)
	}
	p.Y.Min, p.X.Min = 0, 0
	p.Legend.Top = true
	return p, nil
}

// GapHistPlot is the latency histogram of r's sends, reused and new
// connections stacked, in bins of 1 ms (wider when the range is large).
func GapHistPlot(r results.Result) (*plot.Plot, error) {
	g := r.Gaps
	if g == nil || len(g.Sends) == 0 {
		return nil, fmt.Errorf("plot gap histogram %s at %d ms: no sends with gaps in the result", r.Mode, r.RTTMS)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range g.Sends {
		lo, hi = math.Min(lo, s.MS), math.Max(hi, s.MS)
	}
	width := math.Max(1, math.Ceil((hi-lo)/60))
	start := math.Floor(lo/width) * width
	bins := int((hi-start)/width) + 1
	reused, fresh := make(plotter.Values, bins), make(plotter.Values, bins)
	for _, s := range g.Sends {
		i := min(int((s.MS-start)/width), bins-1)
		if s.Reused {
			reused[i]++
		} else {
			fresh[i]++
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Latency histogram: %s, %d ms, ARRIVALS=%s (bins of %s ms)", r.Mode, r.RTTMS, g.Arrivals, trimF(width))
	p.X.Label.Text = fmt.Sprintf("send latency, ms (bin i starts at %s + i x %s)", trimF(start), trimF(width))
	p.Y.Label.Text = "sends"
	bw := vg.Points(math.Max(2, 360/float64(bins)))
	rb, err := plotter.NewBarChart(reused, bw)
	if err != nil {
		return nil, fmt.Errorf("plot gap histogram: %w", err)
	}
	rb.Color, rb.LineStyle.Width = reusedColor, 0
	nb, err := plotter.NewBarChart(fresh, bw)
	if err != nil {
		return nil, fmt.Errorf("plot gap histogram: %w", err)
	}
	nb.Color, nb.LineStyle.Width = newColor, 0
	nb.StackOn(rb)
	p.Add(rb, nb)
	p.Legend.Add("reused connection", rb)
	p.Legend.Add("new connection", nb)
	p.Legend.Top = true
	ticks := plot.ConstantTicks{}
	step := max(1, bins/10)
	for i := 0; i < bins; i += step {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: trimF(start + float64(i)*width)})
	}
	p.X.Tick.Marker = ticks
	return p, nil
}

// WriteGapCharts writes into dir (created) both gap charts of every
// result that has a GapStudy with sends.
func WriteGapCharts(dir string, rs []results.Result) error {
	for _, r := range rs {
		if r.Gaps == nil || len(r.Gaps.Sends) == 0 {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create charts dir: %w", err)
		}
		for _, c := range []struct {
			file string
			plot func(results.Result) (*plot.Plot, error)
		}{{GapChartFile(r.Mode, r.RTTMS), GapPlot}, {GapHistChartFile(r.Mode, r.RTTMS), GapHistPlot}} {
			p, err := c.plot(r)
			if err != nil {
				return err
			}
			if err := SaveSVG(filepath.Join(dir, c.file), p, chartWidth, chartHeight); err != nil {
				return err
			}
		}
	}
	return nil
}
