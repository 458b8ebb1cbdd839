// Package ledger is the worker's durable attempt ledger: one record per
// refkey, written before a request goes out and updated with its outcome,
// so that a redelivered message never becomes a second send.
//
// CONTRACT STUB (written by the lead): keep the exported names and
// signatures, fill in the bodies (bbolt, go.etcd.io/bbolt).
package ledger

import "time"

// State is the last known state of a refkey. It is either Attempting (the
// request may be going out, no outcome recorded yet) or an outcome class name
// ("SENT", "REJECTED", "NOT_SENT", "UNKNOWN", "OUTSIDE_SEND_WINDOW",
// "INVALID").
type State string

// Attempting is written before the request goes out.
const Attempting State = "ATTEMPTING"

// Entry is the ledger's record for one refkey.
type Entry struct {
	RefKey    string    `json:"refkey"`
	State     State     `json:"state"`
	Attempts  int       `json:"attempts"` // requests started for this refkey
	Detail    string    `json:"detail,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Decision tells the worker what to do with a message, given the ledger.
type Decision int

const (
	// Proceed: no attempt was made yet, or the last one was NOT_SENT. The
	// ledger now holds Attempting for the refkey.
	Proceed Decision = iota
	// Duplicate: the refkey already has a final outcome (SENT, REJECTED,
	// UNKNOWN, ...). Do not send; ack the delivery as a suppressed duplicate.
	Duplicate
	// Unresolved: an attempt was started and no outcome recorded (a crash or
	// a lost channel mid-send). Do not send; the outcome is UNKNOWN.
	Unresolved
)

// Ledger is an open ledger file. Safe for use by one process.
type Ledger struct{}

// Open opens or creates the ledger at path. Errors: the file cannot be
// opened or is locked by another process (timeout 1 s).
func Open(path string) (*Ledger, error) { panic("TODO: ledger.Open") }

// Close closes the file.
func (l *Ledger) Close() error { panic("TODO") }

// Begin decides, durably and atomically, whether refkey may be sent now. On
// Proceed the Attempting state is synced to disk before Begin returns.
func (l *Ledger) Begin(refkey string, now time.Time) (Decision, Entry, error) {
	panic("TODO: ledger.Begin")
}

// Finish records the outcome of the attempt started by Begin.
func (l *Ledger) Finish(refkey string, state State, detail string, now time.Time) error {
	panic("TODO: ledger.Finish")
}

// Get returns the entry for refkey and whether it exists.
func (l *Ledger) Get(refkey string) (Entry, bool, error) { panic("TODO") }

// All returns every entry, sorted by refkey.
func (l *Ledger) All() ([]Entry, error) { panic("TODO") }
