//go:build integration

package vendormock

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/vendormock/journal"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// contractRun is one reference worker handling n messages on a stack.
type contractRun struct {
	recs    []records.Record
	journal []journal.Entry // sends of this run's refkeys
	sends   []AccessEntry   // nginx's lines of this run's sends
	all     []AccessEntry   // nginx's lines during the run (token call included)
}

// runContractWorker declares queue's topology as the lab's driver does,
// publishes one notification per refkey, runs the worker named by WORKER
// value name until it handled them all (MAX_MESSAGES), and returns what it
// wrote and what the vendor side saw.
func runContractWorker(t *testing.T, ctx context.Context, s *Stack, name, queue string, refkeys []string, extraEnv map[string]string) contractRun {
	t.Helper()
	sel, err := WorkerImage(name, labImages(t).Var)
	if err != nil {
		t.Fatalf("WorkerImage(%s): %v", name, err)
	}
	conn, err := amqp.Dial(s.AMQPURL)
	if err != nil {
		t.Fatalf("AMQP dial: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := queues.DefaultTopology(queue).Declare(ch); err != nil {
		t.Fatalf("declare topology: %v", err)
	}
	for _, ref := range refkeys {
		b, err := message.Notification{RefKey: ref, Category: message.Info, Recipient: "+821000005678",
			TemplateCode: "SHIP_01", Text: "shipped", CreatedAt: time.Now()}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.PublishWithContext(ctx, "", queue, true, false, queues.Persistent(amqp.Publishing{ContentType: "application/json", Body: b})); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	logFrom, err := s.AccessLogSize()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.Chmod(out, 0o777); err != nil {
		t.Fatal(err)
	}
	env := ContractEnv(s, ContractOptions{Queue: queue, SingleActiveConsumer: true, RetryDelay: time.Second,
		RecordsPath: WorkerOutDir + "/records.jsonl", LedgerPath: WorkerOutDir + "/ledger.jsonl", WorkerID: "w1", MaxMessages: len(refkeys)})
	for k, v := range sel.Env {
		env[k] = v
	}
	for k, v := range extraEnv {
		env[k] = v
	}
	w, err := s.StartWorker(ctx, WorkerOptions{Name: name + "-" + queue, Image: sel.Image, Env: env, CPUs: 1, OutDir: out,
		Grace: worker.ShutdownGrace(worker.Config{})})
	if err != nil {
		t.Fatalf("StartWorker %s: %v", name, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	code, err := w.Wait(wctx)
	logs, _ := w.Logs(ctx)
	if err != nil || code != 0 {
		t.Fatalf("worker %s: exit %d (%v); logs:\n%s", name, code, err, logs)
	}
	var run contractRun
	if run.recs, err = records.ReadFile(filepath.Join(out, "records.jsonl")); err != nil {
		t.Fatalf("records of %s: %v; logs:\n%s", name, err, logs)
	}
	want := map[string]bool{}
	for _, r := range refkeys {
		want[r] = true
	}
	entries, err := journal.Read(ctx, nil, s.WireMockURL, s.Profile.API.RefKeyField)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Method == "POST" && e.Path == s.Profile.API.SendPath && want[e.RefKey] {
			run.journal = append(run.journal, e)
		}
	}
	if run.all, _, err = s.ReadAccessLog(logFrom); err != nil {
		t.Fatal(err)
	}
	for _, e := range run.all {
		if e.Path == s.Profile.API.SendPath && want[e.RefKey] {
			run.sends = append(run.sends, e)
		}
	}
	return run
}

func refkeysFor(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func connections(es []AccessEntry) int {
	c := map[int64]bool{}
	for _, e := range es {
		c[e.Connection] = true
	}
	return len(c)
}

// TestReferenceWorkers runs the Node and Java reference workers on the
// alimtalk stack with 5 messages each: every message SENT once (records
// and WireMock's journal agree), and nginx's log shows the connection
// behaviour of each client: a new connection per send for an Agent
// without keep-alive, one connection for the JDK's shared client.
func TestReferenceWorkers(t *testing.T) {
	im := labImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	s := startStack(t, ctx, Options{Images: im, WorkDir: t.TempDir(), Log: testLog{t}})
	const n = 5
	for _, tc := range []struct {
		worker string
		conns  int // connections of the n sends in nginx's log
		all    bool
	}{
		{"node-fetch", 0, false},
		{"node-agent-nokeepalive", n, false},
		{"node-agent-keepalive", 1, true},
		{"java-shared", 1, true},    // token call and sends on one connection
		{"java-per-send", n, false}, // a new HttpClient, so a new connection, per send
	} {
		t.Run(tc.worker, func(t *testing.T) {
			prefix := strings.ReplaceAll(tc.worker, "-", "")
			run := runContractWorker(t, ctx, s, tc.worker, "q-"+prefix, refkeysFor(prefix, n), nil)
			if len(run.recs) != n {
				t.Fatalf("%d records, want %d", len(run.recs), n)
			}
			for _, r := range run.recs {
				if r.Outcome != outcome.Sent || r.Start.IsZero() || r.End.Before(r.Start) || r.Replica != "w1" {
					t.Errorf("record %+v: want SENT with start <= end and replica w1", r)
				}
				if r.CPUMS <= 0 || r.TLSVersion != "1.3" {
					t.Errorf("record %s: cpu_ms %g, tls_version %q; want the worker's CPU and TLS 1.3", r.RefKey, r.CPUMS, r.TLSVersion)
				}
			}
			if len(run.journal) != n {
				t.Errorf("journal has %d sends of this run, want %d", len(run.journal), n)
			}
			if len(run.sends) != n {
				t.Fatalf("nginx logged %d sends of this run, want %d", len(run.sends), n)
			}
			got := connections(run.sends)
			if tc.all {
				got = connections(run.all)
			}
			t.Logf("%s: %d sends over %d connections (%d requests in all over %d), TLS %s, CPU per send %.2f ms", tc.worker, n,
				connections(run.sends), len(run.all), connections(run.all), run.sends[0].TLSProtocol,
				(run.recs[n-1].CPUMS-run.recs[0].CPUMS)/float64(n-1))
			if tc.conns > 0 && got != tc.conns {
				t.Errorf("%s: %d connections, want %d", tc.worker, got, tc.conns)
			}
			if tc.conns == 0 && got > 2 {
				t.Errorf("%s: %d connections for %d sends, want 1 or 2 (docs/studies.md#client-defaults)", tc.worker, got, n)
			}
		})
	}
}

// TestReferenceWorkerSMSProfile runs the reference workers against the
// second vendor profile with no code change: OAuth2 form token, the sms
// send API, a business rejection inside a 200, and a throttled first send
// (429, Retry-After: 1) that ends SENT exactly once after the retry.
func TestReferenceWorkerSMSProfile(t *testing.T) {
	im := labImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := startStack(t, ctx, Options{ProfileDir: smsProfileDir, Images: im, WorkDir: t.TempDir(), Log: testLog{t}})
	for _, worker := range []string{"node-agent-keepalive", "java-shared"} {
		t.Run(worker, func(t *testing.T) {
			resetScenarios(t, ctx, s) // the throttle stub answers the first rl- send of each run
			p := strings.ReplaceAll(worker, "-", "")
			refs := []string{"rl-" + p, "ok-" + p, "bad-" + p, "ok2-" + p}
			// MAX_MESSAGES counts handled messages: the rl- one twice.
			run := runContractWorker(t, ctx, s, worker, "sms-"+p, refs, map[string]string{"MAX_MESSAGES": "5", "IDLE_TIMEOUT_MS": "3000"})
			byRef := map[string][]outcome.Outcome{}
			for _, r := range run.recs {
				byRef[r.RefKey] = append(byRef[r.RefKey], r.Outcome)
				if r.RefKey == refs[0] && r.Outcome == outcome.NotSent && r.Code != "E429" {
					t.Errorf("throttled record code %q, want E429", r.Code)
				}
			}
			want := map[string][]outcome.Outcome{
				refs[0]: {outcome.NotSent, outcome.Sent},
				refs[1]: {outcome.Sent},
				refs[2]: {outcome.Rejected},
				refs[3]: {outcome.Sent},
			}
			for ref, w := range want {
				if fmt.Sprint(byRef[ref]) != fmt.Sprint(w) {
					t.Errorf("%s: outcomes %v, want %v", ref, byRef[ref], w)
				}
			}
			accepted := map[string]int{}
			for _, e := range run.journal {
				if e.Status == 202 {
					accepted[e.RefKey]++
				}
			}
			if accepted[refs[0]] != 1 || accepted[refs[1]] != 1 || accepted[refs[3]] != 1 {
				t.Errorf("accepted sends per refkey %v, want each of %v once", accepted, []string{refs[0], refs[1], refs[3]})
			}
			if n := queueDepth(t, s, "sms-"+p+".failed"); n != 1 {
				t.Errorf("failed queue holds %d messages, want the one rejection", n)
			}
		})
	}
}

// resetScenarios puts every WireMock scenario back in its Started state.
func resetScenarios(t *testing.T, ctx context.Context, s *Stack) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.WireMockURL+"/__admin/scenarios/reset", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("reset scenarios: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reset scenarios: status %d", resp.StatusCode)
	}
}

// queueDepth returns the number of ready messages in queue.
func queueDepth(t *testing.T, s *Stack, queue string) int {
	t.Helper()
	conn, err := amqp.Dial(s.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("inspect %s: %v", queue, err)
	}
	return q.Messages
}
