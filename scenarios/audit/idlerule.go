package audit

import (
	"fmt"
	"math"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Stated is what a worker's docs or its library's source say of its idle
// timeout: the page shows it beside the idle probe's measure, and no rule
// judges it.
type Stated struct {
	Known  bool    // false: nothing stated that the lab knows of
	Reuse  bool    // false: stated to keep no connection (a new one per send)
	S      float64 // s; +Inf = kept until the server closes it
	Source string  // where it is stated
}

// statedIdle returns the idle timeout a worker's docs state: the
// workers' READMEs (each citing its library's source at the version
// used), the setting the lab gives the Go worker and the fixed variants
// (recorded in the bench result r), nothing for any other image.
func statedIdle(worker string, r results.Result) Stated {
	if strings.HasSuffix(worker, vendormock.FixedSuffix) {
		return Stated{Known: r.IdleConnTimeoutS > 0, Reuse: true, S: r.IdleConnTimeoutS,
			Source: "CLIENT_IDLE_TIMEOUT_MS the lab gives the fixed variant (keep-alive - 1 s)"}
	}
	switch worker {
	case vendormock.WorkerGo:
		return Stated{Known: r.IdleConnTimeoutS > 0, Reuse: true, S: r.IdleConnTimeoutS,
			Source: "the lab's IdleConnTimeout for the bench (keep-alive - RTT - 1 s, netmodel.IdleConnTimeout)"}
	case "node-agent-keepalive":
		return Stated{Known: true, Reuse: true, S: 60, Source: "IDLE_TIMEOUT_MS default (workers/node/README.md)"}
	case "java-shared":
		return Stated{Known: true, Reuse: true, S: 30, Source: "jdk.httpclient.keepalive.timeout default (workers/java/README.md)"}
	case "java-okhttp":
		return Stated{Known: true, Reuse: true, S: 300, Source: "okhttp3.ConnectionPool(): 5 idle connections for 5 minutes (workers/java/README.md)"}
	case "python-httpx":
		return Stated{Known: true, Reuse: true, S: 5, Source: "httpx Limits keepalive_expiry=5.0 (workers/python/README.md)"}
	case "python-session":
		return Stated{Known: true, Reuse: true, S: math.Inf(1), Source: "urllib3's pool has no idle timeout (workers/python/README.md)"}
	case "java-apache":
		return Stated{Known: true, Reuse: true, S: math.Inf(1), Source: "PoolingHttpClientConnectionManager evicts nothing by default (workers/java/README.md)"}
	case "node-agent-nokeepalive", "java-per-send", "python-requests", "node-axios", "node-got":
		return Stated{Known: true, Source: "a new client or connection per send (the worker's README)"}
	}
	return Stated{}
}

// String is the stated value in words.
func (s Stated) String() string {
	switch {
	case !s.Known:
		return "nothing stated"
	case !s.Reuse:
		return "keeps no idle connection (" + s.Source + ")"
	case math.IsInf(s.S, 1):
		return "no idle timeout (" + s.Source + ")"
	}
	return fmt.Sprintf("%s s (%s)", fmtS(s.S), s.Source)
}

// idleTolerance is how far a stated idle timeout may sit outside the
// measured bracket and still agree with it, s: the probe times idles from
// nginx's side, off by the one-way latencies and the log's ms resolution.
const idleTolerance = 0.25

// Agrees says whether the stated value fits the measure: "agrees",
// "DISAGREES (...)" or "" when either side is unknown.
func (s Stated) Agrees(m IdleMeasure) string {
	if !s.Known || m.Unknown != "" {
		return ""
	}
	ok := false
	switch {
	case !s.Reuse:
		ok = !m.Reuse
	case !m.Reuse:
		ok = false
	case math.IsInf(s.S, 1):
		ok = m.NewFromS == nil
	case m.NewFromS == nil:
		ok = s.S >= m.ReusedUpToS-idleTolerance
	default:
		ok = s.S >= m.ReusedUpToS-idleTolerance && s.S <= *m.NewFromS+idleTolerance
	}
	if ok {
		return "agrees"
	}
	return "DISAGREES with the measure"
}

// idleRule judges the idle probe's measure (probes.json): the client must
// open a new connection after an idle shorter than the vendor's
// keep-alive minus the largest RTT of the bench; a client that keeps no
// idle connection passes. The stated value is shown beside it with its
// source and any disagreement, never judged. The idle race's failures
// (a measured stale-connection send) fail the rule too. Without a probe
// (an audit folder written before it) the rule is N/A unless the race
// failed; a probe that saw too little fails it: not measured is never a
// pass.
func idleRule(in Inputs, runs []results.Result) Rule {
	r := Rule{ID: "idle-timeout", Name: "Idles out below the vendor's keep-alive minus one RTT",
		Source: "idle probe (nginx access log: $connection, $connection_requests after a ladder of pauses), idle race (records, journal); stated: worker docs, judged never"}
	rtt := 0
	for _, run := range runs {
		rtt = max(rtt, run.RTTMS)
	}
	var first results.Result
	if len(runs) > 0 {
		first = runs[0]
	}
	stated := statedFor(in, first)
	limit := in.KeepaliveS - float64(rtt)/1000
	against := fmt.Sprintf("keep-alive %s s - RTT %d ms = %s s", fmtS(in.KeepaliveS), rtt, strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", limit), "0"), "."))
	var ev []string
	switch {
	case in.Probes == nil || in.Probes.Idle == nil:
		r.Verdict = NA
		ev = append(ev, "measured: not measured (no idle probe in this audit)")
	default:
		m := *in.Probes.Idle
		line := "measured: " + m.Measured()
		switch {
		case m.Unknown != "":
			r.Verdict = Fail
		case !m.Reuse:
			r.Verdict = Pass
		case m.NewFromS != nil && *m.NewFromS < limit:
			r.Verdict = Pass
			line += fmt.Sprintf("; a new connection after %s s < %s", fmtS(*m.NewFromS), against)
		case m.ReusedUpToS >= limit:
			r.Verdict = Fail
			line += fmt.Sprintf("; reused a connection idle %s s >= %s", fmtS(m.ReusedUpToS), against)
		default:
			r.Verdict = Fail
			line += "; not shown to idle out below " + against
		}
		ev = append(ev, line)
	}
	st := "stated: " + stated.String()
	if in.Probes != nil && in.Probes.Idle != nil {
		if a := stated.Agrees(*in.Probes.Idle); a != "" {
			st += ": " + a
		}
	}
	ev = append(ev, st)
	switch race := in.Race; {
	case race == nil:
		ev = append(ev, "idle race not run")
	default:
		fails, sends := 0, 0
		for _, row := range race.Rows {
			fails += row.Failures
			sends += row.Sends
		}
		ev = append(ev, fmt.Sprintf("idle race at keep-alive %.0f s: %d failures (UNKNOWN or NOT_SENT) in %d sends", race.KeepaliveTimeoutMS/1000, fails, sends))
		if fails > 0 || !race.Pass {
			r.Verdict = Fail
			ev = append(ev, race.Failures...)
		}
	}
	r.Evidence = strings.Join(ev, "; ")
	return r
}
