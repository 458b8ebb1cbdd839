package defaults

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Paths inside the client container (Run copies them in).
const (
	ScriptsDir = "/lab/clients"  // clients/*.js, *.py, *.sh
	GoClient   = "/lab/goclient" // the static build of ./cmd/goclient
)

// Client is one client at its defaults: a row of the tables.
type Client struct {
	// Name is the row's id and the refkey prefix of its calls
	// ("node-fetch": refkeys node-fetch-1, node-fetch-2, ...).
	Name string `json:"name"`
	// Label is what a reader calls it ("Node fetch()").
	Label string `json:"label"`
	// Argv is the command run in the client container.
	Argv []string `json:"argv"`
	// Study is study B's connection count for the same client and
	// sequential calls (docs/studies.md, Node 23.5), "" when the study
	// has none.
	Study string `json:"study,omitempty"`
}

// Sequential are the clients of the first table: CALLS calls one after
// another, in run order.
var Sequential = []Client{
	{Name: "node-fetch", Label: "Node `fetch()` (undici)", Argv: node("fetch"), Study: "2 of 200"},
	{Name: "node-https-default", Label: "Node `https.request`, no agent option (`https.globalAgent`)", Argv: node("https-default"), Study: "1 of 200"},
	{Name: "node-agent-false", Label: "Node `https.request`, `agent: false`", Argv: node("agent-false"), Study: "200 of 200"},
	{Name: "node-agent-keepalive-false", Label: "Node `new https.Agent({keepAlive: false})`", Argv: node("agent-keepalive-false"), Study: "200 of 200"},
	{Name: "curl-loop", Label: "curl, one process per call (a shell loop)", Argv: []string{"bash", ScriptsDir + "/curl.sh", "loop"}, Study: "20 of 20"},
	{Name: "curl-multi", Label: "curl, one process with every URL", Argv: []string{"bash", ScriptsDir + "/curl.sh", "multi"}, Study: "1 of 20"},
	{Name: "python-requests-post", Label: "Python `requests.post`", Argv: python("requests-post")},
	{Name: "python-session", Label: "Python `requests.Session().post`", Argv: python("session")},
	{Name: "go-http-post", Label: "Go `http.Post` (`http.DefaultClient`)", Argv: []string{GoClient}},
}

// Wave are the clients of the second table: WaveCalls calls with
// WaveInFlight in flight (study B: 10 in flight at 150 ms RTT, reuse cut
// the total by 1.8x to 2.2x because the first wave pays its handshakes).
var Wave = []Client{
	{Name: "wave-node-agent-keepalive", Label: "Node `https.Agent({keepAlive: true})`", Argv: node("agent-keepalive")},
	{Name: "wave-node-agent-false", Label: "Node `agent: false`", Argv: node("agent-false")},
	{Name: "wave-node-fetch", Label: "Node `fetch()`", Argv: node("fetch")},
	{Name: "wave-go-http-post", Label: "Go `http.Post` (`MaxIdleConnsPerHost` 2)", Argv: []string{GoClient}},
}

func node(mode string) []string   { return []string{"node", ScriptsDir + "/defaults.js", mode} }
func python(mode string) []string { return []string{"python3", ScriptsDir + "/defaults.py", mode} }

// ClientNames are every client's name, sequential then wave.
func ClientNames() []string {
	var out []string
	for _, c := range slices.Concat(Sequential, Wave) {
		out = append(out, c.Name)
	}
	return out
}

// Connect is one connection undici reported opening (diagnostics_channel
// undici:client:connected), with the calls started before it.
type Connect struct {
	Channel           string `json:"channel"`
	AfterCallsStarted int    `json:"after_calls_started"`
	LocalPort         int    `json:"local_port"`
}

// Output is the one JSON line a client script prints: each successful
// call's time in ms (request start to the answer's last byte), the whole
// run's wall time, the failed calls, the library versions, and for fetch
// undici's connects.
type Output struct {
	MS         []float64 `json:"ms"`
	WallMS     float64   `json:"wall_ms"`
	Errors     int       `json:"errors"`
	FirstError string    `json:"first_error"`
	Version    string    `json:"version"`
	Connects   []Connect `json:"connects,omitempty"`
}

// ErrNoOutput is returned (wrapped) by ParseOutput when no line of the
// script's output is its JSON result.
var ErrNoOutput = errors.New("no result line")

// ParseOutput finds the script's result in its output (stdout and stderr
// interleaved): the last line that is a JSON object with the key "ms".
// Errors: ErrNoOutput (with the output's last line), or that line's JSON
// error.
func ParseOutput(out string) (Output, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "{") || !strings.Contains(l, `"ms"`) {
			continue
		}
		var o Output
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			return o, fmt.Errorf("parse result line: %w", err)
		}
		return o, nil
	}
	return Output{}, fmt.Errorf("%w: last line %q", ErrNoOutput, lines[len(lines)-1])
}
