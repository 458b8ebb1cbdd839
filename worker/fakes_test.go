package worker

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// fakeAcker captures acks and nacks by delivery tag. A multiple ack
// acks, as the broker does, every tag from 1 up to its own not acked or
// nacked before (the fakes number a channel's deliveries from 1).
type fakeAcker struct {
	mu       sync.Mutex
	acks     []uint64
	nacks    []uint64
	requeues []bool
	err      error
	// frames counts Ack calls (a multiple ack is one).
	frames int
}

func (a *fakeAcker) Ack(tag uint64, multiple bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	a.frames++
	if !multiple {
		a.acks = append(a.acks, tag)
		return nil
	}
	settled := map[uint64]bool{}
	for _, t := range append(slices.Clone(a.acks), a.nacks...) {
		settled[t] = true
	}
	for t := uint64(1); t <= tag; t++ {
		if !settled[t] {
			a.acks = append(a.acks, t)
		}
	}
	return nil
}

func (a *fakeAcker) Nack(tag uint64, multiple, requeue bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	a.nacks = append(a.nacks, tag)
	a.requeues = append(a.requeues, requeue)
	return nil
}

func (a *fakeAcker) Reject(tag uint64, requeue bool) error { return a.Nack(tag, false, requeue) }

func (a *fakeAcker) counts() (acks, nacks int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.acks), len(a.nacks)
}

// published is one captured re-publish.
type published struct {
	queue string
	p     amqp.Publishing
}

// fakePublisher captures re-publishes; err fails every publish.
type fakePublisher struct {
	mu   sync.Mutex
	pubs []published
	err  error
}

func (p *fakePublisher) Publish(ctx context.Context, queue string, msg amqp.Publishing) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	p.pubs = append(p.pubs, published{queue, msg})
	return nil
}

// fakeSender returns res and err; when started is set it signals each
// call's start, and when release is set it waits for it before answering.
type fakeSender struct {
	mu      sync.Mutex
	res     vendorapi.Result
	err     error
	sent    []message.Notification
	started chan struct{}
	release chan struct{}
	during  func() // runs inside Send (simulate a connection loss mid-send)
	ctxErr  error  // ctx.Err() seen at the end of the last Send
	closed  bool
}

func (s *fakeSender) Send(ctx context.Context, n message.Notification) (vendorapi.Result, error) {
	if s.started != nil {
		s.started <- struct{}{}
	}
	if s.release != nil {
		<-s.release
	}
	if s.during != nil {
		s.during()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, n)
	s.ctxErr = ctx.Err()
	return s.res, s.err
}

func (s *fakeSender) Close() error { s.closed = true; return nil }

func (s *fakeSender) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

// fixedClock always reads t.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// body returns a notification body.
func body(t *testing.T, refkey string, cat message.Category) []byte {
	t.Helper()
	b, err := json.Marshal(message.Notification{
		RefKey: refkey, Category: cat, Recipient: testRecipient, TemplateCode: "SHIP_01",
		Text: "your order shipped", CreatedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const testRecipient = "+821000005678"

// delivery returns a delivery acked through a.
func delivery(a amqp.Acknowledger, tag uint64, b []byte, headers amqp.Table) amqp.Delivery {
	return amqp.Delivery{Acknowledger: a, DeliveryTag: tag, Body: b, Headers: headers,
		ContentType: "application/json", MessageId: "m-1"}
}

// sendErr returns a *vendorapi.SendError of class c.
func sendErr(c outcome.Outcome, code string, err error) error {
	return &vendorapi.SendError{Class: c, Op: "send", Code: code, Err: err}
}

var errBoom = errors.New("boom")
