package fault

import (
	"context"
	"fmt"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// journal returns the journal's POSTs to the send path of this scenario.
func (s *scenarioRun) journal(ctx context.Context) ([]vendormock.JournalEntry, error) {
	return journalFor(ctx, s.r.Stack, s.prefix)
}

func (s *scenarioRun) journalCount(ctx context.Context) (int, error) {
	j, err := s.journal(ctx)
	return len(j), err
}

// journalFor reads WireMock's journal and keeps POSTs to the send path
// whose refkey starts with prefix.
func journalFor(ctx context.Context, st *vendormock.Stack, prefix string) ([]vendormock.JournalEntry, error) {
	all, err := st.Journal(ctx)
	if err != nil {
		return nil, err
	}
	var out []vendormock.JournalEntry
	for _, e := range all {
		if e.Method == "POST" && e.Path == st.Profile.API.SendPath && strings.HasPrefix(e.RefKey, prefix) {
			out = append(out, e)
		}
	}
	return out, nil
}

// judge gathers what happened and compares it with the scenario's Expect.
func (s *scenarioRun) judge(ctx context.Context, stepErr error) (Verdict, error) {
	journal, err := s.journal(ctx)
	if err != nil {
		return Verdict{}, err
	}
	// Replicas keep their ledger on a Docker volume or in PostgreSQL: the
	// reconciler's ledger check runs on the one worker's file only.
	ledgerPath := s.ledgerPath()
	in, err := reconcile.Gather(ctx, reconcile.GatherOptions{
		Published:  s.pub.pub.Published(),
		LedgerPath: ledgerPath,
		AMQPURL:    s.r.Stack.AMQPURL,
		Main:       s.topo.Names.Main,
		SendPath:   s.r.Stack.Profile.API.SendPath,
		// The scenario's client.max_attempts: a dead letter with
		// attempts left is lost (dead-lettered unsent).
		MaxAttempts: s.topo.MaxAttempts,
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("reconcile: %w", err)
	}
	// Every replica's records, merged (the worker is stopped: read all).
	if err := s.recs.Poll(); err != nil {
		return Verdict{}, fmt.Errorf("reconcile: %w", err)
	}
	in.Records = s.recs.Merged()
	in.Journal = make([]reconcile.JournalEntry, len(journal))
	for i, j := range journal {
		in.Journal[i] = reconcile.JournalEntry(j)
	}
	rep := reconcile.Reconcile(in)
	if s.sc.Expect.LedgerAgrees {
		if err := s.checkLedger(ctx, journal); err != nil {
			return Verdict{}, err
		}
	}
	v := evaluate(s.sc, &rep, in.Records, journal, s.checks, stepErr)
	v.Reports = s.relayStats
	applySettle(&v, s.sc.Expect, measureSettle(in, s.topo.Names.Unknown, in.Records))
	if rs := s.sc.Server.Reports; rs != nil && s.relayStats != nil {
		h, err := promisedHorizon(s.r.Stack.Profile.ReportsJSON, rs)
		if err != nil {
			return Verdict{}, err
		}
		voidIf(&v, brokenPromise(s.relayOffered, in.Records, h))
	}
	return v, nil
}
