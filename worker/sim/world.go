package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
	// ledgers: one every replica shares (the deployment the guarantees
	// need), or one per replica (Plant.LedgerPerReplica).
	ledgers []*Ledger
	topo    queues.Topology
	// procs holds each replica's process (its current life); cur is the
	// one whose goroutines have the turn (drive).
	procs []*process
	cur   *process
	dir   string

	crashAt      string // armed crash point
	freezeAt     string // armed freeze point (freezeFor long)
	freezeFor    time.Duration
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
	// lives counts the worker processes started (each draws its loop's
	// backoff randomness from a stream of the seed of its own, so what a
	// dead process draws while it winds down changes nothing).
	lives uint64
	// lastTaker is the replica that took the last delivery (-1 none).
	lastTaker int
	// turns draws which held handler runs and when (turns.go).
	turns *rand.Rand
	// acks are the step's acks the broker settled, with what was durable
	// then (ackedAt).
	acks []AckFact
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
	if opt.Replicas > 0 {
		s.Config.Replicas = opt.Replicas
	}
	if opt.Concurrency > 0 {
		s.Config.Concurrency = opt.Concurrency
	}
	if opt.SingleActiveConsumer {
		s.Config.Competing = false
	}
	if opt.Plant.NoSingleActiveConsumer {
		s.Config.Competing = true
	}
	if s.Config.Replicas <= 1 {
		s.Config.Replicas, s.Config.Competing = 1, false
		s.Events = oneReplica(s.Events)
	}
	c := s.Config
	w := &world{s: s, opt: opt, clock: NewClock(c.Start), doubt: map[string][]string{}, lastTaker: -1,
		msgs: map[string]Message{}, faults: map[string]int{}, outcomes: map[string]int{}, loop: map[string]int{},
		turns: newRand(s.Seed, 9)}
	w.loop[fmt.Sprintf("schedules at concurrency %d", max(c.Concurrency, 1))]++
	w.topo = queues.DefaultTopology(queues.DefaultMain)
	w.topo.MaxAttempts = c.MaxAttempts
	w.topo.SingleActiveConsumer = !c.Competing
	if c.Quorum {
		w.topo.Type, w.topo.DeliveryLimit = queues.Quorum, c.DeliveryLimit
	}
	w.broker = NewBroker(w.clock, w.topo)
	w.broker.crash = w.crashPoint
	w.broker.acked = w.ackedAt
	w.vendor = NewVendor(w.clock, c, s.Seed)
	w.vendor.crash = w.crashPoint
	w.vendor.doubt = w.addDoubt
	w.vendor.midSend = w.midSend
	w.vendor.push = w.pushReport
	w.vendor.note = w.note
	n := 1
	if opt.Plant.LedgerPerReplica {
		n = c.Replicas
	}
	for i := range n {
		l, err := w.newLedger(i)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("simulate seed %d: %w", s.Seed, err)
		}
		w.ledgers = append(w.ledgers, l)
	}
	w.procs = make([]*process, c.Replicas)
	for i := range w.procs {
		if err := w.start(i); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

// oneReplica returns events with every Replica 0 (a copy).
func oneReplica(events []Event) []Event {
	out := slices.Clone(events)
	for i := range out {
		out[i].Replica = 0
	}
	return out
}

// newLedger opens the ledger of replica i (every replica's when they
// share one): the in-memory store, or a bbolt file in the world's
// temporary folder.
func (w *world) newLedger(i int) (*Ledger, error) {
	l := &Ledger{clock: w.clock, doubt: w.addDoubt, Faults: map[string]int{}}
	if !w.s.Config.Bolt {
		l.inner = ledgertest.NewMem()
		return l, nil
	}
	if w.dir == "" {
		dir, err := os.MkdirTemp(w.opt.Dir, "sim-ledger-")
		if err != nil {
			return nil, fmt.Errorf("open ledger: %w", err)
		}
		w.dir = dir
	}
	name := "ledger.db"
	if i > 0 {
		name = fmt.Sprintf("ledger-%d.db", i)
	}
	l.path = filepath.Join(w.dir, name)
	l.open = func() (ledger.Store, error) { return ledger.Open(l.path) }
	l.loseBegin = w.opt.Plant.LoseBeginOnCrash
	st, err := l.open()
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	l.inner = st
	return l, nil
}

// ledgerOf returns replica i's ledger.
func (w *world) ledgerOf(i int) *Ledger { return w.ledgers[i%len(w.ledgers)] }

// close stops the worker process and removes the ledger.
func (w *world) close() {
	for _, p := range w.procs {
		if p != nil {
			w.kill(p)
		}
	}
	for _, l := range w.ledgers {
		_ = l.Close()
	}
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
	w.fireDue()
	w.broker.Expire()
	w.guard(w.procs[0], func() { w.vendor.PushDue() })
	v := w.view()
	v.Moves = w.broker.TakeMoves()
	v.LedgerStop, v.LedgerFailures, v.TookWhileLedgerDown = w.ledgerStop, w.stopFailures, w.tookWhileDown
	v.ForgedAccepted = w.vendor.Accepted
	w.vendor.Accepted = nil
	v.Acks, v.ChannelErrors = w.acks, w.broker.TakeChannelErrors()
	w.acks = nil
	w.checks += 9
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
	var es []ledger.Entry
	for _, l := range w.ledgers {
		more, err := l.Inner().List(context.Background(), "", 0)
		if err != nil && w.fatal == nil {
			w.fatal = fmt.Errorf("read the ledger for the checker: %w", err)
		}
		es = append(es, more...)
	}
	return View{Truth: w.vendor.Truths(), Ledger: es, Doubt: w.doubt, Messages: w.msgs, Names: w.topo.Names,
		Complete: w.s.Config.Reports() && w.s.Config.Complete, MaxAttempts: w.s.Config.MaxAttempts}
}

func (w *world) apply(e Event) {
	ri := e.Replica % len(w.procs)
	switch e.Kind {
	case Publish:
		m, body := w.message(e)
		m.Published = w.msgs[m.ID].Published + 1
		w.msgs[m.ID] = m
		w.broker.Produce(amqp.Publishing{Headers: amqp.Table{HeaderMessage: m.ID}, ContentType: "application/json",
			DeliveryMode: amqp.Persistent, Body: body})
	case Deliver:
		w.guard(w.procs[ri], func() { w.deliver(ri) })
	case Advance:
		until := w.clock.Now().Add(e.D)
		w.wakeAll(until)
		w.clock.Advance(until.Sub(w.clock.Now()))
		w.note("clock %s", w.clock.Now().In(seoul).Format("01-02 15:04:05.000"))
	case Sweep:
		w.sweepAndDrain(ri)
	case Drain:
		w.guard(w.procs[ri], func() { w.drain(ri) })
	case PushTick:
		w.guard(w.procs[0], func() { w.vendor.PushTick(e.Fault) })
	case Crash:
		if e.Fault == "now" {
			w.crash(w.procs[ri], "now")
		} else {
			w.crashAt = e.Fault
		}
	case LedgerFault:
		w.ledgerOf(ri).Arm(e.Fault, e.Op, e.D)
	case VendorFault:
		w.vendor.Arm(e.Fault, e.D)
	case PullFault:
		w.pullFault = e.Fault
	case PublishFault:
		w.broker.ArmPublishFault(e.Fault)
	case Freeze:
		w.freezeAt, w.freezeFor = e.Fault, e.D
	case ChannelClose:
		p := w.procs[ri]
		if e.Fault == "mid-send" {
			w.closeMidSend = true
		} else if s := p.sess; s != nil && s.Live() {
			w.faults["close-now"]++
			w.loseSession(p)
		}
	}
}

// deliver hands the next delivery to a consume loop (receiver: the
// active consumer's, or under competing consumers replica pref's): while
// the loop sleeps, the clock first moves to each of its wake-ups (it
// reconnects, waits for the ledger, ends a pause); once it waits for a
// delivery, its session fills its prefetch from the main queue and serve
// takes the first one, which the loop handles to its end (the step's
// trace shows its account).
func (w *world) deliver(pref int) {
	w.runDraining()
	p := w.receiver(pref)
	if p == nil {
		if !w.runAllHeld() {
			w.note("the loop takes no delivery: %s", w.procs[pref].state.kind)
		}
		return
	}
	d, ok := p.sess.ch.Next()
	if !ok {
		if !w.runAllHeld() { // nothing to take: the handlers in flight run
			w.note("nothing to deliver")
		}
		return
	}
	if !w.s.Config.Competing && w.lastTaker >= 0 && w.lastTaker != p.rep {
		w.loop["handovers to another replica"]++
	}
	w.lastTaker = p.rep
	p.current = fmt.Sprintf("%s%s redelivered=%t", w.who(p), headerString(d.Headers, HeaderMessage), d.Redelivered)
	p.handing = p.current
	l := p.ledger.l
	if p.stopOutage != 0 && l.Down() && l.Outage() == p.stopOutage {
		w.tookWhileDown = append(w.tookWhileDown, fmt.Sprintf("%s taken at %s, during the ledger outage the loop stopped its session for",
			headerString(d.Headers, HeaderMessage), w.clock.Now().In(seoul).Format("15:04:05.000")))
	}
	w.drive(p, func() { p.sess.deliveries <- d })
	w.afterTake(p)
}

// maxTime is a reading after every wake-up.
var maxTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func short(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}

// sweep runs replica i's report Sweeper (when the vendor has reports)
// with the armed pull fault on its pulls.
func (w *world) sweep(i int) {
	p := w.procs[i]
	if p.sweeper == nil {
		return
	}
	if w.pullFault != "" {
		w.vendor.ArmPull(w.pullFault)
		w.pullFault = ""
		defer w.vendor.DisarmPull()
	}
	st, err := p.sweeper.Sweep(context.Background(), w.clock.Now())
	w.outcomes["settled by pull"] += st.Settled
	w.outcomes["settled by horizon"] += st.NotSent
	w.note("%ssweep: %+v err=%v", w.who(p), st, err)
}

// sweepAndDrain is replica i's sweep loop: a report sweep, then an
// unknown drain.
func (w *world) sweepAndDrain(i int) {
	w.guard(w.procs[i], func() { w.sweep(i) })
	w.guard(w.procs[i], func() { w.drain(i) })
}

// drain runs one unknown drain pass of replica i on a channel of its own
// (when the vendor has reports: the worker drains only after report
// sweeps).
func (w *world) drain(i int) {
	if w.procs[i].sweeper == nil {
		return
	}
	names := w.topo.Names
	w.drainCh = w.broker.OpenChannel(0)
	w.drainCh.Owner = i
	st, err := worker.DrainUnknown(context.Background(), w.drainCh, drainPublisher{w.broker.Publisher("drain"), w}, w.ledgerOf(i), names, w.broker.Len(names.Unknown))
	if w.drainCh != nil {
		w.drainCh.Close()
		w.drainCh = nil
	}
	if st != (worker.DrainStats{}) || err != nil {
		w.note("%sdrain: %+v err=%v", w.who(w.procs[i]), st, err)
	}
}

// who prefixes a trace line with p's replica when there are several
// ("" with one, so a one-replica trace reads as before).
func (w *world) who(p *process) string {
	if len(w.procs) < 2 {
		return ""
	}
	return fmt.Sprintf("[replica %d] ", p.rep)
}
