package ledger

import "context"

// QueryRowForTest runs q on one of the store's pooled connections and
// scans one value into dst (tests read session settings with it).
func (p *Postgres) QueryRowForTest(ctx context.Context, q string, dst any) error {
	return p.pool.QueryRow(ctx, q).Scan(dst)
}
