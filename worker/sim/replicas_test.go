package sim

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// failover is a schedule of two replicas under single active consumer:
// replica 0 (the first registered, the active one) takes m0 and dies
// after the vendor processed it, before its answer.
func failover() Schedule {
	return Schedule{Seed: 1, Config: Config{Start: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), MaxAttempts: 5,
		TokenLife: time.Hour, Replicas: 2}, Events: []Event{
		{Kind: Publish, Msg: 0},
		{Kind: Crash, Fault: "send-after"},
		{Kind: Deliver},
		{Kind: Deliver},
	}}
}

// TestFailoverGoesToTheStandby: when the active replica dies mid-send,
// the broker redelivers its message to the standby, which finds the
// dead one's attempt in the shared ledger and routes the message to the
// unknown queue (never to the vendor); the restarted replica is the
// standby now. With a ledger per replica the standby sends it again.
func TestFailoverGoesToTheStandby(t *testing.T) {
	r := RunSchedule(failover(), Options{})
	if r.Err != nil || r.Violation != nil {
		t.Fatalf("shared ledger: %v %v\n%s", r.Err, r.Violation, r.Trace.String())
	}
	tr := r.Trace.String()
	for _, want := range []string{
		"CRASH (send-after): replica 0's process dies and restarts",
		"[replica 1] m0/b0 redelivered=true -> UNKNOWN notifications.unknown",
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("trace lacks %q:\n%s", want, tr)
		}
	}
	if r.Loop["handovers to another replica"] == 0 {
		t.Errorf("no handover counted: %v", r.Loop)
	}
	per := RunSchedule(failover(), Options{Plant: Plant{LedgerPerReplica: true}})
	if per.Violation == nil || per.Violation.Invariant != InvAtMostOnce {
		t.Errorf("a ledger per replica: %v; want %s\n%s", per.Violation, InvAtMostOnce, per.Trace.String())
	}
}

// TestCompetingConsumersShareTheQueue: without single active consumer
// both replicas take deliveries, each the one its event names; replica
// 1's channel holds its prefetch (2), so replica 0 gets the third.
func TestCompetingConsumersShareTheQueue(t *testing.T) {
	s := failover()
	s.Config.Competing = true
	s.Events = []Event{{Kind: Publish, Msg: 0}, {Kind: Publish, Msg: 1}, {Kind: Publish, Msg: 2},
		{Kind: Deliver, Replica: 1}, {Kind: Deliver, Replica: 0}}
	r := RunSchedule(s, Options{Ledger: "mem"})
	if r.Err != nil || r.Violation != nil {
		t.Fatalf("%v %v", r.Err, r.Violation)
	}
	tr := r.Trace.String()
	for _, want := range []string{"[replica 1] m0/b0 redelivered=false -> SENT", "[replica 0] m2/b0 redelivered=false -> SENT",
		"[replica 1] m1/b0 redelivered=false -> SENT"} {
		if !strings.Contains(tr, want) {
			t.Errorf("trace lacks %q:\n%s", want, tr)
		}
	}
}

// TestFreezeHandsOverToTheStandby is the catalog's frozen-active: the
// active replica freezes after the vendor processed its send, for longer
// than the heartbeat timeout; the broker closes its connection and hands
// the delivery to the standby, which finds the attempt in the shared
// ledger (UNKNOWN, no second send); the frozen one resumes into the
// vendor's answer, records SENT, and its ack fails on the closed
// connection. With a ledger per replica the standby sends it again.
func TestFreezeHandsOverToTheStandby(t *testing.T) {
	s := failover()
	s.Events = []Event{
		{Kind: Publish, Msg: 0},
		{Kind: Freeze, Fault: "send-after", D: 30 * time.Second},
		{Kind: Deliver},
		{Kind: Deliver},
		{Kind: Advance, D: time.Minute},
	}
	r := RunSchedule(s, Options{})
	if r.Err != nil || r.Violation != nil {
		t.Fatalf("shared ledger: %v %v\n%s", r.Err, r.Violation, r.Trace.String())
	}
	tr := r.Trace.String()
	for _, want := range []string{
		"FREEZE (send-after): replica 0's process stops for 30s",
		"the broker misses replica 0's heartbeats and closes its connection",
		"[replica 1] m0/b0 redelivered=true -> UNKNOWN notifications.unknown",
		"[replica 0] m0/b0 redelivered=false -> SENT",
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("trace lacks %q:\n%s", want, tr)
		}
	}
	short := s
	short.Events = slices.Clone(s.Events)
	short.Events[1].D = 10 * time.Second // within the heartbeat timeout: no handover
	if r := RunSchedule(short, Options{}); r.Violation != nil || strings.Contains(r.Trace.String(), "closes its connection") ||
		strings.Contains(r.Trace.String(), "[replica 1]") {
		t.Errorf("a 10 s freeze: %v\n%s", r.Violation, r.Trace.String())
	}
	per := RunSchedule(s, Options{Plant: Plant{LedgerPerReplica: true}})
	if per.Violation == nil || per.Violation.Invariant != InvAtMostOnce {
		t.Errorf("a ledger per replica: %v; want %s\n%s", per.Violation, InvAtMostOnce, per.Trace.String())
	}
}
