package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/ledger/ledgertest"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// world is the scheduler of one schedule: it owns the models, the worker
// process and every step. Steps run one at a time on one goroutine; the
// worker's own goroutines (its ledger calls) are always waited for.
type world struct {
	s      Schedule
	opt    Options
	clock  *Clock
	broker *Broker
	vendor *Vendor
	ledger *Ledger
	topo   queues.Topology
	proc   *process
	dir    string

	crashAt      string // armed crash point
	pullFault    string // armed for the next sweep
	closeMidSend bool
	drainCh      *Channel
	doubt        map[string][]string
	msgs         map[string]Message
	faults       map[string]int
	outcomes     map[string]int
	trace        Trace
	step         int
	steps        int
	checks       int
	failed       int // ledger failures in the current step
	ledgerStop   bool
	violation    *Violation
	fatal        error
}

func newWorld(s Schedule, opt Options) (*world, error) {
	switch opt.Ledger {
	case "bbolt":
		s.Config.Bolt = true
	case "mem":
		s.Config.Bolt = false
	}
	c := s.Config
	w := &world{s: s, opt: opt, clock: NewClock(c.Start), doubt: map[string][]string{},
		msgs: map[string]Message{}, faults: map[string]int{}, outcomes: map[string]int{}}
	w.topo = queues.DefaultTopology(queues.DefaultMain)
	w.topo.MaxAttempts = c.MaxAttempts
	if c.Quorum {
		w.topo.Type, w.topo.DeliveryLimit = queues.Quorum, c.DeliveryLimit
	}
	w.broker = NewBroker(w.clock, w.topo)
	w.broker.crash = w.crashPoint
	w.vendor = NewVendor(w.clock, c, s.Seed)
	w.vendor.crash = w.crashPoint
	w.vendor.doubt = w.addDoubt
	w.vendor.midSend = w.midSend
	w.vendor.push = w.pushReport
	w.vendor.note = w.note
	w.ledger = &Ledger{clock: w.clock, doubt: w.addDoubt, Faults: map[string]int{}}
	if c.Bolt {
		dir, err := os.MkdirTemp(opt.Dir, "sim-ledger-")
		if err != nil {
			return nil, fmt.Errorf("simulate seed %d: %w", s.Seed, err)
		}
		w.dir = dir
		w.ledger.path = filepath.Join(dir, "ledger.db")
		w.ledger.open = func() (ledger.Store, error) { return ledger.Open(w.ledger.path) }
		w.ledger.loseBegin = opt.Plant.LoseBeginOnCrash
		st, err := w.ledger.open()
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("simulate seed %d: %w", s.Seed, err)
		}
		w.ledger.inner = st
	} else {
		w.ledger.inner = ledgertest.NewMem()
	}
	p, err := w.newProcess()
	if err != nil {
		w.close()
		return nil, err
	}
	w.proc = p
	return w, nil
}

func (w *world) close() {
	_ = w.ledger.Close()
	if w.dir != "" {
		_ = os.RemoveAll(w.dir)
	}
}

func (w *world) note(format string, args ...any) { w.trace.note(fmt.Sprintf(format, args...)) }

func (w *world) addDoubt(refkey, why string) {
	w.doubt[refkey] = append(w.doubt[refkey], why)
	w.note("in doubt: %s: %s", refkey, why)
}

// message returns the Message and body of a Publish event.
func (w *world) message(e Event) (Message, []byte) {
	k := fmt.Sprintf("m%d", e.Msg)
	m := Message{ID: fmt.Sprintf("%s/b%d", k, e.Body), RefKey: k, Ad: e.Ad}
	if e.Body == 2 {
		m.Invalid = true
		return m, fmt.Appendf(nil, `{"refkey":%q,"category":"info"}`, k)
	}
	m.Text = "hello from " + k
	if e.Body == 1 {
		m.Text = "another notification under " + k
	}
	n := message.Notification{RefKey: k, Category: message.Info, Recipient: "+821000005678", TemplateCode: "T1",
		Text: m.Text, CreatedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, seoul)}
	if e.Ad {
		n.Category = message.Ad
	}
	body, err := n.Encode()
	if err != nil {
		panic(fmt.Sprintf("sim: encode %s: %v", m.ID, err))
	}
	return m, body
}

// exec runs one step and checks the step invariants after it.
func (w *world) exec(e Event) {
	w.trace.begin(w.step, e.String())
	w.failed0()
	w.apply(e)
	w.broker.Expire()
	w.guard(func() { w.vendor.PushDue() })
	v := w.view()
	v.Moves = w.broker.TakeMoves()
	v.LedgerStop, v.LedgerFailures = w.ledgerStop, w.ledger.Failed-w.failed
	v.ForgedAccepted = w.vendor.Accepted
	w.vendor.Accepted = nil
	w.checks += 6
	if vs := CheckStep(v); len(vs) > 0 && w.violation == nil {
		vs[0].Step = w.step
		w.violation = &vs[0]
		w.note("VIOLATION %s", vs[0])
	}
	w.trace.end()
	w.step++
	w.steps++
}

func (w *world) failed0() {
	w.failed = w.ledger.Failed
	w.ledgerStop = false
}

func (w *world) view() View {
	es, err := w.ledger.Inner().List(context.Background(), "", 0)
	if err != nil && w.fatal == nil {
		w.fatal = fmt.Errorf("read the ledger for the checker: %w", err)
	}
	return View{Truth: w.vendor.Truths(), Ledger: es, Doubt: w.doubt, Messages: w.msgs, Names: w.topo.Names,
		Complete: w.s.Config.Reports() && w.s.Config.Complete, MaxAttempts: w.s.Config.MaxAttempts}
}

func (w *world) apply(e Event) {
	switch e.Kind {
	case Publish:
		m, body := w.message(e)
		m.Published = w.msgs[m.ID].Published + 1
		w.msgs[m.ID] = m
		w.broker.Produce(amqp.Publishing{Headers: amqp.Table{HeaderMessage: m.ID}, ContentType: "application/json",
			DeliveryMode: amqp.Persistent, Body: body})
	case Deliver:
		w.guard(w.deliver)
	case Advance:
		w.clock.Advance(e.D)
		w.note("clock %s", w.clock.Now().In(seoul).Format("01-02 15:04:05.000"))
	case Sweep:
		w.guard(w.sweep)
		w.guard(w.drain)
	case Drain:
		w.guard(w.drain)
	case PushTick:
		w.guard(func() { w.vendor.PushTick(e.Fault) })
	case Crash:
		if e.Fault == "now" {
			w.crash("now")
		} else {
			w.crashAt = e.Fault
		}
	case LedgerFault:
		w.ledger.Arm(e.Fault, e.Op, e.D)
	case VendorFault:
		w.vendor.Arm(e.Fault, e.D)
	case PullFault:
		w.pullFault = e.Fault
	case PublishFault:
		w.broker.ArmPublishFault(e.Fault)
	case ChannelClose:
		if e.Fault == "mid-send" {
			w.closeMidSend = true
		} else if w.proc.ch != nil {
			w.faults["close-now"]++
			w.proc.ch.Close()
		}
	}
}

// deliver plays the consumer's serve loop at concurrency 1: open a
// consume channel (prefetch Concurrency + PrefetchAhead) when there is
// none, take the next delivery, Handle it; on worker.ErrLedger close the
// session, as loop does (its unacked deliveries are requeued).
func (w *world) deliver() {
	p := w.proc
	if p.ch == nil || !p.ch.Open() {
		p.ch = w.broker.OpenChannel(1 + worker.PrefetchAhead)
	}
	d, ok := p.ch.Next()
	if !ok {
		w.note("nothing to deliver")
		return
	}
	rec, err := p.handler.Handle(context.Background(), d)
	w.outcomes[string(rec.Outcome)]++
	to := rec.Queue
	if to == "" {
		to = "acked"
	}
	if rec.Requeued {
		to = "requeued"
	}
	w.note("%s redelivered=%t -> %s %s code=%q %s", headerString(d.Headers, HeaderMessage), d.Redelivered, rec.Outcome, to, rec.Code, short(rec.Error))
	if err != nil {
		if !errors.Is(err, worker.ErrLedger) {
			w.fatal = fmt.Errorf("handle: unexpected error: %w", err)
			return
		}
		w.ledgerStop = true
		w.note("session closed: %s", short(err.Error()))
		p.ch.Close()
		p.ch = nil
	}
}

func short(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}

// sweep runs the report Sweeper (when the vendor has reports) with the
// armed pull fault on its pulls.
func (w *world) sweep() {
	if w.proc.sweeper == nil {
		return
	}
	if w.pullFault != "" {
		w.vendor.ArmPull(w.pullFault)
		w.pullFault = ""
		defer w.vendor.DisarmPull()
	}
	st, err := w.proc.sweeper.Sweep(context.Background(), w.clock.Now())
	w.outcomes["settled by pull"] += st.Settled
	w.outcomes["settled by horizon"] += st.NotSent
	w.note("sweep: %+v err=%v", st, err)
}

// drain runs one unknown drain pass on a channel of its own (when the
// vendor has reports: the worker drains only after report sweeps).
func (w *world) drain() {
	if w.proc.sweeper == nil {
		return
	}
	names := w.topo.Names
	w.drainCh = w.broker.OpenChannel(0)
	st, err := worker.DrainUnknown(context.Background(), w.drainCh, w.broker.Publisher("drain"), w.ledger, names, w.broker.Len(names.Unknown))
	if w.drainCh != nil {
		w.drainCh.Close()
		w.drainCh = nil
	}
	if st != (worker.DrainStats{}) || err != nil {
		w.note("drain: %+v err=%v", st, err)
	}
}
