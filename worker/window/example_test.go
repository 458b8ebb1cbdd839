package window_test

import (
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/window"
)

func ExampleWindow_NextOpen() {
	w := window.Default()
	// A host clock in UTC: 11:50 UTC is 20:50 in Seoul, the window just closed.
	now := time.Date(2026, 11, 30, 11, 50, 0, 0, time.UTC)
	fmt.Println(w, w.Allowed(now))
	fmt.Println(w.NextOpen(now).Format(time.RFC3339), w.UntilOpen(now))
	// Output:
	// 08:00-20:50 Asia/Seoul false
	// 2026-12-01T08:00:00+09:00 11h10m0s
}

func ExampleStartedAt() {
	seoul, _ := time.LoadLocation("Asia/Seoul")
	// The lab starts a bulk run ten seconds before the window closes.
	clock := window.StartedAt(time.Date(2026, 11, 30, 20, 49, 50, 0, seoul))
	fmt.Println(window.Default().Allowed(clock.Now()))
	// Output: true
}
