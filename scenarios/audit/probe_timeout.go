package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// ResponseProbeDelay is how long the vendor holds the response timeout
// probe's send before answering: below nginx's proxy_read_timeout (60 s
// in both profiles' nginx.conf.tmpl), so a client that waits gets WireMock's
// answer, late, and one that gives up shows as nginx's 499.
const ResponseProbeDelay = 45 * time.Second

// ResponseMeasure is the response timeout probe's result.
type ResponseMeasure struct {
	DelayS float64 `json:"delay_s"` // how long the vendor held the send
	// Status is nginx's status for the first send: 499 = the client
	// closed the connection before the answer; 0 = not seen.
	Status int `json:"status"`
	// WaitedS is nginx's $request_time of that send: how long the client
	// waited, s (-1 = not seen).
	WaitedS float64 `json:"waited_s"`
	Unknown string  `json:"unknown,omitempty"`
}

// AnalyseResponse reads the first send in the probe's nginx lines.
func AnalyseResponse(entries []vendormock.AccessEntry, sendPath string, delay time.Duration) ResponseMeasure {
	m := ResponseMeasure{DelayS: delay.Seconds(), WaitedS: -1}
	s := sendEntries(entries, sendPath)
	if len(s) == 0 {
		m.Unknown = "no send in nginx's log"
		return m
	}
	m.Status, m.WaitedS = s[0].Status, s[0].RequestTime
	return m
}

// Measured says the result in words.
func (m ResponseMeasure) Measured() string {
	switch {
	case m.Unknown != "":
		return "unknown (" + m.Unknown + ")"
	case m.Status == 499:
		return fmt.Sprintf("gives up after %s s (nginx 499: the client closed the connection; the vendor held it %s s)", fmtS(m.WaitedS), fmtS(m.DelayS))
	case m.WaitedS >= m.DelayS-0.5:
		return fmt.Sprintf("no limit within %s s (waited for the answer: nginx %d after %s s)", fmtS(m.DelayS), m.Status, fmtS(m.WaitedS))
	}
	return fmt.Sprintf("nginx %d after %s s (the vendor held it %s s)", m.Status, fmtS(m.WaitedS), fmtS(m.DelayS))
}

// ProbeResponse measures how long the client waits for an answer:
// WireMock's fixed delay on the send set to delay, one worker, one send,
// then nginx's line for it (the wait ends at the client's close, a 499,
// or at the answer). The stubs are put back afterwards.
func ProbeResponse(ctx context.Context, t ProbeTarget, run string, delay time.Duration) (m ResponseMeasure, err error) {
	st := t.Stack
	restore, err := holdSends(ctx, st, delay)
	if err != nil {
		return m, fmt.Errorf("response probe: %w", err)
	}
	defer func() { err = errors.Join(err, restore()) }()
	from, err := st.AccessLogSize()
	if err != nil {
		return m, err
	}
	wk, err := t.Start(ctx, "response", StartOptions{})
	if err != nil {
		return m, fmt.Errorf("response probe: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, wk.Stop(cctx))
	}()
	if err := wk.Send(ctx, probeKey(run, "response", 1)); err != nil {
		return m, fmt.Errorf("response probe: %w", err)
	}
	entries, werr := waitSends(ctx, st, from, 1, delay+probeSendTimeout)
	m = AnalyseResponse(entries, st.Profile.API.SendPath, delay)
	if werr != nil && m.Unknown != "" {
		m.Unknown += ": " + werr.Error()
	}
	t.logf("response probe: %s", m.Measured())
	return m, nil
}
