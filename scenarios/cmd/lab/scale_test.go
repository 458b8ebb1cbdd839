package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// TestScaleLedger: scale's worker points run on the shared PostgreSQL
// ledger unless LEDGER=bbolt, which is the case's one worker and so is
// accepted only with WORKERS=1; with more it is refused before anything
// starts, naming the key and both ways out.
func TestScaleLedger(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		ledger, mode string
	}{
		{nil, vendormock.LedgerPostgres, bench.ActiveCompeting},
		{[]string{"LEDGER=bbolt", "WORKERS=1"}, vendormock.LedgerBbolt, bench.ActiveSingle},
		{[]string{"LEDGER=postgres", "WORKERS=1 4"}, vendormock.LedgerPostgres, bench.ActiveCompeting},
	} {
		cfg, err := parseScaleArgs(tc.args, envOf(nil))
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if l, a := cfg.WorkerLedger(); l != tc.ledger || a != tc.mode {
			t.Errorf("%q: worker points on %s/%s, want %s/%s", tc.args, l, a, tc.ledger, tc.mode)
		}
	}
	for _, args := range [][]string{{"LEDGER=bbolt"}, {"LEDGER=bbolt", "WORKERS=1 2"}} {
		_, err := parseScaleArgs(args, envOf(nil))
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Key != "LEDGER" {
			t.Fatalf("%q: error %v, want a UsageError on LEDGER", args, err)
		}
		for _, s := range []string{"send one message twice", "LEDGER=postgres", "WORKERS=1"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%q: error %q does not say %q", args, err, s)
			}
		}
	}
}
