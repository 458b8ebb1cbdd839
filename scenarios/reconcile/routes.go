package reconcile

import (
	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// Queue roles.
const (
	roleMain    = "main"
	roleRetry   = "retry"
	roleUnknown = "unknown"
	roleHeld    = "held"
	roleFailed  = "failed"
	roleDead    = "dead"
)

func roles(n queues.Names) map[string]string {
	m := map[string]string{}
	for role, name := range map[string]string{
		roleMain: n.Main, roleRetry: n.Retry, roleUnknown: n.Unknown,
		roleHeld: n.Held, roleFailed: n.Failed, roleDead: n.Dead,
	} {
		if name != "" {
			m[name] = role
		}
	}
	return m
}

// routeFor returns the queues an outcome may go to: "" is acked.
func routeFor(n queues.Names, o outcome.Outcome) ([]string, bool) {
	switch o {
	case outcome.Sent, outcome.Duplicate:
		return []string{""}, true
	case outcome.Rejected:
		return []string{n.Failed}, true
	case outcome.NotSent:
		return []string{n.Retry, n.Dead}, true // dead after the last attempt
	case outcome.Unknown:
		return []string{n.Unknown}, true
	case outcome.OutsideSendWindow:
		return []string{n.Held}, true
	case outcome.Invalid:
		return []string{n.Dead}, true
	}
	return nil, false
}

// headerAllowed reports whether a message with outcome header h may sit in
// a queue of role.
func headerAllowed(role string, h outcome.Outcome) bool {
	switch role {
	case roleRetry:
		return h == outcome.NotSent
	case roleUnknown:
		return h == outcome.Unknown
	case roleHeld:
		return h == outcome.OutsideSendWindow
	case roleFailed:
		return h == outcome.Rejected
	case roleDead:
		return h == outcome.Invalid || h == outcome.NotSent
	}
	return true // main: re-delivered retry or held messages keep theirs
}

func placeOutcome(role string, header outcome.Outcome) outcome.Outcome {
	switch role {
	case roleMain:
		return outcome.Pending
	case roleRetry:
		return outcome.NotSent
	case roleUnknown:
		return outcome.Unknown
	case roleHeld:
		return outcome.OutsideSendWindow
	case roleFailed:
		return outcome.Rejected
	case roleDead:
		if header != "" {
			return header
		}
		return outcome.Dead
	}
	if header != "" {
		return header
	}
	return outcome.Queued
}

// reaches reports whether a record or ledger outcome says a request may
// have reached the vendor.
func reaches(o outcome.Outcome) bool {
	switch o {
	case outcome.Sent, outcome.Rejected, outcome.Unknown, outcome.Outcome(ledger.Attempting):
		return true
	}
	return false
}

func is4xx(status int) bool { return status >= 400 && status < 500 }
func is2xx(status int) bool { return status >= 200 && status < 300 }
