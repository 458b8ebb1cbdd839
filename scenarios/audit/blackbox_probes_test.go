package audit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// journalServer answers WireMock's /__admin/requests with one send whose
// refkey is only in the X-Client-Ref header and one token call.
func journalServer(t *testing.T) *httptest.Server {
	t.Helper()
	doc := `{"requests":[
	 {"request":{"url":"/v1/token","method":"POST","headers":{},"body":""},"response":{"status":200}},
	 {"request":{"url":"/v3/message","method":"POST","headers":{"X-Client-Ref":"p-ab12-replay0-1"},"body":"{\"refkey\":\"other\"}"},"response":{"status":200}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/__admin/requests" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(doc))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBlackBoxTargetFindsProbeRefkeysWhereTheAdapterSays(t *testing.T) {
	srv := journalServer(t)
	st := &vendormock.Stack{WireMockURL: srv.URL, Profile: &vendormock.Profile{API: vendormock.APISpec{SendPath: "/v3/message", TokenPath: "/v1/token", RefKeyField: "refkey"}}}
	for _, c := range []struct {
		adapter, want string
	}{
		{replaceTop(goodAdapter, "refkey: {header: X-Client-Ref}\n"), "p-ab12-replay0-1"},
		// Negative control: without the adapter's header the profile's
		// body field is read, which holds another value.
		{replaceTop(goodAdapter, "refkey: {body_path: refkey}\n"), "other"},
	} {
		a, err := ParseAdapter([]byte(c.adapter))
		if err != nil {
			t.Fatal(err)
		}
		tg := BlackBoxTarget(&BlackBoxEnv{Stack: st, Adapter: a, Image: "team/img:1"}, 75*time.Second, nil)
		js, err := tg.journal(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(js) != 1 || js[0].RefKey != c.want || js[0].Path != "/v3/message" {
			t.Fatalf("adapter refkey %v: journal %+v, want one send with refkey %s (the token call left out)", a.RefKey, js, c.want)
		}
		if tg.Worker != "team/img:1" || tg.Keepalive != 75*time.Second {
			t.Fatalf("target names %q at %s, want the image at the stack's keep-alive", tg.Worker, tg.Keepalive)
		}
	}
}

func TestBlackBoxProbeMessageCarriesTheProbeRefkeyInTheTeamsSchema(t *testing.T) {
	a, err := ParseAdapter([]byte(goodAdapter))
	if err != nil {
		t.Fatal(err)
	}
	k := probeKey("ab12", "idle", 3)
	var m map[string]string
	if err := json.Unmarshal(a.Render(k, "+821012345678", "lab audit message "+k), &m); err != nil {
		t.Fatal(err)
	}
	if m["id"] != k || !strings.Contains(m["text"], k) || a.Queues.Consume != "jobs.in" {
		t.Fatalf("rendered %v into queue %s; want id %s in the team's own field, queue jobs.in", m, a.Queues.Consume, k)
	}
}

func TestBlackBoxProbeRulesJudgeMeasuresOnly(t *testing.T) {
	newFrom := 4.0
	lane := func(replayed ...string) ReplayLane {
		return ReplayLane{Lane: "the client's choice", Resets: map[string]int{"HTTP/1.1": 2}, Replayed: replayed}
	}
	cases := []struct {
		name       string
		p          *Probes
		idle, repl string
	}{
		{"not run", nil, NA, NA},
		{"replayed, reuses past keep-alive", &Probes{Idle: &IdleMeasure{Reuse: true, ReusedUpToS: 80}, Replay: &ReplayMeasure{Every: 2, Lanes: []ReplayLane{lane("k-2")}}}, Fail, Fail},
		{"clean", &Probes{Idle: &IdleMeasure{Reuse: true, ReusedUpToS: 2, NewFromS: &newFrom}, Replay: &ReplayMeasure{Every: 2, Lanes: []ReplayLane{lane()}}}, Pass, Pass},
		{"nothing provoked", &Probes{Idle: &IdleMeasure{Unknown: "0 sends"}, Replay: &ReplayMeasure{Every: 2, Lanes: []ReplayLane{{Lane: "x", Unknown: "no reset"}}}}, Fail, NA},
	}
	for _, c := range cases {
		rules := blackBoxProbeRules(c.p, "team/img:1", 75*time.Second)
		idle, repl := ruleByID(t, rules, "idle-timeout"), ruleByID(t, rules, "probe-replay")
		if idle.Verdict != c.idle || repl.Verdict != c.repl {
			t.Errorf("%s: idle %s (%s), replay %s (%s); want %s, %s", c.name, idle.Verdict, idle.Evidence, repl.Verdict, repl.Evidence, c.idle, c.repl)
		}
	}
	rep := BlackBoxReport{Image: "team/img:1", Pass: true}
	rep.addProbes(cases[1].p, 75*time.Second)
	if rep.Pass || !strings.Contains(rep.Markdown(), "## Probes") || !strings.Contains(rep.Markdown(), "none up to 80 s") {
		t.Fatalf("a replaying client's report: pass %v, page:\n%s", rep.Pass, rep.Markdown())
	}
}

// ruleByID returns the rule with id, failing the test when there is none.
func ruleByID(t *testing.T, rules []Rule, id string) Rule {
	t.Helper()
	for _, r := range rules {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no rule %s in %d rules", id, len(rules))
	return Rule{}
}
