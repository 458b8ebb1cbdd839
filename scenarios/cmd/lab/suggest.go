package main

import "strings"

// nearestKey is the one name of names that name is a likely misspelling
// of: the same letters in another case, or at most two edits away (one for
// names of four letters or fewer); "" when none or more than one is.
func nearestKey(name string, names []string) string {
	best, bestD, ties := "", -1, 0
	for _, n := range names {
		d, most := editDistance(strings.ToUpper(name), n), 2
		if len(n) <= 4 {
			most = 1
		}
		switch {
		case d > most:
		case bestD < 0 || d < bestD:
			best, bestD, ties = n, d, 0
		case d == bestD:
			ties++
		}
	}
	if ties > 0 {
		return ""
	}
	return best
}

// nearestCommand is the one command of runShCommands close to word (as
// nearestKey judges it), or "".
func nearestCommand(word string) string {
	var upper []string
	for _, c := range strings.Split(runShCommands, ", ") {
		upper = append(upper, strings.ToUpper(c))
	}
	return strings.ToLower(nearestKey(word, upper))
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
