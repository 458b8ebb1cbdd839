package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Kind is the kind of one step of a schedule.
type Kind uint8

// The steps a schedule is made of. Each is one scheduler step; the fault
// kinds arm a fault that fires on the next matching operation (inside a
// later step), the others act at once.
const (
	// Publish publishes message Event.Msg (refkey "m<Msg>") to the main
	// queue: Body 0 its body, 1 another body under the same refkey (a
	// reused refkey), 2 an undecodable body. Publishing the same Msg and
	// Body twice is a producer's at-least-once re-publish.
	Publish Kind = iota
	// Deliver hands the next delivery of the main queue to the worker's
	// real consume loop, which handles it to its end at concurrency 1;
	// above (Config.Concurrency) its handler is held, and the held ones
	// run in the order the seed draws, some now, the others in a later
	// Deliver (one runs first when every slot is taken; all of them when
	// nothing is left to deliver). When the loop sleeps (a backoff after a
	// lost session, the wait for the ledger, the pause after a requeue),
	// the clock first moves to each of its wake-ups until it waits for a
	// delivery.
	Deliver
	// Advance moves the clock by Event.D; the broker then expires the
	// heads of its TTL queues.
	Advance
	// Sweep runs the report Sweeper, then an unknown drain (as the
	// worker's sweep loop does).
	Sweep
	// Drain runs one unknown drain pass.
	Drain
	// PushTick makes the vendor push its due delivery reports to the
	// worker's report endpoint; Event.Fault is "normal", "duplicate"
	// (each twice), "forged" (plus a report with a wrong signature) or
	// "interim" (also interim reports of messages not final yet).
	PushTick
	// Crash kills the worker process, now or at a point of the next
	// delivery (Event.Fault, CrashPoints), and restarts it.
	Crash
	// LedgerFault arms a fault (LedgerFaults) on the next ledger
	// operation Event.Op ("begin", "finish", "" any).
	LedgerFault
	// VendorFault arms a fault (VendorFaults) on the next send.
	VendorFault
	// PullFault arms a fault (PullFaults) on every pull of the next sweep.
	PullFault
	// PublishFault arms a fault (PublishFaults) on the next publish.
	PublishFault
	// ChannelClose closes the consume channel, now or during the next
	// send ("now", "mid-send"): its unacked deliveries are requeued.
	ChannelClose
	// Freeze stops the replica that next reaches the point Event.Fault
	// (FreezePoints) of a delivery for Event.D of simulated time, as a
	// long GC stall or a VM pause does; past the broker's heartbeat
	// timeout (heartbeatTimeout) the broker closes its connection and
	// hands its unacked deliveries to the standby. Then it goes on.
	Freeze
)

var kindNames = [...]string{"publish", "deliver", "advance", "sweep", "drain", "push", "crash",
	"ledger-fault", "vendor-fault", "pull-fault", "publish-fault", "channel-close", "freeze"}

// String is the kind's name as the trace prints it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// The faults each fault kind can arm (Event.Fault).
var (
	// LedgerFaults: "error" (nothing written), "timeout" (nothing
	// written, the caller gets context.DeadlineExceeded), "commit-timeout"
	// (written, the answer lost: the caller gets DeadlineExceeded),
	// "slow" (answers after Event.D, within the deadline), "pause" (the
	// worker froze Event.D right after the answer) and, for the bbolt
	// ledger only, "past-deadline" (the store is handed a context whose
	// deadline has passed, as a store that answers after the worker gave
	// up; the worker gets DeadlineExceeded). "down" is an outage of
	// Event.D by the clock, from now: every operation fails, Ping and
	// CheckWrite included (Event.Op does not apply).
	LedgerFaults = append(oneShotLedgerFaults[:len(oneShotLedgerFaults):len(oneShotLedgerFaults)], "down")
	// oneShotLedgerFaults are the faults of the next operation.
	oneShotLedgerFaults = []string{"error", "timeout", "commit-timeout", "slow", "pause", "past-deadline"}
	// VendorFaults: the next send is "lost-before-write" (NOT_SENT),
	// "lost-after-process" (processed, the answer lost), "lost-unprocessed"
	// (written, not processed, the answer lost), "5xx-processed",
	// "5xx-unprocessed", "429" (Retry-After Event.D), "401" (the token is
	// revoked), "reject" (a business code), "slow" (answers after
	// Event.D), "token-slow" (the token call takes Event.D), "token-error"
	// (the token call fails) or "report-races" (the vendor pushes the
	// report after Event.D, before it answers).
	VendorFaults = []string{"lost-before-write", "lost-after-process", "lost-unprocessed", "5xx-processed",
		"5xx-unprocessed", "429", "401", "reject", "slow", "token-slow", "token-error", "report-races"}
	// PullFaults: the pulls of the next sweep fail with "error" (503),
	// "401" or "timeout" (a transport error).
	PullFaults = []string{"error", "401", "timeout"}
	// PublishFaults: the next publish is "nack"ed (not enqueued), its
	// confirm is lost ("confirm-lost": enqueued, the publisher gets an
	// error), or its target queue is deleted ("unroutable": the next
	// publish to an empty copy queue that is no dead-letter target comes
	// back as a mandatory return, until a declaration creates the queue
	// again).
	PublishFaults = append(oneShotPublishFaults[:2:2], "unroutable")
	// oneShotPublishFaults are the faults genEvent draws; "unroutable"
	// comes from a stream of its own (Generate).
	oneShotPublishFaults = []string{"nack", "confirm-lost"}
	// CrashPoints: "now", or during the next delivery: "send-before"
	// (in the send, before the vendor processed it), "send-after" (after
	// it processed it, before the answer), "publish-before",
	// "publish-after" (around the copy's enqueue), "ack" (before the
	// ack).
	CrashPoints = []string{"now", "send-before", "send-after", "publish-before", "publish-after", "ack"}
	// FreezePoints are the points of a delivery a replica freezes at: the
	// vendor processed the send and its answer waits ("send-after", the
	// catalog's frozen-active), around a copy's publish, before the ack.
	FreezePoints = []string{"send-after", "publish-before", "publish-after", "ack"}
	// PushModes are the PushTick modes.
	PushModes = []string{"normal", "duplicate", "forged", "interim"}
)

// Event is one step of a schedule.
type Event struct {
	Kind  Kind
	Msg   int           // Publish: the message number
	Body  int           // Publish: 0 its body, 1 another body, 2 an invalid body
	Ad    bool          // Publish: an advertising message (send window applies)
	Fault string        // the fault, crash point, close point or push mode
	Op    string        // LedgerFault: "begin", "finish" or "" (any)
	D     time.Duration // Advance; the duration of a slow fault or a Retry-After
	// Replica is the replica (0 or 1, Config.Replicas) the event acts on
	// where it matters: a Deliver under competing consumers (under single
	// active consumer the broker picks the active one), a Crash or a
	// ChannelClose "now", a LedgerFault on per-replica ledgers.
	Replica int
}

// String prints the event as one trace line.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	switch e.Kind {
	case Publish:
		fmt.Fprintf(&b, " m%d body=%d", e.Msg, e.Body)
		if e.Ad {
			b.WriteString(" ad")
		}
	case Advance:
		fmt.Fprintf(&b, " %s", e.D)
	default:
		if e.Fault != "" {
			b.WriteString(" " + e.Fault)
		}
		if e.Op != "" {
			b.WriteString(" op=" + e.Op)
		}
		if e.D != 0 {
			fmt.Fprintf(&b, " d=%s", e.D)
		}
	}
	if e.Replica != 0 {
		fmt.Fprintf(&b, " replica=%d", e.Replica)
	}
	return b.String()
}

// Config is what one seed fixes besides its events: the world the
// schedule runs in. Shrinking keeps it.
type Config struct {
	// Start is the clock's first reading.
	Start time.Time
	// Bolt: the real bbolt ledger in a temporary folder; else the
	// in-memory contract store (ledgertest.Mem).
	Bolt bool
	// Quorum: quorum queues with DeliveryLimit; else classic queues.
	Quorum        bool
	DeliveryLimit int
	// MaxAttempts is the handler's and the topology's MaxAttempts.
	MaxAttempts int
	// Push, Pull: how the vendor publishes delivery reports (neither: no
	// reports). Complete: it reports every processed message within
	// Horizon. ReportDelay is when a report is ready after processing;
	// Delayed: some reports come later than the horizon, the vendor
	// answering interim meanwhile.
	Push, Pull, Complete, Delayed bool
	Horizon, ReportDelay          time.Duration
	// TokenLife is the lifetime of a vendor token.
	TokenLife time.Duration
	// Replicas is the number of worker replicas (1 or 2; 0 is 1), each a
	// process with its own session on the broker, all on one ledger.
	// Competing: the main queue has no single active consumer (every
	// replica takes deliveries), only with the in-memory ledger, which
	// stands for the shared PostgreSQL one (the worker refuses competing
	// consumers on bbolt).
	Replicas  int
	Competing bool
	// Concurrency is each replica's Config.Concurrency (1, 2, 4 or 8; 0
	// is 1): above 1 serve holds that many handlers in flight, the
	// scheduler runs them in the order the seed draws (turns.go), and the
	// acks go through the worker's ack batcher (multiple acks).
	Concurrency int
}

// Reports reports whether the vendor publishes delivery reports.
func (c Config) Reports() bool { return c.Push || c.Pull }

// String prints the config on one line.
func (c Config) String() string {
	ledger, queues := "mem", "classic"
	if c.Bolt {
		ledger = "bbolt"
	}
	if c.Quorum {
		queues = fmt.Sprintf("quorum(limit %d)", c.DeliveryLimit)
	}
	rep := "none"
	if c.Reports() {
		rep = fmt.Sprintf("push=%t pull=%t complete=%t delayed=%t horizon=%s delay=%s",
			c.Push, c.Pull, c.Complete, c.Delayed, c.Horizon, c.ReportDelay)
	}
	out := fmt.Sprintf("start=%s ledger=%s queues=%s max_attempts=%d reports[%s] token_life=%s",
		c.Start.In(seoul).Format("2006-01-02T15:04:05Z07:00"), ledger, queues, c.MaxAttempts, rep, c.TokenLife)
	if c.Replicas > 1 {
		out += fmt.Sprintf(" replicas=%d", c.Replicas)
		if c.Competing {
			out += " competing"
		}
	}
	if c.Concurrency > 1 {
		out += fmt.Sprintf(" concurrency=%d", c.Concurrency)
	}
	return out
}

// Schedule is one seed's world and its events.
type Schedule struct {
	Seed   uint64
	Config Config
	Events []Event
}

// newRand is the seeded PRNG of a seed (PCG).
func newRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

// starts are clock readings near the window's edges (KST): the schedule
// crosses 08:00 or 20:50 with a few small advances.
var starts = []string{"07:59:40", "12:00:00", "20:49:30", "20:49:57", "23:50:00"}

// Generate returns the schedule of seed: its Config and 20 to 60 events.
func Generate(seed uint64) Schedule {
	r := newRand(seed, 1)
	c := Config{
		Bolt:          r.IntN(16) == 0,
		Quorum:        r.IntN(3) == 0,
		DeliveryLimit: 5,
		MaxAttempts:   []int{5, 3, 2}[r.IntN(3)],
		TokenLife:     []time.Duration{time.Hour, 2 * time.Minute}[r.IntN(2)],
	}
	day := time.Date(2026, 12, 1+r.IntN(5), 0, 0, 0, 0, seoul)
	hms, _ := time.Parse("15:04:05", starts[r.IntN(len(starts))])
	c.Start = day.Add(time.Duration(hms.Hour())*time.Hour + time.Duration(hms.Minute())*time.Minute +
		time.Duration(hms.Second())*time.Second).UTC()
	switch r.IntN(5) {
	case 0: // no reports
	case 1:
		c.Push = true
	case 2:
		c.Pull = true
	default:
		c.Push, c.Pull = true, true
	}
	if c.Reports() {
		c.Complete = r.IntN(3) != 0
		// A vendor whose reports can come after its horizon answers
		// interim meanwhile; the worker learns it by pull (and by an
		// interim push): without a pull a late report would break the
		// complete promise, which no worker can survive.
		c.Delayed = c.Pull && r.IntN(3) == 0
		c.Horizon = []time.Duration{10 * time.Minute, 30 * time.Minute}[r.IntN(2)]
		c.ReportDelay = time.Duration(1+r.IntN(60)) * time.Second
	}
	n := 20 + r.IntN(41)
	msgs := 2 + r.IntN(5)
	ad := make([]bool, msgs)
	for i := range ad {
		ad[i] = r.IntN(2) == 0
	}
	s := Schedule{Seed: seed, Config: c}
	// Outages come from a stream of their own, so that the other events
	// of a seed are those it had before outages were modelled.
	outages := newRand(seed, 3)
	// So do the replicas: a seed's other draws stay those it had with one
	// replica.
	// Three seeds in four run two replicas; a quarter of those (never on
	// bbolt) without single active consumer.
	reps := newRand(seed, 4)
	returns := newRand(seed, 5)
	freezes := newRand(seed, 6)
	s.Config.Replicas = 1
	// Half the seeds run serve at concurrency 1, the others at 2, 4 or 8,
	// from a stream of their own.
	s.Config.Concurrency = []int{1, 1, 1, 2, 4, 8}[newRand(seed, 8).IntN(6)]
	if reps.IntN(4) != 0 {
		s.Config.Replicas = 2
		s.Config.Competing = !c.Bolt && reps.IntN(4) == 0
	}
	for range n {
		e := genEvent(r, c, msgs, ad)
		if e.Kind == LedgerFault && outages.IntN(7) == 0 {
			e = Event{Kind: LedgerFault, Fault: "down", D: time.Duration(5+outages.IntN(176)) * time.Second}
		}
		if s.Config.Replicas > 1 {
			e.Replica = reps.IntN(s.Config.Replicas)
		}
		if e.Kind == PublishFault && returns.IntN(3) == 0 {
			e.Fault = "unroutable"
		}
		// A third of the two-replica seeds' crash points are freezes.
		if e.Kind == Crash && slices.Contains(FreezePoints, e.Fault) && s.Config.Replicas > 1 && freezes.IntN(3) == 0 {
			e = Event{Kind: Freeze, Fault: e.Fault, D: time.Duration(5+freezes.IntN(41)) * time.Second, Replica: e.Replica}
		}
		s.Events = append(s.Events, e)
	}
	return s
}

// weights of the event kinds, in Kind order.
var weights = [...]int{
	Publish: 14, Deliver: 34, Advance: 12, Sweep: 6, Drain: 3, PushTick: 4, Crash: 4,
	LedgerFault: 7, VendorFault: 10, PullFault: 2, PublishFault: 2, ChannelClose: 2,
	Freeze: 0, // made from crash points (Generate)
}

func genEvent(r *rand.Rand, c Config, msgs int, ad []bool) Event {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.IntN(total)
	k := Kind(0)
	for i, w := range weights {
		if x < w {
			k = Kind(i)
			break
		}
		x -= w
	}
	e := Event{Kind: k}
	pick := func(l []string) string { return l[r.IntN(len(l))] }
	switch k {
	case Publish:
		e.Msg = r.IntN(msgs)
		e.Ad = ad[e.Msg]
		switch x := r.IntN(20); {
		case x == 0:
			e.Body = 2
		case x <= 2:
			e.Body = 1
		}
	case Advance:
		e.D = genAdvance(r, c)
	case PushTick:
		e.Fault = pick(PushModes)
	case Crash:
		e.Fault = pick(CrashPoints)
	case LedgerFault:
		e.Fault = pick(oneShotLedgerFaults)
		if e.Fault == "past-deadline" && !c.Bolt {
			e.Fault = "timeout"
		}
		e.Op = []string{"begin", "finish", ""}[r.IntN(3)]
		switch e.Fault {
		case "slow":
			e.D = time.Duration(1+r.IntN(1900)) * time.Millisecond
		case "pause":
			e.D = time.Duration(1+r.IntN(8)) * time.Second
		}
	case VendorFault:
		e.Fault = pick(VendorFaults)
		switch e.Fault {
		case "429":
			e.D = time.Duration(r.IntN(120)) * time.Second
		case "slow", "token-slow", "report-races":
			e.D = time.Duration(1+r.IntN(90)) * time.Second
		}
	case PullFault:
		e.Fault = pick(PullFaults)
	case PublishFault:
		e.Fault = pick(oneShotPublishFaults)
	case ChannelClose:
		e.Fault = []string{"now", "mid-send"}[r.IntN(2)]
	}
	return e
}

// genAdvance draws a clock advance: mostly seconds, sometimes past a
// retry TTL, the report horizon or to the next window edge.
func genAdvance(r *rand.Rand, c Config) time.Duration {
	switch x := r.IntN(10); {
	case x < 6:
		return time.Duration(100+r.IntN(9900)) * time.Millisecond
	case x < 8:
		return time.Duration(10+r.IntN(350)) * time.Second
	case x < 9 && c.Horizon > 0:
		return c.Horizon + time.Duration(r.IntN(120))*time.Second
	default:
		return time.Duration(1+r.IntN(12)) * time.Hour
	}
}
