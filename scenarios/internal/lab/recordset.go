package lab

import (
	"errors"
	"slices"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// RecordSet follows the records files of several worker replicas (one
// Records each) as one: counts, lengths and the merged list cover every
// file. The zero value is empty; Add files as replicas start.
type RecordSet struct {
	files []*Records
}

// NewRecordSet follows the records files at paths (they may not exist yet).
func NewRecordSet(paths ...string) *RecordSet {
	s := &RecordSet{}
	for _, p := range paths {
		s.Add(p)
	}
	return s
}

// Add follows one more records file; a path already followed is ignored
// (a recreated replica appends to its file).
func (s *RecordSet) Add(path string) {
	for _, f := range s.files {
		if f.Path() == path {
			return
		}
	}
	s.files = append(s.files, NewRecords(path))
}

// Files returns the followed files, in the order they were added.
func (s *RecordSet) Files() []*Records { return slices.Clone(s.files) }

// File returns the followed file at path, nil when it is not followed.
func (s *RecordSet) File(path string) *Records {
	for _, f := range s.files {
		if f.Path() == path {
			return f
		}
	}
	return nil
}

// Poll reads what every file appended since the last Poll. Errors: each
// file's (Records.Poll), joined; the other files are read all the same.
func (s *RecordSet) Poll() error {
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Poll())
	}
	return errors.Join(errs...)
}

// Len is the number of records read so far, all files together.
func (s *RecordSet) Len() int {
	n := 0
	for _, f := range s.files {
		n += f.Len()
	}
	return n
}

// Counts returns the records read so far by outcome, all files together.
func (s *RecordSet) Counts() map[outcome.Outcome]int {
	m := map[outcome.Outcome]int{}
	for _, f := range s.files {
		for k, n := range f.Counts() {
			m[k] += n
		}
	}
	return m
}

// Last returns the record that ended last (records.Record.End) of all
// files; ok is false when there is none.
func (s *RecordSet) Last() (rec records.Record, ok bool) {
	for _, f := range s.files {
		if r, found := f.Last(); found && (!ok || r.End.After(rec.End)) {
			rec, ok = r, true
		}
	}
	return rec, ok
}

// Merged returns every record read so far. With one file they are that
// file's records as written. With several they are ordered by End (ties
// in file order) and renumbered: Seq becomes 1..n in that order, so that
// a reader ordering by Seq (the reconciler) sees them in the order they
// ended; a record's own file and seq are in Replica and the file.
func (s *RecordSet) Merged() []records.Record {
	if len(s.files) == 1 {
		return slices.Clone(s.files[0].All())
	}
	out := []records.Record{}
	for _, f := range s.files {
		out = append(out, f.All()...)
	}
	slices.SortStableFunc(out, func(a, b records.Record) int { return a.End.Compare(b.End) })
	for i := range out {
		out[i].Seq = i + 1
	}
	return out
}
