package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"sync"

	"github.com/go-resty/resty/v2"
)

// gateway is the SMS/AlimTalk gateway client: one resty client (one
// connection pool) for the token and the sends.
type gateway struct {
	c      config
	client *resty.Client

	mu    sync.Mutex
	token string
}

// newGateway builds the resty client with the team's timeout and TLS
// settings; everything else is resty's default (resty v2.17.2
// transport.go: IdleConnTimeout 90 s, TLSHandshakeTimeout 10 s, dial
// timeout 30 s, RetryCount 0).
func newGateway(c config, tc *tls.Config) *gateway {
	client := resty.New().
		SetBaseURL(c.gatewayURL).
		SetTimeout(c.timeout).
		SetTLSClientConfig(tc)
	return &gateway{c: c, client: client}
}

// result is one send's outcome as the worker judges it.
type result struct {
	ok, retry bool
	status    int
	code, why string
}

// send posts one message, fetching a token first when it has none and
// once more after a 401.
func (g *gateway) send(ctx context.Context, m message) result {
	for attempt := 0; attempt < 2; attempt++ {
		tok, err := g.bearer(ctx, attempt > 0)
		if err != nil {
			return result{retry: true, why: "token: " + err.Error()}
		}
		body := map[string]any{
			g.c.refField:    m.NotificationID,
			"recipient":     m.To.MSISDN,
			"text":          m.Content.Body,
			"template_code": "DISPATCH01",
		}
		req := g.client.R().SetContext(ctx).SetAuthToken(tok).SetHeader("Content-Type", "application/json").SetBody(body)
		if g.c.refHeader != "" {
			req.SetHeader(g.c.refHeader, m.NotificationID)
		}
		resp, err := req.Post(g.c.sendPath)
		if err != nil {
			// Timeouts and connection errors alike: try again later.
			return result{retry: true, why: "transport: " + err.Error()}
		}
		st := resp.StatusCode()
		switch {
		case st == http.StatusUnauthorized && attempt == 0:
			continue
		case st == http.StatusTooManyRequests || st >= 500:
			return result{retry: true, status: st, why: fmt.Sprintf("status %d", st)}
		case st/100 != 2:
			return result{status: st, why: fmt.Sprintf("status %d", st)}
		}
		var ans map[string]any
		if err := json.Unmarshal(resp.Body(), &ans); err != nil {
			return result{status: st, why: "unreadable answer"}
		}
		code := fmt.Sprint(ans[g.c.codeField])
		if code != g.c.okCode {
			return result{status: st, code: code, why: "rejected with code " + code}
		}
		return result{ok: true, status: st, code: code}
	}
	return result{status: http.StatusUnauthorized, why: "unauthorized twice"}
}

// bearer returns the cached token, fetching one when there is none or
// refresh is set.
func (g *gateway) bearer(ctx context.Context, refresh bool) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.token != "" && !refresh {
		return g.token, nil
	}
	req := g.client.R().SetContext(ctx)
	if g.c.authStyle == "form" {
		req.SetFormData(map[string]string{"grant_type": "client_credentials", "client_id": g.c.key, "client_secret": g.c.secret})
	} else {
		req.SetBasicAuth(g.c.key, g.c.secret)
	}
	resp, err := req.Post(g.c.tokenPath)
	if err != nil {
		return "", err
	}
	if resp.StatusCode() != http.StatusOK {
		return "", fmt.Errorf("token status %d", resp.StatusCode())
	}
	var ans struct {
		AccessToken string `json:"access_token"`
		Alt         string `json:"accesstoken"`
	}
	if err := json.Unmarshal(resp.Body(), &ans); err != nil {
		return "", fmt.Errorf("token answer: %w", err)
	}
	g.token = ans.AccessToken
	if g.token == "" {
		g.token = ans.Alt
	}
	if g.token == "" {
		return "", fmt.Errorf("token answer without a token")
	}
	log.Printf("gateway: new token")
	return g.token, nil
}
