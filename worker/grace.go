package worker

import "time"

// ShutdownMargin is added to ShutdownGrace for the ledger writes, the ack,
// the record and the log lines around a send, and for the process to exit.
const ShutdownMargin = 5 * time.Second

// ShutdownGrace is how long the worker may need, after SIGTERM, to finish
// the message in flight: the vendor call at its worst (a token call, the
// send, and on a 401 one token refetch and one resend: 4 calls, each
// bounded by cfg.ResponseTimeout, dial and TLS handshake included), one
// re-publish with its broker confirm (cfg.PublishTimeout), and
// ShutdownMargin. cfg's zero fields take their defaults: 4 x 10 s + 10 s +
// 5 s = 55 s.
//
// At Concurrency N the N messages in flight finish side by side, but their
// token calls take turns: (N+3) vendor calls at worst. Their re-publishes
// no longer take turns (ConfirmPublisher awaits up to ConfirmWindow
// confirms together, and N <= MaxConcurrency = ConfirmWindow), but the
// bound keeps the N re-publishes of before, an over-estimate:
// (N+3) x ResponseTimeout + N x PublishTimeout + ShutdownMargin (195 s at
// N = 8 with the defaults).
//
// A supervisor (the lab, a Kubernetes terminationGracePeriodSeconds, a
// docker stop -t) that kills the worker sooner can cut a send between the
// request and the ledger's Finish: the message then ends UNKNOWN on
// redelivery instead of SENT (docs/deployment.md).
func ShutdownGrace(cfg Config) time.Duration {
	cfg = cfg.WithDefaults()
	n := time.Duration(max(cfg.Concurrency, 1))
	return (n+3)*cfg.ResponseTimeout + n*cfg.PublishTimeout + ShutdownMargin
}
