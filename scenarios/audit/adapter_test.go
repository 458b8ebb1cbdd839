package audit

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/vendormock/journal"
)

const goodAdapter = `
env_names: {broker_url: MQ, queue: INBOX, vendor_url: GW, ca_file: CA, client_secret: SECRET}
env: {GW_TIMEOUT: "{{response_timeout_ms}}ms", MQ_HOST: "x"}
queues: {consume: jobs.in, routes: [jobs.retry, jobs.dead]}
message:
  body: '{"id": "{{refkey}}", "to": "{{recipient}}", "text": "{{text}}"}'
refkey: {body_path: $.meta.ref}
`

func TestAdapterFillsTheTeamsEnvironmentAndMessage(t *testing.T) {
	a, err := ParseAdapter([]byte(goodAdapter))
	if err != nil {
		t.Fatal(err)
	}
	env := a.Environment(map[string]string{"broker_url": "amqp://b", "queue": "jobs.in", "vendor_url": "https://v",
		"ca_file": "/lab/ca.pem", "client_secret": "s3", "response_timeout_ms": "10000"})
	for k, want := range map[string]string{"MQ": "amqp://b", "INBOX": "jobs.in", "GW": "https://v", "CA": "/lab/ca.pem",
		"SECRET": "s3", "GW_TIMEOUT": "10000ms", "MQ_HOST": "x"} {
		if env[k] != want {
			t.Errorf("env %s = %q, want %q", k, env[k], want)
		}
	}
	// A text with a quote must stay valid JSON in the team's schema.
	body := a.Render("rk-1", "+8210", `say "hi"`)
	var m map[string]string
	if err := json.Unmarshal(body, &m); err != nil || m["id"] != "rk-1" || m["text"] != `say "hi"` {
		t.Fatalf("rendered %s: %v, %v", body, m, err)
	}
	if got := a.AllQueues(); strings.Join(got, ",") != "jobs.in,jobs.retry,jobs.dead" {
		t.Fatalf("queues %v", got)
	}
	if a.GraceDuration().Seconds() != 15 || a.StartupDuration().Seconds() != 60 {
		t.Fatalf("defaults: grace %v startup %v", a.GraceDuration(), a.StartupDuration())
	}
}

// Each broken adapter names its field and what is allowed.
func TestAdapterErrorsNameTheField(t *testing.T) {
	for _, c := range []struct{ name, change, want string }{
		{"unknown top-level field", "imag: x\n", "field imag not found"},
		{"unknown lab value", "env_names: {broker: MQ, queue: INBOX, vendor_url: GW, ca_file: CA}\n", "env_names.broker: unknown lab value; allowed: broker_host, broker_password"},
		{"no broker variable", "env_names: {queue: INBOX, vendor_url: GW, ca_file: CA}\n", "env_names.broker_url: no variable carries"},
		{"unknown placeholder", "env: {X: \"{{nope}}\"}\n", "env.X: unknown placeholder {{nope}}"},
		{"routes missing", "queues: {consume: jobs.in}\n", "queues.routes: missing"},
		{"routes a word", "queues: {consume: jobs.in, routes: nowhere}\n", "want a list of queue names or the word none"},
		{"no refkey in body", "message: {body: '{\"to\": \"{{recipient}}\"}'}\n", "message.body: no {{refkey}}"},
		{"body not JSON", "message: {body: '{id: {{refkey}}'}\n", "the filled body is not valid JSON"},
		{"both locators", "refkey: {body_path: a, header: X-A}\n", "give body_path or header, not both"},
		{"bad path", "refkey: {body_path: 'a[0]'}\n", "refkey.body_path"},
		{"bad grace", "grace: forever\n", "grace: \"forever\": want a duration"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseAdapter([]byte(replaceTop(goodAdapter, c.change)))
			if !errors.Is(err, ErrAdapter) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want ErrAdapter naming %q", err, c.want)
			}
		})
	}
	a, err := ParseAdapter([]byte(replaceTop(goodAdapter, "queues: {consume: jobs.in, routes: none}\n")))
	if err != nil || len(a.Routes()) != 0 {
		t.Fatalf("routes none: %v, %v", a, err)
	}
}

// replaceTop replaces the top-level key of change's first line in doc
// (or appends it).
func replaceTop(doc, change string) string {
	key := strings.SplitN(change, ":", 2)[0]
	var out []string
	skip := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, key+":") {
			skip = true
			continue
		}
		if skip && strings.HasPrefix(line, " ") {
			continue
		}
		skip = false
		out = append(out, line)
	}
	return strings.Join(out, "\n") + "\n" + change
}

// The example team worker's adapter file is valid.
func TestExampleAdaptersLoad(t *testing.T) {
	root, ok := lab.FindRepoRoot()
	if !ok {
		t.Fatal("no repository root")
	}
	paths, _ := filepath.Glob(filepath.Join(root, "workers", "examples", "*", "adapter.yaml"))
	if len(paths) == 0 {
		t.Fatal("no workers/examples/*/adapter.yaml")
	}
	for _, p := range paths {
		if _, err := LoadAdapter(p); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestTallySortsEachRefkeyFromOutside(t *testing.T) {
	keys := []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7"}
	sends := []journal.Entry{
		{RefKey: "k1", Status: 200},
		{RefKey: "k2", Status: 200}, {RefKey: "k2", Status: 200}, // sent twice
		{RefKey: "k3", Status: 429}, {RefKey: "k3", Status: 200}, // a 4xx is not processed: once
		{RefKey: "k7", Status: 200},
		{RefKey: "other", Status: 200},
	}
	queued := []QueuedMessage{
		{Queue: "in", Body: `{"id":"k4"}`},     // never handled
		{Queue: "parked", Body: `{"id":"k5"}`}, // routed
		{Queue: "retry", Body: `{"id":"k7"}`},  // sent and queued again
	}
	got := TallyBlackBox(keys, sends, queued, "in")
	if got.Sent != 2 || len(got.Duplicates) != 1 || got.Duplicates[0] != "k2 (2 sends)" ||
		len(got.Unhandled) != 1 || got.Routed["parked"] != 1 || len(got.Lost) != 1 || got.Lost[0] != "k6" ||
		len(got.SentAndQueued) != 1 || got.Statuses[429] != 1 || got.Statuses[200] != 5 {
		t.Fatalf("tally %+v", got)
	}
	if s := got.Summary(); !strings.Contains(s, "1 lost: no send, no queue (k6)") || !strings.Contains(s, "1 not sent, routed to parked") {
		t.Fatalf("summary %q", s)
	}
}

func TestNginxFiguresCountNewConnectionsAfterTheFirst(t *testing.T) {
	var kept, perSend []vendormock.AccessEntry
	for i := range 10 {
		kept = append(kept, vendormock.AccessEntry{Connection: 7, Method: "POST", Path: "/send", Status: 200, TLSProtocol: "TLSv1.3", RequestTime: 0.02})
		perSend = append(perSend, vendormock.AccessEntry{Connection: int64(100 + i), Method: "POST", Path: "/send", Status: 499, RequestTime: float64(i)})
	}
	k := NginxFrom(append([]vendormock.AccessEntry{{Connection: 7, Method: "POST", Path: "/token", Status: 200}}, kept...), "/send", "/token")
	if k.NewConnectionsPerSend() != 0 || k.Tokens != 1 || k.Sends != 10 || k.P50MS != 20 || len(k.TLS) != 1 {
		t.Fatalf("kept: %+v", k)
	}
	p := NginxFrom(perSend, "/send", "/token")
	if got := p.NewConnectionsPerSend(); got != 0.9 || p.ClientClosed != 10 || p.MaxWaitMS != 9000 {
		t.Fatalf("per send: %v %+v", got, p)
	}
}

// A black-box audit can run again into its own OUT: every file it wrote
// is one it owns (outdir.Fresh empties them), and a user's file is kept.
func TestBlackBoxOutIsFreshAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := outdir.Fresh(dir, "audit-1", BlackBoxOutputs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"audit.md", "blackbox.json", "adapter.yaml", "steady/worker.log", "broker-cut/worker.log"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := outdir.Fresh(dir, "audit-2", BlackBoxOutputs); err != nil {
		t.Fatalf("second run into the same OUT: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "steady", "worker.log")); !os.IsNotExist(err) {
		t.Fatalf("steady/worker.log kept: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := outdir.Fresh(dir, "audit-3", BlackBoxOutputs); err == nil {
		t.Fatal("a folder with a user's file was emptied; want it refused")
	}
}
