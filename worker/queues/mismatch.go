package queues

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ErrQueueMismatch is matched (errors.Is) by every *MismatchError: a queue
// already exists on the broker with arguments other than the ones
// declared. Retrying cannot help; an operator must act.
var ErrQueueMismatch = errors.New("queue exists with other arguments")

// MismatchError is the broker's PRECONDITION_FAILED (406) answer to a queue
// declaration, made readable: which queue, which argument, what the broker
// has and what was declared. amqp091-go returns it as an *amqp.Error with
// Code 406 from QueueDeclare (the channel is closed by the broker); Err
// keeps it.
type MismatchError struct {
	Queue string
	// Argument is the queue argument that differs ("x-queue-type"), or ""
	// when the broker's text did not name one (for example durable or
	// exclusive differ).
	Argument string
	// Current is the value on the broker, Declared the value sent; both
	// as RabbitMQ printed them ("'classic'", "none"), "" when not named.
	Current, Declared string
	// Args are all the arguments the worker declared for Queue (what a
	// migrated queue must be declared with).
	Args amqp.Table
	Err  *amqp.Error
}

// Error is one line: the queue, the argument and both values, and what to
// do about it.
func (e *MismatchError) Error() string {
	what := "its arguments differ"
	if e.Argument != "" {
		what = fmt.Sprintf("argument %s is %s on the broker but the worker declares %s", e.Argument, e.Current, e.Declared)
	}
	return fmt.Sprintf("queue %q already exists with other arguments (%s): migrate it (move its messages to a queue declared with the new arguments: %s) or delete it, then start the worker again (docs/deployment.md); broker said: %s",
		e.Queue, what, FormatArgs(e.Args), e.Err.Reason)
}

// FormatArgs renders queue arguments on one line, sorted by key:
// "x-overflow=reject-publish x-queue-type=quorum" ("none" for no
// argument), for logs and operators' migration commands.
func FormatArgs(args amqp.Table) string {
	if len(args) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(args))
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := args[k]
		if s, ok := v.(string); ok && s == "" {
			v = `""`
		}
		parts[i] = fmt.Sprintf("%s=%v", k, v)
	}
	return strings.Join(parts, " ")
}

// Is makes errors.Is(err, ErrQueueMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrQueueMismatch }

// Unwrap returns the broker's *amqp.Error.
func (e *MismatchError) Unwrap() error { return e.Err }

// inequivalent matches RabbitMQ's text for a redeclare with another
// argument value (rabbit_misc:assert_args_equivalence), for example
// "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'q' in
// vhost '/': received 'quorum' but current is 'classic'".
var inequivalent = regexp.MustCompile(`inequivalent arg '([^']+)' for queue '[^']*' in vhost '[^']*': received (.+) but current is (.+)$`)

// mismatch returns a *MismatchError when err is the broker's 406 for q,
// else nil.
func mismatch(q QueueSpec, err error) *MismatchError {
	ae, ok := errors.AsType[*amqp.Error](err)
	if !ok || ae.Code != amqp.PreconditionFailed {
		return nil
	}
	me := &MismatchError{Queue: q.Name, Args: q.Args, Err: ae}
	if m := inequivalent.FindStringSubmatch(ae.Reason); m != nil {
		me.Argument, me.Declared, me.Current = m[1], m[2], m[3]
	}
	return me
}
