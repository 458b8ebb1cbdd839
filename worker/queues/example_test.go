package queues_test

import (
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/queues"
)

func ExampleTopology_Queues() {
	for _, q := range queues.DefaultTopology("notifications").Queues() {
		fmt.Println(q.Name, q.Args)
	}
	// Output:
	// notifications map[x-dead-letter-exchange: x-dead-letter-routing-key:notifications.dead x-queue-type:classic x-single-active-consumer:true]
	// notifications.retry map[x-dead-letter-exchange: x-dead-letter-routing-key:notifications x-message-ttl:300000 x-queue-type:classic]
	// notifications.unknown map[x-queue-type:classic]
	// notifications.held map[x-dead-letter-exchange: x-dead-letter-routing-key:notifications x-queue-type:classic]
	// notifications.failed map[x-queue-type:classic]
	// notifications.dead map[x-queue-type:classic]
}

func ExampleTopology_AfterNotSent() {
	top := queues.DefaultTopology("notifications")
	headers := amqp.Table{queues.HeaderAttempt: int32(4)} // from the delivery
	attempts := queues.Attempt(headers) + 1
	q, dead := top.AfterNotSent(attempts)
	fmt.Println(attempts, q, dead)
	// Output: 5 notifications.dead true
}
