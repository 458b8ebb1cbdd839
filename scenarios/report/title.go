package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// summaryTitle is the summary's first line: what it compares and the
// settings its runs share, so a reader of the file alone knows what was
// measured: the vendor profile, scheme, HTTP version, TCP_HANDSHAKE, the
// per-request client's TLS cap, the worker replicas and their ledger, the
// RabbitMQ nodes and queue type, and a contract worker's name. A setting
// that differs between the runs is listed with "/" between its values.
func summaryTitle(rs []results.Result) string {
	t := "# notifier-lab: per-request vs pooled HTTP client"
	if s := settingsLabel(rs); s != "" {
		t += ": " + s
	}
	return t + "\n\n"
}

// settingsLabel is summaryTitle's list of settings ("" for no results).
func settingsLabel(rs []results.Result) string {
	if len(rs) == 0 {
		return ""
	}
	var parts []string
	add := func(f func(r results.Result) string) {
		if v := distinct(rs, f); v != "" {
			parts = append(parts, v)
		}
	}
	add(func(r results.Result) string {
		if r.Profile == "" {
			return "profile not recorded"
		}
		return r.Profile + " profile"
	})
	add(func(r results.Result) string {
		if r.Worker != "" && r.Worker != vendormock.WorkerGo {
			return "worker " + r.Worker
		}
		return ""
	})
	add(func(r results.Result) string { return r.SchemeOf() })
	add(func(r results.Result) string {
		return "HTTP/" + cmp.Or(r.HTTPVersion, results.DefaultHTTPVersion)
	})
	add(func(r results.Result) string { return "TCP_HANDSHAKE=" + handshakeLabel(r) })
	add(func(r results.Result) string {
		if r.Mode != vendorapi.PooledName && r.TLSMax != "" {
			return r.Mode + " TLS <= " + r.TLSMax
		}
		return ""
	})
	add(func(r results.Result) string {
		if c := r.ConcurrencyOf(); c > 1 {
			return "concurrency " + strconv.Itoa(c)
		}
		return ""
	})
	add(replicasLabel)
	add(func(r results.Result) string {
		nodes := max(r.BrokerNodes, 1)
		s := fmt.Sprintf("%d RabbitMQ node", nodes)
		if nodes > 1 {
			s += "s"
		}
		return s + ", " + cmp.Or(r.QueueType, vendormock.QueueClassic) + " queues"
	})
	return strings.Join(parts, ", ")
}

// replicasLabel is "1 worker, bbolt ledger" or "2 workers (one active),
// PostgreSQL ledger"; a contract worker's run "1 java-okhttp worker, its
// own ledger".
func replicasLabel(r results.Result) string {
	n := max(r.Workers, 1)
	if r.Contract != nil {
		// A contract worker keeps its own ledger in its own format
		// (lab.ContractLedgerFile); the lab's LEDGER is the Go worker's
		// (issue 30: the header said "bbolt ledger" for such an image).
		return fmt.Sprintf("%d %s worker, its own ledger", n, r.Worker)
	}
	ledger := cmp.Or(r.Ledger, vendormock.LedgerBbolt)
	if ledger == vendormock.LedgerPostgres {
		ledger = "PostgreSQL"
	}
	if n == 1 {
		return "1 worker, " + ledger + " ledger"
	}
	return fmt.Sprintf("%d workers (one active), %s ledger", n, ledger)
}

// distinct joins the different non-empty values of f over rs with "/",
// in first-seen order.
func distinct(rs []results.Result, f func(results.Result) string) string {
	var seen []string
	for _, r := range rs {
		if v := f(r); v != "" && !slices.Contains(seen, v) {
			seen = append(seen, v)
		}
	}
	return strings.Join(seen, " / ")
}

// provenanceHeader is the provenance block under the title: the runs'
// results.Provenance.Header when they share one run (the first's), a note
// when they carry none.
func provenanceHeader(rs []results.Result) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].Provenance.Header()
}

// countLabel is the common COUNT of rs ("1000"), or its range ("20 to
// 200") when the runs measured different counts (a sweep caps them per
// point).
func countLabel(rs []results.Result) string {
	return rangeLabel(rs, func(r results.Result) int { return r.Count })
}

// wallHeader is the wall-time column's header: "1000 sends wall s" for
// one COUNT, "wall s (measured sends)" when the runs' counts differ.
func wallHeader(rs []results.Result) string {
	if c := countLabel(rs); !strings.Contains(c, " ") {
		return c + " sends wall s"
	}
	return "wall s (measured sends)"
}

// rangeLabel is f's common value over rs, or "min to max".
func rangeLabel(rs []results.Result, f func(results.Result) int) string {
	if len(rs) == 0 {
		return "0"
	}
	lo, hi := f(rs[0]), f(rs[0])
	for _, r := range rs[1:] {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
