package scale

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

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
)

// TCPOpens are a network namespace's TCP connection counters
// (/proc/<pid>/net/snmp, "Tcp:" ActiveOpens and PassiveOpens): the
// connections its processes opened (connect) and accepted since the
// namespace was made.
type TCPOpens struct {
	Active, Passive int64
}

// errNoTCPLine is ReadTCPOpens's error for a table without the Tcp lines.
var errNoTCPLine = errors.New("no Tcp: header and value lines")

// ReadTCPOpens reads ActiveOpens and PassiveOpens from a /proc/net/snmp
// table (a "Tcp:" line of names, then one of values). Errors: the lines
// are missing or a value is not a number.
func ReadTCPOpens(r io.Reader) (TCPOpens, error) {
	sc := bufio.NewScanner(r)
	var names []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "Tcp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		var o TCPOpens
		found := 0
		for i, n := range names {
			if i >= len(f) || (n != "ActiveOpens" && n != "PassiveOpens") {
				continue
			}
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return TCPOpens{}, fmt.Errorf("read tcp opens: %s %q: %w", n, f[i], err)
			}
			if n == "ActiveOpens" {
				o.Active = v
			} else {
				o.Passive = v
			}
			found++
		}
		if found != 2 {
			return TCPOpens{}, fmt.Errorf("read tcp opens: %w", errNoTCPLine)
		}
		return o, nil
	}
	if err := sc.Err(); err != nil {
		return TCPOpens{}, fmt.Errorf("read tcp opens: %w", err)
	}
	return TCPOpens{}, fmt.Errorf("read tcp opens: %w", errNoTCPLine)
}

// containerTCPOpens reads the TCP counters of a running container's
// network namespace (its main process's /proc/<pid>/net/snmp, from the
// host). Errors: the container is not running, the table does not read.
func containerTCPOpens(ctx context.Context, id string) (TCPOpens, error) {
	pid, err := bench.ContainerPID(ctx, id)
	if err != nil {
		return TCPOpens{}, err
	}
	if pid <= 0 {
		return TCPOpens{}, fmt.Errorf("read tcp opens: container %.12s is not running", id)
	}
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "net", "snmp"))
	if err != nil {
		return TCPOpens{}, fmt.Errorf("read tcp opens: %w", err)
	}
	defer f.Close()
	return ReadTCPOpens(f)
}
