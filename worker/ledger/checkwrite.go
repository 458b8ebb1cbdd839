package ledger

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"
)

// WriteChecker is a Store that can show it takes a durable write now, not
// only that it answers a read (Ping): a PostgreSQL server that answers
// SELECT but cannot commit (a read-only standby after a failover, a full
// disk), or a bbolt file whose writer lock a long transaction holds,
// passes Ping and still fails every Begin. The worker waits on CheckWrite
// after a ledger failure before it takes messages again, since each
// message it takes and requeues unsent costs a quorum queue one of its
// delivery-limit deliveries (docs/deployment.md#deadlines). *Ledger,
// *Postgres and the in-memory contract store implement it.
type WriteChecker interface {
	// CheckWrite commits a write transaction that changes no entry,
	// durably (synced) as Begin's, and answers nil once it did. Errors:
	// ErrClosed, ctx's error when it ended first, or the store's own.
	CheckWrite(ctx context.Context) error
}

var (
	_ WriteChecker = (*Ledger)(nil)
	_ WriteChecker = (*Postgres)(nil)
)

// CheckWrite commits an empty write transaction: bbolt takes its one
// writer lock, writes a new meta page and fsyncs it (WriteTxID grows by
// one), as for Begin. The wait for the writer lock is bounded by ctx: the
// transaction then goes on alone and, writing nothing, changes nothing.
func (l *Ledger) CheckWrite(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- l.write(l.db.Update, func(*bolt.Bucket) error { return nil }) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("check ledger write: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("check ledger write: %w", ctx.Err())
	}
}

// CheckWrite commits a transaction that holds a transaction id
// (txid_current() assigns one), so its commit writes a WAL commit record
// and, with synchronous_commit=on, waits for its flush, as a Begin's
// commit does. A server in recovery (a read-only standby) refuses to
// assign one: "cannot assign TransactionIds during recovery".
func (p *Postgres) CheckWrite(ctx context.Context) error {
	if err := p.check(); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var xid int64
		return tx.QueryRow(ctx, `SELECT txid_current()`).Scan(&xid)
	})
	if err != nil {
		return fmt.Errorf("check postgres ledger write: %w", err)
	}
	return nil
}
