package defaults

import (
	"slices"
	"strconv"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Count is what nginx's access log says of one client's calls: the
// requests whose refkey is Prefix-<n> (n a whole number), the distinct TCP
// connections ($connection) that carried them, and where each connection
// began.
type Count struct {
	Requests    int `json:"requests"`    // requests logged with the client's refkeys
	Connections int `json:"connections"` // distinct $connection values among them
	// NewConnAt is, per connection in order of first use, the call number
	// n of its first request: [1] for one connection carrying every call,
	// [1 2 3 ...] for a connection per call, [1 57] when a second
	// connection took over at call 57.
	NewConnAt []int `json:"new_conn_at"`
	// MaxPerConn is the most requests one connection carried.
	MaxPerConn int `json:"max_per_conn"`
	// Not200 counts requests answered with any status but 200.
	Not200 int `json:"not_200"`
	// TLS counts the requests by $ssl_protocol ("TLSv1.3").
	TLS map[string]int `json:"tls"`
	// FirstCalls is, for calls 1 to FirstCallsShown, which connection
	// carried each, numbered 1, 2, ... in order of first use ("1 2 1 2"
	// when a client alternates between two); 0 for a call nginx did not
	// log.
	FirstCalls []int `json:"first_calls"`
}

// FirstCallsShown is how many calls Count.FirstCalls covers.
const FirstCallsShown = 10

// callNumber returns n when refkey is prefix-<n>, n >= 1; ok false
// otherwise (another client's refkey, or one whose prefix only starts
// with prefix, such as prefix-wave-3).
func callNumber(refkey, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(refkey, prefix+"-")
	if !ok || rest == "" {
		return 0, false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 1
}

// CountCalls counts the access log entries of one client (refkeys
// prefix-<n>). Connections are told apart by nginx's $connection serial,
// which is exact here: Toxiproxy opens one upstream connection per client
// connection (docs/environment.md).
func CountCalls(entries []vendormock.AccessEntry, prefix string) Count {
	c := Count{TLS: map[string]int{}}
	first := map[int64]int{}
	per := map[int64]int{}
	connOf := map[int]int64{}
	for _, e := range entries {
		n, ok := callNumber(e.RefKey, prefix)
		if !ok {
			continue
		}
		c.Requests++
		per[e.Connection]++
		connOf[n] = e.Connection
		if f, seen := first[e.Connection]; !seen || n < f {
			first[e.Connection] = n
		}
		if e.Status != 200 {
			c.Not200++
		}
		if e.TLSProtocol != "" {
			c.TLS[e.TLSProtocol]++
		}
	}
	c.Connections = len(first)
	for conn, n := range first {
		c.NewConnAt = append(c.NewConnAt, n)
		c.MaxPerConn = max(c.MaxPerConn, per[conn])
	}
	slices.Sort(c.NewConnAt)
	// Number the connections by the call that opened each.
	order := map[int64]int{}
	for conn, n := range first {
		order[conn] = slices.Index(c.NewConnAt, n) + 1
	}
	for n := 1; n <= FirstCallsShown && len(first) > 0; n++ {
		conn, ok := connOf[n]
		if !ok {
			c.FirstCalls = append(c.FirstCalls, 0)
			continue
		}
		c.FirstCalls = append(c.FirstCalls, order[conn])
	}
	return c
}
