package vendorapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// ErrRefusedBeforePost is in the chain of a NotSent *SendError (Op OpSend,
// Reason ReasonGated) when the check given with WithBeforePost refused a
// message POST: that POST was not started, so nothing of it reached the
// vendor. The check's own error is in the chain too.
var ErrRefusedBeforePost = errors.New("refused before the message post")

// beforePostKey is the context key of WithBeforePost's check.
type beforePostKey struct{}

// WithBeforePost returns a copy of ctx that carries check. Client.Send
// called with it runs check right before each POST /v3/message it starts
// (the first one, after any token call, and the resend after a 401's token
// refetch), never before a token call. A nil error lets that POST go; any
// other error stops Send there with a NotSent *SendError wrapping
// ErrRefusedBeforePost and check's error, and no later POST is made.
//
// It is the caller's last look at a rule judged at the moment of the
// request (the worker's send window for ads): the token call and a 401's
// refetch may take up to a response timeout each, after the caller's own
// look before Send. What the check cannot see is the connection set-up of
// the POST itself (dial and TLS handshake of a new connection, bounded by
// Config.DialTimeout and Config.TLSHandshakeTimeout), which comes after it.
//
// check runs on the goroutine that called Send, at most twice per Send.
// Like httptrace.WithClientTrace, the check travels with the context, so a
// Sender that wraps a Client keeps it by passing ctx on; one that ignores
// ctx ignores the check. A nil check is no check.
func WithBeforePost(ctx context.Context, check func() error) context.Context {
	return context.WithValue(ctx, beforePostKey{}, check)
}

// checkBeforePost runs ctx's WithBeforePost check, if any: nil when there
// is none or it allows the POST, else the NotSent *SendError to return.
func checkBeforePost(ctx context.Context) *SendError {
	check, _ := ctx.Value(beforePostKey{}).(func() error)
	if check == nil {
		return nil
	}
	if err := check(); err != nil {
		return &SendError{Class: outcome.NotSent, Op: OpSend, Reason: ReasonGated,
			Err: fmt.Errorf("check before post: %w: %w", ErrRefusedBeforePost, err)}
	}
	return nil
}
