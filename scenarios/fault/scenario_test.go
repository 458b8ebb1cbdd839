package fault

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/fault")

const testdata = "../../testdata/fault"

// minimal is a valid fault scenario the table cases edit.
const minimal = `name: x
description: one line
tool: toxiproxy
fault: something breaks
steps:
  - send: {count: 1}
expect:
  outcomes: {SENT: 1}
`

func TestParseErrorsNameFileAndField(t *testing.T) {
	tests := []struct {
		name, file, yaml string
		want             []string // substrings of the error
	}{
		{"valid", "x.yaml", minimal, nil},
		{"empty file", "x.yaml", "", []string{"x.yaml: empty file"}},
		{"unknown key", "x.yaml", minimal + "colour: red\n", []string{"x.yaml:", "field colour not found"}},
		{"typo in a step", "x.yaml", strings.Replace(minimal, "send: {count: 1}", "sned: {count: 1}", 1), []string{"x.yaml:", "sned"}},
		{"name differs from file", "y.yaml", minimal, []string{"y.yaml: name:", "differs from the file name"}},
		{"bad tool", "x.yaml", strings.Replace(minimal, "tool: toxiproxy", "tool: wireshark", 1), []string{"x.yaml: tool:", "wireshark", "toxiproxy, nginx"}},
		{"two keys in a step", "x.yaml", strings.Replace(minimal, "  - send: {count: 1}", "  - send: {count: 1}\n    sleep: 1s", 1), []string{"x.yaml: steps[0]: want exactly one", "got 2"}},
		{"bad toxic type", "x.yaml", strings.Replace(minimal, "steps:\n", "steps:\n  - toxic_add: {name: t, type: lag}\n", 1), []string{"x.yaml: steps[0].toxic_add.type:", "lag", "limit_data"}},
		{"bad stream", "x.yaml", strings.Replace(minimal, "steps:\n", "steps:\n  - toxic_add: {name: t, type: latency, stream: sideways}\n", 1), []string{"steps[0].toxic_add.stream"}},
		{"bad proxy", "x.yaml", strings.Replace(minimal, "steps:\n", "steps:\n  - proxy_disable: vendr\n", 1), []string{"steps[0].proxy_disable:", "vendor, broker"}},
		{"bad duration", "x.yaml", strings.Replace(minimal, "steps:\n", "steps:\n  - sleep: soon\n", 1), []string{"x.yaml:", "not a duration"}},
		{"bad count", "x.yaml", strings.Replace(minimal, "{SENT: 1}", "{SENT: \"about 3\"}", 1), []string{"x.yaml:", "not a count"}},
		{"unknown outcome", "x.yaml", strings.Replace(minimal, "{SENT: 1}", "{DELIVERED: 1}", 1), []string{"expect.outcomes.DELIVERED: unknown outcome"}},
		{"no outcomes", "x.yaml", strings.Replace(minimal, "  outcomes: {SENT: 1}\n", "  journal: 1\n", 1), []string{"expect.outcomes:"}},
		{"no send", "x.yaml", strings.Replace(minimal, "send: {count: 1}", "sleep: 1s", 1), []string{"steps: no send step"}},
		{"bad strategy", "x.yaml", minimal + "client: {strategy: fresh}\n", []string{"client.strategy:", "pooled or per-request"}},
		{"concurrency too high", "x.yaml", minimal + "client: {concurrency: 257}\n", []string{"client.concurrency:", "257", "want 1..256"}},
		{"negative concurrency", "x.yaml", minimal + "client: {concurrency: -1}\n", []string{"client.concurrency:", "want 1..256"}},
		{"concurrency 8", "x.yaml", minimal + "client: {concurrency: 8}\n", nil},
		{"bad clock", "x.yaml", minimal + "client: {clock_start: \"20:49\"}\n", []string{"client.clock_start:", "RFC 3339"}},
		{"nginx block", "x.yaml", minimal + "server: {nginx: {send_location: \"if ($x) { return 502; }\"}}\n", []string{"server.nginx.send_location:", "no blocks"}},
		{"nginx no semicolon", "x.yaml", minimal + "server: {nginx: {send_location: \"return 502\"}}\n", []string{"server.nginx.send_location line 1:", "ends with ';'"}},
		{"rate limit with a send location", "x.yaml", minimal + "server: {nginx: {rate_limit: 30, send_location: \"return 502;\"}}\n", []string{"server.nginx.rate_limit:", "not with send_location"}},
		{"rate limit negative", "x.yaml", minimal + "server: {nginx: {rate_limit: -1}}\n", []string{"server.nginx.rate_limit:", "want 0..10000"}},
		{"rate limit 30", "x.yaml", minimal + "server: {nginx: {rate_limit: 30}}\nclient: {send_interval: 35ms}\n", nil},
		{"settled with a clock", "x.yaml", strings.Replace(minimal, "steps:\n", "steps:\n  - wait: {clock: \"20:45:00\", settled: 3}\n", 1), []string{"steps[0].wait.clock:", "not with records, settled"}},
		{"bursts without burst", "x.yaml", strings.Replace(minimal, "send: {count: 1}", "send: {count: 10, pacing: {mode: bursts}}", 1), []string{"steps[0].send.pacing.burst"}},
		{"bad stub", "x.yaml", minimal + "server:\n  stubs:\n    - name: s\n      request: {method: POST}\n      response: {status: 200}\n", []string{"server.stubs[0]:", "stub \"s\""}},
		{"idle race without section", "x.yaml", strings.Replace(minimal, "tool:", "kind: idle-race\ntool:", 1), []string{"idle_race: kind idle-race needs"}},
		{"idle race rtt too big", "x.yaml", "name: x\ndescription: d\nkind: idle-race\ntool: nginx\nfault: f\nidle_race: {keepalive_timeout: 2s, rtts_ms: [1900]}\n", []string{"idle_race.rtts_ms[0]:", "no idle time"}},
		{"idle race bad setting", "x.yaml", "name: x\ndescription: d\nkind: idle-race\ntool: nginx\nfault: f\nidle_race: {settings: [fast]}\n", []string{"idle_race.settings[0]:", "t_minus_rtt_margin"}},
		{"every problem reported", "x.yaml", "name: X\ndescription: \"\"\ntool: none\nfault: \"\"\nsteps: []\nexpect: {}\n",
			[]string{"x.yaml: name:", "x.yaml: description:", "x.yaml: tool:", "x.yaml: fault:", "x.yaml: steps:", "x.yaml: expect.outcomes:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := Parse(tt.file, []byte(tt.yaml))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if sc.Name != "x" || sc.Kind != KindFault || sc.Client.Strategy != "pooled" || *sc.Server.DelayMS != 18 {
					t.Errorf("defaults not applied: %+v", sc)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse succeeded; want an error containing %q", tt.want)
			}
			if !errors.Is(err, ErrInvalidScenario) {
				t.Errorf("error %v does not wrap ErrInvalidScenario", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in      string
		want    Count
		match   []int
		nomatch []int
	}{
		{"3", Count{3, 3}, []int{3}, []int{2, 4}},
		{">=1", Count{1, -1}, []int{1, 1000}, []int{0}},
		{"0..2", Count{0, 2}, []int{0, 1, 2}, []int{3}},
		{" 5 ", Count{5, 5}, []int{5}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := ParseCount(tt.in)
			if err != nil || c != tt.want {
				t.Fatalf("ParseCount(%q) = %v, %v; want %v", tt.in, c, err, tt.want)
			}
			if c.String() != strings.TrimSpace(tt.in) {
				t.Errorf("String() = %q; want %q", c.String(), strings.TrimSpace(tt.in))
			}
			for _, n := range tt.match {
				if !c.Match(n) {
					t.Errorf("%v does not match %d", c, n)
				}
			}
			for _, n := range tt.nomatch {
				if c.Match(n) {
					t.Errorf("%v matches %d", c, n)
				}
			}
		})
	}
	for _, bad := range []string{"", "-1", ">=", "3..1", "a..b", "~3"} {
		if _, err := ParseCount(bad); err == nil {
			t.Errorf("ParseCount(%q) succeeded; want an error", bad)
		}
	}
}

// TestGolden parses testdata/fault/*.yaml and compares the parsed
// scenario (defaults applied) with its .golden.json.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs in %s: %v", testdata, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			sc.File = filepath.Base(sc.File)
			got, err := json.MarshalIndent(sc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(f, ".yaml") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("parsed %s differs from %s (go test -update rewrites it)\ngot:\n%s", f, golden, got)
			}
		})
	}
}

func TestCatalog(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	faults, races := 0, 0
	for _, sc := range scs {
		if seen[sc.Name] {
			t.Errorf("scenario %s twice", sc.Name)
		}
		seen[sc.Name] = true
		switch sc.Kind {
		case KindFault:
			faults++
			if sc.Published() == 0 {
				t.Errorf("%s publishes nothing", sc.Name)
			}
		case KindIdleRace:
			races++
		}
	}
	if faults < 10 || races < 1 {
		t.Errorf("catalog: %d faults, %d idle races; want >= 10 and >= 1", faults, races)
	}
	for _, want := range []string{"business-rejection", "vendor-unreachable", "nginx-502", "nginx-504", "response-timeout",
		"vendor-closes", "tls-stall", "token-expired", "malformed", "send-window", "broker-cut", "sigterm-restart", "idle-race",
		"sigterm-restart-c8", "broker-cut-c8", "vendor-closes-c8"} {
		if !seen[want] {
			t.Errorf("catalog lacks %s", want)
		}
	}
	if _, err := Select(scs, "all"); err != nil {
		t.Error(err)
	}
	if _, err := Select(scs, "nope"); err == nil || !strings.Contains(err.Error(), "known: all, ") {
		t.Errorf("Select(nope) = %v; want an error listing the known names", err)
	}
}

func TestIdleTimeout(t *testing.T) {
	T := 2 * time.Second
	tests := []struct {
		setting string
		rtt     int
		want    time.Duration
	}{
		{"default", 10, 90 * time.Second},
		{"t_plus_1s", 10, 3 * time.Second},
		{"t_minus_half_rtt", 150, 1925 * time.Millisecond},
		{"t_minus_rtt_margin", 150, 1600 * time.Millisecond},
		{"t_minus_rtt_margin", 10, 1740 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := IdleTimeout(tt.setting, T, tt.rtt, 250*time.Millisecond); got != tt.want {
			t.Errorf("IdleTimeout(%s, %d ms) = %s; want %s", tt.setting, tt.rtt, got, tt.want)
		}
	}
}

// brokenCatalog writes a catalog folder with one valid scenario (the
// catalog's malformed.yaml) and one file whose tool is not a tool.
func brokenCatalog(t *testing.T) string {
	t.Helper()
	good, err := os.ReadFile(filepath.Join("..", "catalog", "malformed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := strings.Replace(strings.Replace(string(good), "name: malformed", "name: bad-tool", 1), "tool: publisher", "tool: hammer", 1)
	for name, body := range map[string]string{"malformed.yaml": string(good), "bad-tool.yaml": bad} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBrokenCatalogFile: one invalid file does not stop a valid scenario
// asked for by name, while list, "all" and the broken one itself fail
// naming the file and the field.
func TestBrokenCatalogFile(t *testing.T) {
	dir := brokenCatalog(t)
	tests := []struct {
		name    string
		run     func() error
		wantErr []string // substrings; nil = no error
	}{
		{"valid scenario by name", func() error { return CheckName(dir, "malformed") }, nil},
		{"the broken scenario", func() error { return CheckName(dir, "bad-tool") }, []string{"bad-tool.yaml", "tool", "hammer"}},
		{"all", func() error { return CheckName(dir, "all") }, []string{"bad-tool.yaml", "tool"}},
		{"unknown name", func() error { return CheckName(dir, "nope") }, []string{"known: all, malformed", "bad-tool.yaml"}},
		{"list", func() error { return List(dir, io.Discard) }, []string{"bad-tool.yaml", "tool", "hammer"}},
		{"strict load", func() error { _, err := LoadCatalog(dir); return err }, []string{"bad-tool.yaml", "tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("error %v; want none", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error; want one naming the broken file")
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
	c, err := ReadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := c.Select("malformed")
	if err != nil || len(sel) != 1 || sel[0].Name != "malformed" {
		t.Errorf("Select(malformed) = %v, %v; want the valid scenario", sel, err)
	}
	var b strings.Builder
	if err := List(dir, &b); !strings.Contains(b.String(), "malformed") || err == nil {
		t.Errorf("List wrote %q, %v; want the valid scenario listed and an error", b.String(), err)
	}
}
