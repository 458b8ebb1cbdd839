// Package pageload is the browser page-load experiment (./run.sh pageload,
// docs/pageload.md): study C of docs/studies.md (nginx HTTP/2: a page of
// 10, 50 and 100 small images loads faster over HTTP/2 than over
// HTTP/1.1, six connections against one; a page bound by its backend
// does not) measured in headless Chromium through the lab's nginx,
// Toxiproxy and WireMock.
//
//	Run ── WritePages (pages + PNGs) ── pagesite.Start (nginx h1/h2, Toxiproxy, WireMock)
//	  │     SetRTT ─> ProbeRTT (the RTT is applied)
//	  for each run, for each page (p10, p50, p100, backend), for h1 and h2:
//	    Browser.Load: a new browser context (fresh connections, empty cache),
//	      cache disabled, https://page.lab.test:PORT/run/<load id>/<page>.html
//	      └─> the page's own Navigation and Resource Timing ─> ParseTiming
//	    access log lines of /run/<load id>/ ─> CountConnections (nginx's $connection)
//	    ─> Load ─> load-<id>.json
//	  Summarize ─> cells (median, p25-p75, min-max, connections) ─> Judge
//	  WriteReport ─> summary.md, summary.json, charts/pageload.svg
//
// Everything here but Run and Browser is a pure function of its input and
// unit-tested; Run needs Docker, the lab's images and Chromium.
package pageload
