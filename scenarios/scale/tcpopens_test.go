package scale

import (
	"errors"
	"strings"
	"testing"
)

// snmp is a /proc/net/snmp table as Linux 6.x writes it (Ip and Icmp
// lines cut short).
const snmp = `Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 3340170
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 86193 50538 4776 35031 39 3284543 3070488 1499 0 28928 0
Udp: InDatagrams NoPorts
Udp: 5 0
`

func TestReadTCPOpens(t *testing.T) {
	got, err := ReadTCPOpens(strings.NewReader(snmp))
	if err != nil {
		t.Fatal(err)
	}
	if want := (TCPOpens{Active: 86193, Passive: 50538}); got != want {
		t.Errorf("ReadTCPOpens = %+v, want %+v", got, want)
	}
	for name, table := range map[string]string{
		"no Tcp lines":  "Ip: Forwarding\nIp: 1\n",
		"header only":   "Tcp: ActiveOpens PassiveOpens\n",
		"not a number":  "Tcp: ActiveOpens PassiveOpens\nTcp: x 1\n",
		"missing field": "Tcp: RtoAlgorithm ActiveOpens\nTcp: 1 2\n",
	} {
		if _, err := ReadTCPOpens(strings.NewReader(table)); err == nil {
			t.Errorf("%s: ReadTCPOpens read %q without an error", name, table)
		} else if name != "not a number" && !errors.Is(err, errNoTCPLine) {
			t.Errorf("%s: error %v, want errNoTCPLine", name, err)
		}
	}
}

// TestUpstreamOpensColumn: the CPU-by-container table gives nginx's new
// upstream connections per send (warm-up included), "-" when unread.
func TestUpstreamOpensColumn(t *testing.T) {
	n := int64(2550)
	with := Point{Series: SeriesGrid, Driver: "worker", Workers: 1, Concurrency: 128, Count: 5000, Warmup: 100, SendsPerS: 500,
		Containers: []ContainerCPU{{Name: "nginx", Role: "nginx", Cores: 0.5}}, UpstreamOpens: &n}
	without := with
	without.Driver, without.UpstreamOpens = "direct", nil
	out := cpuPerSendSection([]Point{with, without})
	if !strings.Contains(out, "| 0.500 |\n") {
		t.Errorf("no 2550/5100 = 0.500 connections per send at the end of the worker's row:\n%s", out)
	}
	if !strings.Contains(out, "| - |\n") {
		t.Errorf("no '-' for the point without a count:\n%s", out)
	}
}
