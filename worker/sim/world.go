package sim

import (
	"context"
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
// worker's own goroutines (its consume loop, its handler and ledger
// calls) run only in the scheduler's turns (loop.go).
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
	loop         map[string]int // what the consume loop did (Result.Loop)
	trace        Trace
	step         int
	steps        int
	checks       int
	// procs counts the worker processes started (each draws its loop's
	// backoff randomness from a stream of the seed of its own, so what a
	// dead process draws while it winds down changes nothing).
	procs uint64
	// inWorker: the worker's goroutines have the turn (drive).
	inWorker bool
	// Step facts: the loop stopped for a broken ledger (with the fewest
	// Handler ledger failures before a stop), and deliveries it took while
	// the ledger outage it had stopped in went on.
	ledgerStop    bool
	stopFailures  int
	tookWhileDown []string
	violation     *Violation
	fatal         error
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
		msgs: map[string]Message{}, faults: map[string]int{}, outcomes: map[string]int{}, loop: map[string]int{}}
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
	if err := w.start(); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// close stops the worker process and removes the ledger.
func (w *world) close() {
	if w.proc != nil {
		w.kill(w.proc)
	}
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
	v.LedgerStop, v.LedgerFailures, v.TookWhileLedgerDown = w.ledgerStop, w.stopFailures, w.tookWhileDown
	v.ForgedAccepted = w.vendor.Accepted
	w.vendor.Accepted = nil
	w.checks += 7
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
	w.ledgerStop, w.stopFailures, w.tookWhileDown = false, 0, nil
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
		until := w.clock.Now().Add(e.D)
		w.wakeUntil(until)
		w.clock.Advance(until.Sub(w.clock.Now()))
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
		} else if s := w.proc.sess; s != nil && s.Live() {
			w.faults["close-now"]++
			w.loseSession()
		}
	}
}

// deliver hands the next delivery to the consume loop: while the loop
// sleeps, the clock moves to its wake-up (it reconnects, waits for the
// ledger, ends a pause); once it waits for a delivery, the session fills
// its prefetch from the main queue and serve takes the first one, which
// the loop handles to its end (the step's trace shows its account).
func (w *world) deliver() {
	if !w.wakeUntil(maxTime) {
		w.note("the loop takes no delivery: %s", w.proc.state.kind)
		return
	}
	p := w.proc
	d, ok := p.sess.ch.Next()
	if !ok {
		w.note("nothing to deliver")
		return
	}
	p.current = fmt.Sprintf("%s redelivered=%t", headerString(d.Headers, HeaderMessage), d.Redelivered)
	if p.stopOutage != 0 && w.ledger.Down() && w.ledger.Outage() == p.stopOutage {
		w.tookWhileDown = append(w.tookWhileDown, fmt.Sprintf("%s taken at %s, during the ledger outage the loop stopped its session for",
			headerString(d.Headers, HeaderMessage), w.clock.Now().In(seoul).Format("15:04:05.000")))
	}
	w.drive(func() { p.sess.deliveries <- d })
}

// maxTime is a reading after every wake-up.
var maxTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

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
