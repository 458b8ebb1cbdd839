package scale

import "github.com/notifier-lab/notifier-lab/scenarios/internal/cgroup"

// cgroupFS is the reader of containers' cgroup files (package cgroup).
type cgroupFS = cgroup.FS

// hostCgroups reads the running host's.
var hostCgroups = cgroup.Host

// ErrNoCgroup is returned (wrapped) when none of the cgroup layouts the
// lab knows has a folder for a container.
var ErrNoCgroup = cgroup.ErrNoCgroup
