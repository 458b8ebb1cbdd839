package scenarios

import (
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
