package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// DirectRecipient is the test recipient of the direct driver's messages
// (a number of the lab's, never a real one).
const DirectRecipient = "+821000000000"

// DirectOptions shape one direct run (RunDirect).
type DirectOptions struct {
	// Count is the number of measured sends (>= 1).
	Count int
	// Warmup sends go first and are neither recorded nor measured (>= 0).
	Warmup int
	// RefKeyPrefix starts every refkey, followed by "-w<i>" (warm-up) or
	// "-<i>"; "" = "direct".
	RefKeyPrefix string
}

// DirectSummary is what a direct run measured, printed by the command as
// one JSON line. Times are wall time; CPU is the process's user+sys time
// (getrusage) over the measured sends only.
type DirectSummary struct {
	Strategy    string                  `json:"strategy"`
	Scheme      string                  `json:"scheme"` // http, https or mtls
	HTTPVersion string                  `json:"http_version"`
	Concurrency int                     `json:"concurrency"`
	PoolSize    int                     `json:"pool_size"`
	Sends       int                     `json:"sends"`
	Outcomes    map[outcome.Outcome]int `json:"outcomes"`
	ElapsedS    float64                 `json:"elapsed_s"`
	PerS        float64                 `json:"per_s"`
	CPUMS       float64                 `json:"cpu_ms"`
	CPUPerSend  float64                 `json:"cpu_per_send_ms"`
}

// Scheme names the vendor scheme of cfg: "http" for an http:// vendor URL,
// "mtls" when a client certificate is set, else "https".
func Scheme(cfg Config) string {
	switch {
	case strings.HasPrefix(cfg.VendorURL, "http://"):
		return "http"
	case cfg.ClientCertFile != "":
		return "mtls"
	}
	return "https"
}

// RunDirect calls the vendor client of cfg (NewVendorClient: strategy,
// scheme, HTTP version, pool) in a loop, cfg.Concurrency sends at a time,
// without broker, ledger or routing: what the HTTP client costs apart from
// the rest of the worker (docs/studies.md). It writes one records.Record per
// measured send to cfg.RecordsPath, with the same trace and CPU fields as
// the worker (Outcome is the send's class; Queue is empty).
//
// Errors: an invalid cfg or opts (wrapping ErrConfig), the client or the
// records file cannot be made. Failed sends are not errors: they are
// counted in DirectSummary.Outcomes. ctx ends the run early (the sends in
// flight finish; the summary covers what was sent).
func RunDirect(ctx context.Context, cfg Config, opts DirectOptions) (sum DirectSummary, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return sum, err
	}
	if opts.Count < 1 || opts.Warmup < 0 {
		return sum, fmt.Errorf("%w: direct count %d and warm-up %d: want count >= 1, warm-up >= 0", ErrConfig, opts.Count, opts.Warmup)
	}
	if opts.RefKeyPrefix == "" {
		opts.RefKeyPrefix = "direct"
	}
	client, err := NewVendorClient(cfg)
	if err != nil {
		return sum, err
	}
	defer func() {
		if cerr := client.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close vendor client: %w", cerr)
		}
	}()
	recs, err := records.Open(cfg.RecordsPath)
	if err != nil {
		return sum, err
	}
	defer func() {
		if cerr := recs.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close records: %w", cerr)
		}
	}()

	sum = DirectSummary{
		Strategy: cfg.Strategy, Scheme: Scheme(cfg), HTTPVersion: cfg.HTTPVersion,
		Concurrency: cfg.Concurrency, PoolSize: PoolSize(cfg), Outcomes: map[outcome.Outcome]int{},
	}
	if opts.Warmup > 0 {
		directLoop(ctx, client, cfg.Concurrency, opts.Warmup, opts.RefKeyPrefix+"-w", func(records.Record) {})
	}
	cpu0, start := ProcessCPUMS(), time.Now()
	seq := recs.LastSeq()
	var werr error
	directLoop(ctx, client, cfg.Concurrency, opts.Count, opts.RefKeyPrefix+"-", func(r records.Record) {
		seq++
		r.Seq = seq
		r.CPUMS = ProcessCPUMS()
		sum.Sends++
		sum.Outcomes[r.Outcome]++
		if err := recs.Write(r); err != nil && werr == nil {
			werr = err
		}
	})
	sum.ElapsedS = time.Since(start).Seconds()
	sum.CPUMS = ProcessCPUMS() - cpu0
	if sum.ElapsedS > 0 {
		sum.PerS = float64(sum.Sends) / sum.ElapsedS
	}
	if sum.Sends > 0 {
		sum.CPUPerSend = sum.CPUMS / float64(sum.Sends)
	}
	if werr != nil {
		return sum, fmt.Errorf("write direct records: %w", werr)
	}
	return sum, nil
}

// directLoop makes count sends, concurrency at a time, and hands each
// send's Record to done from one goroutine (the caller's).
func directLoop(ctx context.Context, client Sender, concurrency, count int, prefix string, done func(records.Record)) {
	jobs := make(chan int)
	results := make(chan records.Record, concurrency)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for i := range jobs {
				results <- directSend(ctx, client, fmt.Sprintf("%s%d", prefix, i))
			}
		})
	}
	go func() {
		defer close(jobs)
		for i := 1; i <= count; i++ {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	for r := range results {
		done(r)
	}
}

// directSend sends one notification and returns its Record (Seq and CPUMS
// left to the caller).
func directSend(ctx context.Context, client Sender, refkey string) records.Record {
	n := message.Notification{
		RefKey: refkey, Category: message.Info, Recipient: DirectRecipient,
		TemplateCode: "SHIP_01", Text: "your order shipped", CreatedAt: time.Now(),
	}
	rec := records.Record{RefKey: refkey, Category: string(n.Category), Start: time.Now(), Attempt: 1}
	rec.Clock = rec.Start
	cpu0 := ProcessCPUMS()
	res, err := client.Send(context.WithoutCancel(ctx), n)
	if cpu0 >= 0 {
		rec.SendCPUMS = ProcessCPUMS() - cpu0
	}
	rec.End = time.Now()
	setTrace(&rec, res.Trace)
	rec.Outcome = vendorapi.ClassOf(err)
	rec.Code = res.Code
	if se, ok := errors.AsType[*vendorapi.SendError](err); ok {
		rec.Code = se.Code
	}
	if err != nil {
		rec.Error = Redact(err.Error(), n.Recipient)
	}
	return rec
}
