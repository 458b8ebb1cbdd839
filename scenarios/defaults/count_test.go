package defaults

import (
	"os"
	"slices"
	"testing"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// readFixture parses testdata/access.log: nginx's lines of a real
// client-defaults run (CALLS=5) plus two planted ones, a refkey that only
// starts with node-fetch- and a 502.
func readFixture(t *testing.T) []vendormock.AccessEntry {
	t.Helper()
	f, err := os.Open("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	es, err := vendormock.ParseAccessLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestCountCalls: each client's connections come from nginx's
// $connection among its own refkeys only; fetch's alternation between
// two connections shows in FirstCalls.
func TestCountCalls(t *testing.T) {
	es := readFixture(t)
	for _, tc := range []struct {
		prefix            string
		requests, conns   int
		newAt, firstCalls []int
		maxPer, not200    int
	}{
		{"node-fetch", 5, 2, []int{1, 2}, []int{1, 2, 1, 2, 1, 0, 0, 0, 0, 0}, 3, 0},
		{"node-agent-false", 5, 5, []int{1, 2, 3, 4, 5}, []int{1, 2, 3, 4, 5, 0, 0, 0, 0, 0}, 1, 0},
		{"curl-multi", 5, 1, []int{1}, []int{1, 1, 1, 1, 1, 0, 0, 0, 0, 0}, 5, 0},
		{"broken", 1, 1, []int{1}, []int{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 1, 1},
		{"nobody", 0, 0, nil, nil, 0, 0},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			c := CountCalls(es, tc.prefix)
			if c.Requests != tc.requests || c.Connections != tc.conns || c.MaxPerConn != tc.maxPer || c.Not200 != tc.not200 {
				t.Errorf("got requests %d conns %d max/conn %d not-200 %d; want %d %d %d %d",
					c.Requests, c.Connections, c.MaxPerConn, c.Not200, tc.requests, tc.conns, tc.maxPer, tc.not200)
			}
			if !slices.Equal(c.NewConnAt, tc.newAt) {
				t.Errorf("NewConnAt %v, want %v", c.NewConnAt, tc.newAt)
			}
			if !slices.Equal(c.FirstCalls, tc.firstCalls) {
				t.Errorf("FirstCalls %v, want %v", c.FirstCalls, tc.firstCalls)
			}
			if tc.requests > 0 && c.TLS["TLSv1.3"] != tc.requests {
				t.Errorf("TLS %v, want every request on TLSv1.3", c.TLS)
			}
		})
	}
}

// TestCallNumber: only PREFIX-<whole number >= 1> is a call of PREFIX.
func TestCallNumber(t *testing.T) {
	for _, tc := range []struct {
		refkey string
		n      int
		ok     bool
	}{
		{"node-fetch-1", 1, true},
		{"node-fetch-200", 200, true},
		{"node-fetch-extra-1", 0, false},
		{"node-fetch-", 0, false},
		{"node-fetch-0", 0, false},
		{"node-fetch-1x", 0, false},
		{"wave-node-fetch-3", 0, false},
		{"node-fetch", 0, false},
	} {
		n, ok := callNumber(tc.refkey, "node-fetch")
		if n != tc.n || ok != tc.ok {
			t.Errorf("callNumber(%q) = %d, %v; want %d, %v", tc.refkey, n, ok, tc.n, tc.ok)
		}
	}
}

// TestParseOutput: the result is the last JSON line with "ms", whatever
// else the script printed (Node's warnings on stderr); a script that
// printed none is ErrNoOutput naming its last line.
func TestParseOutput(t *testing.T) {
	o, err := ParseOutput("(node:7) ExperimentalWarning: The Fetch API is experimental\n" +
		`{"ms":[1.5,2.5],"wall_ms":4.2,"errors":1,"first_error":"ECONNRESET","version":"node v18","connects":[{"channel":"undici:client:connected","after_calls_started":2,"local_port":4}]}` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.MS) != 2 || o.WallMS != 4.2 || o.Errors != 1 || o.FirstError != "ECONNRESET" || len(o.Connects) != 1 || o.Connects[0].AfterCallsStarted != 2 {
		t.Errorf("parsed %+v", o)
	}
	if _, err := ParseOutput("Traceback (most recent call last):\nModuleNotFoundError: requests\n"); err == nil || !errorsIs(err, ErrNoOutput) {
		t.Errorf("error %v, want ErrNoOutput", err)
	}
	if _, err := ParseOutput(`{"ms":[1,`); err == nil || errorsIs(err, ErrNoOutput) {
		t.Errorf("error %v, want a JSON error", err)
	}
}
