package worker

import "syscall"

// ProcessCPUMS returns this process's cumulative user+sys CPU time in
// milliseconds (getrusage RUSAGE_SELF), or -1 when it cannot be read.
func ProcessCPUMS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec)*1e3 + float64(t.Usec)/1e3 }
	return tv(ru.Utime) + tv(ru.Stime)
}
