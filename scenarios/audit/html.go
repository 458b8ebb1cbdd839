package audit

import (
	"fmt"
	"html/template"
	"io"
)

// page is audit.html: one self-contained page (inline CSS, charts as
// inline SVG, no script, nothing fetched).
var page = template.Must(template.New("audit").Funcs(template.FuncMap{
	"cpu":     cpuCell,
	"dash":    dash,
	"f1":      func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"svg":     func(s string) template.HTML { return template.HTML(s) }, // our own charts (gonum/plot output), never user input
	"verdict": verdictLine,
	"class": func(v string) string {
		switch v {
		case Pass:
			return "pass"
		case Fail:
			return "fail"
		}
		return "na"
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Audit: {{.Worker}} on {{.Profile}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; max-width: 78rem; }
h1 { font-size: 1.5rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #17612a; font-weight: bold; }
.fail { color: #b3261e; font-weight: bold; }
.na { color: #666; }
.banner { padding: 0.6rem 1rem; border-radius: 4px; }
.banner.pass { background: #e6f4ea; }
.banner.fail { background: #fce8e6; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
figure { margin: 0; }
figure svg { width: 28rem; height: auto; }
figcaption { font-size: 0.85rem; color: #555; }
</style>
</head>
<body>
<h1>Audit: worker {{.Worker}}, profile {{.Profile}}</h1>
<p class="banner {{if .Pass}}pass{{else}}fail{{end}}" id="verdict">{{verdict .}}</p>
{{if .Date}}<p>Date: {{.Date}}. Rules and sources: docs/worker-contract.md.</p>{{end}}
<h2>Rules</h2>
<table id="rules">
<thead><tr><th>rule</th><th>verdict</th><th>evidence</th><th>source</th></tr></thead>
<tbody>
{{range .Rules}}<tr data-rule="{{.ID}}"><td>{{.Name}}</td><td class="{{class .Verdict}}">{{.Verdict}}</td><td>{{.Evidence}}</td><td>{{.Source}}</td></tr>
{{end}}</tbody>
</table>
<h2>Figures</h2>
<p>Connections and TLS versions come from nginx's access log; latency and CPU from the source named on each row.</p>
<table id="figures">
<thead><tr><th>worker</th><th>RTT ms</th><th>sends/s</th><th>p50 ms</th><th>p99 ms</th><th>CPU ms/send</th><th>connections</th><th>sends</th><th>TLS</th><th>latency source</th><th>CPU source</th></tr></thead>
<tbody>
{{range .Figures}}<tr><td>{{.Worker}}</td><td class="num">{{.RTTMS}}</td><td class="num">{{f1 .SendsPerS}}</td><td class="num">{{f1 .P50MS}}</td><td class="num">{{f1 .P99MS}}</td><td class="num">{{cpu .CPUMSPerSend}}</td><td class="num">{{.Connections}}</td><td class="num">{{.Sends}}</td><td>{{dash .TLS}}</td><td>{{.LatencySource}}</td><td>{{.CPUSource}}</td></tr>
{{end}}</tbody>
</table>
{{if .Charts}}<h2>Charts</h2>
<div class="charts">
{{range .Charts}}<figure>{{svg .SVG}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}</div>{{end}}
</body>
</html>
`))

// HTML writes audit.html for rep to w. Errors: the template's or w's.
func HTML(w io.Writer, rep Report) error {
	if err := page.Execute(w, rep); err != nil {
		return fmt.Errorf("write %s: %w", HTMLFile, err)
	}
	return nil
}
