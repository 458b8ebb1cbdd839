package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// ProbeWorker is one running worker a probe drives: Send publishes one
// notification whose vendor request carries refkey (in the body field
// the profile names, and the correlation header when the worker sends
// one) and returns once the broker confirmed it; Stop stops the worker.
// The probes judge from outside only (nginx's access log, WireMock's
// journal), so a black-box adapter implements this for any image.
type ProbeWorker interface {
	Send(ctx context.Context, refkey string) error
	Stop(ctx context.Context) error
}

// BurstSender is a ProbeWorker that can publish several messages at
// once: SendAll returns once the broker confirmed them all, without
// waiting between them (the burst probe; a worker without it gets one
// Send after another).
type BurstSender interface {
	SendAll(ctx context.Context, refkeys []string) error
}

// StartOptions are what a probe asks of the worker it starts; a worker
// that cannot choose (any image but the Go worker) ignores them.
type StartOptions struct {
	H2 bool // offer HTTP/2 by ALPN
	// Concurrency is how many messages the worker may handle at once
	// (the Go worker's CONCURRENCY, its prefetch and pool sized for it);
	// 0 = its default, 1.
	Concurrency int
}

// ProbeTarget is what the probes need: the stack whose nginx, WireMock
// and Toxiproxy the lab controls, and a way to start the worker under
// test. Start starts a fresh worker with its own queues, named name
// (letters, digits, '-', '.'), configured for the vendor keep-alive
// Keepalive (the profile's, whatever nginx is set to during a probe),
// its vendor URL the stack's vendor proxy, as o asks of a worker that
// can choose (the Go worker).
type ProbeTarget struct {
	Stack     *vendormock.Stack
	Worker    string        // the worker's name for the page (WORKER)
	Keepalive time.Duration // the vendor's keep-alive the worker is configured for
	Start     func(ctx context.Context, name string, o StartOptions) (ProbeWorker, error)
	// Configurable says Start honours StartOptions (the Go worker); an
	// image that picks its protocol and concurrency itself leaves it false.
	Configurable bool
	Log          io.Writer // progress lines; nil = discard
	// Journal reads WireMock's journal with each entry's refkey found
	// where the worker puts it (a black-box adapter's body path or
	// header); nil = Stack.Journal (the profile's refkey field).
	Journal func(ctx context.Context) ([]vendormock.JournalEntry, error)
}

// journal reads WireMock's journal through t.Journal, or the stack's.
func (t ProbeTarget) journal(ctx context.Context) ([]vendormock.JournalEntry, error) {
	if t.Journal != nil {
		return t.Journal(ctx)
	}
	return t.Stack.Journal(ctx)
}

func (t ProbeTarget) logf(format string, args ...any) {
	if t.Log != nil {
		fmt.Fprintf(t.Log, "[probe] "+format+"\n", args...)
	}
}

// LabTarget returns a ProbeTarget for a worker the lab knows how to run:
// the Go worker (its bench's pooled client, idle timeout
// netmodel.IdleConnTimeout of the keep-alive at RTT 0; goConfig, when not
// nil, changes its config last: the tests' planted clients) or a contract
// worker (docs/worker-contract.md, sel.Contract). Each started worker gets
// queues "probe.<name>" and a state folder under workDir. Close the
// returned func when done (the broker connection). Errors: the broker
// cannot be reached.
func LabTarget(st *vendormock.Stack, sel vendormock.WorkerSelection, keepalive time.Duration, workDir string, goConfig func(*worker.Config), log io.Writer) (ProbeTarget, func() error, error) {
	conn, err := amqp.Dial(st.AMQPURL)
	if err != nil {
		return ProbeTarget{}, nil, fmt.Errorf("connect to rabbitmq: %w", err)
	}
	t := ProbeTarget{Stack: st, Worker: sel.Name, Keepalive: keepalive, Log: log, Configurable: !sel.Contract}
	t.Start = func(ctx context.Context, name string, so StartOptions) (ProbeWorker, error) {
		topo := queues.DefaultTopology("probe." + name)
		dir := filepath.Join(workDir, "probe-"+name)
		_ = os.RemoveAll(dir)
		if err := lab.StateDir(dir); err != nil {
			return nil, err
		}
		pub, err := lab.NewPublisher(conn, topo, lab.Delete)
		if err != nil {
			return nil, err
		}
		o := vendormock.WorkerOptions{Name: "probe-" + name, CPUs: 1, OutDir: dir, Env: lab.WorkerEnv(st)}
		if sel.Contract {
			o.Image, o.Grace = sel.Image, lab.ContractGrace()
			o.Env = lab.ContractEnv(st, sel, topo, "", 0, time.Time{})
			sel.SetIdleTimeout(o.Env, keepalive)
		} else {
			wcfg := lab.WorkerConfig(worker.Config{}, st, st.AMQPURLsNetwork, topo, vendorapi.PooledName)
			wcfg.IdleConnTimeout, wcfg.SummaryEvery = netmodel.IdleConnTimeout(keepalive, 0), 100000
			if so.H2 {
				wcfg.HTTPVersion = "2"
			}
			if so.Concurrency > 0 {
				wcfg.Concurrency = so.Concurrency
			}
			if goConfig != nil {
				goConfig(&wcfg)
			}
			o.Args, o.Grace = wcfg.Args(), worker.ShutdownGrace(wcfg)
		}
		wk, err := st.StartWorker(ctx, o)
		if err != nil {
			_ = pub.Close()
			return nil, fmt.Errorf("start probe worker %s: %w", name, err)
		}
		if err := pub.WaitConsumer(ctx, 60*time.Second, func() string {
			logs, _ := wk.Logs(context.WithoutCancel(ctx))
			return lab.LastLines(logs, 20)
		}); err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			return nil, errors.Join(fmt.Errorf("probe worker %s: %w", name, err), wk.Stop(cctx, 20*time.Second), pub.Close())
		}
		return &labWorker{wk: wk, pub: pub, now: time.Now()}, nil
	}
	return t, conn.Close, nil
}

// labWorker is a ProbeWorker started by LabTarget.
type labWorker struct {
	wk  *vendormock.Worker
	pub *lab.Publisher
	n   int
	now time.Time
}

func (w *labWorker) Send(ctx context.Context, refkey string) error {
	return w.SendAll(ctx, []string{refkey})
}

// SendAll publishes every refkey, then waits for the broker's confirms.
func (w *labWorker) SendAll(ctx context.Context, refkeys []string) error {
	for _, refkey := range refkeys {
		w.n++
		n := message.Notification{
			RefKey: refkey, Category: message.Info, Recipient: fmt.Sprintf("+8210%08d", w.n),
			TemplateCode: "LAB_PROBE_01", Text: "notifier-lab probe " + refkey, CreatedAt: w.now.Truncate(time.Second),
		}
		body, err := n.Encode()
		if err != nil {
			return fmt.Errorf("encode message: %w", err)
		}
		if err := w.pub.Publish(ctx, refkey, body, reconcile.Published{RefKey: refkey, Valid: true}); err != nil {
			return err
		}
	}
	return w.pub.Confirm(ctx)
}

func (w *labWorker) Stop(ctx context.Context) error {
	return errors.Join(w.wk.Stop(ctx, 20*time.Second), w.pub.Close())
}

// probeKey is the refkey of a probe's n-th send: "p-<run>-<probe>-<n>".
func probeKey(run, probe string, n int) string {
	return "p-" + run + "-" + probe + "-" + strconv.Itoa(n)
}

// holdSends sets WireMock's fixed delay on the send to d for the probes
// that hold sends (burst, response timeout) and returns what puts the
// stubs back as they were (with a minute of its own, so an ended ctx
// still restores them). Errors: WireMock refused the stubs (the delay
// before is kept).
func holdSends(ctx context.Context, st *vendormock.Stack, d time.Duration) (restore func() error, err error) {
	prev := st.ServerDelayMS
	st.ServerDelayMS = int(d.Milliseconds())
	if err := st.ResetStubs(ctx); err != nil {
		st.ServerDelayMS = prev
		return nil, err
	}
	return func() error {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		st.ServerDelayMS = prev
		return st.ResetStubs(cctx)
	}, nil
}
