package fault

import (
	"context"
	"os"
	"path/filepath"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// StreamResetSpec is the server.stream_reset section: the lab's
// stream-reset proxy (vendormock.StartStreamReset) between Toxiproxy and
// nginx for the whole scenario. It resets every Every-th send POST that
// WireMock accepted with RST_STREAM(PROTOCOL_ERROR): the vendor has the
// message, the worker cannot know. nginx cannot make this reset (it
// resets with INTERNAL_ERROR); see vendormock/streamreset.
type StreamResetSpec struct {
	Every int `yaml:"every"` // reset every Nth send, 1..100
}

// checkStreamReset validates server.stream_reset and
// client.unsafe_allow_transport_replay.
func (sc *Scenario) checkStreamReset(bad func(string, string, ...any)) {
	sr := sc.Server.StreamReset
	if sr == nil {
		return
	}
	if sr.Every < 1 || sr.Every > 100 {
		bad("server.stream_reset.every", "%d: want 1..100", sr.Every)
	}
	if sc.Client.HTTPVersion != "2" {
		bad("server.stream_reset", "needs client.http_version \"2\": an HTTP/1.1 request has no stream to reset")
	}
	if sc.Kind == KindIdleRace {
		bad("server.stream_reset", "not for kind %s", KindIdleRace)
	}
}

// startStreamReset puts the stream-reset proxy into the vendor path when
// the scenario asks for it, and queues its removal (the vendor path back
// to nginx) with the scenario's undo list, so it goes whatever happens;
// its log is saved in the scenario's folder as streamreset.log.
func (s *scenarioRun) startStreamReset(ctx context.Context) error {
	sr := s.sc.Server.StreamReset
	if sr == nil {
		return nil
	}
	p, err := s.r.Stack.StartStreamReset(ctx, vendormock.StreamResetOptions{Image: s.r.opts.Images.StreamReset, Every: sr.Every})
	if err != nil {
		return err
	}
	s.undo.push("stream_reset", vendormock.AliasStreamReset, "route the vendor path back to nginx", func(ctx context.Context) error {
		if logs, err := p.Logs(ctx); err == nil {
			_ = os.WriteFile(filepath.Join(s.dir, "streamreset.log"), []byte(logs), 0o644)
		}
		return p.Stop(ctx)
	})
	return nil
}
