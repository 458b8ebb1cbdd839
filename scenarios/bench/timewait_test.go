package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

func TestCountTimeWait(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "scenarios", "proc", "net-tcp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := CountTimeWait(f)
	if err != nil || n != 3 {
		t.Errorf("CountTimeWait(sample) = %d, %v; want 3 (rows in state 06, not 01 or 08)", n, err)
	}
	bad := []struct{ name, in string }{
		{"empty", ""},
		{"no header", "   0: 0100007F:914F 0100007F:C514 06 00000000:00000000\n"},
		{"short row", "  sl  local_address rem_address   st tx_queue\n   0: 0100007F:914F\n"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := CountTimeWait(strings.NewReader(tt.in)); err == nil {
				t.Error("no error, want ErrProcNetTCP")
			}
		})
	}
}

func TestCountTimeWaitOfPID(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "42", "net")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sample, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scenarios", "proc", "net-tcp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tcp"), sample, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := CountTimeWaitOfPID(root, 42); err != nil || n != 3 {
		t.Errorf("without tcp6: %d, %v; want 3", n, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tcp6"), sample, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := CountTimeWaitOfPID(root, 42); err != nil || n != 6 {
		t.Errorf("with tcp6: %d, %v; want 6", n, err)
	}
	if _, err := CountTimeWaitOfPID(root, 43); err == nil {
		t.Error("missing process: no error")
	}
}

func TestTimeWaitAdd(t *testing.T) {
	var tw results.TimeWait
	for _, n := range []int{5, 40, 12} {
		tw.Add(n)
	}
	if tw != (results.TimeWait{Last: 12, Peak: 40, Samples: 3}) {
		t.Errorf("got %+v, want last 12, peak 40, 3 samples", tw)
	}
}

func TestLinkSettle(t *testing.T) {
	if got := LinkSettle(380); got != 1760*time.Millisecond {
		t.Errorf("LinkSettle(380) = %s, want 1.76 s (2 RTT + 1 s)", got)
	}
	if got := LinkSettle(0); got != time.Second {
		t.Errorf("LinkSettle(0) = %s, want 1 s", got)
	}
}

// TestCountTimeWaitToPort: nginx's table (fixture) holds TIME_WAIT towards
// its clients (local port 443) and towards WireMock (remote port 8080,
// 1F90): 5 in all, 3 of them upstream; the listener and the established
// upstream connection do not count. A remote address without a port is
// an error, not a zero.
func TestCountTimeWaitToPort(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "scenarios", "proc", "net-tcp-nginx.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, up, err := CountTimeWaitToPort(f, 8080)
	if err != nil || total != 5 || up != 3 {
		t.Errorf("CountTimeWaitToPort = %d, %d, %v; want 5, 3", total, up, err)
	}
	tcp6 := "  sl  local_address                         remote_address                        st tx_queue\n" +
		"   0: 0000000000000000FFFF00000D0016AC:8C10 0000000000000000FFFF0000030016AC:1F90 06 00000000:00000000\n"
	if total, up, err := CountTimeWaitToPort(strings.NewReader(tcp6), 8080); err != nil || total != 1 || up != 1 {
		t.Errorf("tcp6 table (remote_address): %d, %d, %v; want 1, 1", total, up, err)
	}
	head := "  sl  local_address rem_address   st tx_queue\n"
	for name, in := range map[string]string{
		"empty":      "",
		"bad header": "sl local st\n",
		"short row":  head + "   1: 0D0016AC:01BB\n",
		"no port":    head + "   1: 0D0016AC:01BB 0E0016AC 06 00000000:00000000\n",
		"bad hex":    head + "   1: 0D0016AC:01BB 0E0016AC:ZZZZ 06 00000000:00000000\n",
	} {
		if _, _, err := CountTimeWaitToPort(strings.NewReader(in), 8080); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
