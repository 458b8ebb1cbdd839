package audit

import (
	"fmt"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// Tolerances of the self-report check (selfCheck; docs/auditing.md,
// "The worker's own figures beside the outside ones"): how far the
// worker's own latency and CPU may sit from nginx's and the container's.
const (
	// SelfLatencyBelowMS is how far the worker's p50 may sit below
	// nginx's: a client cannot see its answer before nginx finished
	// sending it; nginx's $request_time has ms resolution.
	SelfLatencyBelowMS = 2.0
	// SelfLatencyAboveRTTs and SelfLatencyAboveMS bound the worker's p50
	// above nginx's: nginx's time leaves out the request's and the
	// answer's one-way trips, a new connection's connect and TLS handshake
	// (up to 4 RTT in all), and the client's own work and scheduling (30
	// ms: the slowest committed client, node-agent-nokeepalive, sits 41 ms
	// above nginx at 10 ms RTT with about 12 ms of CPU per send).
	SelfLatencyAboveRTTs = 4
	SelfLatencyAboveMS   = 30.0
	// SelfCPURatio and SelfCPUMS bound the worker's CPU per send against
	// its container's cgroup CPU over the same sends: |worker - cgroup| <=
	// max(SelfCPURatio x cgroup, SelfCPUMS). The contract's cpu_ms is the
	// whole process's CPU (docs/worker-contract.md#records), the cgroup's
	// every process of the container; the windows differ by a send at
	// each end (records vs nginx's lines).
	SelfCPURatio = 0.3
	SelfCPUMS    = 0.3
)

// fromRecords reports whether a figure's source is the worker's records.
func fromRecords(source string) bool { return strings.HasPrefix(source, results.SourceRecords) }

// selfCheck compares a figure's own latency p50 and CPU per send (when
// they come from the worker's records) with nginx's p50 and the
// container's cgroup CPU. It returns one clause per comparison, whether
// any disagreed beyond the tolerances, and whether anything was compared.
func selfCheck(f Figure) (clauses []string, disagree, judged bool) {
	switch {
	case !fromRecords(f.LatencySource) || f.P50MS <= 0:
		clauses = append(clauses, "latency: not judged: no records")
	case f.NginxP50MS < 0:
		clauses = append(clauses, fmt.Sprintf("latency: worker p50 %s ms, nginx not seen", msCell(f.P50MS)))
	default:
		judged = true
		lo := f.NginxP50MS - SelfLatencyBelowMS
		hi := f.NginxP50MS + float64(SelfLatencyAboveRTTs*f.RTTMS) + SelfLatencyAboveMS
		c := fmt.Sprintf("latency p50: worker %s ms, nginx %s ms", msCell(f.P50MS), msCell(f.NginxP50MS))
		switch {
		case f.P50MS < lo:
			disagree = true
			c += fmt.Sprintf(": DISAGREES: the worker reports %s ms less than nginx took to answer (at most %s ms less agrees)", msCell(f.NginxP50MS-f.P50MS), fmtS(SelfLatencyBelowMS))
		case f.P50MS > hi:
			disagree = true
			c += fmt.Sprintf(": DISAGREES: above nginx + %d RTT + %s ms = %s ms", SelfLatencyAboveRTTs, fmtS(SelfLatencyAboveMS), msCell(hi))
		default:
			c += fmt.Sprintf(": agrees (%s to %s ms)", msCell(max(lo, 0)), msCell(hi))
		}
		clauses = append(clauses, c)
	}
	switch {
	case !fromRecords(f.CPUSource) || f.CPUMSPerSend <= 0:
		clauses = append(clauses, "CPU: not judged: no records")
	case f.CgroupCPUMSPerSend <= 0:
		clauses = append(clauses, fmt.Sprintf("CPU: worker %.2f ms/send, cgroup not seen", f.CPUMSPerSend))
	default:
		judged = true
		tol := max(SelfCPURatio*f.CgroupCPUMSPerSend, SelfCPUMS)
		c := fmt.Sprintf("CPU: worker %.2f ms/send, cgroup %.2f", f.CPUMSPerSend, f.CgroupCPUMSPerSend)
		if d := f.CPUMSPerSend - f.CgroupCPUMSPerSend; d > tol || -d > tol {
			disagree = true
			c += fmt.Sprintf(": DISAGREES by %.2f ms (more than %.2f)", max(d, -d), tol)
		} else {
			c += fmt.Sprintf(": agrees (within %.2f)", tol)
		}
		clauses = append(clauses, c)
	}
	return clauses, disagree, judged
}

// selfReportRule judges the worker's own latency and CPU (records)
// against nginx's and its container's cgroup, run by run: FAIL when any
// disagrees beyond the tolerances, N/A when nothing could be compared.
func selfReportRule(in Inputs, runs []results.Result) Rule {
	r := Rule{ID: "self-report", Name: "Its own latency and CPU agree with nginx's and its container's",
		Source: "records (total_ms, cpu_ms) against nginx's $request_time and the container's cgroup CPU"}
	if len(runs) == 0 {
		r.Verdict, r.Evidence = NA, "no bench run"
		return r
	}
	var ev []string
	anyJudged := false
	r.Verdict = Pass
	for _, run := range runs {
		f := in.figure(run)
		clauses, disagree, judged := selfCheck(f)
		anyJudged = anyJudged || judged
		if disagree {
			r.Verdict = Fail
		}
		ev = append(ev, fmt.Sprintf("%d ms: %s", run.RTTMS, strings.Join(clauses, "; ")))
	}
	if !anyJudged {
		r.Verdict = NA
	}
	r.Evidence = strings.Join(ev, "; ")
	return r
}

// figure is r's figures row with the outside figures: nginx's latency
// (from in.Dir's access log slice) and the container's cgroup CPU, and
// the self-report check.
func (in Inputs) figure(r results.Result) Figure {
	f := figureOf(r)
	f.NginxP50MS, f.NginxP99MS = nginxLatency(in.Dir, r, in.sendPath())
	f.CgroupCPUMSPerSend = r.WorkerCgroupCPUMSPerSend
	if f.CgroupCPUMSPerSend <= 0 {
		f.CgroupCPUMSPerSend = -1 // not read, or a file written before it was
	}
	clauses, _, _ := selfCheck(f)
	f.SelfCheck = strings.Join(clauses, "; ")
	return f
}

// sendPath is the profile's send path, "" when the profile does not load.
func (in Inputs) sendPath() string {
	if p, _, err := LoadProfile(in.Profile); err == nil {
		return p.API.WithDefaults().SendPath
	}
	return ""
}

// figuresIntro is the sentence above both pages' figures table.
const figuresIntro = "Connections and TLS versions come from nginx's access log; latency and CPU from the source named on each row. " +
	"Beside them, from outside the worker: nginx p50/p99 is nginx's $request_time of the same sends (warm-up left out; the vendor side's view, without the client's connect, TLS handshake and one round trip), " +
	"cgroup CPU is the worker container's CPU over the measured sends (every process in it). " +
	"The last column compares the worker's own figures with them: its p50 agrees from nginx's p50 - 2 ms to nginx's p50 + 4 RTT + 30 ms, its CPU within 30% (at least 0.3 ms) of the cgroup's; a value the lab could not see prints \"not seen\"."

// ownMS prints a latency the worker reported, "not seen" when it
// reported none (0 or less).
func ownMS(v float64) string {
	if v <= 0 {
		return "not seen"
	}
	return fmt.Sprintf("%.1f", v)
}

// cgroupCell prints the container's CPU per send, "not seen" for -1 or 0.
func cgroupCell(v float64) string {
	if v <= 0 {
		return "not seen"
	}
	return fmt.Sprintf("%.2f", v)
}
