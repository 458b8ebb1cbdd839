package defaults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/notifier-lab/notifier-lab/scenarios/report"
)

// WriteResult writes dir/client-defaults.json, dir/summary.md and the
// chart (dir/charts/). Errors: the file system's, or the chart's.
func WriteResult(dir string, r Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", ResultFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ResultFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ResultFile, err)
	}
	return WriteReport(dir, r)
}

// WriteReport writes dir/summary.md and the chart (dir/charts/) of r, and
// leaves dir/client-defaults.json as it is: `./run.sh report` re-renders a
// committed run without rewriting its data. Errors: the file system's, or
// the chart's.
func WriteReport(dir string, r Result) error {
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(Summary(r)), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SummaryFile, err)
	}
	svg, err := Chart(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(ChartFile)), 0o755); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, ChartFile), svg, 0o644)
}

// ReadResult reads dir/client-defaults.json.
func ReadResult(dir string) (Result, error) {
	var r Result
	b, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if err != nil {
		return r, fmt.Errorf("read %s: %w", ResultFile, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("read %s: %w", ResultFile, err)
	}
	return r, nil
}

// connCell is a row's connection count as the table shows it, with where
// a second connection began when there are a few.
func connCell(r Row) string {
	s := fmt.Sprintf("%d", r.Count.Connections)
	if n := len(r.Count.NewConnAt); n > 1 && n <= 4 {
		var at []string
		for _, c := range r.Count.NewConnAt[1:] {
			at = append(at, fmt.Sprintf("%d", c))
		}
		s += " (new at call " + strings.Join(at, ", ") + ")"
	}
	return s
}

// verdict says what a row's connections were, in words: one for every
// call, one per call, or how many; a row nginx logged only part of says
// so first.
func verdict(r Row) string {
	switch c := r.Count.Connections; {
	case r.Count.Requests != r.Calls:
		return fmt.Sprintf("nginx logged %d of %d calls", r.Count.Requests, r.Calls)
	case c == 1:
		return "one connection"
	case c == r.Calls:
		return "one per call"
	default:
		return fmt.Sprintf("%d connections", c)
	}
}

// Summary is summary.md: the provenance, the set-up, the sequential table
// beside study B's counts, and the first-wave table.
func Summary(r Result) string {
	var b strings.Builder
	b.WriteString("# Client defaults\n\n")
	b.WriteString(r.Provenance.Header())
	fmt.Fprintf(&b, "RTT %d ms through Toxiproxy with its TCP handshake toxic on (a new connection costs the TCP round trip too, as study B's proxy modelled), "+
		"nginx offers %s (session cache and tickets off), keepalive_timeout %g s, answers at once (server delay %d ms); "+
		"each client runs in one container (%s, %g CPU) on the lab network and verifies the run's CA. "+
		"Connections are nginx's: distinct `$connection` values among each client's refkeys. "+
		"Study B: docs/studies.md (Node 23.5 on an Apple M3, its own proxy).\n\n",
		r.RTTMS, r.TLSOffered, r.KeepaliveTimeoutS, r.ServerDelayMS, r.ClientsImage, r.ClientCPUs)
	fmt.Fprintf(&b, "## %d sequential calls per client\n\n", r.Calls)
	b.WriteString("| client | connections (nginx) | study B (Node 23.5) | median ms/call | p90 ms | wall s | errors | in words | version |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.Sequential {
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %.1f | %.1f | %d | %s | %s |\n", x.Label, connCell(x), cmpOr(x.Study, "-"),
			x.MedianMS, x.P90MS, x.WallMS/1000, x.Errors, verdict(x), x.Version)
	}
	if len(r.Wave) > 0 {
		fmt.Fprintf(&b, "\n## %d calls, %d in flight: the first wave\n\n", r.WaveCalls, r.WaveInFlight)
		b.WriteString("| client | connections (nginx) | total ms | median ms/call | total / reusing agent's |\n|---|---|---|---|---|\n")
		base := math.NaN()
		for _, x := range r.Wave {
			if x.Name == "wave-node-agent-keepalive" {
				base = x.WallMS
			}
		}
		for _, x := range r.Wave {
			ratio := "-"
			if !math.IsNaN(base) && base > 0 {
				ratio = fmt.Sprintf("%.2fx", x.WallMS/base)
			}
			fmt.Fprintf(&b, "| %s | %d | %.0f | %.1f | %s |\n", x.Label, x.Count.Connections, x.WallMS, x.MedianMS, ratio)
		}
		fmt.Fprintf(&b, "\nStudy B at 150 ms RTT: reuse cut the total by 1.8x to 2.2x, because the first wave of %d still opens a connection each.\n", r.WaveInFlight)
	}
	for _, x := range r.Sequential {
		if x.Count.Connections > 1 && x.Count.Connections < x.Calls {
			fmt.Fprintf(&b, "\n%s: connection of each of the first %d calls, in order of first use: %s.\n", x.Name, len(x.Count.FirstCalls), ints(x.Count.FirstCalls))
		}
	}
	for _, x := range slices.Concat(r.Sequential, r.Wave) {
		if len(x.Connects) > 0 {
			fmt.Fprintf(&b, "\n%s: undici reported %d connect(s), after %s call(s) had started.\n", x.Name, len(x.Connects), connectsAt(x.Connects))
		}
		if x.FirstError != "" {
			fmt.Fprintf(&b, "\n%s: first error: `%s`\n", x.Name, x.FirstError)
		}
	}
	for _, n := range versionNotes(r) {
		b.WriteString("\n" + n + "\n")
	}
	b.WriteString("\n![median ms per call](" + ChartFile + ")\n")
	b.WriteString("\nRe-render this page and its chart from " + ResultFile + ", offline (no Docker): `./run.sh report <this folder>` (e.g. `./run.sh report results/client-defaults`).\n")
	return b.String()
}

// versionNotes says where the run's clients differ from study B's by
// version, from what the scripts printed: a Node whose https.globalAgent
// keeps no connection (Node 18 and before; keep-alive is the global
// agent's default from Node 19, study B ran 23.5), and a Node script that
// could not name its undici. Sources: docs/network.md, "Node 18 here,
// Node 23.5 in the study" (Node's CHANGELOG_V19, nodejs/node#43522; the
// image's undici by dpkg).
func versionNotes(r Result) []string {
	var out []string
	for _, x := range r.Sequential {
		if x.Name != "node-https-default" || !strings.Contains(x.Version, "globalAgent.keepAlive=false") {
			continue
		}
		node, _, _ := strings.Cut(x.Version, ",")
		out = append(out, fmt.Sprintf("Node here is %s, study B's 23.5: this Node's `https.globalAgent` keeps no connection (keepAlive=false, printed by the run), "+
			"so `https.request` without an agent opened %d connections for %d calls where study B's opened 1; from Node 19 the global agent keeps alive "+
			"(docs/network.md, \"Node 18 here, Node 23.5 in the study\"). `agent: false` and `keepAlive: false` open one per call in both.",
			strings.TrimSpace(node), x.Count.Connections, x.Calls))
	}
	for _, x := range r.Sequential {
		if strings.Contains(x.Version, "no process.versions.undici") {
			out = append(out, "\"undici bundled (no process.versions.undici)\": the script of this run could not name the undici behind `fetch`; "+
				"the image's is Debian's node-undici 5.15.0, which Debian's Node 18 uses instead of a bundled copy (dpkg in the image; docs/network.md, \"Why fetch opens a second connection\").")
			break
		}
	}
	return out
}

func ints(v []int) string {
	var s []string
	for _, n := range v {
		s = append(s, fmt.Sprintf("%d", n))
	}
	return strings.Join(s, " ")
}

func connectsAt(cs []Connect) string {
	var s []string
	for _, c := range cs {
		s = append(s, fmt.Sprintf("%d", c.AfterCallsStarted))
	}
	return strings.Join(s, ", ")
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Chart draws the sequential clients' median ms per call, a bar each,
// labelled with the connections nginx counted. Returns the SVG's bytes.
func Chart(r Result) ([]byte, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%d sequential calls at %d ms RTT: median per call", r.Calls, r.RTTMS)
	p.Title.Padding = vg.Points(8)
	p.Y.Label.Text = "median ms per call"
	var vals plotter.Values
	var names []string
	var marks plotter.XYLabels
	ymax := 0.0
	for i, x := range r.Sequential {
		v := math.Max(x.MedianMS, 0)
		vals = append(vals, v)
		names = append(names, strings.TrimPrefix(x.Name, "node-"))
		marks.XYs = append(marks.XYs, plotter.XY{X: float64(i), Y: v})
		marks.Labels = append(marks.Labels, fmt.Sprintf("%d conn", x.Count.Connections))
		ymax = math.Max(ymax, v)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("client-defaults chart: no client")
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(22))
	if err != nil {
		return nil, fmt.Errorf("client-defaults chart: %w", err)
	}
	bars.Color = color.RGBA{R: 0x2e, G: 0x6d, B: 0xb4, A: 0xff}
	labels, err := plotter.NewLabels(marks)
	if err != nil {
		return nil, fmt.Errorf("client-defaults chart: %w", err)
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].XAlign = -0.5
	}
	labels.Offset = vg.Point{Y: vg.Points(4)}
	p.Add(bars, labels)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, -0.5
	p.X.Min, p.X.Max = -0.7, float64(len(vals))-0.3
	p.Y.Min, p.Y.Max = 0, math.Max(ymax*1.2, 10)
	var out bytes.Buffer
	if err := report.WriteSVG(&out, p, 20*vg.Centimeter, 12*vg.Centimeter); err != nil {
		return nil, fmt.Errorf("client-defaults chart: %w", err)
	}
	return out.Bytes(), nil
}
