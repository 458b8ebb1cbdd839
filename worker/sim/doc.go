// Package sim is a deterministic simulator of the worker: the worker's
// real code runs against models of its peers, driven by a fault schedule
// generated from a seed, and a checker judges the history after every
// step (docs/testing.md, Deterministic simulation). One seed is one
// schedule and one trace: a failure replays exactly, and Shrink reduces
// its schedule to the few events that still break the invariant.
//
// # Layout
//
// As TigerBeetle's src/testing and FoundationDB's sim2: one model per
// real interface, named after it, beside a scheduler and a checker. The
// models never import the production adapters (amqp091's connection,
// vendorapi's strategies, the ledger stores' wiring).
//
//	clock.go     Clock: window.Clock, simulated time; nothing sleeps
//	broker.go    Broker: RabbitMQ as the worker relies on it (channels,
//	             worker.UnknownGetter); brokerack.go a delivery's
//	             amqp.Acknowledger (per-channel tags, multiple, the channel
//	             error of an unknown tag); brokerpub.go its publish path
//	             (confirms, mandatory returns, declarations)
//	session.go   Session: one session of the consume loop on the broker
//	             (worker.BrokerSession), the process's dialer and publisher
//	vendor.go    Vendor: the vendor's HTTP API behind the real
//	             vendorapi.Client (an http.RoundTripper), the truth per refkey,
//	             delivery reports pulled and pushed (vendorreports.go)
//	ledger.go    Ledger: a fault layer in front of the real ledger.Store
//	             (bbolt in a temporary folder, or ledgertest.Mem)
//	crash.go     a replica's process crash and restart; freeze.go its
//	             freeze (a stall past the heartbeat timeout hands over)
//	process.go   one life of a replica's worker process: the real consume loop
//	             (worker.SimLoop), vendorapi.Client, reports.Resolver,
//	             Sweeper and push endpoint
//	loop.go      the turns of the scheduler and the loops' goroutines: the
//	             loops' waits, who takes a delivery (receiver), a
//	             process's ledger and vendor; turns.go serve's handlers
//	             held and run one per turn, the ack batcher's timers on
//	             the simulated clock, the acks' facts; logsink.go its log
//	schedule.go  the events and Generate (seeded PCG)
//	world.go     the scheduler: it owns every step; run.go: RunSchedule,
//	             the quiescence phase, Run, Summary; shrink.go: Shrink
//	checker.go   the invariants, CheckStep and CheckQuiescent
//
// # What runs
//
// One or two worker replicas (Config.Replicas: two in three seeds of
// four), each a process of its own with its own session on the broker
// and its own vendor client, all on one ledger (the deployment the
// guarantees need: the in-memory store stands for the shared PostgreSQL
// one; one bbolt store shared stands for one file a standby reopens).
// Under single active consumer the broker decides which replica takes a
// delivery (the first registered; a crash, a lost channel or a freeze
// past the heartbeat timeout of the active one hands its unacked
// deliveries to the next, and the restarted process registers behind it;
// a frozen one goes on where it stopped once the clock reaches its end,
// into a closed connection); a quarter of the two-replica in-memory seeds run
// competing consumers (ACTIVE=competing), each Deliver naming the
// replica. Options.Plant plants the deployments that break the promise:
// a ledger per replica, with or without single active consumer.
// Each replica runs the worker's consume loop as worker.Run wires it, through
// worker.SimLoop: the session loop (consumer.loop: reconnect backoff,
// the stop for a broken ledger and waitLedger, whose CheckWrite or Ping
// reaches the fault layer through the worker's own timedLedger), serve at
// the seed's concurrency (Config.Concurrency: 1 in half the seeds, with
// prefetch 2; 2, 4 or 8 in the others, with the prefetch
// consumer.prefetch gives, the ack batcher's room included) with the
// pause after a requeue, the session's loss while deliveries are in hand
// and the drain of the handlers in flight, the channel generations
// (genAcker refuses the ack of a lost session's delivery; the Handler's
// gate sees it), the ack batcher (worker/ackbatch.go: multiple acks of a
// contiguous run, a nack alone, the flush delay on the simulated clock)
// and worker.Handler.Handle with its ledger-call goroutines. The loop runs
// on goroutines of its own, but only in the scheduler's turns (loop.go,
// turns.go): each Deliver hands it one delivery, serve's handlers are
// held (SimLoop.Go) and run one per turn in the order the seed draws, so
// they finish out of their delivery order, its sleeps and the batcher's
// timer end when the scheduler moves the clock to them, and every model
// it calls answers at once, so one seed is one history. Its backoff draws
// from the seed. The worker's LedgerTimeout and PublishTimeout are an
// hour of real time, so no real timer decides anything (the fault layer
// models the ledger's 2 s deadline by the simulated clock). Beside the
// loop: the real bbolt *ledger.Ledger and ledgertest.Mem, the vendor
// client's token cache, 401 refetch, classification by httptrace and
// Retry-After, reports.Sweeper and reports.Resolver (pull through the
// client, push through Resolver.Handler in memory; the vendor pushes to
// replica 0), worker.DrainUnknown (a sweep and its drain run on the
// replica the event names) with a publisher that repairs its path as
// drainOnce's does, and window.Default. Wall-clock reads left in that code (a Record's
// Start and End, a trace's durations) decide nothing.
//
// # What does not run yet
//
// Two handlers' steps interleaved: a handler runs from its start to its
// end in one turn (its Begin, send, Finish, copy and ack), so another
// handler never runs between one's Begin and its Finish, and no handler
// runs while serve sleeps in its pause after a requeue (the interleavings
// a handler's own wait inside the vendor call or the ledger opens are
// the catalog's and the worker's unit tests'); ReleaseAfterSend
// (decode-ahead, grouped ledger commits: the fault layer is no
// *ledger.Ledger, so the loop does not turn them on), MaxMessages and
// SendInterval (pacing waits on a real timer); the records file, metrics and /healthz (records are
// discarded; the scheduler reads the loop's log lines instead); the
// RabbitMQ adapter under the loop (amqpDialer: the declarations,
// ErrTopology, the prefetch on a real channel, ConfirmPublisher and
// sessionPublisher themselves: the model answers what they answer, a
// confirm, a nack wrapping worker.ErrPublishNacked or a return wrapping
// worker.ErrUnroutable, and the Repairer the loop's and the drain's
// publishers are declares the topology again on the model); a dial that
// fails (the model's Dial always succeeds, so "broker unavailable" is not
// exercised); the unknown drain's own connection (drainOnce: issue 27's
// "drain dials only the first URL" is not modelled) and its dirty flag
// (the scheduler drains after every sweep); ledger pruning; a freeze
// before the POST is written (the fence's residual window: a freeze
// starts only once the vendor processed the send, or around a publish or
// an ack) and the heartbeat timeout's wait (the broker closes a frozen
// process's connection at once); SIGTERM's drain; the report endpoint behind a load balancer (replica 0
// takes every push).
//
// # Models, and where they simplify
//
// The broker builds its queues from queues.Topology.Queues (names from
// queues.NamesFor): per-message expiration and x-message-ttl, expired at
// the head only; dead-letter routing with the expiration removed and
// x-last-death-reason set; a closed channel's unacked deliveries back to
// the head, redelivered; delivery tags per channel (1, 2, 3, ...), an
// ack or nack with multiple settling every unsettled delivery of the
// channel up to its tag, and a tag the channel does not hold unsettled a
// channel error (406 PRECONDITION_FAILED, as rabbit_channel's
// collect_acks answers it: the channel closes, its deliveries go back;
// the call itself returns nil, as amqp091-go's Ack does); a quorum
// queue's delivery count raised by every
// return, a closed channel included, as RabbitMQ before 4.3 counts it
// (the lab runs 3.10), and dead-lettered over x-delivery-limit, at least
// once (the model never drops a message); single active consumer on
// the main queue as the topology declares it (the first registered
// consumer gets the deliveries, the next takes over when its channel
// closes; without it, competing consumers, each channel filled up to its
// prefetch); every publish mandatory with confirms: a copy queue deleted
// while empty (the publish fault "unroutable") returns every publish to
// it before the confirm until a declaration (a session's Dial, a repair)
// creates it again. It has no cluster, no broker restart and no x-death
// array. A session's prefetch is filled from the
// main queue at each Deliver (RabbitMQ pushes it as soon as it can), and
// a channel closed mid-send reaches serve (Lost) once it has accounted
// the delivery in hand: one of the orders a real loss allows. The vendor processes a send or not as the
// armed fault says and fires the httptrace hooks a connection would (a
// request that fails before WroteHeaders was never written); it has no
// TLS, no transport replays and no clock skew; which reports fail, are
// dropped (an incomplete vendor) or are late (a delayed vendor, which
// answers interim meanwhile and has a pull endpoint) is fixed per refkey
// by the seed. The ledger's outage ("down") refuses every operation,
// Ping and CheckWrite included, for a span of simulated time; the other
// ledger faults hit one operation. The in-memory ledger stands for a database server and
// survives a crash; the bbolt file is closed and opened again (no torn
// write). Real timing, RabbitMQ and the network are the catalog
// scenarios' to test.
package sim
