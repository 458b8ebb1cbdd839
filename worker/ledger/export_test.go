package ledger

import (
	"context"
	"errors"

	bolt "go.etcd.io/bbolt"
)

// QueryRowForTest runs q on one of the store's pooled connections and
// scans one value into dst (tests read session settings with it).
func (p *Postgres) QueryRowForTest(ctx context.Context, q string, dst any) error {
	return p.pool.QueryRow(ctx, q).Scan(dst)
}

// HoldWriterForTest opens a write transaction and keeps it, with bbolt's
// one writer lock, until release is called (as a long Prune or a slow
// commit would); release waits for it to end, rolled back.
func (l *Ledger) HoldWriterForTest() (release func()) {
	held, rel, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_ = l.db.Update(func(*bolt.Tx) error {
			close(held)
			<-rel
			return errors.New("rolled back by the test")
		})
	}()
	<-held
	return func() { close(rel); <-done }
}

// PutForTest writes es in one transaction (a large file without one synced
// transaction per entry).
func (l *Ledger) PutForTest(es ...Entry) error {
	return l.update(func(b *bolt.Bucket) error {
		for _, e := range es {
			if err := put(b, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// BeforePruneChunkForTest makes Prune call f before each chunk's write
// transaction (f may pause Prune there; set it before Prune starts).
func (l *Ledger) BeforePruneChunkForTest(f func()) { l.beforePruneChunk = f }

// GroupStatsForTest returns how many group commits the store's pgGroup
// committed and how many statements they carried.
func (p *Postgres) GroupStatsForTest() (batches, statements int64) {
	return p.group.batches.Load(), p.group.statements.Load()
}

// HoldGroupForTest keeps the store's pgGroup from sending until release
// is called: the calls made meanwhile wait in its queue and go together.
func (p *Postgres) HoldGroupForTest() (release func()) {
	g := p.group
	g.mu.Lock()
	held := !g.flushing
	g.flushing = true
	g.mu.Unlock()
	return func() {
		if held {
			go g.loop()
		}
	}
}

// QueuedForTest is how many calls wait in the store's pgGroup.
func (p *Postgres) QueuedForTest() int {
	p.group.mu.Lock()
	defer p.group.mu.Unlock()
	return len(p.group.queue)
}

// OpenPostgresForTest is OpenPostgres with session settings over the
// durable ones (params) and, with alone, without group commit (each
// Begin and Finish its own statement and commit, concurrently over the
// pool, as before group commit).
func OpenPostgresForTest(ctx context.Context, url string, params map[string]string, alone bool) (*Postgres, error) {
	p, err := openPostgres(ctx, url, params)
	if err != nil {
		return nil, err
	}
	p.alone = alone
	return p, nil
}
