package report

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// TestServerSideMarkdown: a cell with the server's evidence gets a row
// with nginx's handshake errors by reason, the client's TIME_WAIT peak and
// nginx's new TIME_WAIT split by side; cells without any give no section.
func TestServerSideMarkdown(t *testing.T) {
	c := results.MatrixCell{Scheme: "mtls", Driver: "direct", Mode: "per-request", Concurrency: 32, HTTPVersion: "1.1", Connections: 850,
		ServerHandshakeErrors: &vendormock.HandshakeErrors{Count: 3, Reasons: map[string]int{"peer closed connection in SSL handshake": 3}, Lines: 900},
		ClientTimeWait:        &results.TimeWait{Peak: 812, Last: 800, Samples: 9},
		NginxTimeWait:         &results.NginxTimeWait{ClientStart: 10, ClientEnd: 14, UpstreamStart: 2, UpstreamEnd: 852},
		UpstreamKeepalive:     "off"}
	md := serverSideMarkdown([]results.MatrixCell{c, {Scheme: "http", Driver: "direct", Mode: "pooled", Concurrency: 1}})
	want := "| direct-mtls-per-request-c32 | 1.1 | off | 850 | 0 | 3 (3 x peer closed connection in SSL handshake) | 812 | 4 / 850 |"
	if !strings.Contains(md, want) {
		t.Errorf("section lacks %q:\n%s", want, md)
	}
	if strings.Contains(md, "direct-http-pooled-c1") {
		t.Errorf("a cell without evidence got a row:\n%s", md)
	}
	if got := serverSideMarkdown([]results.MatrixCell{{Scheme: "http"}}); got != "" {
		t.Errorf("cells without evidence: %q, want no section", got)
	}
	if got := matrixSettings([]results.MatrixCell{c, {Mode: "pooled", PoolSize: 2}}); got != "UPSTREAM_KEEPALIVE=off, POOL_SIZE=2" {
		t.Errorf("settings %q", got)
	}
}
