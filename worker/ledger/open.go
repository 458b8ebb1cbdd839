package ledger

import (
	"context"
	"fmt"
	"strings"
)

// OpenStore opens the Store a LEDGER spec names (docs/deployment.md):
//
//	postgres://user:pass@host:5432/db?sslmode=... or postgresql://...
//	    -> PostgreSQL (OpenPostgres), shared by every replica
//	a file path, for example ./notifier-ledger.db or /data/ledger.db
//	    -> the bbolt file (Open), one replica
//
// Errors: ErrBadSpec for an empty spec or a URL of another scheme (the
// message names the allowed forms), else the store's own open error.
func OpenStore(ctx context.Context, spec string) (Store, error) {
	kind, err := SpecKind(spec)
	if err != nil {
		return nil, err
	}
	if kind == KindPostgres {
		return OpenPostgres(ctx, spec)
	}
	return Open(spec)
}

// Kinds of store a spec names.
const (
	KindBolt     = "bbolt"
	KindPostgres = "postgres"
)

// SpecKind returns KindBolt or KindPostgres for spec, or an error wrapping
// ErrBadSpec naming the allowed forms.
func SpecKind(spec string) (string, error) {
	const allowed = "want a file path (bbolt) or a postgres:// or postgresql:// URL"
	switch {
	case strings.TrimSpace(spec) == "":
		return "", fmt.Errorf("%w: empty; %s", ErrBadSpec, allowed)
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return KindPostgres, nil
	case strings.Contains(spec, "://"):
		scheme, _, _ := strings.Cut(spec, "://")
		return "", fmt.Errorf("%w: scheme %q; %s", ErrBadSpec, scheme, allowed)
	}
	return KindBolt, nil
}
