package vendorapi

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// TestDefaultDialerKeepAlive: without Config.Dial, the transport dials
// with TCP keep-alive probes after 30 s idle, as net/http's
// DefaultTransport does (Go's net.Dialer default would be 15 s).
func TestDefaultDialerKeepAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := Config{}.withDefaults().dialContext()(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var idle, intvl int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		idle, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
		if gerr == nil {
			intvl, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL)
		}
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	t.Logf("TCP_KEEPIDLE %d s, TCP_KEEPINTVL %d s", idle, intvl)
	if idle != 30 {
		t.Errorf("TCP_KEEPIDLE %d s; want 30", idle)
	}
}
