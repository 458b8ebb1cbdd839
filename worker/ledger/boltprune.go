package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// PruneChunk is the most entries one write transaction of the bbolt
// Prune deletes (1,000). Prune commits between chunks, so a Begin that
// comes while it runs waits for at most one chunk's transaction (a check
// and a delete of up to 1,000 entries, then one sync), not for the whole
// file's.
const PruneChunk = 1000

// Prune deletes the entries CanPrune allows (see Store.Prune) and returns
// how many it deleted. It finds them in read transactions, which leave
// bbolt's one writer lock free, and deletes them PruneChunk at a time,
// each chunk in its own synced write transaction that checks CanPrune
// again on the entry as it is then (a Begin may have changed it). ctx is
// checked before each chunk: once it has ended, Prune stops and returns
// the count already deleted with an error wrapping ctx.Err(); the rest
// waits for the next run. Errors also: ErrClosed, a corrupt value, a
// failed commit (again with the count already deleted).
func (l *Ledger) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	var after []byte
	for {
		keys, err := l.pruneCandidates(after, cutoff)
		if err != nil {
			return n, fmt.Errorf("prune ledger: %w", err)
		}
		if len(keys) == 0 {
			return n, nil
		}
		if l.beforePruneChunk != nil {
			l.beforePruneChunk()
		}
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("prune ledger: stopped after %d deletions: %w", n, err)
		}
		deleted := 0
		err = l.update(func(b *bolt.Bucket) error {
			deleted = 0
			for _, k := range keys {
				v := b.Get(k)
				if v == nil {
					continue
				}
				e, err := decodeEntry(k, v)
				if err != nil {
					return err
				}
				if !CanPrune(e, cutoff) {
					continue
				}
				if err := b.Delete(k); err != nil {
					return err
				}
				deleted++
			}
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("prune ledger: %w", err)
		}
		n += deleted
		if len(keys) < PruneChunk {
			return n, nil // the scan reached the end of the file
		}
		after = keys[len(keys)-1]
	}
}

// pruneCandidates returns, in key order, up to PruneChunk refkeys after
// after (from the first when nil) whose entries CanPrune allows, read in
// one read transaction.
func (l *Ledger) pruneCandidates(after []byte, cutoff time.Time) ([][]byte, error) {
	var keys [][]byte
	err := l.view(func(b *bolt.Bucket) error {
		c := b.Cursor()
		k, v := c.First()
		if after != nil {
			if k, v = c.Seek(after); bytes.Equal(k, after) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(keys) < PruneChunk; k, v = c.Next() {
			e, err := decodeEntry(k, v)
			if err != nil {
				return err
			}
			if CanPrune(e, cutoff) {
				keys = append(keys, bytes.Clone(k))
			}
		}
		return nil
	})
	return keys, err
}

// decodeEntry is the Entry stored under k.
func decodeEntry(k, v []byte) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(v, &e); err != nil {
		return Entry{}, fmt.Errorf("decode entry %q: %w", k, err)
	}
	return e, nil
}
