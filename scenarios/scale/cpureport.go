package scale

import (
	"fmt"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// MSPerSend is a point's CPU per measured send by container role, ms:
// each role's cores over the point's sends/s (cores x 1000 / sends/s),
// the stack's containers summed as "stack" and the whole host as "host"
// (other processes of a shared machine included). Empty without figures.
func MSPerSend(p Point) map[string]float64 {
	if p.SendsPerS <= 0 || len(p.Containers) == 0 {
		return nil
	}
	m := map[string]float64{}
	for role, cores := range roleCores(p) {
		m[role] = cores * 1000 / p.SendsPerS
		m["stack"] += cores * 1000 / p.SendsPerS
	}
	m["host"] = p.HostBusyCores * 1000 / p.SendsPerS
	return m
}

// cpuPerSendSection is the table of MSPerSend for every point, the worker
// beside the bare client at each concurrency.
func cpuPerSendSection(ps []Point) string {
	var b strings.Builder
	b.WriteString("\n## Where each send's CPU goes, by container\n\n")
	b.WriteString("CPU per measured send, ms: each container's cores over the point's sends/s (worker: the worker replicas, or the bare client's container for direct); stack: the containers summed; host: the whole machine's busy CPU over sends/s, other processes on the machine included; nginx conns/send: the TCP connections nginx opened to WireMock while the point ran over its sends (warm-up included; 0 = its upstream keep-alive pool served every request, 1 = a new connection per request).\n\n")
	b.WriteString("| series | driver | workers | concurrency | think ms | sends/s | " + strings.Join(roles, " | ") + " | stack | host | nginx conns/send |\n")
	b.WriteString("|---|---|---|---|---|---|" + strings.Repeat("---|", len(roles)+3) + "\n")
	n := 0
	for _, p := range ps {
		m := MSPerSend(p)
		if m == nil {
			continue
		}
		n++
		cells := make([]string, 0, len(roles)+2)
		for _, r := range append(append([]string{}, roles...), "stack", "host") {
			cells = append(cells, fmt.Sprintf("%.3f", m[r]))
		}
		cells = append(cells, upstreamOpensPerSend(p))
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %.1f | %s |\n", seriesLabel(p), p.Driver, p.Workers, p.Concurrency, p.ServerDelayMS, p.SendsPerS, strings.Join(cells, " | "))
	}
	if n == 0 {
		return ""
	}
	return b.String()
}

// upstreamOpensPerSend is p's UpstreamOpens over its sends (measured and
// warm-up), "-" when it was not read.
func upstreamOpensPerSend(p Point) string {
	if p.UpstreamOpens == nil || p.Count+p.Warmup <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(*p.UpstreamOpens)/float64(p.Count+p.Warmup))
}

// splitSection is the worker's own CPU per handled message by part
// (CPUSplit), for the worker points run with CPU_PROFILE=on, beside the
// bare client's CPU per send at the same concurrency and think time.
func splitSection(ps []Point) string {
	var rows []Point
	for _, p := range ps {
		if p.CPUSplit != nil {
			rows = append(rows, p)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	names := append(partNames(), SplitOther)
	var b strings.Builder
	b.WriteString("\n## Where the worker's own CPU goes\n\n")
	b.WriteString("From the worker's Go CPU profile (CPU_PROFILE=on; OUT/pprof/): the sampled CPU per handled message, ms, by the first part found in each sample's stack: records (the records file), ack, publish (re-publish and confirms), decode (the body), ledger (Begin, Finish, the body hash, pgx), send (the vendor client, HTTP/2, TLS), metrics, broker receive (amqp091's reader), GC (the background collector), worker other (the consume loop, the handler's own code), other (the scheduler, anything else). The bare client's CPU per send (its process, as it records it) at the same point is beside it.\n\n")
	b.WriteString("| series | concurrency | think ms | " + strings.Join(names, " | ") + " | worker total | bare client |\n")
	b.WriteString("|---|---|---|" + strings.Repeat("---|", len(names)+2) + "\n")
	for _, p := range rows {
		cells := make([]string, 0, len(names))
		total := 0.0
		for _, name := range names {
			v := 0.0
			for _, part := range p.CPUSplit.Parts {
				if part.Name == name {
					v = part.MSPerSend
				}
			}
			total += v
			cells = append(cells, fmt.Sprintf("%.3f", v))
		}
		bare := "-"
		if d, ok := find(ps, p.Series, results.DriverDirect, 1, p.Concurrency); ok {
			bare = fmt.Sprintf("%.3f", d.CPUMSPerSend)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %.3f | %s |\n", p.Series, p.Concurrency, p.ServerDelayMS, strings.Join(cells, " | "), total, bare)
	}
	return b.String()
}
