//go:build integration

package worker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// BenchmarkIntegrationPublishConfirms: copies re-published at once by
// inflight callers on ONE ConfirmPublisher (the session's confirm channel,
// as the Handler's copies to the retry, parking and dead queues share it
// at concurrency N), against the lab's RabbitMQ: a durable classic queue,
// persistent messages, mandatory, each Publish returning after its own
// confirm. One op is one confirmed copy; copies/s is b.N over the wall
// time of the op loop. It uses the exported API only, so the same file
// measures the publisher before and after a change (docs/worker.md,
// "Many sends in flight"; results/publish-confirms/).
//
//	go test -tags integration -run '^$' -bench IntegrationPublishConfirms -benchtime 1000x ./worker
func BenchmarkIntegrationPublishConfirms(b *testing.B) {
	url, _ := startRabbit(b)
	conn, err := amqp.Dial(url)
	if err != nil {
		b.Fatalf("dial broker: %v", err)
	}
	defer conn.Close()
	admin, err := conn.Channel()
	if err != nil {
		b.Fatal(err)
	}
	const queue = "bench-copies"
	if _, err := admin.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		b.Fatalf("declare %s: %v", queue, err)
	}
	ch, err := conn.Channel()
	if err != nil {
		b.Fatal(err)
	}
	pub, err := NewConfirmPublisher(ch)
	if err != nil {
		b.Fatal(err)
	}
	body, err := message.Notification{RefKey: "bench-1", Category: message.Info, Recipient: "+821000005678",
		TemplateCode: "SHIP_01", Text: "shipped", CreatedAt: time.Now()}.Encode()
	if err != nil {
		b.Fatal(err)
	}
	msg := amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: body,
		Headers: amqp.Table{queues.HeaderOutcome: string(outcome.Unknown), queues.HeaderReason: "TIMEOUT"}}
	for _, inflight := range []int{1, 32, 128} {
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) {
			if _, err := admin.QueuePurge(queue, false); err != nil {
				b.Fatalf("purge %s: %v", queue, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var (
				next     atomic.Int64
				wg       sync.WaitGroup
				errMu    sync.Mutex
				firstErr error
			)
			b.ResetTimer()
			start := time.Now()
			for range inflight {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if err := pub.Publish(ctx, queue, msg); err != nil {
							errMu.Lock()
							if firstErr == nil {
								firstErr = err
							}
							errMu.Unlock()
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if firstErr != nil {
				b.Fatalf("publish: %v", firstErr)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "copies/s")
			q, err := admin.QueueDeclarePassive(queue, true, false, false, false, nil)
			if err != nil {
				b.Fatalf("inspect %s: %v", queue, err)
			}
			if q.Messages != b.N {
				b.Fatalf("%s holds %d messages after %d confirmed copies", queue, q.Messages, b.N)
			}
		})
	}
}
