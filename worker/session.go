package worker

import (
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// BrokerDialer opens the consume loop's broker sessions. Run uses
// RabbitMQ through amqp091 (amqpDialer); the deterministic simulator
// (worker/sim) its broker model. The loop calls it from one goroutine.
type BrokerDialer interface {
	// Dial connects to the broker, declares the topology, sets the
	// prefetch (the most unacked deliveries the broker hands the session)
	// and opens the publish path. The session consumes nothing before
	// Consume. Errors wrap ErrTopology when the broker refused the
	// topology for good; any other error is retried with backoff.
	Dial(prefetch int) (BrokerSession, error)
}

// BrokerSession is one broker session of the consume loop: a connection
// with its consume channel and its publish path. It is lost when the
// connection or the consume channel closes; its unacked deliveries then
// go back to the queue, redelivered.
type BrokerSession interface {
	// Consume starts consuming the main queue as consumer tag and returns
	// the deliveries, each acked through its own Acknowledger. ended is
	// called once, when the session ends: the broker or the network
	// closed the connection or the consume channel (err says why) or
	// Close closed it (err nil); it runs before Lost is closed. On error
	// the session is closed and ended is never called.
	Consume(tag string, ended func(err error)) (<-chan amqp.Delivery, error)
	// Publisher is the session's publish path for the Handler: it
	// returns nil only for a publish the broker confirmed and routed (a
	// mandatory publish returned unroutable is an error wrapping
	// ErrUnroutable). It may be a Repairer.
	Publisher() Publisher
	// Lost is closed once the session has ended (after ended ran).
	Lost() <-chan struct{}
	// Close cancels the consumer and closes the session: its unacked
	// deliveries (at most the prefetch) go back to the queue. It returns
	// once ended has run.
	Close()
}

// amqpDialer dials RabbitMQ: every session takes the next node of
// Config.AMQPURL (brokerAddrs), declares the topology on its consume
// channel, sets the prefetch there and opens a confirm channel for its
// publishes (sessionPublisher).
type amqpDialer struct {
	cfg   Config
	topo  queues.Topology
	addrs brokerAddrs
}

var _ BrokerDialer = (*amqpDialer)(nil)

// Dial dials the next node (BrokerDialer.Dial).
func (d *amqpDialer) Dial(prefetch int) (_ BrokerSession, err error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("notifier-worker")
	url, _ := d.addrs.next(d.cfg.AMQPURL)
	conn, err := amqp.DialConfig(url, amqp.Config{
		Heartbeat:  d.cfg.Heartbeat,
		Locale:     "en_US",
		Dial:       amqp.DefaultDial(d.cfg.DialTimeout),
		Properties: props,
	})
	if err != nil {
		return nil, fmt.Errorf("dial broker %s: %w", RedactURL(url), err)
	}
	defer func() {
		if err != nil {
			_ = conn.CloseDeadline(time.Now().Add(2 * time.Second))
		}
	}()
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	if err := d.topo.Declare(ch); err != nil {
		if errors.Is(err, queues.ErrQueueMismatch) || errors.Is(err, queues.ErrTopology) {
			return nil, fmt.Errorf("%w: %w", ErrTopology, err)
		}
		return nil, fmt.Errorf("declare topology: %w", err)
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return nil, fmt.Errorf("set prefetch: %w", err)
	}
	pub, err := newSessionPublisher(conn, d.topo)
	if err != nil {
		return nil, err
	}
	return &amqpSession{conn: conn, ch: ch, pub: pub, queue: d.topo.Names.Main,
		connClosed: conn.NotifyClose(make(chan *amqp.Error, 1)),
		chClosed:   ch.NotifyClose(make(chan *amqp.Error, 1)),
		lost:       make(chan struct{})}, nil
}

// amqpSession is one RabbitMQ connection with its consume channel and its
// publish path (a confirm channel that sessionPublisher.Repair replaces
// when the broker closed it). It is lost when the connection or the
// consume channel closes; a closed publish channel alone is repaired, not
// a loss.
type amqpSession struct {
	conn                 *amqp.Connection
	ch                   *amqp.Channel
	pub                  *sessionPublisher
	queue, tag           string
	connClosed, chClosed chan *amqp.Error
	lost                 chan struct{} // closed when the connection or the consume channel closed
	watchDone            chan struct{} // closed when the watcher is done; nil before Consume
}

var _ BrokerSession = (*amqpSession)(nil)

// Consume starts the consumer and the watcher that ends the session when
// the connection or the consume channel closes (BrokerSession.Consume).
func (s *amqpSession) Consume(tag string, ended func(error)) (<-chan amqp.Delivery, error) {
	deliveries, err := s.ch.Consume(s.queue, tag, false, false, false, false, nil)
	if err != nil {
		_ = s.conn.CloseDeadline(time.Now().Add(2 * time.Second))
		return nil, fmt.Errorf("consume %s: %w", s.queue, err)
	}
	s.tag = tag
	s.watchDone = make(chan struct{})
	go func() {
		defer close(s.watchDone)
		var e *amqp.Error
		select {
		case e = <-s.connClosed:
		case e = <-s.chClosed:
		}
		var err error
		if e != nil { // a clean close sends nothing: err stays nil
			err = e
		}
		ended(err)
		close(s.lost)
	}()
	return deliveries, nil
}

// Publisher is the session's sessionPublisher.
func (s *amqpSession) Publisher() Publisher { return s.pub }

// Lost is closed when the connection or the consume channel closed.
func (s *amqpSession) Lost() <-chan struct{} { return s.lost }

// Close cancels the consumer and closes the channels and the connection
// (BrokerSession.Close).
func (s *amqpSession) Close() {
	if !s.ch.IsClosed() {
		_ = s.ch.Cancel(s.tag, false)
	}
	_ = s.ch.Close()
	s.pub.close()
	_ = s.conn.CloseDeadline(time.Now().Add(5 * time.Second))
	if s.watchDone != nil {
		<-s.watchDone
	}
}
