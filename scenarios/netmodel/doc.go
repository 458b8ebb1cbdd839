// Package netmodel is the lab's model of the network, pure and shared by
// the bench, the fault runner and the reports: the round trips a send
// costs by client strategy, TLS version and TCP handshake toxic
// (docs/case.md, docs/studies.md study B), the point budgets that cap a
// sweep point's sends (PointCounts), and the pooled client's idle-timeout
// rule (IdleConnTimeout: keepalive_timeout - RTT - IdleConnMargin,
// docs/studies.md#idle-race), and the measured parts of a new
// connection's cost (Parts: round trips, CPU, forwarding) with the
// residual the report must name above ResidualLimitMS.
//
// It imports nothing of the lab but the worker's strategy names
// (worker/vendorapi); results, reports and drivers import it.
//
//	mode, TLS version, TCP_HANDSHAKE ─> SendRoundTrips ─> PointCounts (bench)
//	                                 └> ModelPenaltyRTTs ─> report.Penalties
//	keepalive_timeout, RTT ─> IdleConnTimeout ─> bench, fault (-idle-conn-timeout)
package netmodel
