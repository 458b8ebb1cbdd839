package report

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// TestHonestLabels (issue 30): a contract worker's run is not labelled
// with the Go worker's bbolt ledger, and a TLS handshake its records did
// not carry reads "not seen", never 0.0; the Go worker's run keeps both
// (the control).
func TestHonestLabels(t *testing.T) {
	img := results.Result{Worker: "image:acme/w:1", Contract: &results.ContractCheck{Sources: map[string]string{}}}
	if got := replicasLabel(img); strings.Contains(got, "bbolt") || !strings.Contains(got, "its own ledger") {
		t.Errorf("contract worker: %q", got)
	}
	if got := handshakeCell(img); got != "not seen" {
		t.Errorf("contract worker without phases: TLS handshake %q, want not seen", got)
	}
	img.Contract.Sources[results.SourcePhasesKey] = results.SourceRecords + " (connect_ms, tls_handshake_ms)"
	img.PhaseP50MS.TLSHandshakeMS = 4.2
	if got := handshakeCell(img); got != "4.2" {
		t.Errorf("contract worker with phases: %q", got)
	}
	goRun := results.Result{Worker: "go"}
	if got := replicasLabel(goRun); got != "1 worker, bbolt ledger" {
		t.Errorf("Go worker: %q", got)
	}
	if got := handshakeCell(goRun); got != "0.0" {
		t.Errorf("Go worker, every connection reused: %q, want 0.0 (the phase did not happen)", got)
	}
}
