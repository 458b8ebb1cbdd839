package audit

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/vendormock/journal"
)

// BlackBoxTally is what the lab saw from outside of the messages one
// black-box scenario published: per refkey its sends in WireMock's
// journal and where it sat in the broker once the worker was stopped.
type BlackBoxTally struct {
	Published int `json:"published"`
	// Sent: refkeys with exactly one send the vendor did not answer 4xx
	// (a 4xx, e.g. a 429 or 401, is not processed and may be sent again).
	Sent int `json:"sent"`
	// Duplicates: refkeys with two or more sends not answered 4xx.
	Duplicates []string `json:"duplicates,omitempty"`
	// Lost: no send without a 4xx and in no queue.
	Lost []string `json:"lost,omitempty"`
	// Unhandled: not sent and back in the consumed queue when the worker
	// stopped (never taken, or taken and never acked: a stall).
	Unhandled []string `json:"unhandled,omitempty"`
	// Routed: not sent and in one of the worker's routes, by queue.
	Routed map[string]int `json:"routed,omitempty"`
	// SentAndQueued: sent once and also still in a queue: it will be
	// handled again.
	SentAndQueued []string `json:"sent_and_queued,omitempty"`
	// Statuses counts the vendor's answers to the scenario's sends.
	Statuses map[int]int `json:"statuses,omitempty"`
}

// TallyBlackBox sorts the published refkeys by the journal's sends and
// the queues' messages (a queued message holds a refkey when its body
// contains it). consume is the consumed queue.
func TallyBlackBox(refkeys []string, sends []journal.Entry, queued []QueuedMessage, consume string) BlackBoxTally {
	t := BlackBoxTally{Published: len(refkeys), Routed: map[string]int{}, Statuses: map[int]int{}}
	count := map[string]int{}
	mine := map[string]bool{}
	for _, rk := range refkeys {
		mine[rk] = true
	}
	for _, s := range sends {
		if !mine[s.RefKey] {
			continue
		}
		t.Statuses[s.Status]++
		if s.Status/100 != 4 {
			count[s.RefKey]++
		}
	}
	for _, rk := range refkeys {
		where := ""
		for _, q := range queued {
			if strings.Contains(q.Body, rk) {
				where = q.Queue
				if q.Queue == consume {
					break
				}
			}
		}
		n := count[rk]
		switch {
		case n > 1:
			t.Duplicates = append(t.Duplicates, fmt.Sprintf("%s (%d sends)", rk, n))
		case n == 1 && where != "":
			t.SentAndQueued = append(t.SentAndQueued, rk+" (in "+where+")")
		case n == 1:
			t.Sent++
		case where == consume:
			t.Unhandled = append(t.Unhandled, rk)
		case where != "":
			t.Routed[where]++
		default:
			t.Lost = append(t.Lost, rk)
		}
	}
	return t
}

// Summary is the tally in one line: "20 published: 20 sent once; 0
// duplicates; 0 lost".
func (t BlackBoxTally) Summary() string {
	parts := []string{fmt.Sprintf("%d published: %d sent once", t.Published, t.Sent)}
	if n := len(t.Duplicates); n > 0 {
		parts = append(parts, fmt.Sprintf("%d sent twice or more (%s)", n, firstKeys(t.Duplicates)))
	}
	for _, q := range slices.Sorted(maps.Keys(t.Routed)) {
		parts = append(parts, fmt.Sprintf("%d not sent, routed to %s", t.Routed[q], q))
	}
	if n := len(t.Unhandled); n > 0 {
		parts = append(parts, fmt.Sprintf("%d never handled (back in the consumed queue: %s)", n, firstKeys(t.Unhandled)))
	}
	if n := len(t.SentAndQueued); n > 0 {
		parts = append(parts, fmt.Sprintf("%d sent and still queued (%s)", n, firstKeys(t.SentAndQueued)))
	}
	if n := len(t.Lost); n > 0 {
		parts = append(parts, fmt.Sprintf("%d lost: no send, no queue (%s)", n, firstKeys(t.Lost)))
	}
	if len(t.Statuses) > 0 {
		var st []string
		codes := slices.Sorted(maps.Keys(t.Statuses))
		for _, c := range codes {
			st = append(st, fmt.Sprintf("%d x%d", c, t.Statuses[c]))
		}
		parts = append(parts, "vendor answered "+strings.Join(st, ", "))
	}
	return strings.Join(parts, "; ")
}

// NginxFigures are one scenario's sends as nginx logged them.
type NginxFigures struct {
	Sends       int      `json:"sends"`         // POSTs to the send path
	Tokens      int      `json:"token_calls"`   // requests to the token path
	Connections int      `json:"connections"`   // distinct $connection over every request
	TLS         []string `json:"tls,omitempty"` // $ssl_protocol values seen
	Protocols   []string `json:"protocols,omitempty"`
	// ClientClosed counts sends nginx logged 499: the client gave up
	// before the answer; MaxWaitMS is the longest $request_time of them.
	ClientClosed int     `json:"client_closed"`
	MaxWaitMS    float64 `json:"client_closed_max_wait_ms,omitempty"`
	P50MS        float64 `json:"send_p50_ms"` // $request_time of the sends, ms
	P99MS        float64 `json:"send_p99_ms"`
	Resumed      int     `json:"tls_resumed"` // requests on a resumed TLS session
}

// NginxFrom reads a scenario's nginx log lines.
func NginxFrom(entries []vendormock.AccessEntry, sendPath, tokenPath string) NginxFigures {
	var f NginxFigures
	conns := map[int64]bool{}
	var times []float64
	for _, e := range entries {
		conns[e.Connection] = true
		if e.TLSProtocol != "" && !slices.Contains(f.TLS, e.TLSProtocol) {
			f.TLS = append(f.TLS, e.TLSProtocol)
		}
		if e.ServerProtocol != "" && !slices.Contains(f.Protocols, e.ServerProtocol) {
			f.Protocols = append(f.Protocols, e.ServerProtocol)
		}
		if e.SessionReused {
			f.Resumed++
		}
		switch e.Path {
		case tokenPath:
			f.Tokens++
		case sendPath:
			if e.Method != "POST" {
				continue
			}
			f.Sends++
			times = append(times, e.RequestTime*1000)
			if e.Status == 499 {
				f.ClientClosed++
				f.MaxWaitMS = max(f.MaxWaitMS, e.RequestTime*1000)
			}
		}
	}
	f.Connections = len(conns)
	sort.Float64s(times)
	if n := len(times); n > 0 {
		f.P50MS = times[(n-1)/2]
		f.P99MS = times[min(n-1, (n*99+99)/100-1)]
	}
	sort.Strings(f.TLS)
	sort.Strings(f.Protocols)
	return f
}

// NewConnectionsPerSend is the connections opened after the first one
// per send, (Connections - 1) / Sends: 0 for a client that keeps one
// connection whatever the count, about 1 for one that opens a
// connection per send (0 without sends).
func (f NginxFigures) NewConnectionsPerSend() float64 {
	if f.Sends == 0 {
		return 0
	}
	return float64(max(f.Connections-1, 0)) / float64(f.Sends)
}
