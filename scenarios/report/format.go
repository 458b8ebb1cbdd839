package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
)

// sortedKeys returns m's keys sorted.
func sortedKeys[K ~string, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// FormatCounts renders {a:1, b:2} as "a 1, b 2" in key order.
func FormatCounts[K ~string](m map[K]int) string {
	s := ""
	for i, k := range sortedKeys(m) {
		if i > 0 {
			s += ", "
		}
		s += string(k) + " " + strconv.Itoa(m[k])
	}
	return s
}

// Logf writes one "[lab] ..." line to w: the lab's log lines, from the
// bench, the matrix and the reports alike.
func Logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "[lab] "+format+"\n", args...)
}
