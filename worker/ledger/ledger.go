package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// Attempting is the one ledger state that is not an outcome: Begin wrote it
// before the request went out and no outcome has been recorded since (a
// crash or a lost channel mid-send leaves it). It is never written to a
// record or a header.
const Attempting outcome.Outcome = "ATTEMPTING"

// Finishable lists the outcomes Finish records, in table order
// (docs/outcomes.md). DUPLICATE is an outcome of a delivery, never of a
// refkey, and is refused.
var Finishable = []outcome.Outcome{
	outcome.Sent, outcome.Rejected, outcome.NotSent, outcome.Unknown,
	outcome.OutsideSendWindow, outcome.Invalid,
}

// Entry is the ledger's record for one refkey.
type Entry struct {
	RefKey string          `json:"refkey"`
	State  outcome.Outcome `json:"state"` // Attempting or one of Finishable
	// Attempts counts the requests started for this refkey (Begin's
	// Proceed decisions).
	Attempts int    `json:"attempts"`
	Detail   string `json:"detail,omitempty"` // short redacted note: a vendor code, an error class
	// BodyHash is the hex SHA-256 of the first body seen for this refkey
	// (BodyHash); "" when the entry was written without one.
	BodyHash  string    `json:"body_hash,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Resolution is the operator's verdict, when one was given (Resolve).
	Resolution *Resolution `json:"resolution,omitempty"`
}

// Resolution is an operator's verdict on one entry.
type Resolution struct {
	By  string    `json:"by"`  // who (free text, for example a login)
	Why string    `json:"why"` // why, for example "vendor support: not received"
	At  time.Time `json:"at"`
	// As is the state the operator set: NOT_SENT or SENT.
	As outcome.Outcome `json:"as"`
}

// Decision tells the worker what to do with a message, given the ledger.
type Decision int

const (
	// Proceed: no attempt was made yet, or the last one was NOT_SENT (or the
	// message was held outside the send window). The ledger now holds
	// Attempting for the refkey.
	Proceed Decision = iota
	// Duplicate: the refkey already has a final outcome (SENT, REJECTED,
	// UNKNOWN, INVALID) for the same body. Do not send; ack the delivery as
	// a suppressed duplicate.
	Duplicate
	// Unresolved: an attempt was started and no outcome recorded (a crash or
	// a lost channel mid-send). Do not send; the outcome is UNKNOWN.
	Unresolved
	// Conflict: the refkey is known with another body: it was reused for a
	// different notification. Do not send; dead-letter it (REFKEY_CONFLICT).
	// Nothing was written.
	Conflict
)

// String returns "proceed", "duplicate", "unresolved" or "conflict".
func (d Decision) String() string {
	switch d {
	case Proceed:
		return "proceed"
	case Duplicate:
		return "duplicate"
	case Unresolved:
		return "unresolved"
	case Conflict:
		return "conflict"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Errors returned by the stores; match them with errors.Is.
var (
	// ErrLocked: another process (or another Open in this one) holds the
	// bbolt ledger file; Open waited LockTimeout.
	ErrLocked = errors.New("ledger file is locked by another process")
	// ErrBadState: Finish was given a state that is not one of Finishable,
	// or Resolve was asked about an entry that is not UNKNOWN or
	// ATTEMPTING, or to set a state other than NOT_SENT or SENT.
	ErrBadState = errors.New("bad ledger state")
	// ErrEmptyRefKey: a refkey of "" was given.
	ErrEmptyRefKey = errors.New("empty refkey")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("ledger is closed")
	// ErrNotFound: the refkey has no entry.
	ErrNotFound = errors.New("no ledger entry")
	// ErrBadSpec: OpenStore was given a spec it cannot use.
	ErrBadSpec = errors.New("bad ledger spec")
)

// Store is the attempt ledger the worker consults before every send: one
// entry per refkey, decided atomically and durably (docs/deployment.md).
// Two implementations satisfy it: *Ledger, the bbolt file (one replica;
// every commit synced), and *Postgres (shared by every replica; one row per
// refkey under a unique key). OpenStore picks one from a LEDGER spec.
//
// Every method is safe for concurrent use. Errors wrap ErrEmptyRefKey,
// ErrBadState, ErrClosed or ErrNotFound where they apply, else the store's
// own error (a failed commit or query: then nothing was decided and the
// worker must not send).
type Store interface {
	// Begin decides, atomically with any other Begin on the same refkey in
	// any process sharing the store, whether this attempt may send.
	// bodyHash is the hex SHA-256 of the message body (BodyHash).
	//   an entry whose BodyHash differs (both non-empty) -> Conflict;
	//   no entry, or a Resendable state -> Attempting, Attempts+1, Proceed
	//     (durable before Begin returns);
	//   Attempting -> Unresolved;
	//   any other (final) state -> Duplicate.
	// Only Proceed writes. The Entry returned is the one in the store after
	// the call.
	Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (Decision, Entry, error)
	// Finish records the outcome of the attempt (state must be one of
	// Finishable), durably before it returns. It also creates an entry for
	// outcomes decided without a send (OUTSIDE_SEND_WINDOW, INVALID) with
	// Attempts 0; bodyHash is kept when the entry had none.
	Finish(ctx context.Context, refkey, bodyHash string, state outcome.Outcome, detail string, now time.Time) error
	// Get returns the entry for refkey and whether it exists.
	Get(ctx context.Context, refkey string) (Entry, bool, error)
	// List returns the entries in state (every entry when state is ""),
	// oldest UpdatedAt first (then by refkey), at most limit of them (0: no
	// limit).
	List(ctx context.Context, state outcome.Outcome, limit int) ([]Entry, error)
	// Resolve is the operator's verdict on an UNKNOWN (or Attempting)
	// entry after checking with the vendor: as must be outcome.NotSent
	// (a re-published copy is then sent) or outcome.Sent (it is then
	// suppressed as a duplicate). The entry keeps who, when and why in
	// Resolution (r.As is set to as; r.At = now when zero).
	// Errors: ErrNotFound, ErrBadState.
	Resolve(ctx context.Context, refkey string, as outcome.Outcome, r Resolution) error
	// Prune deletes entries whose UpdatedAt is before cutoff and returns
	// how many were deleted. Attempting entries are never pruned.
	Prune(ctx context.Context, cutoff time.Time) (int, error)
	// Ping answers nil while the store can be read (for /healthz).
	Ping(ctx context.Context) error
	// Close releases the store. Closing twice returns nil.
	Close() error
}

// BodyHash returns the hex SHA-256 of body (64 lower-case hex digits): what
// Begin compares to tell a redelivery (same body) from a reused refkey.
func BodyHash(body []byte) string {
	s := sha256.Sum256(body)
	return hex.EncodeToString(s[:])
}

// Decide is Begin's rule for an existing entry, shared by every store and
// fake so they cannot drift: Conflict when both body hashes are known and
// differ, else Unresolved for Attempting, Proceed for a Resendable state,
// Duplicate for any other.
func Decide(e Entry, bodyHash string) Decision {
	switch {
	case e.BodyHash != "" && bodyHash != "" && e.BodyHash != bodyHash:
		return Conflict
	case e.State == Attempting:
		return Unresolved
	case e.State.Resendable():
		return Proceed
	}
	return Duplicate
}

// CheckFinish returns nil when Finish accepts refkey and state, else an
// error wrapping ErrEmptyRefKey or ErrBadState naming the allowed states.
func CheckFinish(refkey string, state outcome.Outcome) error {
	if refkey == "" {
		return fmt.Errorf("finish attempt: %w", ErrEmptyRefKey)
	}
	for _, s := range Finishable {
		if s == state {
			return nil
		}
	}
	return fmt.Errorf("finish attempt %s: state %q: %w; want one of %s",
		refkey, state, ErrBadState, outcome.Names(Finishable))
}

// CheckResolve returns nil when an entry in state cur may be resolved as
// as, else an error wrapping ErrBadState naming what is allowed.
func CheckResolve(refkey string, cur, as outcome.Outcome) error {
	if as != outcome.NotSent && as != outcome.Sent {
		return fmt.Errorf("resolve %s as %q: %w; want %s or %s", refkey, as, ErrBadState, outcome.NotSent, outcome.Sent)
	}
	if cur != outcome.Unknown && cur != Attempting {
		return fmt.Errorf("resolve %s: entry is %s: %w; only %s or %s entries are resolved",
			refkey, cur, ErrBadState, outcome.Unknown, Attempting)
	}
	return nil
}
