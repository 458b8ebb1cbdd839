package ledger

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// The PostgreSQL store's decisions without a server: its statements are
// checked against the rules the other stores run (Decide, CheckAttempt,
// CanPrune), and the Go that reads beginSQL's answer is a pure function.
// The integration tests (-tags integration) run the same contract on a
// real server.

// allStates is every state an entry can hold.
var allStates = append([]outcome.Outcome{Attempting}, Finishable...)

// TestBeginSQLProceedsOnlyWhereDecideDoes: the states beginSQL's upsert
// overwrites with ATTEMPTING are exactly those Decide lets proceed; ATTEMPTING
// and every final state are never among them (a row left ATTEMPTING by a
// live or crashed attempt must not be attempted again).
func TestBeginSQLProceedsOnlyWhereDecideDoes(t *testing.T) {
	m := regexp.MustCompile(`WHERE l\.state IN \(([^)]*)\)`).FindStringSubmatch(beginSQL)
	if m == nil {
		t.Fatalf("beginSQL has no `WHERE l.state IN (...)`:\n%s", beginSQL)
	}
	var inSQL []outcome.Outcome
	for _, q := range strings.Split(m[1], ",") {
		inSQL = append(inSQL, outcome.Outcome(strings.Trim(strings.TrimSpace(q), "'")))
	}
	for _, s := range allStates {
		decide := Decide(Entry{State: s}, "") == Proceed
		if got := slices.Contains(inSQL, s); got != decide {
			t.Errorf("state %s: beginSQL overwrites it %v, Decide proceeds %v", s, got, decide)
		}
	}
	for _, s := range []outcome.Outcome{Attempting, outcome.Sent, outcome.Rejected, outcome.Unknown, outcome.Invalid} {
		if slices.Contains(inSQL, s) {
			t.Errorf("beginSQL lets a %s row proceed: %v", s, inSQL)
		}
	}
	// Decide's Conflict rule: both hashes known and different.
	if !strings.Contains(beginSQL, "AND (l.body_hash = '' OR EXCLUDED.body_hash = '' OR l.body_hash = EXCLUDED.body_hash)") {
		t.Errorf("beginSQL does not refuse a row with another body hash:\n%s", beginSQL)
	}
}

// TestBeginDecision: how Begin reads beginSQL's answer.
func TestBeginDecision(t *testing.T) {
	const h, other = "aaaa", "bbbb"
	for _, tt := range []struct {
		name      string
		wrote     bool
		row       Entry
		want      Decision
		wantAgain bool
	}{
		{"the upsert wrote", true, Entry{State: Attempting, Attempts: 1, BodyHash: h}, Proceed, false},
		{"an ATTEMPTING row", false, Entry{State: Attempting, Attempts: 1, BodyHash: h}, Unresolved, false},
		{"a SENT row", false, Entry{State: outcome.Sent, Attempts: 1, BodyHash: h}, Duplicate, false},
		{"an UNKNOWN row", false, Entry{State: outcome.Unknown, Attempts: 1, BodyHash: h}, Duplicate, false},
		{"a row with another body", false, Entry{State: outcome.NotSent, Attempts: 1, BodyHash: other}, Conflict, false},
		{"a resendable row read on an old snapshot", false, Entry{State: outcome.NotSent, Attempts: 1, BodyHash: h}, Proceed, true},
	} {
		d, again := beginDecision(tt.wrote, tt.row, h)
		if again != tt.wantAgain || (!again && d != tt.want) {
			t.Errorf("%s: beginDecision = %v, again %v; want %v, again %v", tt.name, d, again, tt.want, tt.wantAgain)
		}
	}
}

// TestFinishSQLIsCheckAttempt: the two Finish statements carry
// CheckAttempt's condition.
func TestFinishSQLIsCheckAttempt(t *testing.T) {
	for name, tt := range map[string]struct{ sql, where string }{
		"attempt > 0": {finishSQL, "WHERE l.refkey = $1 AND l.state = 'ATTEMPTING' AND l.attempts = $6"},
		"attempt 0":   {finishNoSendSQL, "WHERE l.attempts = 0 AND l.state <> 'ATTEMPTING'"},
	} {
		if got := strings.TrimSpace(tt.sql[strings.LastIndex(tt.sql, "WHERE"):]); got != tt.where {
			t.Errorf("%s: Finish's condition is %q; want %q", name, got, tt.where)
		}
	}
	if strings.Contains(finishSQL, "INSERT") {
		t.Errorf("finishSQL inserts: an attempt's outcome would create an entry Begin never wrote")
	}
}

// TestPruneSQLIsCanPrune: the DELETE keeps resolved rows and is given
// exactly the Prunable states.
func TestPruneSQLIsCanPrune(t *testing.T) {
	if !strings.Contains(pruneSQL, "updated_at < $1 AND resolution IS NULL AND state = ANY($2)") {
		t.Errorf("pruneSQL is not CanPrune: %s", pruneSQL)
	}
	names := prunableNames()
	for _, s := range allStates {
		if slices.Contains(names, string(s)) != slices.Contains(Prunable, s) {
			t.Errorf("state %s: pruneSQL's $2 and Prunable disagree: %v", s, names)
		}
	}
	for _, s := range []outcome.Outcome{Attempting, outcome.Unknown, outcome.Rejected} {
		if slices.Contains(names, string(s)) {
			t.Errorf("prune deletes %s rows, whose copies can still come back", s)
		}
	}
}
