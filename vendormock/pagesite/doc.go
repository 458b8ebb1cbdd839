// Package pagesite runs the web site of the page-load experiment
// (./run.sh pageload, docs/pageload.md) with testcontainers-go: one Docker
// network per run with nginx serving a folder of static pages over HTTPS,
// WireMock answering the pages' API call after a fixed delay, and
// Toxiproxy adding the RTT in front of nginx.
//
//	headless Chromium on the host (scenarios/pageload)
//	  |  https://page.lab.test:PORT  (--host-resolver-rules maps the name to 127.0.0.1;
//	  |  the run's CA trusted by its SPKI hash, never --ignore-certificate-errors)
//	  v
//	Toxiproxy [toxiproxy]  proxy "h1" 0.0.0.0:8441 -> nginx:8441
//	                       proxy "h2" 0.0.0.0:8442 -> nginx:8442
//	  |  handshake toxic (a new connection costs one RTT, as SYN/SYN-ACK)
//	  |  + latency RTT/2 downstream and the rest upstream (SetRTT)
//	  v  one upstream connection per client connection
//	nginx [nginx]  8441: TLS, ALPN http/1.1 only; 8442: TLS, ALPN h2
//	  |  the same locations on both: /run/<load>/... -> the page folder,
//	  |  /run/<load>/api/... -> WireMock (kept-alive upstream);
//	  |  access log (one JSON line per request, with $connection) -> WorkDir/log
//	  v
//	WireMock [wiremock]  GET /api/slow: 200 after Options.APIDelayMS
//
// The CA and the server certificate are made per run
// (vendormock.GenerateCerts); the CA key never touches disk. Images come
// from Options.Images (nginx, WireMock, Toxiproxy of vendormock.Images),
// which must exist locally. Every container and the network carry
// vendormock.LabelRun and, when given, vendormock.LabelSession, so run.sh's
// exit trap removes what a killed run left.
package pagesite
