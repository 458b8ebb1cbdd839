package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// BlackBoxResult is one black-box scenario's or probe's verdict with its
// evidence, all of it seen from outside the worker.
type BlackBoxResult struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Verdict     string         `json:"verdict"` // Pass, Fail, or NA ("unknown": the lab could not see it)
	Summary     string         `json:"summary"`
	Evidence    []string       `json:"evidence,omitempty"`
	Tally       *BlackBoxTally `json:"tally,omitempty"`
	Nginx       *NginxFigures  `json:"nginx,omitempty"`
	WorkerExit  string         `json:"worker_exit,omitempty"`
	// CgroupCPUMSPerSend is the worker container's CPU per send after the
	// first (cgroup, bench.CgroupCPUPerSend), ms, in the steady scenario;
	// -1 = not seen; absent in the other scenarios.
	CgroupCPUMSPerSend float64 `json:"worker_cgroup_cpu_ms_per_send,omitempty"`
	Error              string  `json:"error,omitempty"`
	Seconds            float64 `json:"seconds"`
}

// BlackBoxScenario is one fault any client can meet, run on the team's
// image from outside: it starts the worker (BlackBoxEnv.StartWorker),
// publishes, faults, and judges from the journal, nginx's log and the
// queues. A probe (BlackBoxProbes) has the same shape.
type BlackBoxScenario struct {
	Name, Description string
	Run               func(ctx context.Context, env *BlackBoxEnv) BlackBoxResult
}

// BlackBoxScenarios returns the scenarios that apply to any client, in
// the order they run: steady (count messages at 3 ms RTT), tls-stall,
// response-timeout and broker-cut.
func BlackBoxScenarios(count int) []BlackBoxScenario {
	return []BlackBoxScenario{
		{"steady", fmt.Sprintf("%d messages at 3 ms RTT: each sent once, over kept connections, TLS 1.3", count),
			func(ctx context.Context, env *BlackBoxEnv) BlackBoxResult { return steady(ctx, env, count) }},
		{"tls-stall", "a new connection's TLS handshake stalls (Toxiproxy drops what nginx sends) for 10 s, then clears: each message sent once later, none stuck", tlsStall},
		{"response-timeout", "the vendor answers after the advised response timeout + 5 s (WireMock delay) for 40 s: the request reached it, so it must never be sent again", responseTimeoutScenario},
		{"broker-cut", "the worker's broker connection is cut for 3 s while a send is in flight (the vendor thinks 2 s): the message must not be sent twice, and the worker must go on consuming", brokerCut},
	}
}

// run is the part every scenario shares: start the worker, act, stop it,
// read the queues, the journal and nginx's log, tally refkeys.
type bbRun struct {
	env     *BlackBoxEnv
	res     BlackBoxResult
	worker  *vendormock.Worker
	refkeys []string
	t0      time.Time
}

func bbBegin(ctx context.Context, env *BlackBoxEnv, name, desc string) (*bbRun, error) {
	r := &bbRun{env: env, res: BlackBoxResult{Name: name, Description: desc}, t0: time.Now()}
	if err := env.Stack.SetRTT(ctx, 3); err != nil {
		return r, err
	}
	if err := env.Stack.ResetJournal(ctx); err != nil {
		return r, err
	}
	if err := env.MarkAccessLog(); err != nil {
		return r, err
	}
	w, err := env.StartWorker(ctx, name)
	r.worker = w
	return r, err
}

func (r *bbRun) publish(ctx context.Context, tag string, n int) ([]string, error) {
	keys := r.env.NewRefKeys(tag, n)
	r.refkeys = append(r.refkeys, keys...)
	return keys, r.env.Publish(ctx, keys)
}

// end stops the worker and judges the universal rules: none sent twice,
// none lost, none sent and still queued, none never handled. It sets
// Verdict and Summary; a scenario adds its own checks after it.
func (r *bbRun) end(ctx context.Context, err error) BlackBoxResult {
	res := &r.res
	res.WorkerExit = r.env.StopWorker(ctx, r.worker, res.Name)
	res.Seconds = time.Since(r.t0).Seconds()
	if err != nil {
		res.Verdict, res.Error, res.Summary = Fail, err.Error(), "the scenario could not run: "+err.Error()
		return *res
	}
	queued, missing, qerr := r.env.ReadQueues(ctx, true)
	sends, tokens, jerr := r.env.Journal(ctx)
	entries, lerr := r.env.AccessLog()
	if qerr != nil || jerr != nil {
		res.Verdict, res.Error = Fail, fmt.Sprint(errorsText(qerr, jerr))
		res.Summary = "not measured: " + res.Error
		return *res
	}
	t := TallyBlackBox(r.refkeys, sends, queued, r.env.Adapter.Queues.Consume)
	res.Tally = &t
	if lerr == nil {
		p := r.env.Stack.Profile.API
		f := NginxFrom(entries, p.SendPath, p.TokenPath)
		res.Nginx = &f
	} else {
		res.Evidence = append(res.Evidence, "nginx's log: not read ("+lerr.Error()+")")
	}
	res.Evidence = append(res.Evidence, fmt.Sprintf("journal: %d sends, %d token calls", len(sends), tokens))
	if len(missing) > 0 {
		res.Evidence = append(res.Evidence, "queues named in the adapter that do not exist: "+strings.Join(missing, ", "))
	}
	res.Summary = t.Summary()
	res.Verdict = Pass
	if len(t.Duplicates) > 0 || len(t.Lost) > 0 || len(t.SentAndQueued) > 0 || len(t.Unhandled) > 0 {
		res.Verdict = Fail
	}
	if res.WorkerExit != "" {
		res.Evidence = append(res.Evidence, "the worker "+res.WorkerExit)
	}
	return *res
}

// steady publishes count messages and waits until each is sent.
func steady(ctx context.Context, env *BlackBoxEnv, count int) BlackBoxResult {
	r, err := bbBegin(ctx, env, "steady", "")
	var cpu *bench.WorkerCPU
	if err == nil && r.worker != nil {
		cpu = bench.SampleWorkerCPU(ctx, r.worker.ContainerID())
	}
	if err == nil {
		var keys []string
		if keys, err = r.publish(ctx, "steady", count); err == nil {
			_, err = env.WaitSent(ctx, keys, 30*time.Second+time.Duration(count)*200*time.Millisecond)
		}
	}
	samples, _ := cpu.Finish()
	res := r.end(ctx, err)
	res.CgroupCPUMSPerSend = -1
	if entries, lerr := env.AccessLog(); lerr == nil {
		// The first send carries the token call and the first connection.
		res.CgroupCPUMSPerSend = bench.CgroupCPUPerSend(samples, entries, env.Stack.Profile.API.SendPath, 1)
	}
	if f := res.Nginx; f != nil && res.Tally != nil && f.Sends > 0 {
		res.Evidence = append(res.Evidence, fmt.Sprintf("nginx: %d sends over %d connections (%.2f new connections per send after the first), TLS %s, %s, send p50 %.1f ms, p99 %.1f ms (server side)",
			f.Sends, f.Connections, f.NewConnectionsPerSend(), strings.Join(f.TLS, ", "), strings.Join(f.Protocols, ", "), f.P50MS, f.P99MS))
	}
	res.Evidence = append(res.Evidence, "the worker container's CPU: "+cgroupCell(res.CgroupCPUMSPerSend)+" ms per send after the first (its cgroup, every process in it)")
	return res
}

// tlsStall: Toxiproxy's timeout toxic (0 = never closes) drops what
// nginx sends, so a new connection's handshake never completes; after
// 10 s it is removed and the worker has 90 s to send everything.
func tlsStall(ctx context.Context, env *BlackBoxEnv) BlackBoxResult {
	const toxic = "bb_handshake_stall"
	r, err := bbBegin(ctx, env, "tls-stall", "")
	stalled, sentAfter := -1, 0
	var took time.Duration
	if err == nil {
		_, err = env.Stack.Proxy().AddToxic(toxic, "timeout", "downstream", 1, toxiproxy.Attributes{"timeout": 0})
	}
	if err == nil {
		var keys []string
		if keys, err = r.publish(ctx, "stall", 3); err == nil {
			time.Sleep(10 * time.Second)
			sends, _, jerr := env.Journal(ctx)
			err = jerr
			stalled = countFor(keys, sends)
			if rerr := env.Stack.Proxy().RemoveToxic(toxic); rerr != nil && err == nil {
				err = rerr
			}
			if err == nil {
				cleared := time.Now()
				sentAfter, err = env.WaitSent(ctx, keys, 90*time.Second)
				took = time.Since(cleared)
			}
		}
	}
	_ = env.Stack.Proxy().RemoveToxic(toxic)
	res := r.end(ctx, err)
	if stalled >= 0 {
		res.Evidence = append(res.Evidence, stallEvidence(stalled, sentAfter, 3, took))
	}
	if res.Tally != nil && len(res.Tally.Unhandled) > 0 {
		res.Summary += "; a message never handled 90 s after the stall cleared: the client has no TLS handshake (or connect) timeout, or the worker stopped consuming"
	}
	return res
}

// responseTimeoutScenario: WireMock answers sends after the profile's
// response timeout + 5 s for 40 s, then at its own delay for 30 s more.
// The client's wait is read from nginx's 499s.
func responseTimeoutScenario(ctx context.Context, env *BlackBoxEnv) BlackBoxResult {
	r, err := bbBegin(ctx, env, "response-timeout", "")
	rt := responseTimeout(env.Stack.Profile)
	def := env.Stack.ServerDelayMS
	if err == nil {
		err = env.Stack.SetServerDelay(ctx, int((rt + 5*time.Second).Milliseconds()))
	}
	if err == nil {
		if _, err = r.publish(ctx, "slow", 2); err == nil {
			time.Sleep(40 * time.Second)
			err = env.Stack.SetServerDelay(ctx, def)
			time.Sleep(30 * time.Second)
		}
	}
	_ = env.Stack.SetServerDelay(ctx, def)
	res := r.end(ctx, err)
	if f := res.Nginx; f != nil {
		if f.ClientClosed > 0 {
			res.Evidence = append(res.Evidence, fmt.Sprintf("the client gave up on %d sends (nginx 499), after at most %.1f s (the vendor advises %s)", f.ClientClosed, f.MaxWaitMS/1000, rt))
		} else {
			res.Evidence = append(res.Evidence, fmt.Sprintf("no send given up by the client (nginx 499) within the %s delay: its response timeout is above it, or none", rt+5*time.Second))
		}
	}
	return res
}

// brokerCut: the vendor thinks 2 s; one message is published, and once
// its send is in the journal the worker's broker proxy is disabled for
// 3 s. Then two more messages must be sent within 60 s: the worker
// reconnected (or was restarted by nothing: the lab restarts nothing).
func brokerCut(ctx context.Context, env *BlackBoxEnv) BlackBoxResult {
	r, err := bbBegin(ctx, env, "broker-cut", "")
	def := env.Stack.ServerDelayMS
	after := -1
	if err == nil {
		err = env.Stack.SetServerDelay(ctx, 2000)
	}
	if err == nil {
		var keys []string
		if keys, err = r.publish(ctx, "cut", 1); err == nil {
			err = waitJournal(ctx, env, keys, 30*time.Second)
		}
		if err == nil {
			err = env.BrokerProxy.Disable()
			time.Sleep(3 * time.Second)
			if eerr := env.BrokerProxy.Enable(); err == nil {
				err = eerr
			}
		}
		if err == nil {
			_ = env.Stack.SetServerDelay(ctx, def)
			_, _ = env.WaitSent(ctx, keys, 30*time.Second)
			var more []string
			if more, err = r.publish(ctx, "aftercut", 2); err == nil {
				after, err = env.WaitSent(ctx, more, 60*time.Second)
				time.Sleep(3 * time.Second) // a redelivered send would show now
			}
		}
	}
	_ = env.BrokerProxy.Enable()
	_ = env.Stack.SetServerDelay(ctx, def)
	res := r.end(ctx, err)
	if after >= 0 {
		res.Evidence = append(res.Evidence, fmt.Sprintf("after the cut: %d of 2 new messages sent within 60 s", after))
		if after < 2 {
			res.Verdict = Fail
			res.Summary += fmt.Sprintf("; after the cut only %d of 2 new messages were sent: the worker did not go on consuming (no broker reconnect)", after)
		}
	}
	return res
}

// waitJournal waits until each refkey has a send in the journal (any
// status).
func waitJournal(ctx context.Context, env *BlackBoxEnv, keys []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		sends, _, err := env.Journal(ctx)
		if err != nil {
			return err
		}
		if countFor(keys, sends) >= len(keys) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no send of %s in the journal within %s", strings.Join(keys, ", "), timeout)
}

// countFor counts the refkeys of keys with at least one send.
func countFor(keys []string, sends []vendormock.JournalEntry) int {
	seen := map[string]bool{}
	for _, s := range sends {
		seen[s.RefKey] = true
	}
	n := 0
	for _, k := range keys {
		if seen[k] {
			n++
		}
	}
	return n
}

// errorsText joins the non-nil errors' texts.
func errorsText(errs ...error) string {
	var parts []string
	for _, e := range errs {
		if e != nil {
			parts = append(parts, e.Error())
		}
	}
	return strings.Join(parts, "; ")
}

// stallEvidence is what the tls-stall scenario measured: the journal's
// sends during the 10 s stall (0 = not one byte of a request left the
// client) and how long after the stall cleared each message had a 2xx
// send in the journal (polled every 0.3 s): about the client's own
// handshake or read timeout plus its retry delay.
func stallEvidence(stalled, sentAfter, total int, took time.Duration) string {
	s := fmt.Sprintf("measured: during the 10 s stall the journal had %d of the %d sends", stalled, total)
	if sentAfter == total {
		return s + fmt.Sprintf("; all %d sent (2xx in the journal) %.1f s after the stall cleared", total, took.Seconds())
	}
	return s + fmt.Sprintf("; %d of %d sent within %.0f s after the stall cleared", sentAfter, total, took.Seconds())
}
