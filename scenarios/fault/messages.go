package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// sender publishes a scenario's messages one at a time, each confirmed by
// the broker, numbering their refkeys in publish order.
type sender struct {
	pub     *lab.Publisher
	n       int
	now     time.Time
	lastKey string // refkey of the last valid message
	reuses  int    // messages that reused a refkey so far
}

// newSender deletes topo's queues (a run of the same name may have left
// messages on this broker) and declares them anew.
func newSender(conn *amqp.Connection, topo queues.Topology, reset lab.Reset) (*sender, error) {
	pub, err := lab.NewPublisher(conn, topo, reset)
	if err != nil {
		return nil, err
	}
	return &sender{pub: pub, now: time.Now()}, nil
}

func (s *sender) close() error { return s.pub.Close() }

// valid publishes a valid notification with refkey prefix + its number.
func (s *sender) valid(ctx context.Context, prefix string, cat message.Category, tmpl string) error {
	s.n++
	key := fmt.Sprintf("%s%04d", prefix, s.n)
	s.lastKey = key
	return s.publishValid(ctx, key, key, "notifier-lab fault scenario "+key, cat, tmpl)
}

// ErrNoRefKeyToReuse: a same_refkey send step came before any valid
// message.
var ErrNoRefKeyToReuse = errors.New("same_refkey: no valid message published before")

// reuse publishes a new notification under the refkey of the last valid
// message, with another text (so another body) and a message id of its
// own: a producer reusing a refkey.
func (s *sender) reuse(ctx context.Context, cat message.Category, tmpl string) error {
	if s.lastKey == "" {
		return ErrNoRefKeyToReuse
	}
	s.reuses++
	id := fmt.Sprintf("%s-reuse%d", s.lastKey, s.reuses)
	return s.publishValid(ctx, s.lastKey, id, fmt.Sprintf("notifier-lab fault scenario %s, another notification (%d)", s.lastKey, s.reuses), cat, tmpl)
}

// publishValid publishes a valid notification with refkey key, message
// id id and text.
func (s *sender) publishValid(ctx context.Context, key, id, text string, cat message.Category, tmpl string) error {
	n := message.Notification{
		RefKey: key, Category: cat, Recipient: fmt.Sprintf("+8210%08d", s.n),
		TemplateCode: tmpl, Text: text, CreatedAt: s.now.Truncate(time.Second),
	}
	body, err := n.Encode()
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return s.pub.PublishConfirmed(ctx, id, body, reconcile.Published{RefKey: key, Valid: true})
}

// invalidBodies are the malformed messages mixed into a run, in turn: not
// JSON (no refkey can be read), an unknown field, a national-format
// recipient. Each is dead-lettered with the reason message.Decode gives.
var invalidBodies = []func(key string, now time.Time) (body []byte, refkey string){
	func(key string, _ time.Time) ([]byte, string) {
		return []byte(`{"refkey": "` + key + `", "category": "info", "recipient": `), ""
	},
	func(key string, now time.Time) ([]byte, string) {
		return fmt.Appendf(nil, `{"refkey":%q,"category":"info","recipient":"+821000000000","template_code":"LAB_FAULT_01","text":"x","created_at":%q,"colour":"red"}`,
			key, now.UTC().Format(time.RFC3339)), key
	},
	func(key string, now time.Time) ([]byte, string) {
		return fmt.Appendf(nil, `{"refkey":%q,"category":"info","recipient":"010-0000-0000","template_code":"LAB_FAULT_01","text":"x","created_at":%q}`,
			key, now.UTC().Format(time.RFC3339)), key
	},
}

// invalid publishes the idx-th malformed message (invalidBodies in turn).
func (s *sender) invalid(ctx context.Context, prefix string, idx int) error {
	s.n++
	key := fmt.Sprintf("%s%04d", prefix, s.n)
	body, refkey := invalidBodies[idx%len(invalidBodies)](key, s.now)
	return s.pub.PublishConfirmed(ctx, key, body, reconcile.Published{RefKey: refkey, Valid: false})
}

// waitConsumer waits up to a minute until the worker consumes from the
// main queue; the error carries the worker's last log lines.
func (s *sender) waitConsumer(ctx context.Context, wk *vendormock.Worker) error {
	return s.pub.WaitConsumer(ctx, 60*time.Second, func() string {
		logs, _ := wk.Logs(ctx)
		return lab.LastLines(logs, 20)
	})
}
