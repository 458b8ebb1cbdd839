package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// GroupMax is the most Begins and Finishes one PostgreSQL group commit
// carries (pgGroup): the rest wait for the next one.
const GroupMax = 128

// pgOp is one Begin or Finish statement waiting in a pgGroup. The group
// fills the results and closes done; the caller reads them only after
// done is closed.
type pgOp struct {
	ctx  context.Context
	sql  string
	args []any
	// row: the statement returns beginSQL's row (wrote, columns); else
	// it is an Exec and rows is its RowsAffected.
	row bool

	wrote  bool
	entry  Entry
	noRows bool // row: the statement returned no row
	rows   int64
	err    error
	done   chan struct{}
}

// pgGroup is PostgreSQL group commit for Begin and Finish: the statements
// of every caller waiting at once go to the server as one pgx batch (one
// round trip, one implicit transaction, one commit: pgx runs a batch's
// statements in an implicit transaction ended by its one Sync), each
// caller told its own statement's result once the commit returned. One
// group is in flight at a time; the calls that arrive meanwhile wait and
// go together in the next (no timer: a lone call goes at once, as
// PostgreSQL's own WAL group commit does with commit_delay 0).
//
// Each statement is the one the call would run alone, in arrival order,
// so a batch is a serial order of them: a per-row answer (a refkey
// already attempting or finished, a stale Finish) reaches its caller
// only. A call whose ctx ended before its group is sent is left out and
// writes nothing. When the batch fails on a statement's error (the server
// refused one statement, a deadlock with another replica's batch), the
// whole transaction rolled back: each call is run again alone, so one
// call's error fails no other. A connection or commit error fails every
// call of the group (nothing is known to be committed: the worker does not
// send).
type pgGroup struct {
	pool *pgxpool.Pool
	max  int

	mu       sync.Mutex
	queue    []*pgOp
	flushing bool

	// batches and statements count committed groups and the statements
	// in them (tests and cost checks).
	batches, statements atomic.Int64
}

// errGaveUp is wrapped when a call's ctx ended before its group was sent.
var errGaveUp = errors.New("gave up before the write")

// do queues op and waits for its result or for ctx. A ctx already ended
// writes nothing. A ctx that ends while op's group is in flight returns
// ctx's error; the group may still commit op (as a lone statement already
// sent would).
func (g *pgGroup) do(ctx context.Context, op *pgOp) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", errGaveUp, err)
	}
	op.ctx, op.done = ctx, make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, op)
	start := !g.flushing
	g.flushing = true
	g.mu.Unlock()
	if start {
		go g.loop()
	}
	select {
	case <-op.done:
		return op.err
	case <-ctx.Done():
		return fmt.Errorf("wait for group commit: %w", ctx.Err())
	}
}

// loop sends groups until the queue is empty.
func (g *pgGroup) loop() {
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.flushing = false
			g.mu.Unlock()
			return
		}
		n := min(len(g.queue), max(g.max, 1))
		ops := make([]*pgOp, n)
		copy(ops, g.queue)
		rest := copy(g.queue, g.queue[n:])
		clear(g.queue[rest:])
		g.queue = g.queue[:rest]
		g.mu.Unlock()
		g.flush(ops)
	}
}

// flush sends ops as one group (see pgGroup) and closes their done.
func (g *pgGroup) flush(ops []*pgOp) {
	live := ops[:0:0]
	for _, op := range ops {
		if err := op.ctx.Err(); err != nil {
			op.err = fmt.Errorf("%w: %w", errGaveUp, err)
			close(op.done)
			continue
		}
		live = append(live, op)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := groupContext(live)
	err := g.send(ctx, live)
	cancel()
	var pgErr *pgconn.PgError
	if err != nil && len(live) > 1 && errors.As(err, &pgErr) {
		// A statement's error rolled the group back: each alone.
		for _, op := range live {
			if e := op.ctx.Err(); e != nil {
				op.err = fmt.Errorf("%w: %w", errGaveUp, e)
			} else {
				op.err = g.send(op.ctx, []*pgOp{op})
			}
			close(op.done)
		}
		return
	}
	for _, op := range live {
		op.err = err
		close(op.done)
	}
}

// groupContext bounds a group by the latest deadline of its calls (none
// when one of them has none): the server is not waited for longer than
// the most patient caller waits.
func groupContext(ops []*pgOp) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, op := range ops {
		d, ok := op.ctx.Deadline()
		if !ok {
			return context.WithCancel(context.Background())
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}

// send runs ops as one pgx batch and fills their results; nil only once
// the batch's implicit transaction committed (Close read its Sync).
func (g *pgGroup) send(ctx context.Context, ops []*pgOp) error {
	b := &pgx.Batch{}
	for _, op := range ops {
		b.Queue(op.sql, op.args...)
	}
	br := g.pool.SendBatch(ctx, b)
	var err error
	for _, op := range ops {
		op.wrote, op.entry, op.noRows, op.rows = false, Entry{}, false, 0
		if op.row {
			op.entry, err = scanEntry(br.QueryRow(), &op.wrote)
			if errors.Is(err, pgx.ErrNoRows) {
				op.noRows, err = true, nil
			}
		} else {
			var tag pgconn.CommandTag
			tag, err = br.Exec()
			op.rows = tag.RowsAffected()
		}
		if err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	g.batches.Add(1)
	g.statements.Add(int64(len(ops)))
	return nil
}
