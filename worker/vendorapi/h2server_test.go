package vendorapi

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// A raw HTTP/2 server over TLS (ALPN h2), written with x/net/http2's
// Framer and hpack, for the stream faults an http.Server cannot be told to
// make: RST_STREAM after reading a request, GOAWAY below a request's
// stream, REFUSED_STREAM (RFC 9113 8.7; docs/outcomes.md).

// h2Fault is what the raw h2 server does to the FIRST message request of
// each refkey; later ones of that refkey are answered with success.
type h2Fault int

const (
	h2Answer        h2Fault = iota // answer success
	h2ResetProtocol                // read the whole body, then RST_STREAM(PROTOCOL_ERROR)
	h2GoAwayBelow                  // read it, then GOAWAY(last-stream-id below it, NO_ERROR) and close
	h2RefuseStream                 // read it, then RST_STREAM(REFUSED_STREAM)
	h2Hang                         // read it, answer nothing (the client gives up)
)

// h2Server counts, per refkey, the message requests whose body it read
// completely (bodies) and the ones it processed, that is answered with
// success (processed). A stream it refused or left above a GOAWAY's
// last-stream-id is read but not processed, as RFC 9113 8.7 promises; a
// stream it reset with PROTOCOL_ERROR after reading it counts as
// processed too: the client cannot know it was not.
type h2Server struct {
	raw   *rawServer
	fault h2Fault

	mu        sync.Mutex
	bodies    map[string]int
	processed map[string]int
	gotBody   chan string // refkey of every message body read, for tests that wait
}

func startH2(t testing.TB, fault h2Fault) *h2Server {
	t.Helper()
	s := &h2Server{fault: fault, bodies: map[string]int{}, processed: map[string]int{}, gotBody: make(chan string, 16)}
	s.raw = startRaw(t, func(_ *rawServer, c *net.TCPConn) { s.serve(c) })
	return s
}

func (s *h2Server) addr() string { return s.raw.addr() }

// counts returns how many bodies of refkey ref were read and processed.
func (s *h2Server) counts(ref string) (bodies, processed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[ref], s.processed[ref]
}

// h2Stream is one request being read.
type h2Stream struct {
	path, refkey string
	body         bytes.Buffer
}

func (s *h2Server) serve(c *net.TCPConn) {
	lab, _ := pkis(nil)
	tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{lab.leaf}, NextProtos: []string{"h2"}})
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil || tc.ConnectionState().NegotiatedProtocol != "h2" {
		return
	}
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(tc, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(tc, tc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		return
	}
	streams := map[uint32]*h2Stream{}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				fr.WritePing(true, f.Data)
			}
		case *http2.MetaHeadersFrame:
			st := &h2Stream{path: f.PseudoValue("path")}
			for _, hf := range f.RegularFields() {
				if hf.Name == "x-refkey" {
					st.refkey = hf.Value
				}
			}
			streams[f.StreamID] = st
			if f.StreamEnded() && !s.request(fr, f.StreamID, st) {
				return
			}
		case *http2.DataFrame:
			st := streams[f.StreamID]
			if st == nil {
				continue
			}
			st.body.Write(f.Data())
			if n := uint32(len(f.Data())); n > 0 {
				fr.WriteWindowUpdate(0, n)
				fr.WriteWindowUpdate(f.StreamID, n)
			}
			if f.StreamEnded() && !s.request(fr, f.StreamID, st) {
				return
			}
		}
	}
}

// request handles a request whose body was read completely and reports
// whether to keep the connection.
func (s *h2Server) request(fr *http2.Framer, id uint32, st *h2Stream) bool {
	if st.path == TokenPath {
		body := fmt.Sprintf(`{"accesstoken":"h2-tok","type":"Bearer","expired":%q}`, time.Now().Add(time.Hour).Format(time.RFC3339))
		s.respond(fr, id, body)
		return true
	}
	s.mu.Lock()
	s.bodies[st.refkey]++
	first := s.bodies[st.refkey] == 1
	fault := h2Answer
	if first {
		fault = s.fault
	}
	if fault == h2Answer || fault == h2ResetProtocol {
		s.processed[st.refkey]++
	}
	s.mu.Unlock()
	select {
	case s.gotBody <- st.refkey:
	default:
	}
	switch fault {
	case h2ResetProtocol:
		fr.WriteRSTStream(id, http2.ErrCodeProtocol)
	case h2RefuseStream:
		fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
	case h2GoAwayBelow:
		last := uint32(0) // the client's previous stream, 0 if none
		if id > 2 {
			last = id - 2
		}
		fr.WriteGoAway(last, http2.ErrCodeNo, nil)
		return false
	case h2Hang:
	default:
		s.respond(fr, id, fmt.Sprintf(`{"code":%q,"description":"success","refkey":%q,"messagekey":"mk-h2"}`, SuccessCode, st.refkey))
	}
	return true
}

// respond answers stream id with 200 and a JSON body.
func (s *h2Server) respond(fr *http2.Framer, id uint32, body string) {
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/json"})
	enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(body))})
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
	fr.WriteData(id, true, []byte(body))
}
