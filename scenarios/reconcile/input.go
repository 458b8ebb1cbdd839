package reconcile

import (
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock/journal"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// Published is one message the lab's driver published, one JSON line in
// the published file (see WritePublished and ReadPublished):
//
//	{"seq":1,"refkey":"bench-000001","message_id":"m-000001","valid":true,"published_at":"2026-11-30T03:00:00Z"}
//
// A valid message is identified by its RefKey. An invalid one may have no
// refkey at all (its body cannot be parsed), so the driver also sets the
// AMQP message-id property and records it here as MessageID; the reconciler
// finds the dead-lettered copy by it (and, when the worker did not keep the
// property, by counting dead-lettered messages that match nothing else).
type Published struct {
	Seq         int       `json:"seq"`                  // 1-based publish order
	RefKey      string    `json:"refkey,omitempty"`     // the body's "refkey"; "" only for an invalid body without one
	MessageID   string    `json:"message_id,omitempty"` // AMQP message-id property, "" when not set
	Valid       bool      `json:"valid"`                // false: the driver published it malformed on purpose
	Warmup      bool      `json:"warmup,omitempty"`     // a warm-up send of a bench run: not measured
	PublishedAt time.Time `json:"published_at,omitzero"`
}

// QueuedMessage is one message found in a queue after a run. Gather reads
// it without consuming it (see ReadQueues); it keeps no body (the body
// holds the recipient in clear).
type QueuedMessage struct {
	Queue       string         `json:"queue"`
	RefKey      string         `json:"refkey,omitempty"`     // "refkey" of the JSON body; "" when the body has none or does not parse
	MessageID   string         `json:"message_id,omitempty"` // AMQP message-id property
	Headers     map[string]any `json:"headers,omitempty"`    // AMQP headers; see queues.HeaderReason, HeaderOutcome, HeaderAttempt
	Redelivered bool           `json:"redelivered"`
}

// Header returns the string value of header name, "" when absent or not a
// string ([]byte values are converted).
func (m QueuedMessage) Header(name string) string { return headerString(m.Headers[name]) }

// JournalEntry is one request the vendor mock received, as in WireMock's
// request journal (the ground truth for "what reached the vendor",
// docs/vendor-api.md#journal): package vendormock/journal's Entry, the type
// vendormock.Stack.Journal returns too.
type JournalEntry = journal.Entry

// DefaultSendPath is the vendor's send endpoint (docs/vendor-api.md#message:
// POST /v3/message); only POSTs to it count as sends.
const DefaultSendPath = "/v3/message"

// Input is everything Reconcile looks at. A nil field means "not
// gathered": the checks that need it are skipped and Report.Checks says
// which ran. The readers in this package always return non-nil values, so
// an empty file or queue is "gathered and empty".
type Input struct {
	// Published lists what the driver published, in publish order.
	Published []Published
	// Names are the worker's queue names; the zero value skips the route
	// check (Queues are then judged by their headers only).
	Names queues.Names
	// Queues maps a queue name to the messages found in it.
	Queues map[string][]QueuedMessage
	// Ledger is every entry of the worker's attempt ledger.
	Ledger []ledger.Entry
	// Records are the worker's per-message records (JSONL), in any order;
	// Reconcile orders them by Seq and skips Requeued ones (the message went
	// back to the main queue: no place).
	Records []records.Record
	// Journal is the vendor mock's request journal, every request.
	Journal []JournalEntry
	// SendPath is the send endpoint; "" means DefaultSendPath.
	SendPath string
	// MaxAttempts is the worker's MAX_ATTEMPTS: a NOT_SENT message is
	// dead-lettered after that many send attempts; 0 means
	// queues.DefaultMaxAttempts.
	MaxAttempts int
}
