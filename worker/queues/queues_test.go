package queues

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestNamesFor(t *testing.T) {
	got := NamesFor("notifications")
	want := Names{Main: "notifications", Retry: "notifications.retry", Unknown: "notifications.unknown",
		Held: "notifications.held", Failed: "notifications.failed", Dead: "notifications.dead"}
	if got != want {
		t.Fatalf("NamesFor = %+v, want %+v", got, want)
	}
	if all := got.All(); len(all) != 6 || all[0] != want.Main || all[5] != want.Dead {
		t.Fatalf("All() = %v", all)
	}
}

func TestDefaultTopology(t *testing.T) {
	top := DefaultTopology(DefaultMain)
	if top.Names != NamesFor("notifications") || top.RetryDelay != 5*time.Second || top.MaxAttempts != 5 ||
		top.RetryMaxDelay != 5*time.Minute || top.Type != Classic || !top.SingleActiveConsumer || top.DeliveryLimit != 5 {
		t.Fatalf("DefaultTopology = %+v", top)
	}
	if err := top.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func TestQueuesArguments(t *testing.T) {
	top := Topology{Names: NamesFor("n"), RetryDelay: 1500 * time.Millisecond, MaxAttempts: 3}
	want := map[string]amqp.Table{
		"n":         {ArgQueueType: "classic", ArgDeadLetterExchange: "", ArgDeadLetterRoutingKey: "n.dead"},
		"n.retry":   {ArgQueueType: "classic", ArgMessageTTL: int64(300000), ArgDeadLetterExchange: "", ArgDeadLetterRoutingKey: "n"},
		"n.unknown": {ArgQueueType: "classic"},
		"n.held":    {ArgQueueType: "classic", ArgDeadLetterExchange: "", ArgDeadLetterRoutingKey: "n"},
		"n.failed":  {ArgQueueType: "classic"},
		"n.dead":    {ArgQueueType: "classic"},
	}
	qs := top.Queues()
	if len(qs) != len(want) {
		t.Fatalf("%d queues, want %d", len(qs), len(want))
	}
	for i, q := range qs {
		if q.Name != top.Names.All()[i] {
			t.Errorf("queue %d is %s, want %s", i, q.Name, top.Names.All()[i])
		}
		t.Run(q.Name, func(t *testing.T) {
			if !reflect.DeepEqual(q.Args, want[q.Name]) {
				t.Fatalf("args %v, want %v", q.Args, want[q.Name])
			}
			if err := q.Args.Validate(); err != nil {
				t.Fatalf("amqp.Table.Validate: %v", err)
			}
			if q.Purpose == "" {
				t.Fatal("no purpose")
			}
		})
	}
	// Queues returns fresh tables: changing one must not change the next call.
	qs[0].Args["x"] = 1
	if _, ok := top.Queues()[0].Args["x"]; ok {
		t.Fatal("Queues shares its argument tables between calls")
	}
}

func TestValidate(t *testing.T) {
	ok := DefaultTopology("q")
	tests := []struct {
		name   string
		mutate func(*Topology)
		want   string // substring; "" means valid
	}{
		{"default", func(*Topology) {}, ""},
		{"1 ms delay", func(tp *Topology) { tp.RetryDelay = time.Millisecond }, ""},
		{"zero delay", func(tp *Topology) { tp.RetryDelay = 0 }, "retry delay"},
		{"sub-ms delay", func(tp *Topology) { tp.RetryDelay = 1500 * time.Microsecond }, "retry delay"},
		{"delay over 2^32-1 ms", func(tp *Topology) { tp.RetryDelay = (math.MaxUint32 + 1) * time.Millisecond }, "retry delay"},
		{"zero attempts", func(tp *Topology) { tp.MaxAttempts = 0 }, "max attempts"},
		{"empty name", func(tp *Topology) { tp.Names.Held = "" }, "empty"},
		{"same name twice", func(tp *Topology) { tp.Names.Dead = tp.Names.Failed }, "used twice"},
		{"reserved prefix", func(tp *Topology) { tp.Names = NamesFor("amq.x") }, "reserved"},
		{"too long", func(tp *Topology) { tp.Names = NamesFor(strings.Repeat("a", 250)) }, "255"},
		{"zero value", func(tp *Topology) { *tp = Topology{} }, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := ok
			tt.mutate(&top)
			err := top.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTopology) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want ErrTopology mentioning %q", err, tt.want)
			}
			if derr := top.DeclareOn(&fakeDeclarer{}); !errors.Is(derr, ErrTopology) {
				t.Fatalf("DeclareOn of an invalid topology = %v", derr)
			}
		})
	}
}

type declared struct {
	name                                   string
	durable, autoDelete, exclusive, noWait bool
	args                                   amqp.Table
}

type fakeDeclarer struct {
	calls  []declared
	failOn string
	err    error // returned for failOn; nil = a 406 without details
}

func (f *fakeDeclarer) QueueDeclare(name string, durable, autoDelete, exclusive, noWait bool, args amqp.Table) (amqp.Queue, error) {
	f.calls = append(f.calls, declared{name, durable, autoDelete, exclusive, noWait, args})
	if name == f.failOn {
		if f.err != nil {
			return amqp.Queue{}, f.err
		}
		return amqp.Queue{}, &amqp.Error{Code: amqp.PreconditionFailed, Reason: "PRECONDITION_FAILED - inequivalent arg"}
	}
	return amqp.Queue{Name: name}, nil
}

func TestDeclareOn(t *testing.T) {
	top := DefaultTopology("notifications")
	f := &fakeDeclarer{}
	if err := top.DeclareOn(f); err != nil {
		t.Fatalf("DeclareOn: %v", err)
	}
	if len(f.calls) != 6 {
		t.Fatalf("%d declarations, want 6", len(f.calls))
	}
	for i, c := range f.calls {
		q := top.Queues()[i]
		if c.name != q.Name || !c.durable || c.autoDelete || c.exclusive || c.noWait || !reflect.DeepEqual(c.args, q.Args) {
			t.Errorf("declaration %d = %+v, want durable, not auto-delete/exclusive/no-wait, args %v", i, c, q.Args)
		}
	}

	f = &fakeDeclarer{failOn: "notifications.held"}
	err := top.DeclareOn(f)
	var ae *amqp.Error
	if !errors.As(err, &ae) || ae.Code != amqp.PreconditionFailed || !errors.Is(err, ErrQueueMismatch) {
		t.Fatalf("DeclareOn with a failing queue = %v", err)
	}
	if me, ok := errors.AsType[*MismatchError](err); !ok || me.Queue != "notifications.held" {
		t.Fatalf("DeclareOn with a failing queue = %#v, want a *MismatchError for notifications.held", err)
	}
	if len(f.calls) != 4 {
		t.Fatalf("declared %d queues, want to stop at the 4th", len(f.calls))
	}

	// Another broker error is wrapped with the queue, not a mismatch.
	f = &fakeDeclarer{failOn: "notifications.held", err: &amqp.Error{Code: amqp.AccessRefused, Reason: "ACCESS_REFUSED"}}
	err = top.DeclareOn(f)
	if errors.Is(err, ErrQueueMismatch) || !strings.Contains(err.Error(), "declare queue notifications.held") {
		t.Fatalf("DeclareOn with access refused = %v", err)
	}
}

func TestAttempt(t *testing.T) {
	tests := []struct {
		name string
		h    amqp.Table
		want int
	}{
		{"nil table", nil, 0},
		{"missing", amqp.Table{"other": int32(3)}, 0},
		{"int32", amqp.Table{HeaderAttempt: int32(3)}, 3},
		{"int64", amqp.Table{HeaderAttempt: int64(4)}, 4},
		{"int", amqp.Table{HeaderAttempt: 2}, 2},
		{"int8", amqp.Table{HeaderAttempt: int8(1)}, 1},
		{"int16", amqp.Table{HeaderAttempt: int16(7)}, 7},
		{"uint8", amqp.Table{HeaderAttempt: uint8(9)}, 9},
		{"uint16", amqp.Table{HeaderAttempt: uint16(10)}, 10},
		{"uint32", amqp.Table{HeaderAttempt: uint32(11)}, 11},
		{"uint64 huge capped", amqp.Table{HeaderAttempt: uint64(math.MaxUint64)}, math.MaxInt32},
		{"int64 huge capped", amqp.Table{HeaderAttempt: int64(math.MaxInt64)}, math.MaxInt32},
		{"string", amqp.Table{HeaderAttempt: "5"}, 5},
		{"string with spaces", amqp.Table{HeaderAttempt: " 6 "}, 6},
		{"bytes", amqp.Table{HeaderAttempt: []byte("8")}, 8},
		{"string not a number", amqp.Table{HeaderAttempt: "five"}, 0},
		{"negative", amqp.Table{HeaderAttempt: int32(-2)}, 0},
		{"float whole", amqp.Table{HeaderAttempt: float64(3)}, 3},
		{"float32 whole", amqp.Table{HeaderAttempt: float32(2)}, 2},
		{"float fraction", amqp.Table{HeaderAttempt: 2.5}, 0},
		{"NaN", amqp.Table{HeaderAttempt: math.NaN()}, 0},
		{"bool", amqp.Table{HeaderAttempt: true}, 0},
		{"decimal type", amqp.Table{HeaderAttempt: amqp.Decimal{Scale: 0, Value: 3}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Attempt(tt.h); got != tt.want {
				t.Fatalf("Attempt(%v) = %d, want %d", tt.h, got, tt.want)
			}
		})
	}
}

func TestWithAttempt(t *testing.T) {
	orig := amqp.Table{HeaderReason: "dial refused", HeaderAttempt: int64(1)}
	got := WithAttempt(orig, 2)
	if v, ok := got[HeaderAttempt].(int32); !ok || v != 2 {
		t.Fatalf("WithAttempt set %T %v, want int32 2", got[HeaderAttempt], got[HeaderAttempt])
	}
	if got[HeaderReason] != "dial refused" {
		t.Fatalf("other headers lost: %v", got)
	}
	if orig[HeaderAttempt] != int64(1) {
		t.Fatalf("WithAttempt changed its input: %v", orig)
	}
	if Attempt(WithAttempt(nil, 1)) != 1 || Attempt(WithAttempt(nil, -5)) != 0 {
		t.Fatal("WithAttempt(nil, n) does not read back")
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("headers not valid AMQP: %v", err)
	}
}

func TestAfterNotSent(t *testing.T) {
	top := Topology{Names: NamesFor("n"), RetryDelay: time.Second, MaxAttempts: 3}
	tests := []struct {
		attempts int
		want     string
		dead     bool
	}{
		{1, "n.retry", false},
		{2, "n.retry", false},
		{3, "n.dead", true},
		{4, "n.dead", true},
	}
	for _, tt := range tests {
		q, dead := top.AfterNotSent(tt.attempts)
		if q != tt.want || dead != tt.dead {
			t.Errorf("AfterNotSent(%d) = %s %v, want %s %v", tt.attempts, q, dead, tt.want, tt.dead)
		}
	}
	// The full walk: a message that always fails is sent MaxAttempts times.
	h := amqp.Table(nil)
	sends := 0
	for {
		sends++
		n := Attempt(h) + 1
		q, dead := top.AfterNotSent(n)
		if dead {
			if q != "n.dead" {
				t.Fatalf("dead-lettered to %s", q)
			}
			break
		}
		h = WithAttempt(h, n)
		if sends > 100 {
			t.Fatal("never dead-lettered")
		}
	}
	if sends != top.MaxAttempts {
		t.Fatalf("sent %d times, want MaxAttempts %d", sends, top.MaxAttempts)
	}
}

func TestExpiration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "1"},
		{-time.Hour, "1"},
		{time.Nanosecond, "1"},
		{time.Millisecond, "1"},
		{time.Millisecond + 1, "2"},
		{1500 * time.Millisecond, "1500"},
		{11*time.Hour + 10*time.Minute, "40200000"},
		{100 * 24 * time.Hour, "4294967295"},
	}
	for _, tt := range tests {
		if got := Expiration(tt.d); got != tt.want {
			t.Errorf("Expiration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestPersistent(t *testing.T) {
	p := Persistent(amqp.Publishing{Body: []byte("x")})
	if p.DeliveryMode != amqp.Persistent || string(p.Body) != "x" {
		t.Fatalf("Persistent = %+v", p)
	}
}
