// Command dispatch is an example team's notification worker, written the
// way a team writes one and NOT to the lab's worker contract: its own
// queue names (dispatch.inbox, dispatch.retry, dispatch.parked), its own
// environment names (DISPATCH_*, GATEWAY_*), its own message schema
// ({"notification_id", "to": {"msisdn"}, "content": {"body"}}) and Go's
// resty v2 as the HTTP client. It writes no records file. The lab audits it
// as it is, in black-box mode, from adapter.yaml beside it
// (docs/auditing.md).
//
// What it does with a message: send it once with resty; a 2xx with the
// gateway's success code is acked; a transport error, a 429 or a 5xx
// goes to dispatch.retry (a TTL queue that dead-letters back to the
// inbox) with x-dispatch-tries + 1, up to 5 tries, then to
// dispatch.parked; anything else (bad JSON, a 4xx, a business rejection)
// goes to dispatch.parked. It keeps no ledger of what it sent.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Queue names of the dispatch service.
const (
	retryQueue  = "dispatch.retry"
	parkedQueue = "dispatch.parked"
	maxTries    = 5
)

// config is read from the environment once at start.
type config struct {
	amqpURI, inbox                     string
	gatewayURL, caPEM, certPEM, keyPEM string
	key, secret, authStyle             string
	tokenPath, sendPath                string
	refField, codeField, okCode        string
	refHeader                          string
	timeout                            time.Duration
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func loadConfig() (config, error) {
	ms, err := strconv.Atoi(env("GATEWAY_TIMEOUT_MS", "10000"))
	if err != nil || ms <= 0 {
		return config{}, fmt.Errorf("GATEWAY_TIMEOUT_MS: want a positive number of ms")
	}
	c := config{
		amqpURI: os.Getenv("DISPATCH_AMQP_URI"), inbox: env("DISPATCH_INBOX", "dispatch.inbox"),
		gatewayURL: os.Getenv("GATEWAY_URL"), caPEM: os.Getenv("GATEWAY_CA_PEM"),
		certPEM: os.Getenv("GATEWAY_CERT_PEM"), keyPEM: os.Getenv("GATEWAY_CERT_KEY"),
		key: os.Getenv("GATEWAY_KEY"), secret: os.Getenv("GATEWAY_SECRET"), authStyle: env("GATEWAY_AUTH_STYLE", "basic"),
		tokenPath: env("GATEWAY_TOKEN_PATH", "/v1/token"), sendPath: env("GATEWAY_SEND_PATH", "/v3/message"),
		refField: env("GATEWAY_REF_FIELD", "refkey"), codeField: env("GATEWAY_CODE_FIELD", "code"),
		okCode: env("GATEWAY_OK_CODE", "1000"), refHeader: os.Getenv("GATEWAY_REF_HEADER"),
		timeout: time.Duration(ms) * time.Millisecond,
	}
	if c.amqpURI == "" || c.gatewayURL == "" {
		return c, fmt.Errorf("DISPATCH_AMQP_URI and GATEWAY_URL must be set")
	}
	return c, nil
}

// tlsConfig trusts GATEWAY_CA_PEM and presents GATEWAY_CERT_PEM when set.
func tlsConfig(c config) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.caPEM != "" {
		pem, err := os.ReadFile(c.caPEM)
		if err != nil {
			return nil, fmt.Errorf("read CA: %w", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("read CA: no certificate in %s", c.caPEM)
		}
	}
	if c.certPEM != "" {
		cert, err := tls.LoadX509KeyPair(c.certPEM, c.keyPEM)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds | log.LUTC)
	log.SetOutput(os.Stdout)
	c, err := loadConfig()
	if err != nil {
		log.Fatalf("dispatch: %v", err)
	}
	tc, err := tlsConfig(c)
	if err != nil {
		log.Fatalf("dispatch: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	gw := newGateway(c, tc)
	// Reconnect on a lost broker connection, one second apart.
	for ctx.Err() == nil {
		err := consume(ctx, c, gw)
		if ctx.Err() != nil {
			break
		}
		log.Printf("dispatch: broker connection lost (%v); reconnecting in 1s", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	log.Printf("dispatch: stopped")
}

// consume declares the queues and handles deliveries until the
// connection closes or ctx ends.
func consume(ctx context.Context, c config, gw *gateway) error {
	conn, err := amqp.Dial(c.amqpURI)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	decl := []struct {
		name string
		args amqp.Table
	}{
		{parkedQueue, nil},
		{retryQueue, amqp.Table{"x-message-ttl": int32(2000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": c.inbox}},
		{c.inbox, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": parkedQueue}},
	}
	for _, q := range decl {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			return fmt.Errorf("declare %s: %w", q.name, err)
		}
	}
	if err := ch.Qos(1, 0, false); err != nil {
		return fmt.Errorf("qos: %w", err)
	}
	deliveries, err := ch.Consume(c.inbox, "dispatch", false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	log.Printf("dispatch: consuming %s", c.inbox)
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-closed:
			return fmt.Errorf("closed: %v", e)
		case d, ok := <-deliveries:
			if !ok {
				return fmt.Errorf("deliveries closed")
			}
			handle(ctx, ch, gw, d)
		}
	}
}

// message is the dispatch service's schema.
type message struct {
	NotificationID string `json:"notification_id"`
	To             struct {
		MSISDN string `json:"msisdn"`
	} `json:"to"`
	Content struct {
		Body string `json:"body"`
	} `json:"content"`
}

// handle sends one delivery and routes it.
func handle(ctx context.Context, ch *amqp.Channel, gw *gateway, d amqp.Delivery) {
	var m message
	if err := json.Unmarshal(d.Body, &m); err != nil || m.NotificationID == "" || m.To.MSISDN == "" {
		route(ctx, ch, d, parkedQueue, "invalid message")
		return
	}
	tries, _ := d.Headers["x-dispatch-tries"].(int32)
	res := gw.send(ctx, m)
	switch {
	case res.ok:
		log.Printf("sent %s status=%d code=%s redelivered=%t", m.NotificationID, res.status, res.code, d.Redelivered)
		_ = d.Ack(false)
	case res.retry && tries+1 < maxTries:
		d.Headers = headersWith(d.Headers, tries+1)
		route(ctx, ch, d, retryQueue, res.why)
	default:
		route(ctx, ch, d, parkedQueue, res.why)
	}
}

func headersWith(h amqp.Table, tries int32) amqp.Table {
	out := amqp.Table{}
	for k, v := range h {
		out[k] = v
	}
	out["x-dispatch-tries"] = tries
	return out
}

// route re-publishes the delivery to queue with its reason, then acks.
func route(ctx context.Context, ch *amqp.Channel, d amqp.Delivery, queue, why string) {
	h := headersWith(d.Headers, 0)
	if t, ok := d.Headers["x-dispatch-tries"]; ok {
		h["x-dispatch-tries"] = t
	}
	h["x-dispatch-reason"] = why
	err := ch.PublishWithContext(ctx, "", queue, false, false, amqp.Publishing{
		ContentType: d.ContentType, DeliveryMode: amqp.Persistent, MessageId: d.MessageId, Headers: h, Body: d.Body,
	})
	if err != nil {
		log.Printf("route to %s failed (%v): requeue", queue, err)
		_ = d.Nack(false, true)
		return
	}
	log.Printf("routed %s to %s: %s", d.MessageId, queue, why)
	_ = d.Ack(false)
}
