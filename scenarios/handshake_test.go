package scenarios

import (
	"errors"
	"strings"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// fakeProxy records the toxics of a proxy in the order they were added.
type fakeProxy struct {
	toxics toxiproxy.Toxics
	addErr error
}

func (p *fakeProxy) Toxics() (toxiproxy.Toxics, error) { return p.toxics, nil }

func (p *fakeProxy) AddToxic(name, typeName, stream string, toxicity float32, attrs toxiproxy.Attributes) (*toxiproxy.Toxic, error) {
	if p.addErr != nil {
		return nil, p.addErr
	}
	t := toxiproxy.Toxic{Name: name, Type: typeName, Stream: stream, Toxicity: toxicity, Attributes: attrs}
	p.toxics = append(p.toxics, t)
	return &t, nil
}

func (p *fakeProxy) RemoveToxic(name string) error {
	for i, t := range p.toxics {
		if t.Name == name {
			p.toxics = append(p.toxics[:i], p.toxics[i+1:]...)
			return nil
		}
	}
	return errors.New("toxic not found")
}

func TestSetHandshake(t *testing.T) {
	p := &fakeProxy{toxics: toxiproxy.Toxics{{Name: handshakeToxicName, Type: handshakeToxicType, Attributes: toxiproxy.Attributes{"rtt_ms": 3}}}}
	if err := setHandshake(p, 150); err != nil {
		t.Fatalf("setHandshake: %v", err)
	}
	if len(p.toxics) != 1 {
		t.Fatalf("toxics %+v, want the old handshake toxic replaced by one", p.toxics)
	}
	got := p.toxics[0]
	if got.Type != "handshake" || got.Stream != "upstream" || got.Attributes["rtt_ms"] != 150 {
		t.Errorf("toxic %+v, want type handshake, upstream, rtt_ms 150", got)
	}

	stock := &fakeProxy{addErr: errors.New("Bad toxic type: handshake")}
	err := setHandshake(stock, 10)
	if err == nil || !strings.Contains(err.Error(), "lab's own Toxiproxy image") {
		t.Errorf("stock Toxiproxy: err %v, want one naming the lab's own image", err)
	}
}
