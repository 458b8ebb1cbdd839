package worker

import (
	"context"
	"net/http/httptrace"
	"sync"
	"time"
)

// The pipeline at concurrency 1 (HandlerConfig.ReleaseAfterSend,
// docs/worker.md, Cost per message): once message k's send is over, its
// handler gives the slot back, so message k+1 is decoded and begun while
// k finishes; k's Finish and k+1's Begin share one ledger transaction,
// and k's ack waits until k+1's request is on the wire (or AckWaitMax),
// so that the ack's system call and k's Record are written while k+1
// waits for the vendor instead of before its request.

// AckWaitMax is the longest a sent message's ack waits for the next
// request to be written (no next message, or one that is not sent); the
// default of HandlerConfig.AckWait.
const AckWaitMax = 2 * time.Millisecond

// writeSignal wakes the handlers waiting for the next request to be
// written. Safe for concurrent use; the zero value is ready.
type writeSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// next returns a channel closed when the next request is written.
func (s *writeSignal) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// fire closes the channel next handed out, if any.
func (s *writeSignal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// signalWrites returns ctx with an httptrace hook that fires h.writes when
// a request made with it has been written whole.
func (h *Handler) signalWrites(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				h.writes.fire()
			}
		},
	})
}

// awaitNextWrite waits until ch is closed or max has passed; a nil ch
// (no pipeline) returns at once.
func awaitNextWrite(ch <-chan struct{}, max time.Duration) {
	if ch == nil {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// markFinishing records that refkey's delivery is finishing after its
// slot was released, and returns the func that ends that (deferred by
// handle).
func (h *Handler) markFinishing(refkey string) (done func()) {
	ch := make(chan struct{})
	if _, loaded := h.finishing.LoadOrStore(refkey, ch); loaded {
		return func() {} // another one is finishing it: its own done ends it
	}
	return func() {
		h.finishing.Delete(refkey)
		close(ch)
	}
}

// awaitFinishing waits until no delivery of refkey is finishing after a
// released slot (markFinishing).
func (h *Handler) awaitFinishing(refkey string) {
	if v, ok := h.finishing.Load(refkey); ok {
		<-v.(chan struct{})
	}
}
