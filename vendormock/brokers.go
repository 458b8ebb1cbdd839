package vendormock

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
)

// StartBrokers starts only the run's network and its RabbitMQ node(s)
// (opts.BrokerNodes; opts.Images.RabbitMQ, opts.Log; the vendor side is
// not started): for broker tests, which need no vendor. The Stack's broker
// fields (AMQPURL, AMQPURLNetwork, AMQPURLsNetwork, Brokers) and the node
// verbs work as after Start; Close removes everything. On error everything
// already started is removed. Errors: bad BrokerNodes, ErrImagesMissing,
// ErrNotReady, Docker errors.
func StartBrokers(ctx context.Context, opts Options) (s *Stack, err error) {
	t0 := time.Now()
	if opts.BrokerNodes < 0 || opts.BrokerNodes > MaxBrokerNodes {
		return nil, fmt.Errorf("stack options: broker nodes %d: want 1 to %d", opts.BrokerNodes, MaxBrokerNodes)
	}
	s = &Stack{session: opts.Session, imagePG: opts.Images.Postgres, log: opts.Log, containers: map[string]testcontainers.Container{}, Ready: map[string]time.Duration{}}
	if s.log == nil {
		s.log = io.Discard
	}
	s.RunID = randomHex(4)
	if err := CheckImages(ctx, Images{RabbitMQ: opts.Images.RabbitMQ}); err != nil {
		return nil, err
	}
	defer closeOnError(ctx, &s, &err)
	if s.nw, err = network.New(ctx, network.WithLabels(s.labels())); err != nil {
		return s, fmt.Errorf("create network: %w", err)
	}
	s.Network = s.nw.Name
	if opts.BrokerNodes > 1 {
		err = s.startRabbitMQCluster(ctx, opts.Images.RabbitMQ, opts.BrokerNodes, t0)
	} else {
		err = s.startRabbitMQ(ctx, opts.Images.RabbitMQ, t0)
	}
	if err != nil {
		return s, err
	}
	s.StartDuration = time.Since(t0)
	return s, nil
}

// closeOnError is deferred by the Stack's constructors (Start,
// StartBrokers) with their named results: when *err is set it removes
// whatever *s has started (60 s at most, even if ctx is cancelled), adds
// the cleanup's error to *err and sets *s to nil.
func closeOnError(ctx context.Context, s **Stack, err *error) {
	if *err == nil || *s == nil {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
	defer cancel()
	if cerr := (*s).Close(cctx); cerr != nil {
		*err = fmt.Errorf("%w (and cleanup: %v)", *err, cerr)
	}
	*s = nil
}
