package bench

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/cgroup"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// sendsAt returns POST /send lines ending at t0 + each offset (ms).
func sendsAt(t0 time.Time, offsetsMS ...int) []vendormock.AccessEntry {
	var out []vendormock.AccessEntry
	for _, ms := range offsetsMS {
		out = append(out, vendormock.AccessEntry{Method: "POST", Path: "/send", Time: t0.Add(time.Duration(ms) * time.Millisecond)})
	}
	return out
}

func TestCgroupCPUPerSend(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	// 2 ms of CPU per 10 ms of wall time, sampled every 100 ms from t0.
	var samples []CPUSample
	for i := 0; i <= 20; i++ {
		samples = append(samples, CPUSample{t: t0.Add(time.Duration(i) * 100 * time.Millisecond), ns: int64(i) * 20e6})
	}
	// A token call and a GET in the log never count as sends.
	other := []vendormock.AccessEntry{{Method: "POST", Path: "/token", Time: t0.Add(500 * time.Millisecond)}, {Method: "GET", Path: "/send", Time: t0.Add(700 * time.Millisecond)}}
	cases := []struct {
		name    string
		entries []vendormock.AccessEntry
		warmup  int
		want    float64
	}{
		// warm-up ends at 150 ms; 4 sends end by 950 ms: 800 ms of wall time = 160 ms CPU over 4 sends.
		{"warm-up excluded", append(sendsAt(t0, 50, 150, 350, 550, 750, 950), other...), 2, 40},
		// No warm-up: the first send opens the window.
		{"no warm-up", sendsAt(t0, 100, 300, 500), 0, 40},
		// The container exited at 2,000 ms: the send logged after it does not count.
		{"container gone before the last line", sendsAt(t0, 1000, 1500, 2000, 2100), 1, 100},
		{"no send after the warm-up", sendsAt(t0, 100, 200), 2, -1},
		{"window before the first sample", sendsAt(t0, -100, 300), 1, -1},
	}
	for _, c := range cases {
		got := CgroupCPUPerSend(samples, c.entries, "/send", c.warmup)
		if math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: got %.3f ms per send, want %.3f", c.name, got, c.want)
		}
	}
	if got := CgroupCPUPerSend(samples[:1], sendsAt(t0, 0, 50, 90), "/send", 1); got != -1 {
		t.Errorf("one sample: got %.3f, want -1 (not seen)", got)
	}
}

// TestSampleWorkerCPU reads a planted cgroup file (cgroup v1, cgroupfs
// driver) while it grows, then loses it as a stopped container does.
func TestSampleWorkerCPU(t *testing.T) {
	root := t.TempDir()
	id := "0123456789abcdef"
	dir := filepath.Join(root, "cpuacct", "docker", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "cpuacct.usage")
	// Written whole, as the kernel shows a cgroup file: a truncate then
	// write could be read empty between the two, which ends the sampler
	// (it takes an unreadable file for a container gone); CI under load
	// saw that once.
	write := func(ns int64) {
		if err := os.WriteFile(file+".tmp", []byte(strconv.FormatInt(ns, 10)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(file+".tmp", file); err != nil {
			t.Fatal(err)
		}
	}
	old := cgroupHost
	cgroupHost = cgroup.FS{Root: root, Proc: t.TempDir()}
	t.Cleanup(func() { cgroupHost = old })
	write(1000)
	w := SampleWorkerCPU(context.Background(), id)
	time.Sleep(3 * WorkerCPUInterval)
	write(5000)
	time.Sleep(3 * WorkerCPUInterval)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * WorkerCPUInterval)
	samples, err := w.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if len(samples) < 2 || samples[0].ns != 1000 || samples[len(samples)-1].ns != 5000 {
		t.Fatalf("samples %v: want the first at 1000 ns and the last at 5000 ns", samples)
	}

	// A container the sampler can never read says why.
	_, err = SampleWorkerCPU(context.Background(), "missing").Finish()
	if err == nil {
		t.Error("an unreadable container: no error")
	}
}
