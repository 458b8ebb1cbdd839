package netmodel

import (
	"math"
	"strings"
	"testing"
)

// TestHandshakeRoundTrips: the four cells of the model (issue 28): TLS
// 1.2 full 2, resumed 1; TLS 1.3 full 1, resumed 1.
func TestHandshakeRoundTrips(t *testing.T) {
	for _, tt := range []struct {
		v       string
		resumed bool
		want    int
	}{{"1.2", false, 2}, {"1.2", true, 1}, {"1.3", false, 1}, {"1.3", true, 1}} {
		got, err := HandshakeRoundTrips(tt.v, tt.resumed)
		if err != nil || got != tt.want {
			t.Errorf("HandshakeRoundTrips(%s, resumed %v) = %d, %v; want %d", tt.v, tt.resumed, got, err, tt.want)
		}
	}
	if _, err := HandshakeRoundTrips("1.0", true); err == nil {
		t.Error("TLS 1.0 accepted")
	}
}

func TestModePenaltyRTTs(t *testing.T) {
	for _, tt := range []struct {
		mode, v, hs string
		want        int
	}{
		{"pooled", "1.2", HandshakeOn, 0},
		{"per-request", "1.2", HandshakeOff, 2},
		{"per-request", "1.2", HandshakeOn, 3},
		{"per-request-resume", "1.2", HandshakeOff, 1},
		{"per-request-resume", "1.2", HandshakeOn, 2},
		{"per-request", "1.3", HandshakeOff, 1},
		{"per-request-resume", "1.3", HandshakeOff, 1},
		{"per-request-resume", "1.3", HandshakeOn, 2},
		{"shared-closing", "1.2", HandshakeOff, 2}, // a new connection per send, full handshake
		{"shared-closing", "1.3", HandshakeOn, 2},
	} {
		got, err := ModePenaltyRTTs(tt.mode, tt.v, tt.hs)
		if err != nil || got != tt.want {
			t.Errorf("ModePenaltyRTTs(%s, %s, %s) = %d, %v; want %d", tt.mode, tt.v, tt.hs, got, err, tt.want)
		}
	}
	if _, err := ModePenaltyRTTs("turbo", "1.2", HandshakeOff); err == nil || !strings.Contains(err.Error(), `"turbo"`) {
		t.Errorf("unknown mode: err %v, want one naming it", err)
	}
	// The sweep's point budget follows the resumed model: 1 + 1 round trips.
	if n, err := SendRoundTrips("per-request-resume", "1.2", HandshakeOff); err != nil || n != 2 {
		t.Errorf("SendRoundTrips(per-request-resume, 1.2, off) = %d, %v; want 2", n, err)
	}
}

// TestPartsResidual: the arithmetic of the model table, with the
// reference run's own figures (results/summary.md at 3 ms: penalty 12.7
// ms, 2 round trips of 3 ms) and made-up parts: a sum within 1 ms passes,
// a planted case 1.5 ms short must be named, and a part not measured
// (NaN) is never "explained".
func TestPartsResidual(t *testing.T) {
	p := Parts{RTTMS: 3, RoundTrips: 2, ConnectMS: 0.2, WorkerCPUMS: 1.9, NginxCPUMS: 0.6, ForwardMS: 1.0}
	if got := p.ModelMS(); got != 6 {
		t.Errorf("ModelMS = %v, want 6", got)
	}
	if got := p.ForwardTotalMS(); got != 2 {
		t.Errorf("ForwardTotalMS = %v, want 2", got)
	}
	if got := p.SumMS(); math.Abs(got-10.7) > 1e-9 {
		t.Errorf("SumMS = %v, want 10.7 (6 + 0.2 + 1.9 + 0.6 + 2)", got)
	}
	if r, ok := p.Residual(11.5); !ok || math.Abs(r-0.8) > 1e-9 {
		t.Errorf("Residual(11.5) = %v, %v; want 0.8 within the limit", r, ok)
	}
	if r, ok := p.Residual(9.8); !ok || math.Abs(r+0.9) > 1e-9 {
		t.Errorf("Residual(9.8) = %v, %v; want -0.9 within the limit (either way)", r, ok)
	}
	// Planted: the reference run's 12.7 ms against parts summing to 10.7.
	if r, ok := p.Residual(12.7); ok || math.Abs(r-2.0) > 1e-9 {
		t.Errorf("Residual(12.7) = %v, %v; want 2.0, over the limit", r, ok)
	}
	p.NginxCPUMS = math.NaN()
	if _, ok := p.Residual(10.7); ok {
		t.Error("a part not measured (NaN) counted as explained")
	}
}
