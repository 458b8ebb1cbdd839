package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// item is one message a point publishes.
type item struct {
	id   string
	body []byte
	rec  reconcile.Published
}

// items returns WARMUP warm-up then COUNT measured notifications of a
// point, MALFORMED malformed ones spread evenly among the measured.
func (b *Bench) items(mode string, rtt int) ([]item, error) {
	now := time.Now()
	malformedAfter := func(measured int) int { // malformed messages due once `measured` measured ones went out
		return measured * b.cfg.Malformed / b.cfg.Count
	}
	var out []item
	malformed := 0
	for i := range b.cfg.Warmup + b.cfg.Count {
		warm := i < b.cfg.Warmup
		idx := i + 1
		if !warm {
			idx = i - b.cfg.Warmup + 1
		}
		key := RefKey(b.runID, mode, rtt, warm, idx)
		body, err := benchMessage(key, i, now)
		if err != nil {
			return nil, err
		}
		out = append(out, item{key, body, reconcile.Published{RefKey: key, Valid: true, Warmup: warm}})
		for !warm && malformed < malformedAfter(idx) {
			malformed++
			id, body, refkey := malformedMessage(b.runID, mode, rtt, malformed, now)
			out = append(out, item{id, body, reconcile.Published{RefKey: refkey, Valid: false}})
		}
	}
	return out, nil
}

// publish declares the topology, purges every queue, and publishes WARMUP
// warm-up then COUNT measured notifications (MALFORMED malformed ones
// spread among the measured), persistent, with publisher confirms; it
// returns once the broker confirmed them all and the main queue holds
// exactly that many. What was published (warm-up marked) is returned and
// written to publishedPath (reconcile.WritePublished lines) for the
// reconciler and the metrics.
//
// With paced ARRIVALS it publishes the warm-up messages only and returns
// the feed that publishes the rest at their gaps while the worker runs
// (feed.run); the published list is then the feed's.
func (b *Bench) publish(ctx context.Context, topo queues.Topology, mode string, rtt int, publishedPath string) ([]reconcile.Published, *feed, error) {
	all, err := b.items(mode, rtt)
	if err != nil {
		return nil, nil, err
	}
	pub, err := lab.NewPublisher(b.amqp, topo, lab.Purge)
	if err != nil {
		return nil, nil, err
	}
	now, rest := all, []item(nil)
	if b.cfg.Arrivals.Paced() {
		now, rest = all[:b.cfg.Warmup], all[b.cfg.Warmup:]
	}
	for _, it := range now {
		if err := pub.Publish(ctx, it.id, it.body, it.rec); err != nil {
			pub.Close()
			return nil, nil, err
		}
	}
	if err := pub.Confirm(ctx); err != nil {
		pub.Close()
		return nil, nil, err
	}
	depth, err := pub.MainDepth()
	if err != nil {
		pub.Close()
		return nil, nil, err
	}
	if want := len(now); depth != want {
		pub.Close()
		return nil, nil, fmt.Errorf("queue %s holds %d messages after publishing %d", topo.Names.Main, depth, want)
	}
	if b.cfg.Arrivals.Paced() {
		gaps := b.cfg.Arrivals.Gaps(b.cfg.Count, b.cfg.TimeScaleOr1(), ArrivalSeed)
		return nil, &feed{pub: pub, items: rest, gaps: gaps, warmup: b.cfg.Warmup, path: publishedPath, w: b.w}, nil
	}
	defer pub.Close()
	if err := lab.WritePublished(publishedPath, pub.Published()); err != nil {
		return nil, nil, err
	}
	return pub.Published(), nil, nil
}

// benchMessage returns the JSON body of the i-th (0-based) message of a
// run: category info, so the send window never holds it, and a synthetic
// recipient ("+8210" and 8 digits from i, not a real subscriber's number;
// never logged).
func benchMessage(refKey string, i int, now time.Time) ([]byte, error) {
	n := message.Notification{
		RefKey:       refKey,
		Category:     message.Info,
		Recipient:    fmt.Sprintf("+8210%08d", i%100000000),
		TemplateCode: benchTemplate,
		Text:         "notifier-lab bench message " + refKey,
		CreatedAt:    now.Truncate(time.Second),
	}
	body, err := n.Encode()
	if err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return body, nil
}

// malformedKinds are the faults malformedMessage cycles through: each makes
// message.Decode return an *InvalidError, none may ever be sent.
var malformedKinds = []string{"not-json", "no-refkey", "bad-recipient", "bad-category", "trailing-data", "empty"}

// malformedMessage returns the message id, body and refkey ("" when the body
// has none) of the i-th (1-based) malformed message of a run. The published
// list marks it invalid, so Metrics never counts it as warm-up or measured.
func malformedMessage(runID, mode string, rtt, i int, now time.Time) (id string, body []byte, refkey string) {
	id = fmt.Sprintf("%s-%s-%dms-x%04d", runID, mode, rtt, i)
	kind := malformedKinds[(i-1)%len(malformedKinds)]
	valid := func(mutate func(map[string]any)) []byte {
		m := map[string]any{"refkey": id, "category": "info", "recipient": "+821000000000",
			"template_code": benchTemplate, "text": "malformed " + kind, "created_at": now.UTC().Format(time.RFC3339)}
		mutate(m)
		b, _ := json.Marshal(m)
		return b
	}
	switch kind {
	case "not-json":
		return id, []byte("this is not json " + id), ""
	case "no-refkey":
		return id, valid(func(m map[string]any) { delete(m, "refkey") }), ""
	case "bad-recipient":
		return id, valid(func(m map[string]any) { m["recipient"] = "not-a-phone" }), id
	case "bad-category":
		return id, valid(func(m map[string]any) { m["category"] = "spam" }), id
	case "trailing-data":
		return id, append(valid(func(map[string]any) {}), []byte(` {"again": true}`)...), id
	default: // empty
		return id, nil, ""
	}
}
