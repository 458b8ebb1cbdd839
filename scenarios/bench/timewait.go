package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/moby/client"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/testcontainers/testcontainers-go"
)

// tcpStateTimeWait is TIME_WAIT's code in the "st" column of
// /proc/net/tcp and /proc/net/tcp6 (include/net/tcp_states.h: TCP_TIME_WAIT = 6).
const tcpStateTimeWait = "06"

// ErrProcNetTCP: a /proc/net/tcp file that does not have its header or
// columns.
var ErrProcNetTCP = errors.New("not a /proc/net/tcp table")

// CountTimeWait counts the sockets in TIME_WAIT in a /proc/net/tcp or
// /proc/net/tcp6 table: the rows whose 4th column ("st") is 06. The side
// that closes a TCP connection first keeps it in TIME_WAIT for 60 s
// (docs/studies.md, study A, "Pitfalls named": in fresh mode that is the
// client). Errors: the header is missing, or a row has fewer than 4
// columns (wrapping ErrProcNetTCP), or reading fails.
func CountTimeWait(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return 0, fmt.Errorf("read tcp table: %w", err)
		}
		return 0, fmt.Errorf("read tcp table: %w: empty", ErrProcNetTCP)
	}
	head := strings.Fields(sc.Text())
	if len(head) < 4 || head[0] != "sl" || head[3] != "st" {
		return 0, fmt.Errorf("read tcp table: %w: header %q", ErrProcNetTCP, sc.Text())
	}
	n, line := 0, 1
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 {
			return 0, fmt.Errorf("read tcp table: %w: line %d has %d columns", ErrProcNetTCP, line, len(f))
		}
		if f[3] == tcpStateTimeWait {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read tcp table: %w", err)
	}
	return n, nil
}

// CountTimeWaitOfPID counts TIME_WAIT sockets in the network namespace of
// process pid, read from the host: procRoot/<pid>/net/tcp and tcp6
// (procRoot is "/proc"; a missing tcp6 counts 0). A FROM scratch container
// has no shell to read its own table, but the host sees it through its
// PID. Errors: the process is gone or a table does not parse.
func CountTimeWaitOfPID(procRoot string, pid int) (int, error) {
	total := 0
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join(procRoot, strconv.Itoa(pid), "net", name))
		if err != nil {
			if name == "tcp6" && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return 0, fmt.Errorf("count time_wait: %w", err)
		}
		n, err := CountTimeWait(f)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("count time_wait in %s: %w", name, err)
		}
		total += n
	}
	return total, nil
}

// ContainerPID returns the host PID of a running container's main process
// (docker inspect .State.Pid), 0 when it is not running.
func ContainerPID(ctx context.Context, id string) (int, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return 0, fmt.Errorf("container pid: %w", err)
	}
	defer cli.Close()
	info, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return 0, fmt.Errorf("container pid: inspect: %w", err)
	}
	if info.Container.State == nil {
		return 0, nil
	}
	return info.Container.State.Pid, nil
}

// SampleTimeWait returns the TIME_WAIT counts of the worker container id
// and the tick that fills them (call it at every progress tick); nil
// counts and a nil tick (nothing sampled) when the container's PID cannot
// be read, which is logged to w.
func SampleTimeWait(ctx context.Context, w io.Writer, id string) (*results.TimeWait, func()) {
	pid, err := ContainerPID(ctx, id)
	if err != nil || pid <= 0 {
		logf(w, "TIME_WAIT not sampled: worker pid %d: %v", pid, err)
		return nil, nil
	}
	tw := &results.TimeWait{}
	return tw, func() {
		if n, err := CountTimeWaitOfPID("/proc", pid); err == nil {
			tw.Add(n) // the process is gone once the worker exited: keep the last sample
		}
	}
}

// CountTimeWaitToPort counts the TIME_WAIT sockets of a /proc/net/tcp or
// tcp6 table, and among them those whose remote port is port (the
// rem_address column "IP:PORT", PORT in hex): nginx's TIME_WAIT towards
// WireMock (port 8080) apart from those towards its clients. Errors as
// CountTimeWait.
func CountTimeWaitToPort(r io.Reader, port int) (total, toPort int, err error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		return 0, 0, fmt.Errorf("read tcp table: %w: empty", ErrProcNetTCP)
	}
	head := strings.Fields(sc.Text())
	// tcp's header says rem_address, tcp6's remote_address.
	if len(head) < 4 || head[0] != "sl" || (head[2] != "rem_address" && head[2] != "remote_address") || head[3] != "st" {
		return 0, 0, fmt.Errorf("read tcp table: %w: header %q", ErrProcNetTCP, sc.Text())
	}
	for line := 2; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 {
			return 0, 0, fmt.Errorf("read tcp table: %w: line %d has %d columns", ErrProcNetTCP, line, len(f))
		}
		if f[3] != tcpStateTimeWait {
			continue
		}
		total++
		i := strings.LastIndexByte(f[2], ':')
		p, perr := strconv.ParseUint(f[2][i+1:], 16, 16)
		if i < 0 || perr != nil {
			return 0, 0, fmt.Errorf("read tcp table: %w: line %d remote address %q", ErrProcNetTCP, line, f[2])
		}
		if int(p) == port {
			toPort++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("read tcp table: %w", err)
	}
	return total, toPort, nil
}

// CountTimeWaitOfContainer counts TIME_WAIT sockets in a running
// container's network namespace (its main process's /proc/<pid>/net/tcp
// and tcp6, read from the host), in all and towards remote port port.
// Errors: the container is not running, a table does not parse.
func CountTimeWaitOfContainer(ctx context.Context, id string, port int) (total, toPort int, err error) {
	pid, err := ContainerPID(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	if pid <= 0 {
		return 0, 0, fmt.Errorf("count time_wait: container %.12s is not running", id)
	}
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "net", name))
		if err != nil {
			if name == "tcp6" && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return 0, 0, fmt.Errorf("count time_wait: %w", err)
		}
		t, p, err := CountTimeWaitToPort(f, port)
		f.Close()
		if err != nil {
			return 0, 0, fmt.Errorf("count time_wait in %s: %w", name, err)
		}
		total, toPort = total+t, toPort+p
	}
	return total, toPort, nil
}
