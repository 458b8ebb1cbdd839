package audit

// ClientNote is what a library does by default, from its own source (the
// worker READMEs cite the file), what that costs on the vendor path, and
// the one-line fix: the library's documented setting or usage.
type ClientNote struct {
	Default string `json:"default"`
	Cost    string `json:"cost"`
	Fix     string `json:"fix"`
}

// clientNotes are the ClientNote of each ThirdPartyClients worker; the
// measured figures and verdicts come from the audits, never from here.
var clientNotes = map[string]ClientNote{
	"python-requests": {
		Default: "requests/api.py opens a new Session per requests.post call and closes it (workers/python/README.md)",
		Cost:    "a new TCP and TLS connection per send (and per token call)",
		Fix:     "one requests.Session() for the process",
	},
	"python-session": {
		Default: "urllib3's pool has no idle timeout; it checks a kept connection (is_connection_dropped) before reuse; requests' adapter: Retry(0, read=False) (workers/python/README.md)",
		Cost:    "an idle connection outlives the vendor's keep-alive: a close that arrives after the check fails the send",
		Fix:     "close idle connections below the vendor's keep-alive (e.g. session.close() after a pause, or a urllib3 pool with a shorter life)",
	},
	"python-httpx": {
		Default: "httpx/_config.py: Limits(keepalive_expiry=5.0), HTTPTransport(retries=0) (workers/python/README.md)",
		Cost:    "a new connection after any 5 s pause; no replay",
		Fix:     "none needed for the keep-alive race; raise keepalive_expiry below the vendor's keep-alive to keep connections across pauses",
	},
	"java-okhttp": {
		Default: "okhttp3.ConnectionPool(): 5 idle connections for 5 minutes; retryOnConnectionFailure = true (workers/java/README.md, RetryAndFollowUpInterceptor.recover)",
		Cost:    "an idle connection kept past the vendor's 75 s keep-alive; a POST already written on a connection that fails is sent again by the library (ClientTest at image build)",
		Fix:     "OkHttpClient.Builder().retryOnConnectionFailure(false).connectionPool(ConnectionPool(5, keep-alive - margin, SECONDS))",
	},
	"java-apache": {
		Default: "PoolingHttpClientConnectionManager: no idle eviction, validateAfterInactivity 2000 ms; DefaultHttpRequestRetryHandler retries a POST only when not sent (workers/java/README.md)",
		Cost:    "an idle connection is kept until the server closes it; the stale check before reuse narrows, not closes, the race; RequestConfig's socket timeout bounds each read, not the whole call",
		Fix:     "HttpClients.custom().evictIdleConnections(keep-alive - margin, SECONDS) (or setConnectionTimeToLive)",
	},
	"node-axios": {
		Default: "lib/adapters/http.js uses https.globalAgent; on Node 18 it has keepAlive: false (workers/node/README.md)",
		Cost:    "a new TCP and TLS connection per send (and per token call)",
		Fix:     "axios.create({httpsAgent: new https.Agent({keepAlive: true, timeout: keep-alive - margin})})",
	},
	"node-got": {
		Default: "got's options leave agent undefined (Node's global agent, keepAlive: false on Node 18); retry.methods excludes POST (workers/node/README.md)",
		Cost:    "a new TCP and TLS connection per send (and per token call); no replay",
		Fix:     "got.extend({agent: {https: new https.Agent({keepAlive: true, timeout: keep-alive - margin})}})",
	},
}

// comparisonPage is clients.html: one self-contained page (inline CSS, no
// script, nothing fetched), failures first.
var comparisonPage = newPage("clients", `{{template "head" "Third-party HTTP clients on the vendor path"}}
<body>
<h1>Third-party HTTP clients on the vendor path</h1>
<p>Each row is one audit; rules and sources: docs/worker-contract.md#the-audit. Rebuilt offline from the result files with <code>./run.sh report results/audit</code>.</p>
{{template "failures" (clientFailures .)}}
{{if .Changes}}<h2>Verdicts changed</h2>
<p>When the audits were last regenerated (verdict-changes.md names the commits):</p>
<ul id="changes">
{{range .Changes}}<li>{{.}}</li>
{{end}}</ul>{{end}}
<h2>What each library does by default</h2>
<table id="notes">
<thead><tr><th>client</th><th>default (library source)</th><th>what it costs here</th><th>fix (one line)</th><th>fix verified</th></tr></thead>
<tbody>
{{range .Rows}}<tr data-fix="{{.Worker}}-{{.Profile}}"><td>{{.Worker}} ({{.Profile}})</td><td>{{.Note.Default}}</td><td>{{.Note.Cost}}</td><td>{{.Note.Fix}}</td><td class="{{fixClass .Fix}}">{{fixText .}}</td></tr>
{{end}}</tbody>
</table>
<p id="fix-summary">{{fixSummary .}}</p>
<h2>With the fix applied</h2>
<ul id="fixed">
{{range fixedLines .}}<li>{{.}}</li>
{{end}}</ul>
<h2>Figures</h2>
<p>Connections from nginx's access log; latency and CPU from the worker's records, beside nginx's p50 ($request_time, warm-up left out) and the container's cgroup CPU over the same sends; the Go worker's pooled run beside each.</p>
<table id="figures">
<thead><tr><th>client</th><th>profile</th><th>COUNT</th><th>RTT ms</th><th>connections / sends</th><th>per send</th><th>p50 ms</th><th>p99 ms</th><th>nginx p50 ms</th><th>CPU ms/send</th><th>cgroup CPU ms/send</th><th>Go CPU ms/send</th><th>Go p50 ms</th></tr></thead>
<tbody>
{{range $r := .Rows}}{{range .RTTs}}<tr><td>{{$r.Worker}}</td><td>{{$r.Profile}}</td><td class="num">{{$r.Count}}</td><td class="num">{{.RTTMS}}</td><td class="num">{{.Connections}} / {{.Sends}}</td><td class="num">{{f3 .ConnPerSend}}</td><td class="num">{{f1 .P50MS}}</td><td class="num">{{f1 .P99MS}}</td><td class="num">{{ms .NginxP50MS}}</td><td class="num">{{cpu .CPUMS}}</td><td class="num">{{cgroup .CgroupCPUMS}}</td><td class="num">{{cpu .GoCPUMS}}</td><td class="num">{{cpu .GoP50MS}}</td></tr>
{{end}}{{end}}</tbody>
</table>
<h2>Rules side by side</h2>
<table id="rules">
<thead><tr><th>client</th><th>profile</th><th>idle race at its own idle timeout</th><th>re-sends on its own</th><th>POST repeated</th><th>stall</th><th>duplicates</th><th>lost (the vendor never got it)</th><th>lost (the worker's records miss it)</th><th>faults pass / fail / n.a.</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.Worker}}</td><td>{{.Profile}}</td><td class="{{class .Idle.Verdict}}">{{.Idle.Verdict}}: {{.Idle.Evidence}}</td><td class="{{class .ClientReplay.Verdict}}">{{.ClientReplay.Verdict}}: {{.ClientReplay.Evidence}}</td><td class="{{class .Replay.Verdict}}">{{.Replay.Verdict}}: {{.Replay.Evidence}}</td><td class="{{class .Stall.Verdict}}">{{.Stall.Verdict}}: {{.Stall.Evidence}}</td><td class="{{class .Duplicates.Verdict}}">{{.Duplicates.Verdict}}: {{.Duplicates.Evidence}}</td><td class="{{class .Lost.Verdict}}">{{.Lost.Verdict}}: {{.Lost.Evidence}}</td><td class="{{class .RecordsLost.Verdict}}">{{.RecordsLost.Verdict}}: {{.RecordsLost.Evidence}}</td><td>{{.FaultsPass}} / {{.FaultsFail}} / {{.FaultsNA}}{{range .FaultFailures}} {{.}}{{end}}</td></tr>
{{end}}</tbody>
</table>
<p>Each audit's own page: {{range .Rows}}<a href="{{.Folder}}/audit.html">{{.Folder}}</a> {{end}}{{range .Fixed}}<a href="{{.Folder}}/audit.html">{{.Folder}}</a> {{end}}</p>
{{range .Rows}}{{if .Machine}}<p class="na">Machine ({{.Folder}}): {{.Machine}}</p>{{end}}{{end}}
</body>
</html>
`)
