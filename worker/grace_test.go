package worker

import (
	"testing"
	"time"
)

func TestShutdownGrace(t *testing.T) {
	if got := ShutdownGrace(Config{}); got != 55*time.Second {
		t.Errorf("ShutdownGrace(defaults) = %v, want 55s", got)
	}
	cfg := Config{ResponseTimeout: 2 * time.Second, PublishTimeout: 3 * time.Second}
	if got, want := ShutdownGrace(cfg), 4*2*time.Second+3*time.Second+ShutdownMargin; got != want {
		t.Errorf("ShutdownGrace(%v, %v) = %v, want %v", cfg.ResponseTimeout, cfg.PublishTimeout, got, want)
	}
	if got := ShutdownGrace(Config{Concurrency: 8}); got != 195*time.Second {
		t.Errorf("ShutdownGrace(concurrency 8) = %v, want 195s (token calls and re-publishes take turns)", got)
	}
}
