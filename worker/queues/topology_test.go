package queues

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestQueuesQuorum: with quorum queues every queue has x-queue-type quorum,
// Main keeps single active consumer and gains the delivery limit; classic
// never carries a delivery limit; SingleActiveConsumer false drops the
// argument (the negative control).
func TestQueuesQuorum(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*Topology)
		wantMain amqp.Table
		wantType string
	}{
		{"classic default", func(*Topology) {}, amqp.Table{ArgQueueType: "classic", ArgDeadLetterExchange: "",
			ArgDeadLetterRoutingKey: "n.dead", ArgSingleActiveConsumer: true}, "classic"},
		{"quorum", func(t *Topology) { t.Type = Quorum }, amqp.Table{ArgQueueType: "quorum", ArgDeadLetterExchange: "",
			ArgDeadLetterRoutingKey: "n.dead", ArgSingleActiveConsumer: true, ArgDeliveryLimit: int64(5),
			ArgDeadLetterStrategy: "at-least-once", ArgOverflow: "reject-publish"}, "quorum"},
		{"quorum no limit", func(t *Topology) { t.Type, t.DeliveryLimit = Quorum, 0 }, amqp.Table{ArgQueueType: "quorum",
			ArgDeadLetterExchange: "", ArgDeadLetterRoutingKey: "n.dead", ArgSingleActiveConsumer: true,
			ArgDeadLetterStrategy: "at-least-once", ArgOverflow: "reject-publish"}, "quorum"},
		{"no single active consumer", func(t *Topology) { t.SingleActiveConsumer = false }, amqp.Table{ArgQueueType: "classic",
			ArgDeadLetterExchange: "", ArgDeadLetterRoutingKey: "n.dead"}, "classic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := DefaultTopology("n")
			tt.mutate(&top)
			if err := top.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			qs := top.Queues()
			if !reflect.DeepEqual(qs[0].Args, tt.wantMain) {
				t.Errorf("main args %v, want %v", qs[0].Args, tt.wantMain)
			}
			for _, q := range qs {
				if q.Args[ArgQueueType] != tt.wantType {
					t.Errorf("%s: type %v, want %s", q.Name, q.Args[ArgQueueType], tt.wantType)
				}
				if err := q.Args.Validate(); err != nil {
					t.Errorf("%s: amqp.Table.Validate: %v", q.Name, err)
				}
			}
		})
	}
}

func TestValidateQueuePolicies(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Topology)
		want   string // substring of the error; "" = valid
	}{
		{"quorum", func(t *Topology) { t.Type = Quorum }, ""},
		{"empty type is classic", func(t *Topology) { t.Type = "" }, ""},
		{"bad type", func(t *Topology) { t.Type = "stream" }, `queue type "stream": want classic or quorum`},
		{"negative limit", func(t *Topology) { t.DeliveryLimit = -1 }, "delivery limit -1"},
		{"delay above cap", func(t *Topology) { t.RetryDelay = 10 * time.Minute }, "above retry max delay"},
		{"cap not whole ms", func(t *Topology) { t.RetryMaxDelay = 1500 * time.Microsecond }, "retry max delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := DefaultTopology("q")
			tt.mutate(&top)
			err := top.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrTopology) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want ErrTopology containing %q", err, tt.want)
			}
		})
	}
}

func TestParseQueueType(t *testing.T) {
	for _, s := range []string{"classic", "quorum"} {
		if got, err := ParseQueueType(s); err != nil || string(got) != s {
			t.Errorf("ParseQueueType(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseQueueType("Quorum"); err == nil || !strings.Contains(err.Error(), "want classic or quorum") {
		t.Errorf("ParseQueueType(Quorum) = %v, want an error naming the allowed values", err)
	}
}

// TestMismatchError: the broker's 406 text becomes one line naming the
// queue, the argument, both values and what to do.
func TestMismatchError(t *testing.T) {
	reason := "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'n' in vhost '/': received 'quorum' but current is 'classic'"
	f := &fakeDeclarer{failOn: "n", err: &amqp.Error{Code: amqp.PreconditionFailed, Reason: reason, Server: true}}
	top := DefaultTopology("n")
	top.Type = Quorum
	err := top.DeclareOn(f)
	me, ok := errors.AsType[*MismatchError](err)
	if !ok {
		t.Fatalf("DeclareOn = %v, want *MismatchError", err)
	}
	if me.Queue != "n" || me.Argument != "x-queue-type" || me.Current != "'classic'" || me.Declared != "'quorum'" {
		t.Errorf("MismatchError = %+v", me)
	}
	msg := err.Error()
	for _, want := range []string{`queue "n"`, "x-queue-type is 'classic' on the broker", "declares 'quorum'", "migrate", "delete"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line: %q", msg)
	}
	if !errors.Is(err, ErrQueueMismatch) {
		t.Error("not errors.Is ErrQueueMismatch")
	}
}

// TestQueuesDeadLetterStrategy: with quorum queues each queue that
// dead-letters (Main, Retry, Held) declares at-least-once dead-lettering
// with the reject-publish overflow it requires; the queues that do not
// dead-letter carry neither; classic queues never carry them (classic
// queues dead-letter at most once whatever is declared); DeadLetterAtMostOnce
// is the negative control.
func TestQueuesDeadLetterStrategy(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*Topology)
		atLeastOnce bool
	}{
		{"quorum", func(t *Topology) { t.Type = Quorum }, true},
		{"quorum at most once", func(t *Topology) { t.Type, t.DeadLetterAtMostOnce = Quorum, true }, false},
		{"classic", func(*Topology) {}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := DefaultTopology("n")
			tt.mutate(&top)
			for _, q := range top.Queues() {
				_, dlx := q.Args[ArgDeadLetterExchange]
				want := tt.atLeastOnce && dlx
				gotStrategy, hasStrategy := q.Args[ArgDeadLetterStrategy]
				gotOverflow, hasOverflow := q.Args[ArgOverflow]
				if want {
					if gotStrategy != "at-least-once" || gotOverflow != "reject-publish" {
						t.Errorf("%s: strategy %v overflow %v, want at-least-once and reject-publish", q.Name, gotStrategy, gotOverflow)
					}
					continue
				}
				if hasStrategy || hasOverflow {
					t.Errorf("%s: strategy %v overflow %v, want neither", q.Name, gotStrategy, gotOverflow)
				}
			}
			// The three hops themselves: Main, Retry and Held dead-letter.
			qs := top.Queues()
			for _, i := range []int{0, 1, 3} {
				if _, ok := qs[i].Args[ArgDeadLetterExchange]; !ok {
					t.Errorf("%s: no dead-letter exchange", qs[i].Name)
				}
			}
		})
	}
}

// TestMismatchErrorNamesNewArguments: an old quorum queue declared without
// the at-least-once arguments is refused with a message that names every
// argument the worker now declares, so an operator can declare the
// replacement queue.
func TestMismatchErrorNamesNewArguments(t *testing.T) {
	reason := "PRECONDITION_FAILED - inequivalent arg 'x-dead-letter-strategy' for queue 'n.retry' in vhost '/': received the value 'at-least-once' of type 'longstr' but current is none"
	f := &fakeDeclarer{failOn: "n.retry", err: &amqp.Error{Code: amqp.PreconditionFailed, Reason: reason, Server: true}}
	top := DefaultTopology("n")
	top.Type = Quorum
	err := top.DeclareOn(f)
	me, ok := errors.AsType[*MismatchError](err)
	if !ok {
		t.Fatalf("DeclareOn = %v, want *MismatchError", err)
	}
	if me.Argument != "x-dead-letter-strategy" || me.Current != "none" {
		t.Errorf("MismatchError = %+v", me)
	}
	msg := err.Error()
	for _, want := range []string{`queue "n.retry"`, "x-dead-letter-strategy is none on the broker",
		"x-dead-letter-strategy=at-least-once", "x-overflow=reject-publish", "x-queue-type=quorum",
		`x-dead-letter-exchange=""`, "x-dead-letter-routing-key=n", "x-message-ttl=300000"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line: %q", msg)
	}
}
