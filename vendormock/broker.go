package vendormock

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// rabbitReadyLine is the log line RabbitMQ writes once it accepts
// connections.
const rabbitReadyLine = "Server startup complete"

// RestartRabbitMQ stops the broker container (SIGTERM, up to stopTimeout,
// then SIGKILL; 0 = 10 s) and starts the same container again, so its data
// dir, and with it durable queues and persistent messages, survives; every
// AMQP connection is closed and clients must reconnect (the worker does).
// It returns once RabbitMQ logged its startup once more and the host can
// open an AMQP connection, bounded by DefaultReadyTimeout. The published
// port may change: AMQPURL is updated (AMQPURLNetwork stays). Errors: no
// broker, ErrNotReady, Docker errors.
func (s *Stack) RestartRabbitMQ(ctx context.Context, stopTimeout time.Duration) error {
	s.mu.Lock()
	c := s.containers["rabbitmq"]
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("restart rabbitmq: no broker container")
	}
	if stopTimeout <= 0 {
		stopTimeout = 10 * time.Second
	}
	before, err := countLogLines(ctx, c, rabbitReadyLine)
	if err != nil {
		return fmt.Errorf("restart rabbitmq: %w", err)
	}
	t0 := time.Now()
	if err := c.Stop(ctx, &stopTimeout); err != nil {
		return fmt.Errorf("restart rabbitmq: stop: %w", err)
	}
	s.logf("rabbitmq stopped in %.1f s", time.Since(t0).Seconds())
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("restart rabbitmq: start: %w", err)
	}
	// The old run's lines are still in the log: wait for one more.
	rctx, cancel := context.WithTimeout(ctx, DefaultReadyTimeout)
	defer cancel()
	if err := wait.ForLog(rabbitReadyLine).WithOccurrence(before+1).
		WithStartupTimeout(DefaultReadyTimeout).WaitUntilReady(rctx, c); err != nil {
		return fmt.Errorf("restart rabbitmq: %w: %w", ErrNotReady, err)
	}
	addr, err := hostAddr(rctx, c, "5672/tcp")
	if err != nil {
		return fmt.Errorf("restart rabbitmq: %w", err)
	}
	url := "amqp://guest:guest@" + addr + "/"
	if err := waitAMQP(rctx, url); err != nil {
		return fmt.Errorf("restart rabbitmq: %w: %w", ErrNotReady, err)
	}
	s.mu.Lock()
	s.AMQPURL = url
	if len(s.brokers) == 1 {
		s.brokers[0].AMQPURL = url
	}
	s.mu.Unlock()
	s.logf("rabbitmq restarted in %.1f s", time.Since(t0).Seconds())
	return nil
}

// countLogLines counts the log lines of c containing sub.
func countLogLines(ctx context.Context, c testcontainers.Container, sub string) (int, error) {
	rc, err := c.Logs(ctx)
	if err != nil {
		return 0, fmt.Errorf("read logs: %w", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return 0, fmt.Errorf("read logs: %w", err)
	}
	return bytes.Count(b, []byte(sub)), nil
}

// waitAMQP dials url every 200 ms until a connection opens or ctx ends.
func waitAMQP(ctx context.Context, url string) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(2 * time.Second)})
		if err == nil {
			return conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("amqp dial: %w (last: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}
