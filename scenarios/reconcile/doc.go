// Package reconcile checks, after a run, that the worker kept its delivery
// promises (docs/outcomes.md#outcome-table): every published
// notification ended in exactly one place, none reached the vendor twice,
// and the worker's word agrees with the vendor's request journal.
//
// It is a pure core and a set of gatherers:
//
//	published file (driver) --ReadPublished-------.
//	queues (RabbitMQ, peeked) --ReadQueues---------+
//	worker records (JSONL) --records.ReadFile------+--> Input --Reconcile--> Report --WriteTable / WriteJSON
//	attempt ledger (bbolt copy) --ReadLedger-------+
//	WireMock journal (admin API) --ReadJournal-----'
//
// Gather runs every gatherer from one GatherOptions. Reconcile reads
// nothing but its Input; a nil part of the Input skips the checks that
// need it, and Report.Checks names those that ran.
//
// Per published refkey (and per invalid message, known by its AMQP
// message id), the places it can end in are: acked (its record has an
// empty queue), or a copy in one of the queues of queues.Names. A
// DUPLICATE ack is a copy of a refkey already handled, suppressed without
// a send: it is counted in Report.Suppressed, never as a place. The vendor's
// journal counts how often a refkey reached the vendor; a 4xx answer means
// the vendor refused it, so only other answers count towards a duplicate.
//
// A place in the dead-letter queue is the worker's decision only when it
// is INVALID or a NOT_SENT whose attempts are exhausted (Input.MaxAttempts).
// A valid refkey found only there, with attempts left and nothing saying a
// send may have reached the vendor, was dead-lettered by the broker (a
// quorum queue's delivery limit) and will never be sent: it is counted
// lost, as "dead-lettered unsent" (Report.DeadLetteredUnsent,
// docs/outcomes.md#dead-lettered-unsent).
//
// Gathering needs the worker stopped: the ledger is locked by a running
// worker (bbolt), and a running consumer would take the messages the
// reconciler puts back.
package reconcile
