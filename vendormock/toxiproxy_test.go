package vendormock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

func TestSplitRTT(t *testing.T) {
	for _, tc := range []struct{ rtt, down, up int }{
		{0, 0, 0}, {1, 0, 1}, {3, 1, 2}, {10, 5, 5}, {11, 5, 6},
	} {
		down, up := SplitRTT(tc.rtt)
		if down != tc.down || up != tc.up || down+up != tc.rtt {
			t.Errorf("SplitRTT(%d) = %d down + %d up, want %d + %d", tc.rtt, down, up, tc.down, tc.up)
		}
	}
}

// fakeToxiproxy is a Toxiproxy API for one proxy, ProxyName, that keeps
// its toxics in order and records every toxic POSTed to it. Toxics of a
// type in reject are refused with 400, as a server without that toxic
// type answers.
type fakeToxiproxy struct {
	mu     sync.Mutex
	toxics []toxiproxy.Toxic
	added  []toxiproxy.Toxic
	reject map[string]bool
}

func (f *fakeToxiproxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	base := "/proxies/" + ProxyName
	switch {
	case r.Method == http.MethodGet && r.URL.Path == base:
		_ = json.NewEncoder(w).Encode(map[string]any{"name": ProxyName, "listen": "0.0.0.0:443", "upstream": "nginx:443", "enabled": true, "toxics": f.toxics})
	case r.Method == http.MethodGet && r.URL.Path == base+"/toxics":
		_ = json.NewEncoder(w).Encode(f.toxics)
	case r.Method == http.MethodPost && r.URL.Path == base+"/toxics":
		var t toxiproxy.Toxic
		if err := json.NewDecoder(r.Body).Decode(&t); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if f.reject[t.Type] {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": "bad request: invalid toxic type: " + t.Type, "status": 400})
			return
		}
		f.toxics = append(f.toxics, t)
		f.added = append(f.added, t)
		_ = json.NewEncoder(w).Encode(t)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, base+"/toxics/"):
		name := strings.TrimPrefix(r.URL.Path, base+"/toxics/")
		for i, t := range f.toxics {
			if t.Name == name {
				f.toxics = append(f.toxics[:i], f.toxics[i+1:]...)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		http.Error(w, `{"error":"toxic not found","status":404}`, http.StatusNotFound)
	default:
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotImplemented)
	}
}

// fakeStack returns a Stack whose vendor proxy is served by f.
func fakeStack(t *testing.T, f *fakeToxiproxy) *Stack {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p, err := toxiproxy.NewClient(srv.URL).Proxy(ProxyName)
	if err != nil {
		t.Fatalf("fake toxiproxy: %v", err)
	}
	return &Stack{proxy: p, log: io.Discard}
}

// toxicSummary is "name type stream toxicity attr=value..." per toxic, in
// chain order, numbers as JSON gives them.
func toxicSummary(ts []toxiproxy.Toxic) []string {
	var out []string
	for _, t := range ts {
		keys := make([]string, 0, len(t.Attributes))
		for k := range t.Attributes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		s := fmt.Sprintf("%s %s %s %g", t.Name, t.Type, t.Stream, t.Toxicity)
		for _, k := range keys {
			s += fmt.Sprintf(" %s=%v", k, t.Attributes[k])
		}
		out = append(out, s)
	}
	return out
}

func TestSetRTTToxics(t *testing.T) {
	hs := ToxicHandshake + " handshake upstream 1 rtt_ms=10"
	down := ToxicLatencyDown + " latency downstream 1 jitter=0 latency=5"
	up := ToxicLatencyUp + " latency upstream 1 jitter=0 latency=5"
	for _, tc := range []struct {
		name  string
		rttMS int
		opts  []RTTOption
		want  []string // the proxy's toxics afterwards, in chain order
	}{
		{"default: latency only, no handshake", 10, nil, []string{down, up}},
		{"handshake off", 10, []RTTOption{WithTCPHandshake(false)}, []string{down, up}},
		{"handshake on: the hold first, then the latency", 10, []RTTOption{WithTCPHandshake(true)}, []string{hs, down, up}},
		{"rtt 0 with handshake on: no toxics", 0, []RTTOption{WithTCPHandshake(true)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The proxy starts with the toxics of an earlier SetRTT (handshake
			// on, 3 ms) and a fault's toxic, which SetRTT must keep.
			f := &fakeToxiproxy{toxics: []toxiproxy.Toxic{
				{Name: ToxicHandshake, Type: HandshakeToxicType, Stream: "upstream", Toxicity: 1, Attributes: toxiproxy.Attributes{"rtt_ms": 3}},
				{Name: ToxicLatencyUp, Type: "latency", Stream: "upstream", Toxicity: 1, Attributes: toxiproxy.Attributes{"latency": 2, "jitter": 0}},
				{Name: "fault_reset", Type: "reset_peer", Stream: "downstream", Toxicity: 1, Attributes: toxiproxy.Attributes{"timeout": 0}},
			}}
			s := fakeStack(t, f)
			if err := s.SetRTT(context.Background(), tc.rttMS, tc.opts...); err != nil {
				t.Fatalf("SetRTT: %v", err)
			}
			want := append([]string{"fault_reset reset_peer downstream 1 timeout=0"}, tc.want...)
			if got := toxicSummary(f.toxics); !reflect.DeepEqual(got, want) {
				t.Errorf("toxics after SetRTT(%d):\n got %q\nwant %q", tc.rttMS, got, want)
			}
		})
	}
}

func TestSetRTTHandshakeMissing(t *testing.T) {
	f := &fakeToxiproxy{reject: map[string]bool{HandshakeToxicType: true}}
	s := fakeStack(t, f)
	err := s.SetRTT(context.Background(), 10, WithTCPHandshake(true))
	if err == nil {
		t.Fatal("SetRTT with the handshake toxic on a server without it: nil error")
	}
	for _, want := range []string{ToxicHandshake, "ensure-images.sh", "invalid toxic type"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name %q", err, want)
		}
	}
	if len(f.added) != 0 {
		t.Errorf("toxics added after the failure: %q; want none (no latency without the asked-for handshake)", toxicSummary(f.added))
	}
	// Negative control: the same server serves the default (off) fine.
	if err := s.SetRTT(context.Background(), 10); err != nil {
		t.Errorf("SetRTT with the handshake off: %v", err)
	}
}
