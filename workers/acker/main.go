// Command acker is a worker that breaks the worker contract on purpose
// (docs/worker-contract.md): it consumes the main queue (QUEUE on
// AMQP_URL) and acks every message without calling the vendor, routing it
// or writing a records line. The lab uses its image as WORKER=image:NAME
// to show that a worker that writes no records gets a message naming
// what is missing while the figures from outside (queues, nginx, the
// journal) still come out. build.sh packs it into an image FROM scratch.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv("AMQP_URL"), os.Getenv("QUEUE")); err != nil {
		fmt.Fprintln(os.Stderr, "acker:", err)
		os.Exit(1)
	}
}

// run consumes queue with manual acks and acks each delivery until ctx is
// done. Errors: an empty AMQP_URL or QUEUE, the broker's.
func run(ctx context.Context, url, queue string) error {
	if url == "" || queue == "" {
		return fmt.Errorf("AMQP_URL and QUEUE must be set")
	}
	conn, err := amqp.Dial(url)
	if err != nil {
		return fmt.Errorf("dial broker: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", err)
	}
	if err := ch.Qos(1, 0, false); err != nil {
		return fmt.Errorf("set prefetch: %w", err)
	}
	ds, err := ch.ConsumeWithContext(ctx, queue, "acker", false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("consume %s: %w", queue, err)
	}
	n := 0
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(os.Stderr, "acker: acked %d messages\n", n)
			return nil
		case d, ok := <-ds:
			if !ok {
				return fmt.Errorf("consume %s: channel closed", queue)
			}
			if err := d.Ack(false); err != nil {
				return fmt.Errorf("ack: %w", err)
			}
			n++
		}
	}
}
