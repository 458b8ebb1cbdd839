package netmodel

import (
	"strings"
	"testing"
	"time"
)

func TestIdleConnTimeout(t *testing.T) {
	tests := []struct {
		keepalive time.Duration
		rtt       int
		want      time.Duration
	}{
		{75 * time.Second, 10, 75*time.Second - 10*time.Millisecond - IdleConnMargin},
		{75 * time.Second, 0, 74 * time.Second},
		{2 * time.Second, 1000, 0},
	}
	for _, tt := range tests {
		if got := IdleConnTimeout(tt.keepalive, tt.rtt); got != tt.want {
			t.Errorf("IdleConnTimeout(%s, %d) = %s; want %s", tt.keepalive, tt.rtt, got, tt.want)
		}
	}
}

func TestModelPenaltyRTTs(t *testing.T) {
	tests := []struct {
		tls, hs string
		want    int
	}{
		{"1.2", HandshakeOff, 2},
		{"1.2", HandshakeOn, 3},
		{"1.3", HandshakeOff, 1},
		{"1.3", HandshakeOn, 2},
	}
	for _, tt := range tests {
		t.Run(tt.tls+"-"+tt.hs, func(t *testing.T) {
			got, err := ModelPenaltyRTTs(tt.tls, tt.hs)
			if err != nil || got != tt.want {
				t.Errorf("ModelPenaltyRTTs(%s, %s) = %d, %v; want %d", tt.tls, tt.hs, got, err, tt.want)
			}
		})
	}
	t.Run("unknown tls", func(t *testing.T) {
		if _, err := ModelPenaltyRTTs("1.1", HandshakeOn); err == nil || !strings.Contains(err.Error(), `"1.1"`) {
			t.Errorf("err %v, want one naming 1.1", err)
		}
	})
}

func TestPointCounts(t *testing.T) {
	tests := []struct {
		name              string
		count, warmup     int
		mode              string
		rtt, delay        int
		tls, hs           string
		wantCount, wantWU int
	}{
		// The case's settings are never capped (58 ms x 1,000 < 60 s).
		{"case 10 ms on", 1000, 50, "per-request", 10, 18, "1.2", HandshakeOn, 1000, 50},
		{"case 3 ms off", 1000, 50, "per-request", 3, 18, "1.2", HandshakeOff, 1000, 50},
		// 380 ms, TLS 1.3, handshake on: 3 RTT = 1,140 ms a send -> 52 and 8.
		{"380 ms per-request", 200, 50, "per-request", 380, 0, "1.3", HandshakeOn, 52, 8},
		// pooled at 380 ms: 380 ms a send -> 157; warm-up 26.
		{"380 ms pooled", 200, 50, "pooled", 380, 0, "1.3", HandshakeOn, 157, 26},
		// 1,000 ms, TLS 1.2 on, delay 18: 4,018 ms a send -> 14, floored at 20; warm-up floored at 5.
		{"floors", 200, 50, "per-request", 1000, 18, "1.2", HandshakeOn, 20, 5},
		// The floor never raises what was asked.
		{"asked below floor", 3, 1, "per-request", 1000, 18, "1.2", HandshakeOn, 3, 1},
		{"rtt 0 no delay", 200, 50, "pooled", 0, 0, "1.2", HandshakeOff, 200, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, w, err := PointCounts(tt.count, tt.warmup, tt.mode, tt.rtt, tt.delay, tt.tls, tt.hs)
			if err != nil || c != tt.wantCount || w != tt.wantWU {
				t.Errorf("PointCounts = %d, %d, %v; want %d, %d", c, w, err, tt.wantCount, tt.wantWU)
			}
		})
	}
}
