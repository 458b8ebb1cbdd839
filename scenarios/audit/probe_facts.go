package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// ClientFacts are what nginx's log says of the client's requests during
// the idle probe: the TLS version and ALPN protocol of its sends, whether
// its new connections after the first resumed a TLS session, the
// Connection and Idempotency-Key headers it sent, and whether its token
// calls shared a connection with its sends. Counts are over send POSTs
// unless named otherwise.
type ClientFacts struct {
	Sends       int            `json:"sends"`
	TLS         map[string]int `json:"tls"`          // $ssl_protocol -> sends
	ALPN        map[string]int `json:"alpn"`         // $ssl_alpn_protocol -> sends ("" = none offered)
	Protocol    map[string]int `json:"protocol"`     // $server_protocol -> sends
	Connections int            `json:"connections"`  // distinct connections carrying sends
	Resumed     int            `json:"resumed"`      // of the new connections after the first (any request), how many resumed a session
	LaterNew    int            `json:"later_new"`    // new connections after the first
	ConnHeader  map[string]int `json:"conn_header"`  // Connection header -> sends ("" = none)
	Idempotency int            `json:"idempotency"`  // sends with an Idempotency-Key header
	TokenCalls  int            `json:"token_calls"`  // POSTs on other paths (the token call)
	TokenShared int            `json:"token_shared"` // token calls on a connection that also carried a send
	Logged      bool           `json:"alpn_logged"`  // the log carries the ALPN and header fields (false: a log from before they existed)
}

// AnalyseFacts reads ClientFacts from the probe's nginx lines.
func AnalyseFacts(entries []vendormock.AccessEntry, sendPath string) ClientFacts {
	f := ClientFacts{TLS: map[string]int{}, ALPN: map[string]int{}, Protocol: map[string]int{}, ConnHeader: map[string]int{}}
	sendConns := map[int64]bool{}
	first := true
	for _, e := range entries {
		if e.Request == 1 {
			if !first {
				f.LaterNew++
				if e.SessionReused {
					f.Resumed++
				}
			}
			first = false
		}
		if e.ALPN != "" || e.ConnectionHeader != "" {
			f.Logged = true
		}
		if e.Method != "POST" {
			continue
		}
		if e.Path != sendPath {
			f.TokenCalls++
			continue
		}
		f.Sends++
		sendConns[e.Connection] = true
		f.TLS[e.TLSProtocol]++
		f.ALPN[e.ALPN]++
		f.Protocol[e.ServerProtocol]++
		f.ConnHeader[e.ConnectionHeader]++
		if e.IdempotencyKey != "" {
			f.Idempotency++
		}
	}
	f.Connections = len(sendConns)
	for _, e := range entries {
		if e.Method == "POST" && e.Path != sendPath && sendConns[e.Connection] {
			f.TokenShared++
		}
	}
	return f
}

// counts prints a count map: "TLSv1.3 5, TLSv1.2 1"; empty keys as none.
func counts(m map[string]int, none string) string {
	var p []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		name := k
		if name == "" {
			name = none
		}
		p = append(p, fmt.Sprintf("%s %d", name, m[k]))
	}
	return strings.Join(p, ", ")
}

// String says the facts in one line.
func (f ClientFacts) String() string {
	if f.Sends == 0 {
		return "not seen (no send in the idle probe)"
	}
	s := fmt.Sprintf("%d sends on %d connection(s): %s; %s", f.Sends, f.Connections, counts(f.TLS, "no TLS"), counts(f.Protocol, "?"))
	if f.Logged {
		s += fmt.Sprintf("; ALPN %s; Connection header %s; Idempotency-Key on %d", counts(f.ALPN, "none"), counts(f.ConnHeader, "none"), f.Idempotency)
	} else {
		s += "; ALPN and headers not seen (log without those fields)"
	}
	if f.LaterNew > 0 {
		s += fmt.Sprintf("; TLS session resumed on %d of %d later new connection(s)", f.Resumed, f.LaterNew)
	} else {
		s += "; session resumption not seen (no later new connection)"
	}
	s += fmt.Sprintf("; token calls %d, %d on a connection that carried sends", f.TokenCalls, f.TokenShared)
	return s
}
