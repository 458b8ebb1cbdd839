package handshake_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/notifier-lab/notifier-lab/vendormock/images/toxiproxy/server/handshake"
)

// pipe runs the toxic on a fresh stub whose connection was accepted at
// accepted, and returns the stub's input and output channels and a channel
// closed when Pipe returns.
func pipe(t *testing.T, toxic *handshake.Toxic, accepted time.Time) (chan<- *stream.StreamChunk, <-chan *stream.StreamChunk, *toxics.ToxicStub, <-chan struct{}) {
	t.Helper()
	in := make(chan *stream.StreamChunk, 16)
	out := make(chan *stream.StreamChunk, 16)
	stub := toxics.NewToxicStub(in, out)
	stub.State = &handshake.State{Accepted: accepted}
	done := make(chan struct{})
	go func() {
		defer close(done)
		stub.Run(&toxics.ToxicWrapper{Toxic: toxic, Type: handshake.Type, Toxicity: 1})
	}()
	return in, out, stub, done
}

// receive waits up to 2 s for a chunk on out (far below the 10 s hold of
// the interrupt test).
func receive(t *testing.T, out <-chan *stream.StreamChunk) *stream.StreamChunk {
	t.Helper()
	select {
	case c := <-out:
		return c
	case <-time.After(2 * time.Second):
		t.Fatal("no chunk out of the toxic within 2 s")
		return nil
	}
}

func TestPipe(t *testing.T) {
	const rtt = 60 * time.Millisecond
	for _, tc := range []struct {
		name     string
		rttMS    int64
		age      time.Duration // how long ago the connection was accepted
		wantHeld bool
	}{
		{"new connection waits one RTT", 60, 0, true},
		{"connection accepted half an RTT ago waits the rest", 60, rtt / 2, true},
		{"connection older than one RTT passes at once", 60, time.Second, false},
		{"rtt_ms 0 passes at once", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accepted := time.Now().Add(-tc.age)
			release := accepted.Add(time.Duration(tc.rttMS) * time.Millisecond)
			in, out, stub, done := pipe(t, &handshake.Toxic{RTTMS: tc.rttMS}, accepted)
			sent := time.Now()
			in <- &stream.StreamChunk{Data: []byte("first"), Timestamp: sent}
			in <- &stream.StreamChunk{Data: []byte("second"), Timestamp: sent}
			first := receive(t, out)
			left := time.Now()
			second := receive(t, out)
			if string(first.Data) != "first" || string(second.Data) != "second" {
				t.Fatalf("chunks out = %q, %q; want first, second in order", first.Data, second.Data)
			}
			if tc.wantHeld {
				if left.Before(release) {
					t.Errorf("first chunk left %s before the release moment (accepted + %d ms)", release.Sub(left), tc.rttMS)
				}
				if !first.Timestamp.Equal(release) || !second.Timestamp.Equal(release) {
					t.Errorf("timestamps = %s, %s; want the release moment %s (the next toxic counts from there)",
						first.Timestamp, second.Timestamp, release)
				}
			} else {
				if d := left.Sub(sent); d > rtt/2 {
					t.Errorf("chunk held %s, want it passed at once", d)
				}
				if !first.Timestamp.Equal(sent) {
					t.Errorf("timestamp changed to %s, want %s unchanged", first.Timestamp, sent)
				}
			}
			close(in)
			select {
			case _, open := <-out:
				if open {
					t.Error("output not closed after the end of the input")
				}
			case <-time.After(2 * time.Second):
				t.Fatal("output not closed within 2 s of the end of the input")
			}
			<-done
			if !stub.Closed() {
				t.Error("stub not closed at the end of the input")
			}
		})
	}
}

func TestPipeInterruptPassesHeldChunk(t *testing.T) {
	in, out, stub, done := pipe(t, &handshake.Toxic{RTTMS: 10_000}, time.Now())
	in <- &stream.StreamChunk{Data: []byte("held"), Timestamp: time.Now()}
	time.Sleep(20 * time.Millisecond) // let Pipe take the chunk and start holding it
	interrupted := make(chan bool, 1)
	go func() { interrupted <- stub.InterruptToxic() }()
	if c := receive(t, out); string(c.Data) != "held" {
		t.Fatalf("chunk out = %q, want the held chunk", c.Data)
	}
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Pipe did not return within 2 s of an interrupt")
	}
	if !<-interrupted {
		t.Error("InterruptToxic = false, want true")
	}
}

// echoServer accepts connections on loopback and echoes each line back.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// newProxy starts a Toxiproxy proxy (the server's own code) in front of
// upstream and adds the toxics given as API JSON bodies, in order.
func newProxy(t *testing.T, upstream string, toxicJSON ...string) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "handshake_test", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	for _, body := range toxicJSON {
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			t.Fatalf("add toxic %s: %v", body, err)
		}
	}
	return p
}

// roundTrips dials the proxy and returns the time from dial to the first
// echoed line, and the round trip of a second line on the same connection.
func roundTrips(t *testing.T, addr string) (first, second time.Duration) {
	t.Helper()
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	echo := func(line string) {
		if _, err := io.WriteString(c, line+"\n"); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || got != line+"\n" {
			t.Fatalf("echo = %q, %v; want %q", got, err, line)
		}
	}
	echo("one")
	first = time.Since(start)
	start = time.Now()
	echo("two")
	return first, time.Since(start)
}

// TestThroughProxy runs the toxic in a real Toxiproxy proxy, added by its
// API type name and rtt_ms attribute as the lab adds it, in front of the
// lab's latency toxics.
func TestThroughProxy(t *testing.T) {
	const rttMS = 80
	rtt := time.Duration(rttMS) * time.Millisecond
	latency := `{"name":"latency_upstream","type":"latency","stream":"upstream","attributes":{"latency":40}}`
	hs := `{"name":"handshake","type":"handshake","stream":"upstream","attributes":{"rtt_ms":80}}`
	for _, tc := range []struct {
		name      string
		toxics    []string
		wantFirst time.Duration // lower bound of dial to first echo
	}{
		{"handshake then latency: a new connection pays RTT + latency", []string{hs, latency}, rtt + 40*time.Millisecond},
		{"latency only (negative control): a new connection pays the latency", []string{latency}, 40 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, echoServer(t), tc.toxics...)
			first, second := roundTrips(t, p.Listen)
			if first < tc.wantFirst {
				t.Errorf("dial to first echo = %s, want >= %s", first, tc.wantFirst)
			}
			if max := tc.wantFirst + 60*time.Millisecond; first > max {
				t.Errorf("dial to first echo = %s, want < %s (the hold must not stack up)", first, max)
			}
			if second < 40*time.Millisecond || second >= rtt {
				t.Errorf("second round trip on the same connection = %s, want the latency only (40 ms .. %s)", second, rtt)
			}
		})
	}
}

func TestRegistered(t *testing.T) {
	w := &toxics.ToxicWrapper{Type: handshake.Type}
	toxic, ok := toxics.New(w).(*handshake.Toxic)
	if !ok {
		t.Fatalf("toxics.New(%q) = %T, want *handshake.Toxic", handshake.Type, toxics.New(w))
	}
	if _, ok := interface{}(toxic).(toxics.StatefulToxic); !ok {
		t.Error("the toxic is not stateful: it would not know when a connection was accepted")
	}
}
