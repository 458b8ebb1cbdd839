package vendormock

import (
	"strconv"
	"strings"
)

// AccessJournal turns nginx's access log entries into the vendor's record
// the reconciler reads (JournalEntry, oldest first), for a stack whose
// WireMock keeps no journal (Options.NoRequestJournal).
//
// An entry is kept when nginx passed the request to WireMock (a non-empty
// $upstream_addr): a request nginx answered itself (the rate limit's 429)
// never reached the vendor's application, as WireMock's journal would not
// list it either. Status is the last upstream attempt's status (WireMock's
// answer; "502, 200" -> 200), or nginx's own when that is not a number
// (an upstream that timed out: nginx answered 504, and the request may
// have been acted on, as the reconciler assumes of any answer but a 4xx).
// RefKey is the correlation header nginx logged; LoggedAt is when nginx
// wrote the line (ms resolution).
func AccessJournal(entries []AccessEntry) []JournalEntry {
	out := make([]JournalEntry, 0, len(entries))
	for _, e := range entries {
		if e.UpstreamAddr == "" {
			continue
		}
		status := e.Status
		last := e.UpstreamStatus
		if i := strings.LastIndexAny(last, ",:"); i >= 0 {
			last = last[i+1:]
		}
		if n, err := strconv.Atoi(strings.TrimSpace(last)); err == nil && n > 0 {
			status = n
		}
		out = append(out, JournalEntry{Method: e.Method, Path: e.Path, RefKey: e.RefKey, Status: status, LoggedAt: e.Time})
	}
	return out
}
