package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// matrixSettings names the settings a matrix ran with beyond study A's
// defaults (pool size, upstream keep-alive off), "" when none.
func matrixSettings(cs []results.MatrixCell) string {
	var s []string
	for _, c := range cs {
		if c.PoolSize > 0 && c.Mode == "pooled" && !slices.Contains(s, fmt.Sprintf("POOL_SIZE=%d", c.PoolSize)) {
			s = append(s, fmt.Sprintf("POOL_SIZE=%d", c.PoolSize))
		}
		if c.UpstreamKeepalive == "off" && !slices.Contains(s, "UPSTREAM_KEEPALIVE=off") {
			s = append(s, "UPSTREAM_KEEPALIVE=off")
		}
	}
	return strings.Join(s, ", ")
}

// serverSideMarkdown is the matrix's "Server side" section: per cell,
// nginx's failed TLS handshakes (its error log, kept per cell under
// nginx-error/), the client's TIME_WAIT peak and nginx's new TIME_WAIT
// towards its clients and towards WireMock. Study A: the server logged
// handshake errors at mtls fresh concurrency 32 while its client counted
// none; TIME_WAIT piles up on the side that closes first; without
// upstream keep-alive a proxy opens a connection per request behind
// itself. "" when no cell carries the evidence (cells written before it).
func serverSideMarkdown(cs []results.MatrixCell) string {
	var rows []results.MatrixCell
	for _, c := range cs {
		if c.ServerHandshakeErrors != nil || c.ClientTimeWait != nil || c.NginxTimeWait != nil {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Server side\n\n")
	b.WriteString("nginx's failed TLS handshakes are the lines of its error log (info level) ending \"while SSL handshaking\", each cell's slice kept in `nginx-error/<cell>.log`; " +
		"client TIME_WAIT is the worker container's peak while the cell ran; nginx's is its new TIME_WAIT over the cell, towards its clients (Toxiproxy) and towards WireMock. " +
		"Study A: handshake errors in the server's log at mtls fresh concurrency 32 while the client counted 0; TIME_WAIT on the side that closes first (fresh: the client).\n\n")
	b.WriteString("| cell | HTTP | upstream keep-alive | connections | client errors | nginx TLS handshake errors | client TIME_WAIT peak | nginx new TIME_WAIT (clients / WireMock) |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range rows {
		hs, reasons := "-", ""
		if h := c.ServerHandshakeErrors; h != nil {
			hs = fmt.Sprintf("%d", h.Count)
			var rs []string
			for r, n := range h.Reasons {
				rs = append(rs, fmt.Sprintf("%d x %s", n, r))
			}
			slices.Sort(rs)
			if len(rs) > 0 {
				reasons = " (" + strings.Join(rs, "; ") + ")"
			}
		}
		ctw := "-"
		if c.ClientTimeWait != nil {
			ctw = fmt.Sprintf("%d", c.ClientTimeWait.Peak)
		}
		ntw := "-"
		if t := c.NginxTimeWait; t != nil {
			ntw = fmt.Sprintf("%d / %d", t.NewClient(), t.NewUpstream())
		}
		up := c.UpstreamKeepalive
		if up == "" {
			up = "on"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s%s | %s | %s |\n", c.Name(), c.HTTPVersion, up, c.Connections, len(c.Errors), hs, reasons, ctw, ntw)
	}
	return b.String()
}
