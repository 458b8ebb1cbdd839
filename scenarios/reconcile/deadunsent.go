package reconcile

import (
	"fmt"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// deadUnsent reports whether u is dead-lettered unsent
// (docs/outcomes.md#dead-lettered-unsent): a valid notification whose
// every copy sits in the dead-letter queue, none of them INVALID, with
// fewer send attempts than maxAttempts (the most of the copies'
// x-notifier-attempt, the records' attempt and the ledger's attempts), and
// nothing saying a send may have reached the vendor: no record or ledger
// state SENT, REJECTED, UNKNOWN or ATTEMPTING, no journal entry without a
// 4xx, and no record of the worker giving up on a copy the broker refused
// (worker.CodeRepublishFailed, a decision with its reason). Such a copy
// was dead-lettered by the broker, typically by a quorum queue's
// x-delivery-limit, not by the worker: nobody will send it, so it is lost.
// why says where it sits and after how many attempts. It needs the queue
// names (haveNames) to know the dead-letter queue.
func (u *unit) deadUnsent(haveNames bool, maxAttempts int, ledgerOf map[string]ledger.Entry) (why string, unsent bool) {
	if !haveNames || len(u.places) == 0 || u.allInvalid() {
		return "", false
	}
	attempts := 0
	var where []string
	for _, p := range u.places {
		if p.role != roleDead || p.outcome == outcome.Invalid {
			return "", false
		}
		attempts = max(attempts, p.attempt)
		w := p.where
		if p.death != "" {
			w += " (x-death reason " + p.death + ")"
		}
		if len(where) == 0 || where[len(where)-1] != w {
			where = append(where, w)
		}
	}
	for _, rec := range u.records {
		if reaches(rec.Outcome) || rec.Code == worker.CodeRepublishFailed {
			return "", false
		}
		attempts = max(attempts, rec.Attempt)
	}
	if le, ok := ledgerOf[u.refkey]; ok && u.refkey != "" {
		if reaches(le.State) {
			return "", false
		}
		attempts = max(attempts, le.Attempts)
	}
	for _, e := range u.journal {
		if !is4xx(e.Status) {
			return "", false
		}
	}
	if attempts >= maxAttempts {
		return "", false
	}
	return fmt.Sprintf("in %s after %d of %d send attempts and no send that may have reached the vendor",
		strings.Join(where, ", "), attempts, maxAttempts), true
}

// deathReason is the reason RabbitMQ gave when it last dead-lettered a
// message (delivery_limit, rejected, expired, maxlen), from its headers:
// x-last-death-reason (RabbitMQ 3.13 and later), else the newest x-death
// entry's reason, else x-first-death-reason; "" when it was never
// dead-lettered by the broker. It reads amqp091-go's decoded tables and
// their JSON form alike.
func deathReason(h map[string]any) string {
	if s := headerString(h["x-last-death-reason"]); s != "" {
		return s
	}
	if deaths, ok := h["x-death"].([]any); ok && len(deaths) > 0 {
		switch d := deaths[0].(type) {
		case amqp.Table:
			if s := headerString(d["reason"]); s != "" {
				return s
			}
		case map[string]any:
			if s := headerString(d["reason"]); s != "" {
				return s
			}
		}
	}
	return headerString(h["x-first-death-reason"])
}

// headerString is a header value as a string: a string or []byte, else "".
func headerString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
