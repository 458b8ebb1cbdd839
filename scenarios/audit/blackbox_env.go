package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/vendormock/journal"
)

// BlackBoxEnv is what a black-box scenario or probe gets: the running
// stack, the team's adapter, and helpers that act from outside the
// worker only (publish to its queue, start and stop its container, read
// WireMock's journal, nginx's log and the broker's queues). Nothing in it
// reads a records file.
type BlackBoxEnv struct {
	Stack   *vendormock.Stack
	Adapter *Adapter
	Image   string
	// Dir is the scenario's (or probe's) own folder: worker.log goes there.
	Dir string
	// State is the host folder mounted at /out in the worker (outside
	// OUT: a team's worker may write there what it likes).
	State string
	// BrokerViaProxy: the worker reaches the broker through Toxiproxy's
	// BrokerProxyName proxy (BrokerProxy), so a scenario can cut it.
	BrokerProxy *BrokerCut
	// Log receives progress lines.
	Log func(format string, args ...any)

	seq     *atomic.Int64
	prefix  string
	logFrom int64
}

// BrokerCut disables and enables the worker's broker connection.
type BrokerCut struct{ Disable, Enable func() error }

// Values returns the lab values an adapter's environment is filled from
// (AdapterValueNames), for this stack: the broker through Toxiproxy's
// broker proxy (a scenario can cut it), the vendor's URL, the CA file and
// client certificate paths inside the container, the credentials and the
// profile's API. It holds the client secret: never log it.
func (e *BlackBoxEnv) Values() map[string]string {
	st := e.Stack
	p := st.Profile
	v := map[string]string{
		"broker_url":    fmt.Sprintf("amqp://guest:guest@%s:%d/", vendormock.AliasToxiproxy, blackBoxBrokerPort),
		"queue":         e.Adapter.Queues.Consume,
		"vendor_url":    st.VendorURL,
		"ca_file":       vendormock.WorkerCAPath,
		"client_id":     st.ClientID,
		"client_secret": st.ClientSecret,
		"http_version":  "1.1",
		"broker_host":   vendormock.AliasToxiproxy, "broker_port": strconv.Itoa(blackBoxBrokerPort),
		"broker_user": "guest", "broker_password": "guest", "broker_vhost": "/",
		"vendor_host": st.VendorHost,
	}
	if pem, err := os.ReadFile(st.CAFile); err == nil {
		v["ca_pem"] = string(pem)
	}
	if st.HTTP2 {
		v["http_version"] = "2"
	}
	if st.ClientCertFile != "" {
		v["client_cert"], v["client_key"] = vendormock.WorkerClientCertPath, vendormock.WorkerClientKeyPath
	}
	if p != nil {
		for k, name := range map[string]string{"VENDOR_TOKEN_PATH": "token_path", "VENDOR_TOKEN_AUTH": "token_auth",
			"VENDOR_SEND_PATH": "send_path", "VENDOR_REFKEY_FIELD": "refkey_field", "VENDOR_CODE_FIELD": "code_field"} {
			v[name] = p.VendorAPIEnv()[k]
		}
		v["success_code"] = p.API.SuccessCode
		v["correlation_header"] = p.Client.CorrelationHeader
		v["response_timeout_ms"] = strconv.FormatInt(responseTimeout(p).Milliseconds(), 10)
		v["status_table"] = p.StatusTableJSON
	}
	return v
}

// responseTimeout is the profile's advised response timeout, 10 s when
// it names none (vendormock.ContractEnv's default).
func responseTimeout(p *vendormock.Profile) time.Duration {
	if p == nil || p.Client.ResponseTimeout <= 0 {
		return 10 * time.Second
	}
	return p.Client.ResponseTimeout
}

// blackBoxBrokerPort is Toxiproxy's port of the worker's broker proxy.
const blackBoxBrokerPort = 5672

// StartWorker starts the team's image with the adapter's environment,
// one CPU, Dir bind-mounted at /out, and waits until it consumes the
// adapter's queue (Adapter.StartupDuration). On a timeout the error
// carries the tail of its log. Stop it with StopWorker.
func (e *BlackBoxEnv) StartWorker(ctx context.Context, name string) (*vendormock.Worker, error) {
	w, err := e.Stack.StartWorker(ctx, vendormock.WorkerOptions{
		Name: "bb-" + name, Image: e.Image, Env: e.Adapter.Environment(e.Values()), CPUs: 1,
		OutDir: e.State, Grace: e.Adapter.GraceDuration(),
	})
	if err != nil {
		return w, err
	}
	if err := e.waitConsumer(ctx, e.Adapter.StartupDuration()); err != nil {
		logs, _ := w.Logs(ctx)
		return w, fmt.Errorf("start worker: %w; its log ends: %s", err, tail(logs, 600))
	}
	return w, nil
}

// StopWorker stops w (SIGTERM, then its grace) and writes its stdout and
// stderr to Dir/worker.log (appended, one header line per container).
// It returns the exit code ("" when not seen).
func (e *BlackBoxEnv) StopWorker(ctx context.Context, w *vendormock.Worker, name string) string {
	if w == nil {
		return ""
	}
	logs, lerr := w.Logs(ctx)
	exit := ""
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if code, err := w.Wait(sctx); err == nil {
		exit = fmt.Sprintf("exited by itself with status %d", code)
	}
	cancel()
	if err := w.Stop(ctx, e.Adapter.GraceDuration()); err != nil {
		e.Log("stop worker %s: %v", name, err)
	}
	if lerr != nil {
		logs += "\n(log unreadable: " + lerr.Error() + ")\n"
	}
	f, err := os.OpenFile(filepath.Join(e.Dir, "worker.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintf(f, "=== worker %s: stdout and stderr ===\n%s\n", name, logs)
		_ = f.Close()
	}
	return exit
}

// waitConsumer polls the broker until the consumed queue exists and has
// a consumer.
func (e *BlackBoxEnv) waitConsumer(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := "queue not declared"
	for time.Now().Before(deadline) {
		n, err := e.consumers(e.Adapter.Queues.Consume)
		switch {
		case err == nil && n > 0:
			return nil
		case err == nil:
			last = "queue declared, no consumer"
		default:
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("no consumer on queue %s after %s (%s)", e.Adapter.Queues.Consume, timeout, last)
}

// consumers returns the consumer count of a queue (an error when the
// queue does not exist).
func (e *BlackBoxEnv) consumers(queue string) (int, error) {
	conn, err := amqp.Dial(e.Stack.AMQPURL)
	if err != nil {
		return 0, fmt.Errorf("dial broker: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return 0, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		return 0, fmt.Errorf("queue %s: %w", queue, err)
	}
	return q.Consumers, nil
}

// NewRefKeys returns n refkeys unique in the run: "bb-<run>-<tag>-0001".
func (e *BlackBoxEnv) NewRefKeys(tag string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%s-%04d", e.prefix, tag, e.seq.Add(1))
	}
	return out
}

// Publish publishes one message per refkey in the team's schema
// (Adapter.Render) to the consumed queue through the default exchange,
// persistent, with publisher confirms. Errors: the broker's, a nack.
func (e *BlackBoxEnv) Publish(ctx context.Context, refkeys []string) error {
	conn, err := amqp.Dial(e.Stack.AMQPURL)
	if err != nil {
		return fmt.Errorf("publish: dial broker: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("publish: open channel: %w", err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("publish: confirm mode: %w", err)
	}
	headers := amqp.Table{}
	for k, v := range e.Adapter.Message.Headers {
		headers[k] = v
	}
	for i, rk := range refkeys {
		body := e.Adapter.Render(rk, fmt.Sprintf("+8210%08d", 10000000+i), "lab audit message "+rk)
		c, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", e.Adapter.Queues.Consume, true, false, amqp.Publishing{
			ContentType: e.Adapter.Message.ContentType, DeliveryMode: amqp.Persistent, MessageId: rk,
			Headers: headers, Body: body, Timestamp: time.Now().UTC(),
		})
		if err != nil {
			return fmt.Errorf("publish %s: %w", rk, err)
		}
		if ok, err := c.WaitContext(ctx); err != nil || !ok {
			return fmt.Errorf("publish %s: not confirmed by the broker (%v)", rk, err)
		}
	}
	return nil
}

// Journal returns the sends in WireMock's journal (POST to the profile's
// send path), the refkey found where the adapter says, and the token
// calls counted apart.
func (e *BlackBoxEnv) Journal(ctx context.Context) (sends []journal.Entry, tokens int, err error) {
	loc := journal.Locator{BodyPath: journal.ParsePath(e.Adapter.RefKey.BodyPath), Header: e.Adapter.RefKey.Header}
	if len(loc.BodyPath) == 0 && loc.Header == "" {
		loc.BodyPath = []string{e.Stack.Profile.API.RefKeyField}
	}
	all, err := journal.ReadLocated(ctx, nil, e.Stack.WireMockURL, loc)
	if err != nil {
		return nil, 0, err
	}
	for _, j := range all {
		switch {
		case j.Method == "POST" && j.Path == e.Stack.Profile.API.SendPath:
			sends = append(sends, j)
		case j.Path == e.Stack.Profile.API.TokenPath:
			tokens++
		}
	}
	return sends, tokens, nil
}

// WaitSent polls the journal until every refkey has a 2xx send or the
// timeout passes; it returns how many have one.
func (e *BlackBoxEnv) WaitSent(ctx context.Context, refkeys []string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		sends, _, err := e.Journal(ctx)
		if err != nil {
			return 0, err
		}
		ok := map[string]bool{}
		for _, s := range sends {
			if s.Status/100 == 2 {
				ok[s.RefKey] = true
			}
		}
		n := 0
		for _, rk := range refkeys {
			if ok[rk] {
				n++
			}
		}
		if n == len(refkeys) || time.Now().After(deadline) {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// QueuedMessage is one message the lab found in a queue: its queue and
// body (the refkey is found in the body as a substring: the lab made it
// unique).
type QueuedMessage struct{ Queue, Body string }

// ReadQueues reads every message of the adapter's queues without
// consuming them (basic.get, never acked; the channel's close puts them
// back), then purges them when purge is set. Run it with the worker
// stopped. A queue that does not exist is reported in missing.
func (e *BlackBoxEnv) ReadQueues(ctx context.Context, purge bool) (msgs []QueuedMessage, missing []string, err error) {
	conn, err := amqp.Dial(e.Stack.AMQPURL)
	if err != nil {
		return nil, nil, fmt.Errorf("read queues: dial: %w", err)
	}
	defer conn.Close()
	for _, q := range e.Adapter.AllQueues() {
		ch, err := conn.Channel()
		if err != nil {
			return nil, nil, fmt.Errorf("read queues: open channel: %w", err)
		}
		info, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			var aerr *amqp.Error
			if errors.As(err, &aerr) && aerr.Code == amqp.NotFound {
				missing = append(missing, q)
				continue // the channel is closed by the broker
			}
			return nil, nil, fmt.Errorf("read queue %s: %w", q, err)
		}
		for i := 0; i < info.Messages; i++ {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			d, ok, err := ch.Get(q, false)
			if err != nil {
				return nil, nil, fmt.Errorf("read queue %s: %w", q, err)
			}
			if !ok {
				break
			}
			msgs = append(msgs, QueuedMessage{Queue: q, Body: string(d.Body)})
		}
		if err := ch.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
			return nil, nil, fmt.Errorf("read queue %s: requeue: %w", q, err)
		}
		if purge {
			if pc, err := conn.Channel(); err == nil {
				_, _ = pc.QueuePurge(q, false)
				_ = pc.Close()
			}
		}
	}
	return msgs, missing, nil
}

// AccessLog returns nginx's access log lines written since the env's
// scenario started (MarkAccessLog).
func (e *BlackBoxEnv) AccessLog() ([]vendormock.AccessEntry, error) {
	entries, _, err := e.Stack.ReadAccessLog(e.logFrom)
	return entries, err
}

// MarkAccessLog makes AccessLog start at nginx's log as it is now.
func (e *BlackBoxEnv) MarkAccessLog() error {
	n, err := e.Stack.AccessLogSize()
	if err != nil {
		return err
	}
	e.logFrom = n
	return nil
}

// tail returns the last n bytes of s on one line.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	if s == "" {
		return "(empty)"
	}
	return strings.ReplaceAll(s, "\n", " | ")
}
