// Package handshake is a Toxiproxy toxic that makes a new connection cost
// the TCP handshake's round trip.
//
// Toxiproxy delays data, not the TCP handshake: a client's connect()
// through it returns at once, so a new connection costs one RTT less than
// on a real link, where SYN / SYN-ACK takes one RTT before the client may
// send its first byte (docs/environment.md, "Toxiproxy"). The handshake
// toxic holds the data a client sends on a new connection until RTTMS after
// Toxiproxy accepted the connection; the toxics after it in the chain (the
// lab's latency toxics) then apply as usual. Once that moment has passed,
// data flows through untouched, so an established (keep-alive) connection
// pays nothing.
//
// Importing the package registers the toxic under the type name Type.
package handshake

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Type is the toxic's type name in the Toxiproxy API.
const Type = "handshake"

// Toxic holds a new connection's first data until RTTMS after the
// connection was accepted. Add it on the upstream stream (client -> server)
// before the latency toxics, so the latency adds to the hold instead of
// overlapping it. RTTMS <= 0 passes everything through.
//
// The moment of acceptance is when Toxiproxy creates the toxic's
// per-connection state: at accept for a connection opened while the toxic
// exists, at the toxic's creation for a connection already open then (so
// add the toxic before the connections it should shape; an update of
// rtt_ms keeps each connection's moment).
type Toxic struct {
	RTTMS int64 `json:"rtt_ms"` // the round trip a new connection waits, in ms
}

// State is the per-connection state: when the connection was accepted.
type State struct {
	Accepted time.Time
}

var (
	_ toxics.Toxic         = (*Toxic)(nil)
	_ toxics.StatefulToxic = (*Toxic)(nil)
	_ toxics.BufferedToxic = (*Toxic)(nil)
)

// NewState records the moment the connection was accepted.
func (t *Toxic) NewState() interface{} {
	return &State{Accepted: time.Now()}
}

// GetBufferSize lets the client's data queue behind a held chunk (in
// chunks, as Toxiproxy's latency toxic), so the proxy's reader is not
// blocked by the hold.
func (t *Toxic) GetBufferSize() int { return 1024 }

// Pipe passes chunks through; a chunk that arrived before the connection's
// release moment (accepted + RTTMS) waits until that moment and leaves with
// that moment as its timestamp, so the next toxic counts its own delay from
// there. On an interrupt the chunk being held is passed on at once (no data
// is dropped) and Pipe returns.
func (t *Toxic) Pipe(stub *toxics.ToxicStub) {
	release := time.Time{}
	if st, ok := stub.State.(*State); ok && t.RTTMS > 0 {
		release = st.Accepted.Add(time.Duration(t.RTTMS) * time.Millisecond)
	}
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if wait := time.Until(release); wait > 0 {
				timer := time.NewTimer(wait)
				select {
				case <-timer.C:
				case <-stub.Interrupt:
					timer.Stop()
					stub.Output <- c
					return
				}
			}
			if c.Timestamp.Before(release) {
				c.Timestamp = release
			}
			stub.Output <- c
		}
	}
}

func init() {
	toxics.Register(Type, new(Toxic))
}
