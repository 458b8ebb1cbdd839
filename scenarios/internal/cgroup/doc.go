// Package cgroup reads a Docker container's CPU time and its processes'
// resident memory from the host's cgroup files and /proc, the counters
// docker stats reads, without a round trip through the engine. The scale
// benchmark samples every container of a run with it; the bench reads
// nginx's and Toxiproxy's CPU over each point (docs/network.md, "The
// round-trip model, measured").
package cgroup
