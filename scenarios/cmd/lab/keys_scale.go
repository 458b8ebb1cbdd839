package main

import (
	"fmt"
	"strconv"

	"github.com/notifier-lab/notifier-lab/scenarios/scale"
)

// REPEATS and UPSTREAM_POOL, scale's keys of issue 29 (their entries in
// keys name these).

const repeatsHelp = "runs of each grid and case point, in turns at each concurrency (direct, worker, direct, worker...); the summary gives each driver's median sends/s, the spread and the worker's over the bare client's median; the memory run runs once"

var repeatsAllowed = fmt.Sprintf("a whole number 1..%d", scale.MaxRepeats)

func showRepeats(c *scale.Config) string { return strconv.Itoa(max(c.Repeats, 1)) }

func setRepeats(c *scale.Config, v string) (err error) {
	c.Repeats, err = parseInt(v, 1, scale.MaxRepeats)
	return
}

const upstreamPoolHelp = "idle keep-alive connections nginx keeps to WireMock (its upstream keepalive); nginx closes the ones beyond it as requests end, so a pool below the sends in flight opens new upstream connections under bursts; profile = the vendor profile's nginx.upstream_keepalive (sms: 8); the default is WireMock's thread pool"

var upstreamPoolAllowed = fmt.Sprintf("profile, or a whole number 1..%d", scale.MaxUpstreamPool)

func showUpstreamPool(c *scale.Config) string { return scale.UpstreamPoolLabel(c.UpstreamPool) }

func setUpstreamPool(c *scale.Config, v string) (err error) {
	if v == "profile" {
		c.UpstreamPool = scale.UpstreamPoolProfile
		return nil
	}
	c.UpstreamPool, err = parseInt(v, 1, scale.MaxUpstreamPool)
	return
}
