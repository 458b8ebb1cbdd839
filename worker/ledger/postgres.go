package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// Table is the PostgreSQL table the ledger keeps, created if missing in the
// first schema of the connection's search_path.
const Table = "notifier_ledger"

// schema is one row per refkey under its primary key. resolution is the
// operator's verdict as JSON (Resolution), NULL when none.
const schema = `
CREATE TABLE IF NOT EXISTS ` + Table + ` (
	refkey     text PRIMARY KEY,
	state      text NOT NULL,
	attempts   integer NOT NULL DEFAULT 0,
	detail     text NOT NULL DEFAULT '',
	body_hash  text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	resolution jsonb
);
CREATE INDEX IF NOT EXISTS ` + Table + `_updated_at ON ` + Table + ` (updated_at);`

const columns = `refkey, state, attempts, detail, body_hash, created_at, updated_at, resolution`

// beginSQL is Begin as ONE statement: the upsert writes Attempting when
// there is no row, or when the row is resendable and its body hash matches
// (the WHERE of ON CONFLICT DO UPDATE is evaluated on the latest committed
// row version under its row lock, so of two racing Begins only one can
// update it); otherwise it writes nothing and the second branch returns the
// existing row. $1 refkey, $2 body hash, $3 now.
const beginSQL = `
WITH up AS (
	INSERT INTO ` + Table + ` AS l (refkey, state, attempts, detail, body_hash, created_at, updated_at)
	VALUES ($1, 'ATTEMPTING', 1, '', $2, $3, $3)
	ON CONFLICT (refkey) DO UPDATE SET
		state = 'ATTEMPTING', attempts = l.attempts + 1, detail = '', updated_at = EXCLUDED.updated_at,
		body_hash = CASE WHEN l.body_hash = '' THEN EXCLUDED.body_hash ELSE l.body_hash END
	WHERE l.state IN ('NOT_SENT', 'OUTSIDE_SEND_WINDOW')
		AND (l.body_hash = '' OR EXCLUDED.body_hash = '' OR l.body_hash = EXCLUDED.body_hash)
	RETURNING ` + columns + `
)
SELECT true, ` + columns + ` FROM up
UNION ALL
SELECT false, ` + columns + ` FROM ` + Table + ` WHERE refkey = $1 AND NOT EXISTS (SELECT 1 FROM up)`

// beginDecision interprets beginSQL's answer: wrote (its first column) and
// the row it returned. When the upsert wrote, the row is the new ATTEMPTING
// one: Proceed. Otherwise the row is the existing one and Decide, the rule
// every store shares, decides; a row Decide would let proceed means the
// read saw an older, resendable version than the one the upsert found
// locked: again is true and Begin runs the statement on a fresh snapshot.
func beginDecision(wrote bool, e Entry, bodyHash string) (d Decision, again bool) {
	if wrote {
		return Proceed, false
	}
	d = Decide(e, bodyHash)
	return d, d == Proceed
}

// beginRetries bounds Begin's re-runs when the statement's snapshot is
// older than the row a concurrent Begin just committed (then the upsert
// found the row locked-and-changed but the plain read cannot see it yet).
const beginRetries = 5

// Postgres is the PostgreSQL Store, shared by every replica: one row per
// refkey in Table. Commits are durable when they return: the connection
// sets synchronous_commit=on whatever the server's default.
type Postgres struct {
	pool   *pgxpool.Pool
	closed atomic.Bool
	// group commits the Begins and Finishes waiting at once together
	// (pgGroup); alone (tests and measurements only) sends each call on
	// its own, concurrently over the pool, as before group commit.
	group *pgGroup
	alone bool
}

var _ Store = (*Postgres)(nil)

// OpenPostgres connects to the postgres:// or postgresql:// URL (pgx's
// connection string; search_path selects the schema), checks the server
// answers, and creates Table if missing. Errors: a bad URL, the server
// unreachable, or the table cannot be created (wrapped pgx errors; the URL's
// password is never part of them).
func OpenPostgres(ctx context.Context, url string) (*Postgres, error) {
	return openPostgres(ctx, url, nil)
}

// openPostgres is OpenPostgres with session settings over the durable
// ones (tests and measurements only: params may weaken durability).
func openPostgres(ctx context.Context, url string, params map[string]string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres ledger: parse URL: %w", err)
	}
	// Durable commits: a Begin that returned Proceed survives a server crash.
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres ledger: %w", err)
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres ledger: create table %s: %w", Table, err)
	}
	return &Postgres{pool: pool, group: &pgGroup{pool: pool, max: GroupMax}}, nil
}

// Close closes the pool. Closing twice returns nil.
func (p *Postgres) Close() error {
	if p.closed.CompareAndSwap(false, true) {
		p.pool.Close()
	}
	return nil
}

func (p *Postgres) check() error {
	if p.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Ping answers nil while the server answers a query.
func (p *Postgres) Ping(ctx context.Context) error {
	if err := p.check(); err != nil {
		return err
	}
	if err := p.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres ledger: %w", err)
	}
	return nil
}

// Begin decides with one INSERT ... ON CONFLICT DO UPDATE ... WHERE
// statement (see Store.Begin and beginSQL), group-committed with the
// other Begins and Finishes waiting at once (pgGroup): it returns once
// the transaction that carried it committed. A ctx that ended before its
// group was sent writes nothing. Errors: ErrEmptyRefKey, ErrClosed, ctx's
// error, a failed query or commit (nothing decided: do not send).
func (p *Postgres) Begin(ctx context.Context, refkey, bodyHash string, now time.Time) (Decision, Entry, error) {
	if refkey == "" {
		return 0, Entry{}, fmt.Errorf("begin attempt: %w", ErrEmptyRefKey)
	}
	if err := p.check(); err != nil {
		return 0, Entry{}, fmt.Errorf("begin attempt %s: %w", refkey, err)
	}
	for range beginRetries {
		op := &pgOp{sql: beginSQL, args: []any{refkey, bodyHash, now.UTC()}, row: true}
		if err := p.do(ctx, op); err != nil {
			return 0, Entry{}, fmt.Errorf("begin attempt %s: %w", refkey, err)
		}
		if op.noRows {
			continue // a concurrent Begin committed after this statement's snapshot
		}
		if d, again := beginDecision(op.wrote, op.entry, bodyHash); !again {
			return d, op.entry, nil
		}
	}
	return 0, Entry{}, fmt.Errorf("begin attempt %s: no decision after %d tries under contention", refkey, beginRetries)
}

// finishSQL is Finish of an attempt (> 0) as one conditional UPDATE: it
// lands only on the row Begin left for that attempt (CheckAttempt). $1
// refkey, $2 state, $3 detail, $4 body hash, $5 now, $6 attempt.
const finishSQL = `
UPDATE ` + Table + ` AS l SET
	state = $2, detail = $3, updated_at = $5,
	body_hash = CASE WHEN l.body_hash = '' THEN $4 ELSE l.body_hash END
WHERE l.refkey = $1 AND l.state = 'ATTEMPTING' AND l.attempts = $6`

// finishNoSendSQL is Finish of an outcome decided without a send
// (attempt 0): it creates the row, or updates one that never had an
// attempt (CheckAttempt). $1 refkey, $2 state, $3 detail, $4 body hash,
// $5 now.
const finishNoSendSQL = `
INSERT INTO ` + Table + ` AS l (refkey, state, attempts, detail, body_hash, created_at, updated_at)
VALUES ($1, $2, 0, $3, $4, $5, $5)
ON CONFLICT (refkey) DO UPDATE SET
	state = EXCLUDED.state, detail = EXCLUDED.detail, updated_at = EXCLUDED.updated_at,
	body_hash = CASE WHEN l.body_hash = '' THEN EXCLUDED.body_hash ELSE l.body_hash END
WHERE l.attempts = 0 AND l.state <> 'ATTEMPTING'`

// Finish records state as the outcome of attempt with one conditional
// statement (finishSQL, finishNoSendSQL; see Store.Finish), group-committed
// like Begin's (pgGroup): durable when it returns nil. When it wrote
// nothing, the row is read to build the *StaleAttemptError. Errors:
// ErrEmptyRefKey, ErrBadState, *StaleAttemptError (ErrStaleAttempt),
// ErrClosed, a failed query.
func (p *Postgres) Finish(ctx context.Context, refkey, bodyHash string, attempt int, state outcome.Outcome, detail string, now time.Time) error {
	if err := CheckFinish(refkey, attempt, state); err != nil {
		return err
	}
	if err := p.check(); err != nil {
		return fmt.Errorf("finish attempt %s: %w", refkey, err)
	}
	q, args := finishNoSendSQL, []any{refkey, string(state), detail, bodyHash, now.UTC()}
	if attempt > 0 {
		q, args = finishSQL, append(args, attempt)
	}
	op := &pgOp{sql: q, args: args}
	if err := p.do(ctx, op); err != nil {
		return fmt.Errorf("finish attempt %s: %w", refkey, err)
	}
	if op.rows == 1 {
		return nil
	}
	cur, found, err := p.Get(ctx, refkey)
	if err != nil {
		return fmt.Errorf("finish attempt %s: wrote nothing, then: %w", refkey, err)
	}
	return &StaleAttemptError{RefKey: refkey, Attempt: attempt, State: state, Current: cur, Found: found}
}

// do runs op through the group commit, or alone (Postgres.alone).
func (p *Postgres) do(ctx context.Context, op *pgOp) error {
	if p.alone {
		return p.group.send(ctx, []*pgOp{op})
	}
	return p.group.do(ctx, op)
}

// Resolve records an operator's verdict in one transaction that locks the
// row (see Store.Resolve). Errors: ErrNotFound, ErrBadState,
// ErrAttemptTooRecent, ErrClosed, a failed query.
func (p *Postgres) Resolve(ctx context.Context, refkey string, as outcome.Outcome, r Resolution, minAge time.Duration) error {
	if refkey == "" {
		return fmt.Errorf("resolve: %w", ErrEmptyRefKey)
	}
	if err := p.check(); err != nil {
		return fmt.Errorf("resolve %s: %w", refkey, err)
	}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	r.At, r.As = r.At.UTC(), as
	res, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", refkey, err)
	}
	err = pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		cur, err := scanEntry(tx.QueryRow(ctx, `SELECT `+columns+` FROM `+Table+` WHERE refkey = $1 FOR UPDATE`, refkey), nil)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("resolve %s: %w", refkey, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := CheckSettle(refkey, cur, r, minAge); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE `+Table+` SET state = $2, updated_at = $3, resolution = $4,
			detail = CASE WHEN $5::text = '' THEN detail ELSE $5::text END WHERE refkey = $1`,
			refkey, string(as), r.At, res, r.Code)
		return err
	})
	if err != nil {
		return fmt.Errorf("resolve ledger entry: %w", err)
	}
	return nil
}

// pruneSQL is CanPrune as one DELETE. $1 cutoff, $2 the Prunable states.
const pruneSQL = `DELETE FROM ` + Table + ` WHERE updated_at < $1 AND resolution IS NULL AND state = ANY($2)`

// Prune deletes the rows CanPrune allows (pruneSQL; see Store.Prune) and
// returns how many it deleted.
func (p *Postgres) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	if err := p.check(); err != nil {
		return 0, fmt.Errorf("prune ledger: %w", err)
	}
	tag, err := p.pool.Exec(ctx, pruneSQL, cutoff.UTC(), prunableNames())
	if err != nil {
		return 0, fmt.Errorf("prune ledger: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Get returns the row for refkey and whether it exists.
func (p *Postgres) Get(ctx context.Context, refkey string) (Entry, bool, error) {
	if err := p.check(); err != nil {
		return Entry{}, false, fmt.Errorf("get entry %s: %w", refkey, err)
	}
	e, err := scanEntry(p.pool.QueryRow(ctx, `SELECT `+columns+` FROM `+Table+` WHERE refkey = $1`, refkey), nil)
	if errors.Is(err, pgx.ErrNoRows) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, fmt.Errorf("get entry %s: %w", refkey, err)
	}
	return e, true, nil
}

// List returns the rows in state ("" = all), oldest updated_at first, at
// most limit (0 = all).
func (p *Postgres) List(ctx context.Context, state outcome.Outcome, limit int) ([]Entry, error) {
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("list entries: %w", err)
	}
	q := `SELECT ` + columns + ` FROM ` + Table + ` WHERE ($1 = '' OR state = $1) ORDER BY updated_at, refkey`
	args := []any{string(state)}
	if limit > 0 {
		q += ` LIMIT $2`
		args = append(args, limit)
	}
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list entries: %w", err)
	}
	defer rows.Close()
	out := []Entry{}
	for rows.Next() {
		e, err := scanEntry(rows, nil)
		if err != nil {
			return nil, fmt.Errorf("list entries: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list entries: %w", err)
	}
	return out, nil
}

// prunableNames returns Prunable as strings (pruneSQL's $2).
func prunableNames() []string {
	out := make([]string, len(Prunable))
	for i, s := range Prunable {
		out[i] = string(s)
	}
	return out
}

// scanEntry reads the columns (after a leading boolean when wrote != nil).
func scanEntry(row pgx.Row, wrote *bool) (Entry, error) {
	var (
		e          Entry
		state      string
		resolution []byte
	)
	dest := []any{&e.RefKey, &state, &e.Attempts, &e.Detail, &e.BodyHash, &e.CreatedAt, &e.UpdatedAt, &resolution}
	if wrote != nil {
		dest = append([]any{wrote}, dest...)
	}
	if err := row.Scan(dest...); err != nil {
		return Entry{}, err
	}
	e.State = outcome.Outcome(state)
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	if len(resolution) > 0 {
		var r Resolution
		if err := json.Unmarshal(resolution, &r); err != nil {
			return Entry{}, fmt.Errorf("decode resolution of %s: %w", e.RefKey, err)
		}
		e.Resolution = &r
	}
	return e, nil
}
