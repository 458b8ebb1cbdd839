//go:build integration

package worker

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a logger and a test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestIntegrationSingleActiveConsumer: two worker replicas on one queue.
// Only the first to register receives (the second logs "standby" and
// handles nothing); when the active one stops (a rolling deploy), the
// standby one becomes active and handles the rest. Every message is sent
// once and each record names the replica that handled it.
func TestIntegrationSingleActiveConsumer(t *testing.T) {
	url, _ := startRabbit(t)
	v := newFakeVendor(t)
	const n, first = 6, 3
	const queue = "it-sac"
	// The queues exist before either replica starts; the messages are
	// published only once both consume, so without single active consumer
	// RabbitMQ would share them round-robin between the two.
	publishN(t, url, queue, "sac", 0)

	cfgA := integrationConfig(t, url, v, "pooled", first)
	cfgA.Queue, cfgA.WorkerID = queue, "replica-a"
	var logsA syncBuffer
	cfgA.Logger = newTestLogger(&logsA)
	doneA := runAsync(context.Background(), cfgA)
	// Let A register first; SAC makes the first registered consumer active.
	waitLog(t, &logsA, `"msg":"consuming"`)

	cfgB := integrationConfig(t, url, v, "pooled", n-first)
	cfgB.Queue, cfgB.WorkerID = queue, "replica-b"
	var logsB syncBuffer
	cfgB.Logger = newTestLogger(&logsB)
	// B must not receive while A is active: A stops after `first`
	// messages, only then may B start handling.
	doneB := runAsync(context.Background(), cfgB)
	waitLog(t, &logsB, `"msg":"consuming"`)
	publishN(t, url, queue, "sac", n)
	waitRun(t, doneA, 60*time.Second)
	waitRun(t, doneB, 60*time.Second)

	recsA, recsB := readRecordFile(t, cfgA.RecordsPath), readRecordFile(t, cfgB.RecordsPath)
	if len(recsA) != first || len(recsB) != n-first {
		t.Fatalf("records: A %d, B %d; want %d and %d", len(recsA), len(recsB), first, n-first)
	}
	for _, r := range recsA {
		if r.Replica != "replica-a" {
			t.Errorf("A's record names %q", r.Replica)
		}
	}
	for _, r := range recsB {
		if r.Replica != "replica-b" {
			t.Errorf("B's record names %q", r.Replica)
		}
		if !r.Start.After(recsA[len(recsA)-1].End) {
			t.Errorf("B handled %s at %v, before A's last message ended at %v: two active consumers", r.RefKey, r.Start, recsA[len(recsA)-1].End)
		}
	}
	for refkey, c := range v.counts() {
		if c != 1 {
			t.Errorf("refkey %s sent %d times", refkey, c)
		}
	}
	if got := len(v.counts()); got != n {
		t.Errorf("%d refkeys sent, want %d", got, n)
	}
	if !strings.Contains(logsB.String(), `"msg":"standby"`) || !strings.Contains(logsB.String(), `"msg":"active consumer"`) {
		t.Errorf("B did not log standby then active consumer: %s", logsB.String())
	}
	if depth := queueDepth(t, url, queue); depth != 0 {
		t.Errorf("queue depth %d, want 0", depth)
	}
}

// waitLog waits up to 30 s for logs to contain s.
func waitLog(t *testing.T, logs *syncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in 30 s: %s", s, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
