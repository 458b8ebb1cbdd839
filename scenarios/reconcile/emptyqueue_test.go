package reconcile

import (
	"context"
	"errors"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// refusingEmptyGet is a broker that refuses basic.get on the queues in
// refuse (those that were empty when declared), as RabbitMQ does on an
// empty quorum queue with single active consumer (the channel is closed
// with an error).
type refusingEmptyGet struct {
	*fakeChannel
	refuse map[string]bool
	gets   map[string]int
}

func (r *refusingEmptyGet) Get(name string, autoAck bool) (amqp.Delivery, bool, error) {
	r.gets[name]++
	if r.refuse[name] {
		return amqp.Delivery{}, false, errors.New("basic.get on an empty quorum queue with single active consumer: channel closed")
	}
	return r.fakeChannel.Get(name, autoAck)
}

// TestReadQueuesSkipsEmptyQueues: a queue the passive declare reports
// empty is never read with basic.get (RabbitMQ refuses it on a quorum
// queue with single active consumer), and a queue with messages still is.
func TestReadQueuesSkipsEmptyQueues(t *testing.T) {
	f := &fakeChannel{queues: map[string][]amqp.Delivery{
		"empty": {},
		"one":   {{Body: []byte(`{"refkey":"r1"}`), DeliveryTag: 1}},
	}, consumers: map[string]int{}, acks: new([]string)}
	p := &refusingEmptyGet{fakeChannel: f, refuse: map[string]bool{"empty": true}, gets: map[string]int{}}
	got, err := ReadQueuesOn(context.Background(), p, []string{"empty", "one"}, 10)
	if err != nil {
		t.Fatalf("ReadQueuesOn: %v", err)
	}
	if p.gets["empty"] != 0 {
		t.Errorf("%d basic.get on the empty queue; want none", p.gets["empty"])
	}
	if len(got["empty"]) != 0 || len(got["one"]) != 1 || got["one"][0].RefKey != "r1" {
		t.Errorf("read %v; want nothing from empty and r1 from one", got)
	}
}
