package worker

import (
	"context"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

// burnCPU spins until the process has spent ms more milliseconds of CPU.
func burnCPU(ms float64) {
	end := ProcessCPUMS() + ms
	for x := 0; ProcessCPUMS() < end; x++ {
		_ = x * x
	}
}

// TestRecordSendCPUMS: Record.SendCPUMS is the process CPU spent during
// the vendor send: at least what the send itself burned (20 ms here), and
// no more than the whole Handle took. The process has spent CPU before
// (30 ms burned first), so a total instead of a difference shows.
func TestRecordSendCPUMS(t *testing.T) {
	r := newRig(t, nil, inWindow)
	r.send.during = func() { burnCPU(20) }
	burnCPU(30)
	before := ProcessCPUMS()
	rec, err := r.h.Handle(context.Background(), delivery(&fakeAcker{}, 1, body(t, "r-cpu", message.Info), amqp.Table{}))
	whole := ProcessCPUMS() - before
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if rec.SendCPUMS < 20 || rec.SendCPUMS > whole {
		t.Errorf("SendCPUMS %.1f ms; want between the 20 ms the send burned and the %.1f ms Handle took", rec.SendCPUMS, whole)
	}
}
