// Package defaults measures what HTTP clients do at their defaults
// (./run.sh client-defaults; docs/studies.md, study B's "Client defaults"
// and its ten-in-flight first wave): real libraries (Node's fetch and
// https module, Python requests, curl, Go's http.DefaultClient) each POST
// CALLS messages one after another to the vendor through Toxiproxy at the
// RTT, and nginx's access log counts the TCP connections each opened.
// Then a few of them send WaveCalls messages with WaveInFlight in flight
// at once, where even a reusing client pays a handshake per connection of
// its first wave.
//
//	Run ─ vendormock.Start ─ SetRTT(RTT, TCP handshake toxic on)
//	  one client container (LAB_IMAGE_CLIENTS: nodejs, python3-requests,
//	  curl; the scripts of clients/ and the static cmd/goclient mounted)
//	  for each Client: Exec ─> its JSON line (per-call ms, wall ms, errors)
//	                   nginx access log, refkeys PREFIX-<n> ─> Count
//	  ─> client-defaults.json, summary.md, charts/
//
// It may import report, results, internal/* and vendormock; never bench,
// matrix, fault, audit or cmd. It reads no environment: the command puts
// the images, the session label and the provenance in Config.
package defaults
