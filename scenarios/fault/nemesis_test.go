package fault

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// withSteps returns minimal with these steps before its send.
func withSteps(extra string) string {
	return strings.Replace(minimal, "steps:\n", "steps:\n"+extra, 1)
}

const pgWorkers = "workers: {count: 2, ledger: postgres}\n"

func TestNemesisValidation(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings of the error; nil = valid
	}{
		{"pause a service", withSteps("  - pause: nginx\n  - unpause: nginx\n"), nil},
		{"pause the one worker", withSteps("  - pause: worker\n"), nil},
		{"partition and heal", withSteps("  - partition: wiremock\n  - heal: wiremock\n"), nil},
		{"replica targets", withSteps("  - pause: active\n  - partition: worker-2\n  - unpause: active\n") + pgWorkers, nil},
		{"postgres with its ledger", withSteps("  - pause: postgres\n  - check_healthz: {replica: worker-1, status: 503, within: 20s}\n  - unpause: postgres\n") + pgWorkers, nil},
		{"ledger proxy with its ledger", withSteps("  - toxic_add: {name: bh, type: timeout, stream: upstream, proxy: ledger, attributes: {timeout: 0}}\n  - proxy_disable: ledger\n") + pgWorkers, nil},
		{"unknown target, no workers", withSteps("  - pause: ngnix\n"),
			[]string{`steps[0].pause: "ngnix": want one of worker, rabbitmq, nginx, wiremock, toxiproxy`}},
		{"replica id without workers", withSteps("  - partition: worker-1\n"),
			[]string{`steps[0].partition: "worker-1": want one of worker, rabbitmq`}},
		{"the one worker with replicas", withSteps("  - pause: worker\n") + pgWorkers,
			[]string{`steps[0].pause: "worker": want one of active, worker-1, worker-2, worker-3, worker-4, worker-5, rabbitmq, postgres, nginx`}},
		{"postgres without its ledger", withSteps("  - pause: postgres\n") + "workers: {count: 2}\n",
			[]string{`steps[0].pause: "postgres": want one of active`, "rabbitmq, nginx, wiremock, toxiproxy"}},
		{"unpause without pause", withSteps("  - unpause: nginx\n"),
			[]string{`steps[0].unpause: "nginx": no earlier pause step`}},
		{"pause twice", withSteps("  - pause: nginx\n  - pause: nginx\n"),
			[]string{`steps[1].pause: "nginx" is paused already`}},
		{"partition toxiproxy", withSteps("  - partition: toxiproxy\n"),
			[]string{`steps[0].partition: "toxiproxy" carries every path`, "proxy_disable"}},
		{"heal without partition", withSteps("  - pause: nginx\n  - heal: nginx\n"),
			[]string{`steps[1].heal: "nginx": no earlier partition step`}},
		{"heal twice", withSteps("  - partition: nginx\n  - heal: nginx\n  - heal: nginx\n"),
			[]string{`steps[2].heal: "nginx": no earlier partition step`}},
		{"two nemesis keys in a step", withSteps("  - pause: nginx\n    heal: nginx\n"),
			[]string{"steps[0]: want exactly one of", "pause, unpause, partition, heal, check_healthz", "got 2 (pause, heal)"}},
		{"check_healthz without workers", withSteps("  - check_healthz: {status: 503}\n"),
			[]string{"steps[0].check_healthz: needs a workers section"}},
		{"check_healthz bad status", withSteps("  - check_healthz: {status: 500, replica: w1}\n") + pgWorkers,
			[]string{"steps[0].check_healthz.status: 500", "steps[0].check_healthz.replica: \"w1\""}},
		{"ledger proxy without postgres", withSteps("  - proxy_disable: ledger\n"),
			[]string{`steps[0]: proxy "ledger" needs workers.ledger postgres`}},
		{"ledger toxic without postgres", withSteps("  - toxic_add: {name: bh, type: timeout, proxy: ledger}\n"),
			[]string{`steps[0].toxic_add.proxy: "ledger" needs workers.ledger postgres`}},
		{"ledger_agrees without postgres", minimal + "  ledger_agrees: true\n",
			[]string{"expect.ledger_agrees: needs workers.ledger postgres"}},
		{"http version 2", minimal + "client: {http_version: \"2\"}\n", nil},
		{"http version 3", minimal + "client: {http_version: \"3\"}\n", []string{`client.http_version: "3": want one of 1.1, 2`}},
		{"http 2 per request", minimal + "client: {http_version: \"2\", strategy: per-request}\n", []string{"client.http_version: 2 with strategy per-request"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v; want valid", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse: nil error; want %q", tt.want)
			}
			if !errors.Is(err, ErrInvalidScenario) {
				t.Errorf("error %v does not wrap ErrInvalidScenario", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// The undo list puts back, newest first, everything still pending, also
// after one undo fails; a step's own undo leaves the list at once.
func TestUndoList(t *testing.T) {
	var u undoList
	var did []string
	mk := func(name string, fail bool) func(context.Context) error {
		return func(context.Context) error {
			did = append(did, name)
			if fail {
				return errors.New(name + " refused")
			}
			return nil
		}
	}
	u.push("pause nginx", "nginx", "unpause nginx", mk("unpause nginx", false))
	u.push("partition worker-1", "worker-1", "heal worker-1", mk("heal worker-1", true))
	u.push("partition nginx", "nginx", "heal nginx", mk("heal nginx", false))
	u.push("pause postgres", "postgres", "unpause postgres", mk("unpause postgres", false))
	if !u.has("pause nginx") || u.has("pause rabbitmq") {
		t.Fatalf("has: want pause nginx pending and pause rabbitmq not")
	}
	it, ok := u.take("pause postgres")
	if !ok || it.what != "unpause postgres" {
		t.Fatalf("take = %+v, %v", it, ok)
	}
	if _, ok := u.take("pause postgres"); ok {
		t.Error("took pause postgres twice")
	}
	var logged []string
	done, err := u.run(context.Background(), func(f string, a ...any) { logged = append(logged, f) })
	if want := []string{"heal nginx", "heal worker-1", "unpause nginx"}; !slices.Equal(did, want) {
		t.Errorf("undone %v; want %v (newest first, all of them)", did, want)
	}
	if want := []string{"nginx"}; !slices.Equal(done, want) {
		t.Errorf("put back %v; want %v (once each, not the failed one)", done, want)
	}
	if err == nil || !strings.Contains(err.Error(), "heal worker-1 refused") {
		t.Errorf("run error %v; want the failed heal", err)
	}
	if len(logged) != 3 {
		t.Errorf("logged %d lines; want 3", len(logged))
	}
	did = nil
	if _, err := u.run(context.Background(), nil); err != nil || len(did) != 0 {
		t.Errorf("second run: %v, undid %v; want nothing left", err, did)
	}
}

func TestLedgerDisagreements(t *testing.T) {
	j := func(key string, status int) vendormock.JournalEntry {
		return vendormock.JournalEntry{Method: "POST", RefKey: key, Status: status}
	}
	row := func(st outcome.Outcome) ledgerRow { return ledgerRow{present: true, state: st} }
	keys := []string{"a", "b", "c", "d", "e", "f", "g"}
	journal := []vendormock.JournalEntry{j("a", 200), j("b", 200), j("c", 200), j("d", 200), j("e", 502), j("g", 200)}
	rows := map[string]ledgerRow{
		"a": row(outcome.Sent),      // agrees
		"b": row(outcome.Unknown),   // agrees: may have been sent
		"c": row(outcome.NotSent),   // would be sent again
		"d": {},                     // sent without Begin
		"e": row(outcome.NotSent),   // vendor answered 502: not accepted
		"f": row(outcome.Sent),      // never received
		"g": row(ledger.Attempting), // agrees: unresolved, never re-sent automatically
	}
	got := ledgerDisagreements(keys, journal, rows)
	want := []string{"c: the vendor accepted it, the ledger says NOT_SENT",
		"d: the vendor received it 1 time(s), the ledger has no row",
		"f: the ledger says SENT, the vendor never received it"}
	if len(got) != len(want) {
		t.Fatalf("got %q; want %d lines", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d %q; want prefix %q", i, got[i], want[i])
		}
	}
	if got := ledgerDisagreements([]string{"a", "b"}, journal, rows); len(got) != 0 {
		t.Errorf("agreeing refkeys: %q; want none", got)
	}
}

// client.http_version reaches the worker's Config (its HTTP version), 1.1 by default.
func TestWorkerArgsHTTPVersion(t *testing.T) {
	for _, tt := range []struct{ set, want string }{{"", "1.1"}, {"2", "2"}} {
		sc := &Scenario{Name: "x", Client: ClientSpec{HTTPVersion: tt.set}}
		sc.applyDefaults()
		s := &scenarioRun{
			r:    &Runner{Stack: &vendormock.Stack{KeepaliveTimeout: 75 * time.Second}, opts: RunnerOptions{KeepaliveTimeout: 75 * time.Second}},
			sc:   sc,
			topo: queues.DefaultTopology("fault.x"),
		}
		w, err := s.workerConfig()
		if err != nil {
			t.Fatal(err)
		}
		if got := w.WithDefaults().HTTPVersion; got != tt.want {
			t.Errorf("http_version %q: worker config HTTPVersion %q; want %s", tt.set, got, tt.want)
		}
	}
	sc, err := Parse("x.yaml", []byte(minimal+"client: {http_version: \"2\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := sc.Applies("node-agent-keepalive", ""); ok || !strings.Contains(why, "HTTP/2") {
		t.Errorf("Applies(contract worker) = %v, %q; want not applicable for HTTP/2", ok, why)
	}
	if ok, _ := sc.Applies("go", ""); !ok {
		t.Error("Applies(go) = false; want true")
	}
}

// client.send_interval reaches the worker's Config (-send-interval); 0
// leaves it unpaced.
func TestWorkerArgsSendInterval(t *testing.T) {
	for _, d := range []time.Duration{0, 35 * time.Millisecond} {
		sc := &Scenario{Name: "x", Client: ClientSpec{SendInterval: Duration(d)}}
		sc.applyDefaults()
		s := &scenarioRun{
			r:    &Runner{Stack: &vendormock.Stack{KeepaliveTimeout: 75 * time.Second}, opts: RunnerOptions{KeepaliveTimeout: 75 * time.Second}},
			sc:   sc,
			topo: queues.DefaultTopology("fault.x"),
		}
		w, err := s.workerConfig()
		if err != nil {
			t.Fatal(err)
		}
		if w.SendInterval != d {
			t.Errorf("send_interval %s: worker SendInterval %s", d, w.SendInterval)
		}
	}
}
