package contractcheck

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/notifier-lab/notifier-lab/docs/schemas"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/vendormock/journal"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// ErrGaps is returned by Run when the worker left a gap; the report is
// written all the same.
var ErrGaps = errors.New("the worker does not keep the contract")

// Options configure Run.
type Options struct {
	Worker     string // a WORKER value (vendormock.WorkerImage): a reference worker or image:NAME
	ProfileDir string
	Out        string // the report's folder
	Images     vendormock.Images
	Session    string
	Grace      time.Duration // the worker's shutdown budget (0 = 15 s)
}

// Run checks one worker image against docs/worker-contract.md on one
// stack, in about a minute: it starts the worker with the contract's
// environment, checks its six queues and their arguments, publishes three
// valid messages, one without a recipient and one valid message again
// after it was sent, stops it with SIGTERM, and judges (Gaps) from the
// records file (validated against docs/schemas/records-line.schema.json),
// WireMock's journal, nginx's log and the queues. It writes
// OUT/contract-check.md and OUT/worker.log (the worker's stdout and
// stderr). Errors: the stack's, ErrGaps naming each gap.
func Run(ctx context.Context, o Options, w io.Writer) ([]Gap, error) {
	sel, err := vendormock.WorkerImage(o.Worker, o.Images.Var)
	if err != nil {
		return nil, err
	}
	if !sel.Contract {
		return nil, fmt.Errorf("contract-check: WORKER=%s is the Go worker, the contract's reference; give a contract worker or image:NAME", o.Worker)
	}
	grace := o.Grace
	if grace <= 0 {
		grace = 15 * time.Second
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, fmt.Errorf("resolve OUT: %w", err)
	}
	state := filepath.Join(out, "worker")
	if err := os.MkdirAll(state, 0o755); err != nil {
		return nil, fmt.Errorf("contract-check folder: %w", err)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(w, "[contract-check] "+format+"\n", args...) }
	t0 := time.Now()
	logf("starting the stack (profile %s)", o.ProfileDir)
	st, err := vendormock.Start(ctx, vendormock.Options{ProfileDir: o.ProfileDir, ServerDelayMS: -1, Images: o.Images, Session: o.Session,
		WorkDir: filepath.Join(out, ".stack")})
	if err != nil {
		return nil, fmt.Errorf("start stack: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		_ = st.Close(cctx)
		_ = os.RemoveAll(filepath.Join(out, ".stack"))
	}()
	topo := queues.DefaultTopology("notifications")
	env := lab.ContractEnv(st, sel, topo, "", 0, time.Time{})
	wk, err := st.StartWorker(ctx, vendormock.WorkerOptions{Name: "contract-check", Image: sel.Image, Env: env, CPUs: 1, OutDir: state, Grace: grace})
	if err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	logf("worker %s started; waiting for its consumer", sel.Name)
	e := Evidence{Grace: grace, Header: st.Profile.Client.CorrelationHeader, QueueOrder: topo.Names.All()}
	conn, err := amqp.Dial(st.AMQPURL)
	if err != nil {
		return nil, fmt.Errorf("dial broker: %w", err)
	}
	defer conn.Close()
	e.Consumer = waitConsumer(ctx, conn, topo.Names.Main, 60*time.Second)
	e.Queues = checkQueues(conn, topo)
	if e.Consumer == "" {
		now := time.Now().UTC()
		e.Valid = []string{"cc-valid-1", "cc-valid-2", "cc-valid-3"}
		e.Invalid, e.Again = "cc-invalid-1", "cc-valid-1"
		for i, k := range e.Valid {
			publish(ctx, conn, topo.Names.Main, valid(k, i, now))
		}
		publish(ctx, conn, topo.Names.Main, []byte(`{"refkey":"cc-invalid-1","category":"info","template_code":"CC01","text":"no recipient","created_at":"`+now.Format(time.RFC3339)+`"}`))
		logf("published 3 valid messages and 1 without a recipient; waiting for the sends")
		waitSends(ctx, st, e.Valid, 30*time.Second)
		publish(ctx, conn, topo.Names.Main, valid(e.Again, 0, now))
		logf("published %s again after it was sent", e.Again)
		time.Sleep(5 * time.Second)
	}
	e.Exit, e.ExitedEarly = terminate(ctx, wk, grace)
	logs, _ := wk.Logs(ctx)
	_ = os.WriteFile(filepath.Join(out, "worker.log"), []byte(logs), 0o644)
	_ = wk.Stop(ctx, grace)
	if sends, err := journal.Read(ctx, nil, st.WireMockURL, st.Profile.API.RefKeyField); err == nil {
		e.Sends = map[string]int{}
		for _, s := range sends {
			if s.Method == "POST" && s.Path == st.Profile.API.SendPath && s.Status/100 != 4 {
				e.Sends[s.RefKey]++
			}
		}
	}
	if entries, _, err := st.ReadAccessLog(0); err == nil {
		e.Logged = map[string]bool{}
		for _, a := range entries {
			e.Logged[a.RefKey] = true
		}
	}
	e.DeadOutcomes = deadOutcomes(conn, topo.Names.Dead)
	e.Records, e.SchemaErrs, e.RecordsErr = readRecords(filepath.Join(state, lab.RecordsFile))
	gaps := Gaps(e)
	if err := writeReport(out, sel, st.Profile.Name, gaps, time.Since(t0)); err != nil {
		return gaps, err
	}
	if len(gaps) > 0 {
		return gaps, fmt.Errorf("%w: %s: %d gap(s) (see %s)", ErrGaps, sel.Name, len(gaps), filepath.Join(out, ReportFile))
	}
	return nil, nil
}

// ReportFile is the check's report in OUT.
const ReportFile = "contract-check.md"

// valid is the i-th valid message in the lab's schema.
func valid(refkey string, i int, now time.Time) []byte {
	b, _ := message.Notification{RefKey: refkey, Category: message.Info, Recipient: fmt.Sprintf("+8210%08d", 20000000+i),
		TemplateCode: "CC01", Text: "contract check " + refkey, CreatedAt: now.Truncate(time.Second)}.Encode()
	return b
}

func publish(ctx context.Context, conn *amqp.Connection, queue string, body []byte) {
	ch, err := conn.Channel()
	if err != nil {
		return
	}
	defer ch.Close()
	_ = ch.PublishWithContext(ctx, "", queue, false, false, amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: body})
}

// waitConsumer returns "" once queue has a consumer, else why not.
func waitConsumer(ctx context.Context, conn *amqp.Connection, queue string, timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	why := "queue never declared"
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if ch, err := conn.Channel(); err == nil {
			q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
			if err == nil && q.Consumers > 0 {
				_ = ch.Close()
				return ""
			}
			if err == nil {
				why = "queue declared, no consumer"
				_ = ch.Close()
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Sprintf("%s within %s", why, timeout)
}

// checkQueues checks each contract queue exists (passive declare) and,
// then, was declared with the contract's arguments (a declare with them
// fails with PRECONDITION_FAILED when they differ).
func checkQueues(conn *amqp.Connection, topo queues.Topology) map[string]string {
	out := map[string]string{}
	for _, q := range topo.Queues() {
		ch, err := conn.Channel()
		if err != nil {
			out[q.Name] = "not checked: " + err.Error()
			continue
		}
		if _, err := ch.QueueDeclarePassive(q.Name, true, false, false, false, nil); err != nil {
			out[q.Name] = "missing"
			continue
		}
		if _, err := ch.QueueDeclare(q.Name, true, false, false, false, q.Args); err != nil {
			out[q.Name] = "arguments differ from the contract's (" + queues.FormatArgs(q.Args) + "): " + err.Error()
			continue
		}
		out[q.Name] = ""
		_ = ch.Close()
	}
	return out
}

// waitSends waits until each refkey has a send in the journal.
func waitSends(ctx context.Context, st *vendormock.Stack, keys []string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		sends, err := st.Journal(ctx)
		if err == nil {
			seen := map[string]bool{}
			for _, s := range sends {
				seen[s.RefKey] = true
			}
			n := 0
			for _, k := range keys {
				if seen[k] {
					n++
				}
			}
			if n == len(keys) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// terminate sends SIGTERM (docker kill --signal TERM) and returns the exit
// status, nil when the worker did not exit within grace; early when it had
// exited by itself before.
func terminate(ctx context.Context, wk *vendormock.Worker, grace time.Duration) (code *int, early bool) {
	ectx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	c, err := wk.Wait(ectx)
	cancel()
	if err == nil {
		return &c, true
	}
	if err := exec.CommandContext(ctx, "docker", "kill", "--signal", "TERM", wk.ContainerID()).Run(); err != nil {
		return nil, false
	}
	wctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	c, err = wk.Wait(wctx)
	if err != nil {
		return nil, false
	}
	return &c, false
}

// deadOutcomes reads QUEUE.dead without consuming it: the outcome header
// of each message by the refkey in its body.
func deadOutcomes(conn *amqp.Connection, dead string) map[string]string {
	out := map[string]string{}
	ch, err := conn.Channel()
	if err != nil {
		return out
	}
	defer ch.Close()
	for range 100 {
		d, ok, err := ch.Get(dead, false)
		if err != nil || !ok {
			break
		}
		h, _ := d.Headers[queues.HeaderOutcome].(string)
		out[journal.BodyField(d.Body, "refkey")] = h
	}
	return out
}

// readRecords reads the records file, validating each line against the
// records line schema.
func readRecords(path string) (recs []records.Record, schemaErrs []string, fileErr string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Sprintf("not written (RECORDS=%s): %v", filepath.Base(path), errors.Unwrap(err))
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(mustOpen(schemas.RecordsLine))
	if err != nil {
		return nil, nil, "schema unreadable: " + err.Error()
	}
	_ = c.AddResource(schemas.RecordsLine, doc)
	sch, err := c.Compile(schemas.RecordsLine)
	if err != nil {
		return nil, nil, "schema: " + err.Error()
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
		if err == nil {
			err = sch.Validate(inst)
		}
		if err != nil {
			schemaErrs = append(schemaErrs, fmt.Sprintf("line %d: %s", n, firstLine(err.Error())))
		}
	}
	recs, err = records.Read(bytes.NewReader(raw))
	if err != nil {
		return recs, schemaErrs, "unreadable: " + err.Error()
	}
	return recs, schemaErrs, ""
}

func mustOpen(name string) io.Reader {
	b, _ := schemas.FS.ReadFile(name)
	return bytes.NewReader(b)
}

func firstLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// writeReport writes OUT/contract-check.md.
func writeReport(out string, sel vendormock.WorkerSelection, profile string, gaps []Gap, took time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Contract check: %s on %s\n\n", sel.Name, profile)
	if len(gaps) == 0 {
		fmt.Fprintf(&b, "**PASS**: no gap against [docs/worker-contract.md](../../docs/worker-contract.md) (took %.0f s).\n", took.Seconds())
	} else {
		fmt.Fprintf(&b, "**FAIL**: %d gap(s) (took %.0f s):\n\n", len(gaps), took.Seconds())
		for _, g := range gaps {
			fmt.Fprintf(&b, "- %s (%s)\n", g.What, g.Doc)
		}
	}
	b.WriteString("\nThe worker's stdout and stderr: `worker.log`; its records and ledger: `worker/`.\n")
	return os.WriteFile(filepath.Join(out, ReportFile), []byte(b.String()), 0o644)
}
