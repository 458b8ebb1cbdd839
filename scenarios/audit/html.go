package audit

import (
	"fmt"
	"io"
)

// page is audit.html: one self-contained page (inline CSS, charts as
// inline SVG, no script, nothing fetched), failures first.
var page = newPage("audit", `{{template "head" (printf "Audit: %s on %s" .Worker .Profile)}}
<body>
<h1>Audit: worker {{.Worker}}, profile {{.Profile}}</h1>
<p class="banner {{if .Pass}}pass{{else}}fail{{end}}" id="verdict">{{verdict .}}</p>
{{if .Date}}<p>Date: {{.Date}}. Rules and sources: docs/worker-contract.md.</p>{{end}}
{{template "failures" (auditFailures .)}}
<h2>Rules</h2>
<table id="rules">
<thead><tr><th>rule</th><th>verdict</th><th>evidence</th><th>source</th></tr></thead>
<tbody>
{{range .Rules}}<tr data-rule="{{.ID}}"><td>{{.Name}}</td><td class="{{class .Verdict}}">{{.Verdict}}</td><td>{{.Evidence}}</td><td>{{.Source}}</td></tr>
{{end}}</tbody>
</table>
<h2>Probes</h2>
<p>What the lab measured of the client from outside (nginx's access log, WireMock's journal), on a stack of its own; "stated" is what the worker's docs or its library say, shown beside the measure and never judged.</p>
<table id="probes">
<thead><tr><th>probe</th><th>measured</th><th>stated</th><th>how</th></tr></thead>
<tbody>
{{range .Probes}}<tr><td>{{.Probe}}</td><td>{{.Measured}}</td><td>{{.Stated}}</td><td>{{.How}}</td></tr>
{{end}}</tbody>
</table>
<h2>Figures</h2>
<p>{{figuresIntro}}</p>
<table id="figures">
<thead><tr><th>worker</th><th>RTT ms</th><th>sends/s</th><th>p50 ms</th><th>p99 ms</th><th>nginx p50 / p99 ms</th><th>CPU ms/send</th><th>cgroup CPU ms/send</th><th>connections</th><th>sends</th><th>TLS</th><th>latency source</th><th>CPU source</th><th>own figures vs outside</th></tr></thead>
<tbody>
{{range .Figures}}<tr><td>{{.Worker}}</td><td class="num">{{.RTTMS}}</td><td class="num">{{f1 .SendsPerS}}</td><td class="num">{{own .P50MS}}</td><td class="num">{{own .P99MS}}</td><td class="num">{{ms .NginxP50MS}} / {{ms .NginxP99MS}}</td><td class="num">{{cpu .CPUMSPerSend}}</td><td class="num">{{cgroup .CgroupCPUMSPerSend}}</td><td class="num">{{.Connections}}</td><td class="num">{{.Sends}}</td><td>{{dash .TLS}}</td><td>{{.LatencySource}}</td><td>{{.CPUSource}}</td><td>{{dash .SelfCheck}}</td></tr>
{{end}}</tbody>
</table>
{{if .Charts}}<h2>Charts</h2>
<div class="charts">
{{range .Charts}}<figure>{{svg .SVG}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}</div>{{end}}
</body>
</html>
`)

// HTML writes audit.html for rep to w. Errors: the template's or w's.
func HTML(w io.Writer, rep Report) error {
	if err := page.Execute(w, rep); err != nil {
		return fmt.Errorf("write %s: %w", HTMLFile, err)
	}
	return nil
}
