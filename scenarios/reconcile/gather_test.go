package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// journalDoc is a WireMock GET /__admin/requests answer, newest first, in
// the shape WireMock 3.13 writes (fields the reader ignores included).
const journalDoc = `{
  "requests": [
    {"id": "4", "request": {"url": "/v3/message?x=1", "method": "POST",
      "headers": {"Content-Type": "application/json", "X-Refkey": "b"},
      "body": "", "bodyAsBase64": "eyJyZWZrZXkiOiJiIn0=", "loggedDate": 1795999200300},
     "responseDefinition": {"status": 200}, "response": {"status": 200, "headers": {}}, "wasMatched": true},
    {"id": "3", "request": {"url": "/v3/message", "method": "POST",
      "headers": {"x-refkey": ["c"]}, "body": "not json", "loggedDate": 1795999200200},
     "responseDefinition": {"status": 400}, "wasMatched": true},
    {"id": "2", "request": {"url": "/v3/message", "method": "POST",
      "headers": {"X-Refkey": "ignored"}, "body": "{\"refkey\":\"a\",\"recipient\":\"+82******5678\"}", "loggedDate": 1795999200100},
     "responseDefinition": {"status": 200}, "response": {"status": 200}, "wasMatched": true},
    {"id": "1", "request": {"url": "/v1/token", "method": "POST", "headers": {}, "body": "", "loggedDate": 1795999200000},
     "responseDefinition": {"status": 200}, "response": {"status": 200}, "wasMatched": true}
  ],
  "meta": {"total": 4},
  "requestJournalDisabled": false
}`

func TestReadJournal(t *testing.T) {
	var hits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, r.Method+" "+r.URL.Path)
		if r.Method != http.MethodGet || r.URL.Path != "/__admin/requests" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, journalDoc)
	}))
	defer srv.Close()

	got, err := ReadJournal(context.Background(), srv.Client(), srv.URL+"/", "")
	if err != nil {
		t.Fatalf("ReadJournal: %v", err)
	}
	want := []JournalEntry{
		{Method: "POST", Path: "/v1/token", Status: 200, LoggedAt: time.UnixMilli(1795999200000).UTC()},
		{Method: "POST", Path: "/v3/message", RefKey: "a", Status: 200, LoggedAt: time.UnixMilli(1795999200100).UTC()},
		{Method: "POST", Path: "/v3/message", RefKey: "c", Status: 400, LoggedAt: time.UnixMilli(1795999200200).UTC()},
		{Method: "POST", Path: "/v3/message", RefKey: "b", Status: 200, LoggedAt: time.UnixMilli(1795999200300).UTC()},
	}
	if !slices.Equal(got, want) {
		t.Errorf("journal:\n got %+v\nwant %+v", got, want)
	}
	if !slices.Equal(hits, []string{"GET /__admin/requests"}) {
		t.Errorf("requests to WireMock = %q, want one GET (reading never resets the journal)", hits)
	}
}

func TestReadJournalStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "admin API disabled", http.StatusForbidden)
	}))
	defer srv.Close()
	_, err := ReadJournal(context.Background(), nil, srv.URL, "")
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("err = %v, want one naming status 403", err)
	}
}

// fakeChannel is a broker's queues for ReadQueuesOn; it records every ack
// and nack its deliveries receive.
type fakeChannel struct {
	queues    map[string][]amqp.Delivery
	consumers map[string]int
	acks      *[]string
}

func (f *fakeChannel) QueueDeclarePassive(name string, _, _, _, _ bool, _ amqp.Table) (amqp.Queue, error) {
	q, ok := f.queues[name]
	if !ok {
		return amqp.Queue{}, &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - no queue '" + name + "'"}
	}
	return amqp.Queue{Name: name, Messages: len(q), Consumers: f.consumers[name]}, nil
}

func (f *fakeChannel) Get(name string, autoAck bool) (amqp.Delivery, bool, error) {
	if autoAck {
		return amqp.Delivery{}, false, errors.New("autoAck=true would consume the message")
	}
	q := f.queues[name]
	if len(q) == 0 {
		return amqp.Delivery{}, false, nil
	}
	d := q[0]
	f.queues[name] = q[1:]
	d.Acknowledger = recordingAck{f.acks}
	return d, true, nil
}

type recordingAck struct{ log *[]string }

func (a recordingAck) Ack(tag uint64, _ bool) error {
	*a.log = append(*a.log, fmt.Sprint("ack ", tag))
	return nil
}
func (a recordingAck) Nack(tag uint64, _, _ bool) error {
	*a.log = append(*a.log, fmt.Sprint("nack ", tag))
	return nil
}
func (a recordingAck) Reject(tag uint64, _ bool) error {
	*a.log = append(*a.log, fmt.Sprint("reject ", tag))
	return nil
}

func newFake() *fakeChannel {
	n := queues.NamesFor("n")
	f := &fakeChannel{queues: map[string][]amqp.Delivery{}, consumers: map[string]int{}, acks: new([]string)}
	for _, q := range n.All() {
		f.queues[q] = nil
	}
	f.queues[n.Dead] = []amqp.Delivery{
		{MessageId: "bad-1", Body: []byte("{not json"), Headers: amqp.Table{queues.HeaderOutcome: "INVALID", queues.HeaderReason: "body is not JSON"}, DeliveryTag: 1},
		{MessageId: "m-c", Body: []byte(`{"refkey":"c","recipient":"+821000005678"}`), Headers: amqp.Table{queues.HeaderOutcome: "NOT_SENT", queues.HeaderAttempt: int32(5)}, DeliveryTag: 2, Redelivered: true},
	}
	f.queues[n.Unknown] = []amqp.Delivery{{Body: []byte(`{"refkey":"u"}`), DeliveryTag: 3}}
	return f
}

func TestReadQueuesOn(t *testing.T) {
	n := queues.NamesFor("n")
	f := newFake()
	got, err := ReadQueuesOn(context.Background(), f, n.All(), 10)
	if err != nil {
		t.Fatalf("ReadQueuesOn: %v", err)
	}
	if len(*f.acks) != 0 {
		t.Errorf("deliveries were acked or rejected: %q (must stay unacked to be requeued)", *f.acks)
	}
	for _, q := range n.All() {
		if got[q] == nil {
			t.Errorf("queue %s missing from the result (want an empty, non-nil slice)", q)
		}
	}
	dead := got[n.Dead]
	if len(dead) != 2 || len(got[n.Unknown]) != 1 {
		t.Fatalf("got %d dead, %d unknown; want 2, 1: %+v", len(dead), len(got[n.Unknown]), got)
	}
	if dead[0].MessageID != "bad-1" || dead[0].RefKey != "" || dead[0].Header(queues.HeaderReason) != "body is not JSON" || dead[0].Queue != n.Dead {
		t.Errorf("dead[0] = %+v", dead[0])
	}
	if dead[1].RefKey != "c" || dead[1].Header(queues.HeaderOutcome) != "NOT_SENT" || dead[1].Headers[queues.HeaderAttempt] != int32(5) || !dead[1].Redelivered {
		t.Errorf("dead[1] = %+v", dead[1])
	}
	if strings.Contains(fmt.Sprintf("%+v", got), "821012345678") {
		t.Error("the result keeps a recipient in clear")
	}
}

func TestReadQueuesOnErrors(t *testing.T) {
	n := queues.NamesFor("n")
	tests := []struct {
		name  string
		setup func(*fakeChannel)
		limit int
		want  error
	}{
		{"worker still consuming", func(f *fakeChannel) { f.consumers[n.Main] = 1 }, 10, ErrQueueInUse},
		{"queue never declared", func(f *fakeChannel) { delete(f.queues, n.Held) }, 10, ErrNoQueue},
		{"more messages than the limit", func(*fakeChannel) {}, 1, ErrTooManyMessages},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			tt.setup(f)
			_, err := ReadQueuesOn(context.Background(), f, n.All(), tt.limit)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadQueuesOn(ctx, newFake(), n.All(), 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
}

func writeLedger(t *testing.T, path string) {
	t.Helper()
	l, err := ledger.Open(path)
	if err != nil {
		t.Fatalf("ledger.Open: %v", err)
	}
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	for _, k := range []string{"b", "a"} {
		if _, _, err := l.Begin(context.Background(), k, "", now); err != nil {
			t.Fatalf("Begin %s: %v", k, err)
		}
	}
	if err := l.Finish(context.Background(), "a", "", 1, outcome.Sent, "mk-1", now); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestReadLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	writeLedger(t, path)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadLedger(path)
	if err != nil {
		t.Fatalf("ReadLedger: %v", err)
	}
	if len(got) != 2 || got[0].RefKey != "a" || got[0].State != outcome.Sent || got[1].RefKey != "b" || got[1].State != ledger.Attempting || got[1].Attempts != 1 {
		t.Errorf("entries = %+v", got)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("ReadLedger changed the ledger file")
	}
}

func TestReadLedgerErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := ReadLedger(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadLedger created the missing ledger")
	}

	path := filepath.Join(dir, "ledger.db")
	writeLedger(t, path)
	l, err := ledger.Open(path) // a running worker holds it open
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := ReadLedger(path); !errors.Is(err, ledger.ErrLocked) {
		t.Errorf("in use: err = %v, want ledger.ErrLocked", err)
	}
}

func TestGather(t *testing.T) {
	dir := t.TempDir()
	pubPath := filepath.Join(dir, "published.jsonl")
	f, err := os.Create(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Published{pub(1, "a"), pub(2, "b")} {
		if err := WritePublished(f, p); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	recPath := filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(recPath, []byte(`{"seq":1,"refkey":"a","outcome":"SENT","queue":""}`+"\n"+`{"seq":2,"refkey":"b","outcome":"SENT","queue":""}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ledgerPath := filepath.Join(dir, "ledger.db")
	writeLedger(t, ledgerPath)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, journalDoc) }))
	defer srv.Close()

	in, err := Gather(context.Background(), GatherOptions{
		PublishedPath: pubPath, RecordsPath: recPath, LedgerPath: ledgerPath, WireMockURL: srv.URL, Main: "n",
	})
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	if len(in.Published) != 2 || len(in.Records) != 2 || len(in.Ledger) != 2 || len(in.Journal) != 4 || in.Queues != nil {
		t.Fatalf("input: %d published, %d records, %d ledger, %d journal, queues %v", len(in.Published), len(in.Records), len(in.Ledger), len(in.Journal), in.Queues)
	}
	if in.Names != queues.NamesFor("n") {
		t.Errorf("names = %+v", in.Names)
	}
	r := Reconcile(in)
	// No queues: places cannot be judged; b's record says SENT and the
	// ledger still says Attempting.
	if !slices.Equal(r.Checks, []string{CheckRoute, CheckJournal, CheckLedger}) {
		t.Errorf("checks = %q", r.Checks)
	}
	if r.OK {
		t.Errorf("report OK, want violations for b: %+v", r)
	}

	_, err = Gather(context.Background(), GatherOptions{PublishedPath: pubPath, RecordsPath: filepath.Join(dir, "nope")})
	var ge *GatherError
	if !errors.As(err, &ge) || ge.Source != SourceRecords || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing records: err = %v, want a GatherError for %s wrapping fs.ErrNotExist", err, SourceRecords)
	}
	if _, err := Gather(context.Background(), GatherOptions{}); !errors.Is(err, ErrNoPublished) {
		t.Errorf("no published: err = %v", err)
	}
}

func TestGatherOptionsStringRedacts(t *testing.T) {
	s := GatherOptions{PublishedPath: "p", AMQPURL: "amqp://guest:s3cret@127.0.0.1:5672/"}.String()
	if strings.Contains(s, "s3cret") || !strings.Contains(s, "127.0.0.1:5672") {
		t.Errorf("String() = %q", s)
	}
}
