package worker

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUnsafeReplayWarning: Run logs UnsafeReplayWarning at warn level when
// the negative control's switch is on, and never when it is off. The
// broker is unreachable: Run starts, retries the broker and stops when
// the context ends.
func TestUnsafeReplayWarning(t *testing.T) {
	for _, on := range []bool{true, false} {
		var buf lockedBuffer
		cfg := validConfig()
		cfg.AMQPURL = "amqp://guest:guest@127.0.0.1:1/"
		cfg.LedgerPath = filepath.Join(t.TempDir(), "ledger.db")
		cfg.UnsafeAllowTransportReplay = on
		cfg.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := Run(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatalf("on=%v: Run: %v", on, err)
		}
		logs := buf.String()
		if !strings.Contains(logs, `"unsafe_allow_transport_replay":`+map[bool]string{true: "true", false: "false"}[on]) {
			t.Errorf("on=%v: the start line does not show the switch:\n%s", on, logs)
		}
		warned := strings.Contains(logs, `"level":"WARN","msg":"`+UnsafeReplayWarning+`"`)
		if warned != on {
			t.Errorf("on=%v: warning logged %v:\n%s", on, warned, logs)
		}
	}
}
