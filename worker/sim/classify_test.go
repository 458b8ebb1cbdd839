package sim

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Defects of issue 27 the simulator finds on a branch without their fixes,
// as classify names them.
const (
	DefectAttemptingNeverSwept = "ATTEMPTING never swept"
	DefectHorizonAfterPullFail = "horizon settlement after a failed pull"
	DefectHorizonAfterInterim  = "horizon settlement after an interim report"
	DefectBoltBeginDeadline    = "bbolt Begin ignores its deadline"
	DefectWindowAfterToken     = "window not re-checked after a token fetch or a 401"
	DefectStaleFinish          = "stale Finish treated as a ledger failure"
	DefectWaitLedgerHidden     = "the ledger wait does not reach the ledger through timedLedger"
	// DefectDeliveryLimit is beyond issue 27's list: session losses
	// (crashes, ledger failures, lost channels) return a message that is
	// never sent, the prefetched one included, until a quorum queue
	// dead-letters it over its delivery limit.
	DefectDeliveryLimit = "quorum delivery limit spent by session losses"
	// DefectDrainNoRepair is beyond issue 27's list: the unknown drain
	// does not repair its publish path after a mandatory return, so a
	// deleted copy queue stops every drain pass at the same message.
	DefectDrainNoRepair = "the unknown drain does not repair its publish path after a return"
	// DefectAckNamesSettledTag is issue 29's ack batcher defect (found by
	// TestAckBatcherRandomOrder, fixed before the simulator ran serve
	// above concurrency 1): a run of settled deliveries that ends in a
	// nack is acked with a multiple ack naming that nacked tag, which the
	// broker no longer holds: a channel error.
	DefectAckNamesSettledTag = "a multiple ack names a tag a nack settled"
	// DefectAckCoversUnfinished: the ack batcher counts a delivery still
	// in its handler as acked, so a multiple ack covers it before its
	// outcome is durable.
	DefectAckCoversUnfinished = "a multiple ack covers a delivery still in its handler"
)

// pullFailed matches a sweep line that counted a failed pull.
var pullFailed = regexp.MustCompile(`PullErrors:[1-9]`)

// classify names the issue-27 defect a failure shows, from its invariant,
// its detail and its (shrunk) schedule; "" when it is none of them.
func classify(f Failure) string {
	d := f.Violation.Detail
	// at is the trace line of the step that broke the invariant.
	at := f.Trace
	if i := strings.LastIndex(at, fmt.Sprintf("\n%3d ", f.Violation.Step)); f.Violation.Step >= 0 && i >= 0 {
		at = at[i:]
	}
	has := func(kind Kind, faults ...string) bool {
		return slices.ContainsFunc(f.Shrunk.Events, func(e Event) bool {
			return e.Kind == kind && (len(faults) == 0 || slices.Contains(faults, e.Fault))
		})
	}
	switch f.Violation.Invariant {
	case InvSendWindow:
		if has(VendorFault, "token-slow", "401", "token-error") || f.Shrunk.Config.TokenLife < time.Hour {
			return DefectWindowAfterToken
		}
	case InvWaitForLedger:
		if has(LedgerFault, "down") {
			return DefectWaitLedgerHidden
		}
	case InvLedgerStopNeedsFault:
		if strings.Contains(f.Trace, "stale ledger attempt") {
			return DefectStaleFinish
		}
	case InvLedgerAgrees:
		switch {
		case strings.Contains(d, "ATTEMPTING, but no attempt") && f.Shrunk.Config.Bolt && has(LedgerFault, "past-deadline"):
			return DefectBoltBeginDeadline
		case strings.Contains(d, "NOT_SENT (settled by horizon); the vendor processed it") && pullFailed.MatchString(at):
			return DefectHorizonAfterPullFail
		case strings.Contains(d, "NOT_SENT (settled by horizon); the vendor processed it") && f.Shrunk.Config.Delayed:
			return DefectHorizonAfterInterim
		}
	case InvOnePlace:
		if strings.Contains(d, "dead-lettered unsent") && f.Shrunk.Config.Quorum && strings.Contains(f.Trace, "CRASH") {
			return DefectDeliveryLimit
		}
	case InvNoChannelError:
		if strings.Contains(d, "unknown delivery tag") && f.Shrunk.Config.Concurrency > 1 {
			return DefectAckNamesSettledTag
		}
	case InvAckAfterOutcome:
		if f.Shrunk.Config.Concurrency > 1 && strings.Contains(f.Trace, "handler turn") {
			return DefectAckCoversUnfinished
		}
	case InvSettled:
		if strings.Contains(d, "ATTEMPTING after the horizon") {
			return DefectAttemptingNeverSwept
		}
		if strings.Contains(d, "still in") && strings.Contains(f.Trace, "drain: ") &&
			strings.Contains(f.Trace, "publish returned unroutable") && has(PublishFault, "unroutable") {
			return DefectDrainNoRepair
		}
	}
	return ""
}
