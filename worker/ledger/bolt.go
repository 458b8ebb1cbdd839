package ledger

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// LockTimeout is how long Open waits for the file lock (1 s) before it
// returns ErrLocked.
const LockTimeout = time.Second

// bucket is the one bbolt bucket: key refkey, value Entry as JSON.
var bucket = []byte("attempts")

// Ledger is the bbolt Store: one file, one process at a time. Every write
// transaction (Begin, Finish, Resolve, Prune) is fsynced before it returns:
// bbolt's NoSync is never set, since bbolt documents it as unsafe (the
// freelist may hand out pages the last synced tree still points to).
type Ledger struct {
	db   *bolt.DB
	path string
	// group: Begin and Finish go through bbolt's DB.Batch (GroupCommit).
	group bool
	// begun: the value each open attempt's Begin wrote (Finish's decode
	// saved while the file still holds it).
	begun begunCache
	// beforePruneChunk, when set (tests only), runs in Prune before each
	// chunk's write transaction.
	beforePruneChunk func()
}

var _ Store = (*Ledger)(nil)

// Open opens or creates the bbolt ledger at path (mode 0600; the parent
// folder is created 0700 if missing). Errors: the file cannot be opened or
// is not a ledger (wrapped bbolt error), or is locked by another process
// (ErrLocked, after LockTimeout = 1 s).
func Open(path string) (*Ledger, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open ledger %s: %w", path, err)
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: LockTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open ledger %s: waited %s: %w", path, LockTimeout, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open ledger %s: create bucket: %w", path, err)
	}
	return &Ledger{db: db, path: path}, nil
}

// GroupCommit makes Begin and Finish share write transactions: each one
// joins bbolt's DB.Batch, which commits up to size of them in one synced
// transaction, or fewer after delay. Every one of them is still durable
// before it returns (a Finish before its ack, a Begin before its send);
// one that fails is retried alone, so it fails no other. At concurrency 1
// the worker lets the next delivery's Begin start while a sent message's
// Finish is under way (docs/worker.md, Cost per message), so size 2 puts
// message k's Finish and k+1's Begin in one transaction; delay bounds
// what a lone one waits for company (a Finish with no next message, a
// Begin after an idle queue). Call it before the first Begin; size < 2
// turns it off.
func (l *Ledger) GroupCommit(size int, delay time.Duration) {
	if size < 2 {
		l.group = false
		return
	}
	l.db.MaxBatchSize, l.db.MaxBatchDelay, l.group = size, delay, true
}

// WriteTxID is the id of the ledger file's last committed write
// transaction; it grows by one per commit (for tests and cost checks:
// how many transactions some calls took).
func (l *Ledger) WriteTxID() (uint64, error) {
	var id int
	err := l.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return 0, ErrClosed
	}
	return uint64(id), err
}

// Path returns the file the ledger was opened at.
func (l *Ledger) Path() string { return l.path }

// Close closes the file and releases its lock. Closing twice returns nil.
func (l *Ledger) Close() error {
	if err := l.db.Close(); err != nil {
		return fmt.Errorf("close ledger: %w", err)
	}
	return nil
}

// Ping answers nil while the file is open and readable, else ErrClosed.
func (l *Ledger) Ping(ctx context.Context) error {
	return l.view(func(*bolt.Bucket) error { return nil })
}

// Begin decides in one synced bbolt write transaction (see Store.Begin),
// which under GroupCommit it may share with a Finish. A Begin whose ctx
// ended before it got bbolt's writer lock (it waited behind a Prune
// chunk, a slow commit) decides and writes nothing: its caller gave up on
// it and sent nothing, so a late ATTEMPTING would make the message's
// redelivery a false UNKNOWN.
// Errors: ErrEmptyRefKey, ErrClosed, ctx.Err() (wrapped), a corrupt value,
// or a failed commit (then nothing was written and the worker must not
// send).
func (l *Ledger) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (Decision, Entry, error) {
	if refkey == "" {
		return 0, Entry{}, fmt.Errorf("begin attempt: %w", ErrEmptyRefKey)
	}
	var (
		dec   Decision
		entry Entry
	)
	err := l.updateGrouped(func(b *bolt.Bucket) error {
		// Checked under the writer lock, so nothing is written once the
		// caller gave up. Under GroupCommit this error takes the call out
		// of its batch: bbolt rolls the batch back, commits the others
		// without it, and runs this one alone, where it fails again.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("gave up before the write: %w", err)
		}
		e, found, err := get(b, refkey)
		if err != nil {
			return err
		}
		if found {
			if dec = Decide(e, bodyHash); dec != Proceed {
				entry = e
				return nil
			}
		} else {
			e = Entry{RefKey: refkey, CreatedAt: now}
		}
		e.State = Attempting
		e.Attempts++
		e.Detail = ""
		e.UpdatedAt = now
		if e.BodyHash == "" {
			e.BodyHash = bodyHash
		}
		dec, entry = Proceed, e
		v, err := encode(e)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(refkey), v); err != nil {
			return err
		}
		l.begun.keep(refkey, v, e)
		return nil
	})
	if err != nil {
		l.begun.drop(refkey)
		return 0, Entry{}, fmt.Errorf("begin attempt %s: %w", refkey, err)
	}
	return dec, entry, nil
}

// Finish records state as the outcome of attempt in one synced write
// transaction (under GroupCommit possibly shared with a Begin) that first
// checks the entry (CheckAttempt; see Store.Finish). Unlike Begin it
// writes even after its ctx ended: the outcome happened, and CheckAttempt
// lands it only on its own attempt, so a late SENT still turns a
// redelivery into a DUPLICATE instead of an UNKNOWN, and a late NOT_SENT
// (nothing left the worker) lets the copy be sent. Errors:
// ErrEmptyRefKey, ErrBadState, *StaleAttemptError (ErrStaleAttempt),
// ErrClosed, a failed commit.
func (l *Ledger) Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error {
	if err := CheckFinish(refkey, attempt, state); err != nil {
		return err
	}
	defer l.begun.drop(refkey)
	err := l.updateGrouped(func(b *bolt.Bucket) error {
		e, found, err := l.begun.get(b, refkey)
		if err != nil {
			return err
		}
		if err := CheckAttempt(refkey, e, found, attempt, state); err != nil {
			return err
		}
		if !found {
			e = Entry{RefKey: refkey, CreatedAt: now}
		}
		e.State = state
		e.Detail = detail
		e.UpdatedAt = now
		if e.BodyHash == "" {
			e.BodyHash = bodyHash
		}
		return put(b, e)
	})
	if _, stale := errors.AsType[*StaleAttemptError](err); stale {
		return err
	}
	if err != nil {
		return fmt.Errorf("finish attempt %s: %w", refkey, err)
	}
	return nil
}

// Resolve records an operator's verdict (see Store.Resolve), even after
// its ctx ended: a verdict or a vendor's report written late is still
// true (CheckSettle checks the entry under the writer lock). Errors:
// ErrNotFound, ErrBadState, ErrAttemptTooRecent, ErrClosed, a failed
// commit.
func (l *Ledger) Resolve(ctx context.Context, refkey string, as outcome.Outcome, r Resolution, minAge time.Duration) error {
	if refkey == "" {
		return fmt.Errorf("resolve: %w", ErrEmptyRefKey)
	}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	r.As = as
	err := l.update(func(b *bolt.Bucket) error {
		e, found, err := get(b, refkey)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("resolve %s: %w", refkey, ErrNotFound)
		}
		if err := CheckSettle(refkey, e, r, minAge); err != nil {
			return err
		}
		e.State = as
		e.UpdatedAt = r.At
		e.Resolution = &r
		if r.Code != "" {
			e.Detail = r.Code
		}
		return put(b, e)
	})
	if err != nil {
		return fmt.Errorf("resolve ledger entry: %w", err)
	}
	return nil
}

// Get returns the entry for refkey and whether it exists. Errors: ErrClosed,
// a corrupt value.
func (l *Ledger) Get(ctx context.Context, refkey string) (Entry, bool, error) {
	var (
		e     Entry
		found bool
	)
	err := l.view(func(b *bolt.Bucket) error {
		var err error
		e, found, err = get(b, refkey)
		return err
	})
	if err != nil {
		return Entry{}, false, fmt.Errorf("get entry %s: %w", refkey, err)
	}
	return e, found, nil
}

// List returns the entries in state ("" = all), oldest UpdatedAt first,
// at most limit (0 = all). Errors: ErrClosed, a corrupt value.
func (l *Ledger) List(ctx context.Context, state outcome.Outcome, limit int) ([]Entry, error) {
	all, err := l.All()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, e := range all {
		if state == "" || e.State == state {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.RefKey, b.RefKey))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// All returns every entry, sorted by refkey (bytewise, bbolt's key order).
// Errors: ErrClosed, a corrupt value.
func (l *Ledger) All() ([]Entry, error) {
	out := []Entry{}
	err := l.view(func(b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			e, err := decodeEntry(k, v)
			if err != nil {
				return err
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list entries: %w", err)
	}
	return out, nil
}

// update runs fn in one write transaction; bbolt fsyncs its commit before
// Update returns (NoSync is never set).
func (l *Ledger) update(fn func(*bolt.Bucket) error) error {
	return l.write(l.db.Update, fn)
}

// updateGrouped is update through DB.Batch when GroupCommit is on: fn
// may then run more than once (bbolt retries a batch without a call that
// failed), so it reads what it changes inside the transaction.
func (l *Ledger) updateGrouped(fn func(*bolt.Bucket) error) error {
	if l.group {
		return l.write(l.db.Batch, fn)
	}
	return l.write(l.db.Update, fn)
}

func (l *Ledger) write(tx func(func(*bolt.Tx) error) error, fn func(*bolt.Bucket) error) error {
	err := tx(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucket)) })
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

func (l *Ledger) view(fn func(*bolt.Bucket) error) error {
	err := l.db.View(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucket)) })
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

func get(b *bolt.Bucket, refkey string) (Entry, bool, error) {
	v := b.Get([]byte(refkey))
	if v == nil {
		return Entry{}, false, nil
	}
	var e Entry
	if err := json.Unmarshal(v, &e); err != nil {
		return Entry{}, false, fmt.Errorf("decode entry %s: %w", refkey, err)
	}
	return e, true, nil
}

func put(b *bolt.Bucket, e Entry) error {
	v, err := encode(e)
	if err != nil {
		return err
	}
	return b.Put([]byte(e.RefKey), v)
}

// encode is an Entry as the file stores it (JSON).
func encode(e Entry) ([]byte, error) {
	v, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode entry %s: %w", e.RefKey, err)
	}
	return v, nil
}
