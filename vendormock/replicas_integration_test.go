//go:build integration

package vendormock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// TestReplicas starts two bbolt replicas on one queue and checks: both
// start and register a consumer; every message is handled exactly once
// across them; the queue has single active consumer (the worker's
// default) and only one replica handles messages; SIGKILL ends a
// replica with 137; a replica recreated with its volume still knows what
// it sent (DUPLICATE), and one recreated with a fresh volume does not
// (SENT again); SIGTERM ends a replica with 0 within the grace.
func TestReplicas(t *testing.T) {
	im := labImages(t)
	if im.Worker == "" {
		t.Fatalf("integration test needs the worker image: %s not set (run vendormock/images/ensure-images.sh and source %s)", EnvImageWorker, DefaultImagesEnvFile)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var runID string
	t.Cleanup(func() { // after Close: no ledger volume of the run is left
		if n := countVolumes(t, runID); n != 0 {
			t.Errorf("%d volumes labelled %s=%s left after Close", n, LabelRun, runID)
		}
	})
	s := startStack(t, ctx, Options{ServerDelayMS: 0, Images: im, WorkDir: t.TempDir(), Log: testLog{t}})
	runID = s.RunID

	const queue = "replicas.test"
	out := t.TempDir()
	cfg := worker.Config{Queue: queue, ResponseTimeout: 5 * time.Second, PublishTimeout: 5 * time.Second}
	ws, err := s.StartReplicas(ctx, ReplicaOptions{
		Name: "t", Count: 2, OutDir: out, Args: replicaArgs(cfg), Grace: worker.ShutdownGrace(cfg),
	})
	if err != nil {
		t.Fatalf("StartReplicas: %v", err)
	}
	// The worker's own budget: 4 vendor calls x 5 s + 5 s re-publish + 5 s.
	if g, want := ws.Grace(), worker.ShutdownGrace(cfg); g != want || g != 30*time.Second {
		t.Errorf("Grace() = %s, want the worker's ShutdownGrace %s (4*5s + 5s + 5s = 30s)", g, want)
	}
	reps := ws.Replicas()
	if len(reps) != 2 || reps[0].ID != "worker-1" || reps[1].ID != "worker-2" {
		t.Fatalf("replicas %v, want worker-1 and worker-2", reps)
	}
	logsOnFailure(t, reps)
	if n := countVolumes(t, s.RunID); n != 2 {
		t.Errorf("%d volumes labelled with the run, want one ledger volume per replica", n)
	}

	conn, err := amqp.Dial(s.AMQPURL)
	if err != nil {
		t.Fatalf("AMQP dial: %v", err)
	}
	defer conn.Close()
	waitConsumers(t, ctx, conn, queue, 2)

	// Single active consumer is required: the worker declares it by
	// default (SINGLE_ACTIVE_CONSUMER=true; docs/deployment.md) and these
	// replicas run the defaults. RabbitMQ must list the queue with it and
	// exactly one active consumer (queueHasSAC); a worker that stopped
	// declaring it fails here instead of switching to another assertion.
	// The same check without SAC is the negative control of
	// worker/queues' testSingleActiveConsumer.
	if !queueHasSAC(t, ctx, s, queue) {
		t.Fatalf("main queue %s has no x-single-active-consumer: the worker's default declares it", queue)
	}

	bodies := map[string][]byte{}
	publishN(t, ctx, conn, queue, "rep", 10, bodies)
	got := waitRecords(t, ctx, reps, 10)
	per := map[string]int{}
	for _, r := range got {
		if r.Outcome != outcome.Sent {
			t.Errorf("record %s: outcome %s, want SENT", r.RefKey, r.Outcome)
		}
		per[r.replica]++
	}
	if len(got) != 10 {
		t.Errorf("%d records of 10 messages, want each handled exactly once", len(got))
	}
	if len(per) != 1 {
		t.Errorf("records by replica %v: with single active consumer one replica handles every message", per)
	}

	// A PostgreSQL image that is not there is refused before anything
	// starts, naming the variable to set.
	_, err = s.StartReplicas(ctx, ReplicaOptions{Name: "pg", Count: 1, OutDir: out, Ledger: LedgerPostgres, PostgresImage: "notifier-lab/does-not-exist:0", Grace: time.Minute})
	if !errors.Is(err, ErrImagesMissing) || !strings.Contains(err.Error(), EnvPostgresImage) {
		t.Errorf("StartReplicas with a missing PostgreSQL image: %v, want ErrImagesMissing naming %s", err, EnvPostgresImage)
	}

	// SIGKILL worker-1: exit 137. Stop worker-2 (SIGTERM) so that worker-1
	// alone consumes after its recreation.
	w1, w2 := reps[0], reps[1]
	if err := w1.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if code, err := w1.Wait(ctx); err != nil || code != 137 {
		t.Errorf("worker-1 after Kill: exit %d (%v), want 137", code, err)
	}
	t0 := time.Now()
	if err := w2.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if code, err := w2.Wait(ctx); err != nil || code != 0 || time.Since(t0) > ws.Grace() {
		t.Errorf("worker-2 after Stop: exit %d (%v) in %s, want 0 within %s", code, err, time.Since(t0), ws.Grace())
	}

	// A refkey worker-1 sent, published again after a restart that keeps
	// the volume: its ledger still has it.
	var sentBy1 string
	for _, r := range got {
		if r.replica == "worker-1" {
			sentBy1 = r.RefKey
			break
		}
	}
	if sentBy1 == "" {
		t.Fatalf("worker-1 sent nothing (records by replica %v): cannot check its ledger", per)
	}
	for _, tc := range []struct {
		keep bool
		want outcome.Outcome
	}{{true, outcome.Duplicate}, {false, outcome.Sent}} {
		before := countRecords(t, w1)
		if err := w1.Recreate(ctx, tc.keep); err != nil {
			t.Fatalf("Recreate(keep ledger %t): %v", tc.keep, err)
		}
		waitConsumers(t, ctx, conn, queue, 1)
		publishBody(t, ctx, conn, queue, bodies[sentBy1])
		rs := waitRecords(t, ctx, []*Replica{w1}, before+1)
		last := rs[len(rs)-1]
		if last.RefKey != sentBy1 || last.Outcome != tc.want {
			t.Errorf("recreated with ledger kept %t: %s -> %s, want %s -> %s", tc.keep, last.RefKey, last.Outcome, sentBy1, tc.want)
		}
		if err := w1.Kill(ctx); err != nil {
			t.Fatalf("Kill: %v", err)
		}
	}
}

// countVolumes counts the Docker volumes labelled LabelRun=runID.
func countVolumes(t *testing.T, runID string) int {
	t.Helper()
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		t.Fatalf("docker client: %v", err)
	}
	defer cli.Close()
	l, err := cli.VolumeList(context.Background(), client.VolumeListOptions{Filters: client.Filters{}.Add("label", LabelRun+"="+runID)})
	if err != nil {
		t.Fatalf("list volumes: %v", err)
	}
	return len(l.Items)
}

// repRecord is a record with the replica whose file it came from.
type repRecord struct {
	records.Record
	replica string
}

// logsOnFailure prints each replica's logs when the test fails.
func logsOnFailure(t *testing.T, reps []*Replica) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, r := range reps {
			l, err := r.Logs(context.Background())
			t.Logf("logs of %s (%v):\n%s", r.ID, err, l)
		}
	})
}

// waitConsumers waits until queue exists with n consumers.
func waitConsumers(t *testing.T, ctx context.Context, conn *amqp.Connection, queue string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last := "queue not declared"
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatalf("AMQP channel: %v", err)
		}
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err == nil {
			ch.Close()
			if q.Consumers == n {
				return
			}
			last = fmt.Sprintf("%d consumers", q.Consumers)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("queue %s: %s after 60 s, want %d consumers", queue, last, n)
}

// queueHasSAC reports whether RabbitMQ lists queue with
// x-single-active-consumer, and checks that then exactly one of its
// consumers is active.
func queueHasSAC(t *testing.T, ctx context.Context, s *Stack, queue string) bool {
	t.Helper()
	rabbitctl := func(args ...string) string {
		s.mu.Lock()
		c := s.containers["rabbitmq"]
		s.mu.Unlock()
		code, r, err := c.Exec(ctx, append([]string{"rabbitmqctl", "-q"}, args...), tcexec.Multiplexed())
		var out []byte
		if r != nil {
			out, _ = io.ReadAll(r)
		}
		if err != nil || code != 0 {
			t.Fatalf("rabbitmqctl %v: exit %d, %v: %s", args, code, err, out)
		}
		return string(out)
	}
	var line string
	for _, l := range strings.Split(rabbitctl("list_queues", "name", "arguments"), "\n") {
		if strings.HasPrefix(l, queue+"\t") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("rabbitmqctl list_queues does not list %s", queue)
	}
	if !strings.Contains(line, "x-single-active-consumer") {
		return false
	}
	active := 0
	for _, l := range strings.Split(rabbitctl("list_consumers", "queue_name", "active"), "\n") {
		if strings.HasPrefix(l, queue+"\t") && strings.HasSuffix(strings.TrimSpace(l), "true") {
			active++
		}
	}
	if active != 1 {
		t.Errorf("queue %s has single active consumer but %d active consumers, want 1", queue, active)
	}
	return true
}

// publishN publishes n valid notifications "<prefix>-i" and keeps their
// bodies by refkey.
func publishN(t *testing.T, ctx context.Context, conn *amqp.Connection, queue, prefix string, n int, bodies map[string][]byte) {
	t.Helper()
	for i := range n {
		ref := fmt.Sprintf("%s-%d", prefix, i)
		b, err := message.Notification{
			RefKey: ref, Category: message.Info, Recipient: "+821000005678",
			TemplateCode: "SHIP_01", Text: "shipped", CreatedAt: time.Now(),
		}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		bodies[ref] = b
		publishBody(t, ctx, conn, queue, b)
	}
}

// publishBody publishes one persistent message to queue.
func publishBody(t *testing.T, ctx context.Context, conn *amqp.Connection, queue string, body []byte) {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("AMQP channel: %v", err)
	}
	defer ch.Close()
	if err := ch.PublishWithContext(ctx, "", queue, true, false, amqp.Publishing{
		ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: body,
	}); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// countRecords returns the number of records in r's file (0 when absent).
func countRecords(t *testing.T, r *Replica) int {
	t.Helper()
	rs, err := records.ReadFile(r.RecordsPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read %s: %v", r.RecordsPath(), err)
	}
	return len(rs)
}

// waitRecords waits until the replicas' records files hold n records in
// all, and returns them (file order, replica by replica).
func waitRecords(t *testing.T, ctx context.Context, reps []*Replica, n int) []repRecord {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var all []repRecord
	for time.Now().Before(deadline) && ctx.Err() == nil {
		all = all[:0]
		for _, r := range reps {
			rs, err := records.ReadFile(r.RecordsPath())
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("read %s: %v", r.RecordsPath(), err)
			}
			for _, rec := range rs {
				all = append(all, repRecord{rec, r.ID})
			}
		}
		if len(all) >= n {
			time.Sleep(300 * time.Millisecond) // no more than n arrive
			return waitRecordsOnce(t, reps)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%d records after 60 s, want %d", len(all), n)
	return nil
}

// waitRecordsOnce reads every replica's records once.
func waitRecordsOnce(t *testing.T, reps []*Replica) []repRecord {
	t.Helper()
	var all []repRecord
	for _, r := range reps {
		rs, err := records.ReadFile(r.RecordsPath())
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("read %s: %v", r.RecordsPath(), err)
		}
		for _, rec := range rs {
			all = append(all, repRecord{rec, r.ID})
		}
	}
	return all
}

// TestReplicasBrokerRestart restarts RabbitMQ under a running replica:
// the durable queue and its persistent messages survive, the replica
// reconnects on its own and handles what was published before and after.
func TestReplicasBrokerRestart(t *testing.T) {
	im := labImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := startStack(t, ctx, Options{ServerDelayMS: 0, Images: im, WorkDir: t.TempDir(), Log: testLog{t}})
	const queue = "restart.test"
	cfg := worker.Config{Queue: queue}
	ws, err := s.StartReplicas(ctx, ReplicaOptions{Count: 1, OutDir: t.TempDir(), Args: replicaArgs(cfg), Grace: worker.ShutdownGrace(cfg)})
	if err != nil {
		t.Fatalf("StartReplicas: %v", err)
	}
	reps := ws.Replicas()
	logsOnFailure(t, reps)
	conn, err := amqp.Dial(s.AMQPURL)
	if err != nil {
		t.Fatalf("AMQP dial: %v", err)
	}
	waitConsumers(t, ctx, conn, queue, 1)
	bodies := map[string][]byte{}
	publishN(t, ctx, conn, queue, "before", 3, bodies)
	waitRecords(t, ctx, reps, 3)
	// Persistent messages on a durable queue nobody consumes: they must
	// be there after the restart (the data dir survives).
	const parked = "restart.test.parked"
	ch, err := conn.Channel()
	if err == nil {
		_, err = ch.QueueDeclare(parked, true, false, false, false, nil)
	}
	if err != nil {
		t.Fatalf("declare %s: %v", parked, err)
	}
	ch.Close()
	for range 2 {
		publishBody(t, ctx, conn, parked, []byte("{}"))
	}

	oldURL := s.AMQPURL
	if err := s.RestartRabbitMQ(ctx, 10*time.Second); err != nil {
		t.Fatalf("RestartRabbitMQ: %v", err)
	}
	if !conn.IsClosed() {
		t.Errorf("the host's AMQP connection survived the restart: the broker did not restart")
	}
	t.Logf("AMQP URL %s -> %s", oldURL, s.AMQPURL)
	conn, err = amqp.Dial(s.AMQPURL)
	if err != nil {
		t.Fatalf("AMQP dial after restart: %v", err)
	}
	defer conn.Close()
	if ch, err = conn.Channel(); err != nil {
		t.Fatalf("AMQP channel: %v", err)
	}
	if q, err := ch.QueueDeclarePassive(parked, true, false, false, false, nil); err != nil || q.Messages != 2 {
		t.Errorf("%s after the restart: %+v (%v), want its 2 persistent messages", parked, q, err)
	}
	ch.Close()
	waitConsumers(t, ctx, conn, queue, 1) // the replica reconnected
	publishN(t, ctx, conn, queue, "after", 3, bodies)
	got := waitRecords(t, ctx, reps, 6)
	seen := map[string]int{}
	for _, r := range got {
		seen[r.RefKey]++
		if r.Outcome != outcome.Sent {
			t.Errorf("record %s: outcome %s, want SENT", r.RefKey, r.Outcome)
		}
	}
	for ref := range bodies {
		if seen[ref] != 1 {
			t.Errorf("refkey %s handled %d times, want once", ref, seen[ref])
		}
	}
}

// replicaArgs is ReplicaOptions.Args for cfg: cfg with each replica's
// records and ledger files, as the lab builds it.
func replicaArgs(cfg worker.Config) func(ReplicaFiles) []string {
	return func(f ReplicaFiles) []string {
		c := cfg
		c.RecordsPath, c.LedgerPath = f.RecordsPath, f.LedgerFile
		return c.Args()
	}
}
