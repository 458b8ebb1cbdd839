package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
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

// Resolution is the settlement of one UNKNOWN (or ATTEMPTING) entry: an
// operator's verdict, or the vendor's delivery report
// (docs/outcomes.md#delivery-reports).
type Resolution struct {
	By  string    `json:"by"`  // who (free text, for example a login, or "vendor report")
	Why string    `json:"why"` // why, for example "vendor support: not received"
	At  time.Time `json:"at"`
	// As is the state that was set: NOT_SENT or SENT, or REJECTED when
	// the vendor reported a failure (Source report or pull).
	As outcome.Outcome `json:"as"`
	// Source is where the settlement came from: SourceOperator, SourceReport,
	// SourcePull or SourceHorizon; "" is an operator's (entries written
	// before sources were recorded).
	Source string `json:"source,omitempty"`
	// Code is the vendor's result code of a report ("" for an operator);
	// Resolve also writes it to Entry.Detail when it is not "".
	Code string `json:"code,omitempty"`
}

// Settlement sources of Resolution.Source (docs/outcomes.md#delivery-reports).
const (
	// SourceOperator: `notifier-worker ledger resolve`.
	SourceOperator = "operator"
	// SourceReport: a delivery report the vendor pushed to the worker.
	SourceReport = "report"
	// SourcePull: a delivery report the worker fetched by refkey.
	SourcePull = "pull"
	// SourceHorizon: no report within the vendor's horizon, from a vendor
	// whose profile promises a report for every accepted message.
	SourceHorizon = "horizon"
)

// Sources lists the valid Resolution.Source values ("" aside).
var Sources = []string{SourceOperator, SourceReport, SourcePull, SourceHorizon}

// SourceOf returns r.Source, or SourceOperator when it is "".
func (r Resolution) SourceOf() string {
	if r.Source == "" {
		return SourceOperator
	}
	return r.Source
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
	// ErrStaleAttempt: Finish was given an attempt the entry no longer
	// holds (another attempt began, an outcome or an operator's verdict was
	// recorded since); nothing was written. Finish's error is then a
	// *StaleAttemptError.
	ErrStaleAttempt = errors.New("stale ledger attempt")
	// ErrAttemptTooRecent: Resolve was asked about an ATTEMPTING entry
	// younger than the minimum age it was given (the attempt may still be
	// sending); nothing was written.
	ErrAttemptTooRecent = errors.New("attempt may still be in flight")
)

// StaleAttemptError is Finish's refusal to close an attempt the entry no
// longer holds. It wraps ErrStaleAttempt.
type StaleAttemptError struct {
	RefKey string
	// Attempt is the attempt Finish was asked to close (0: an outcome
	// decided without a send), State the outcome it would have written.
	Attempt int
	State   outcome.Outcome
	// Current is the entry as the store found it; Found is false when
	// there was none.
	Current Entry
	Found   bool
}

// Error names the refkey, the attempt and what the entry holds instead.
func (e *StaleAttemptError) Error() string {
	now := "no entry"
	if e.Found {
		now = fmt.Sprintf("%s after %d attempt(s)", e.Current.State, e.Current.Attempts)
	}
	return fmt.Sprintf("finish attempt %s #%d as %s: entry is %s: %v", e.RefKey, e.Attempt, e.State, now, ErrStaleAttempt)
}

// Unwrap returns ErrStaleAttempt.
func (e *StaleAttemptError) Unwrap() error { return ErrStaleAttempt }

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
	// the call. A ctx that ended before the call decides and writes
	// nothing (an error wrapping ctx.Err()); so does one that ends while
	// the bbolt file waits for its writer lock. A PostgreSQL statement
	// already sent may still commit after ctx ended.
	Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (Decision, Entry, error)
	// Finish records state (one of Finishable) as the outcome of attempt,
	// durably before it returns, only if the entry is still where that
	// attempt left it (CheckAttempt, atomically with every other write):
	//   attempt > 0 (Entry.Attempts of Begin's Proceed): the entry is
	//     ATTEMPTING with exactly that many attempts;
	//   attempt 0 (an outcome decided without a send, for example
	//     OUTSIDE_SEND_WINDOW or INVALID): there is no entry, or one that
	//     never had an attempt; a missing one is created with Attempts 0.
	// Otherwise nothing is written and the error is a *StaleAttemptError
	// (errors.Is ErrStaleAttempt). bodyHash is kept when the entry had
	// none. Errors also: ErrEmptyRefKey, ErrBadState (state not
	// Finishable, attempt < 0).
	Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error
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
	// Resolution (r.As is set to as; r.At = now when zero). An Attempting
	// entry last updated less than minAge before r.At is refused: its
	// attempt may still be sending (CheckResolve; minAge is the worst-case
	// send time, docs/deployment.md#resolving-unknown).
	// r.Source says where the verdict came from (an operator when "");
	// a vendor report (SourceReport, SourcePull) may also set
	// outcome.Rejected, and its r.Code becomes Entry.Detail (CheckSettle;
	// docs/outcomes.md#delivery-reports).
	// Errors: ErrNotFound, ErrBadState, ErrAttemptTooRecent.
	Resolve(ctx context.Context, refkey string, as outcome.Outcome, r Resolution, minAge time.Duration) error
	// Prune deletes the entries CanPrune(e, cutoff) allows (older than
	// cutoff, in a Prunable state, never resolved) and returns how many it
	// deleted. ATTEMPTING, UNKNOWN, REJECTED and resolved entries are never
	// pruned. A store may commit in parts (the bbolt file: PruneChunk
	// entries per transaction); one that stops part way (ctx ended, a
	// failed commit) returns the count it deleted with its error.
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

// CheckFinish returns nil when Finish accepts refkey, attempt and state,
// else an error wrapping ErrEmptyRefKey or ErrBadState naming what is
// allowed.
func CheckFinish(refkey string, attempt int, state outcome.Outcome) error {
	if refkey == "" {
		return fmt.Errorf("finish attempt: %w", ErrEmptyRefKey)
	}
	if attempt < 0 {
		return fmt.Errorf("finish attempt %s: attempt %d: %w; want 0 (no send) or Begin's Entry.Attempts", refkey, attempt, ErrBadState)
	}
	for _, s := range Finishable {
		if s == state {
			return nil
		}
	}
	return fmt.Errorf("finish attempt %s: state %q: %w; want one of %s",
		refkey, state, ErrBadState, outcome.Names(Finishable))
}

// Prunable lists the states whose entries Prune deletes once they are
// older than the retention: no copy of their message waits in a queue
// without expiry (SENT was acked; NOT_SENT comes back from .retry within
// RetryMaxDelay, or waits in .dead and is then rightly sent; a held
// OUTSIDE_SEND_WINDOW copy comes back at the window's opening; INVALID was
// never sent). ATTEMPTING, UNKNOWN and REJECTED are kept: their copies wait
// in notifications.unknown or .failed until an operator moves them, at any
// age (docs/deployment.md#retention).
var Prunable = []outcome.Outcome{outcome.Sent, outcome.NotSent, outcome.OutsideSendWindow, outcome.Invalid}

// CanPrune is Prune's rule, shared by every store: e is deleted when it was
// last updated before cutoff, its state is one of Prunable, and it carries
// no operator's verdict (a resolved entry's copy may still be moved back
// from notifications.unknown; the verdict must then still decide it).
func CanPrune(e Entry, cutoff time.Time) bool {
	return e.UpdatedAt.Before(cutoff) && e.Resolution == nil && slices.Contains(Prunable, e.State)
}

// CheckAttempt is Finish's condition, shared by every store: nil when the
// entry (cur; found false when there is none) is still where attempt left
// it (see Store.Finish), else a *StaleAttemptError for state.
func CheckAttempt(refkey string, cur Entry, found bool, attempt int, state outcome.Outcome) error {
	switch {
	case attempt == 0 && (!found || cur.Attempts == 0 && cur.State != Attempting):
		return nil
	case attempt > 0 && found && cur.State == Attempting && cur.Attempts == attempt:
		return nil
	}
	return &StaleAttemptError{RefKey: refkey, Attempt: attempt, State: state, Current: cur, Found: found}
}

// CheckResolve is Resolve's rule, shared by every store: nil when entry cur
// may be resolved as as at time at, else an error wrapping ErrBadState
// (a verdict other than NOT_SENT or SENT, an entry neither UNKNOWN nor
// ATTEMPTING) or ErrAttemptTooRecent (an ATTEMPTING entry updated less
// than minAge before at: its request may still be on its way), naming what
// is allowed.
//
// REJECTED is accepted only from the vendor (source SourceReport or
// SourcePull: the vendor's report said the message failed); an unknown
// source is ErrBadState.
func CheckResolve(refkey string, cur Entry, as outcome.Outcome, at time.Time, minAge time.Duration) error {
	return CheckSettle(refkey, cur, Resolution{As: as, At: at}, minAge)
}

// CheckSettle is CheckResolve for a settlement r (r.As the state to set,
// r.At its time, r.Source where it came from); every store calls it.
func CheckSettle(refkey string, cur Entry, r Resolution, minAge time.Duration) error {
	as, at := r.As, r.At
	if r.Source != "" && !slices.Contains(Sources, r.Source) {
		return fmt.Errorf("resolve %s: source %q: %w; want one of %v", refkey, r.Source, ErrBadState, Sources)
	}
	fromVendor := r.Source == SourceReport || r.Source == SourcePull
	if as != outcome.NotSent && as != outcome.Sent && !(fromVendor && as == outcome.Rejected) {
		return fmt.Errorf("resolve %s as %q (source %s): %w; want %s or %s (%s only from a vendor report)",
			refkey, as, r.SourceOf(), ErrBadState, outcome.NotSent, outcome.Sent, outcome.Rejected)
	}
	if cur.State != outcome.Unknown && cur.State != Attempting {
		return fmt.Errorf("resolve %s: entry is %s: %w; only %s or %s entries are resolved",
			refkey, cur.State, ErrBadState, outcome.Unknown, Attempting)
	}
	if age := at.Sub(cur.UpdatedAt); cur.State == Attempting && age < minAge {
		return fmt.Errorf("resolve %s: entry is %s since %s, %s before the verdict: %w: "+
			"an attempt younger than the worst-case send time (%s) may still be sending; wait and check again",
			refkey, Attempting, cur.UpdatedAt.UTC().Format(time.RFC3339), age.Round(time.Second), ErrAttemptTooRecent, minAge)
	}
	return nil
}
