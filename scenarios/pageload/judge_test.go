package pageload

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/vendormock/pagesite"
)

// TestServerViewOfTheAccessLog reads a real access log: a 100-image
// load over HTTP/1.1 on six connections, backend loads of two requests
// on one connection, the API call's status.
func TestServerViewOfTheAccessLog(t *testing.T) {
	f, err := os.Open("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := pagesite.ParseAccessLog(f)
	if err != nil {
		t.Fatal(err)
	}
	v := ServerViewOf(lines, "x2p100")
	if v.Connections != 6 || v.Requests != 101 || v.OK != 101 || v.Protocols["HTTP/1.1"] != 101 || v.APIStatus != "" {
		t.Errorf("x2p100: %+v; want 6 connections, 101 requests 200 on HTTP/1.1, no API call", v)
	}
	b := ServerViewOf(lines, "x3backend")
	if b.Connections != 1 || b.Requests != 2 || b.APIStatus != "200" || b.Protocols["HTTP/2.0"] != 2 || b.TLS["TLSv1.3"] != 2 {
		t.Errorf("x3backend: %+v; want one h2 connection, the page and the API call 200 on TLS 1.3", b)
	}
	if n := ServerViewOf(lines, "x3").Requests; n != 0 {
		t.Errorf("load id x3 matched %d lines of other loads (a prefix is not the id)", n)
	}
}

// plantLoads builds runs loads of one cell with these page times and
// connections per load, complete and on their protocol.
func plantLoads(page string, n int, proto string, times []float64, conns int, nextConn *int) []Load {
	var out []Load
	browser, server := WantALPN(proto)
	for i, ms := range times {
		l := Load{ID: fmt.Sprintf("r%d-%s-%s", i+1, page, proto), Page: page, Resources: n, Proto: proto, Run: i + 1}
		l.Times = PageTimes{LoadMS: ms, CompleteMS: ms, Images: n, Protocols: map[string]int{browser: n + 1}}
		l.Server = ServerView{Requests: l.WantRequests(), OK: l.WantRequests(), Protocols: map[string]int{server: l.WantRequests()}}
		if page == BackendPage {
			l.Server.APIStatus = "200"
		}
		for range conns {
			*nextConn++
			l.Server.ConnIDs = append(l.Server.ConnIDs, fmt.Sprint(*nextConn))
		}
		l.Server.Connections = conns
		out = append(out, l)
	}
	return out
}

// goodRun is a run that passes every check: study C's shape with 5 loads
// per cell.
func goodRun() []Load {
	c := 0
	var ls []Load
	ls = append(ls, plantLoads("p10", 10, ProtoH1, []float64{560, 580, 600, 650, 700}, 6, &c)...)
	ls = append(ls, plantLoads("p10", 10, ProtoH2, []float64{400, 410, 420, 450, 900}, 1, &c)...)
	ls = append(ls, plantLoads("p100", 100, ProtoH1, []float64{1450, 1600, 1800, 2000, 2100}, 6, &c)...)
	ls = append(ls, plantLoads("p100", 100, ProtoH2, []float64{480, 730, 770, 1050, 1100}, 1, &c)...)
	ls = append(ls, plantLoads(BackendPage, 0, ProtoH1, []float64{2300, 2430, 2600, 2800, 3600}, 1, &c)...)
	ls = append(ls, plantLoads(BackendPage, 0, ProtoH2, []float64{2290, 2320, 2500, 2510, 2900}, 1, &c)...)
	return ls
}

func judged(ls []Load) map[string]Check {
	out := map[string]Check{}
	for _, c := range Judge(ls, Summarize(ls), 100) {
		out[c.Name] = c
	}
	return out
}

func TestJudgePassesAGoodRun(t *testing.T) {
	ls := goodRun()
	checks := Judge(ls, Summarize(ls), 100)
	if len(checks) != 6 || !Passed(checks) {
		for _, c := range checks {
			t.Error(c.VerdictLine())
		}
	}
	cells := Summarize(ls)
	if len(cells) != 6 || cells[0].Page != "p10" || cells[0].Proto != ProtoH1 || cells[5].Page != BackendPage || cells[5].Proto != ProtoH2 {
		t.Errorf("cells out of order: %+v", cells)
	}
	if p100h1 := cells[2]; p100h1.MedianMS != 1800 || p100h1.P25MS != 1600 || p100h1.P75MS != 2000 || p100h1.ConnMin != 6 {
		t.Errorf("p100 h1 cell: %+v", p100h1)
	}
}

// TestJudgeCatchesPlantedFailures: each planted failure fails its own
// check and no other (the negative controls of the judge).
func TestJudgeCatchesPlantedFailures(t *testing.T) {
	cases := []struct {
		name, check string
		plant       func(ls []Load) []Load
	}{
		{"h2 slower at 100", CheckH2Faster, func(ls []Load) []Load {
			for i := range ls {
				if ls[i].Page == "p100" && ls[i].Proto == ProtoH2 {
					ls[i].Times.CompleteMS += 1500
				}
			}
			return ls
		}},
		{"h2 median below h1's but the middle halves overlap", CheckH2Faster, func(ls []Load) []Load {
			for i := range ls {
				if ls[i].Page == "p100" && ls[i].Proto == ProtoH2 && ls[i].Run >= 4 {
					ls[i].Times.CompleteMS = 1700
				}
			}
			return ls
		}},
		{"an h2 load on two connections", CheckConnections, func(ls []Load) []Load {
			for i := range ls {
				if ls[i].ID == "r3-p10-h2" {
					ls[i].Server.Connections, ls[i].Server.ConnIDs = 2, append(ls[i].Server.ConnIDs, "9001")
				}
			}
			return ls
		}},
		{"an h1 load at 100 on one connection", CheckConnections, func(ls []Load) []Load {
			for i := range ls {
				if ls[i].ID == "r2-p100-h1" {
					ls[i].Server.Connections, ls[i].Server.ConnIDs = 1, ls[i].Server.ConnIDs[:1]
				}
			}
			return ls
		}},
		{"backend page 20% slower over h2", CheckBackendNoise, func(ls []Load) []Load {
			for i := range ls {
				if ls[i].Page == BackendPage && ls[i].Proto == ProtoH2 {
					ls[i].Times.CompleteMS *= 1.3
				}
			}
			return ls
		}},
		{"an image missing", CheckComplete, func(ls []Load) []Load {
			ls[0].Times.Images, ls[0].Server.OK = 9, 10
			return ls
		}},
		{"the API call failed", CheckComplete, func(ls []Load) []Load {
			for i := range ls {
				if ls[i].ID == "r1-backend-h2" {
					ls[i].Server.APIStatus = "499"
				}
			}
			return ls
		}},
		{"an h2 load served over HTTP/1.1", CheckProtocol, func(ls []Load) []Load {
			for i := range ls {
				if ls[i].ID == "r1-p10-h2" {
					ls[i].Times.Protocols = map[string]int{"http/1.1": 11}
				}
			}
			return ls
		}},
		{"a connection reused across two loads", CheckFresh, func(ls []Load) []Load {
			ls[1].Server.ConnIDs[0] = ls[0].Server.ConnIDs[0]
			return ls
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := judged(tc.plant(goodRun()))
			for name, c := range got {
				if (name == tc.check) == c.Pass {
					t.Errorf("%s (planted: %s)", c.VerdictLine(), tc.name)
				}
			}
			if !strings.HasPrefix(got[tc.check].VerdictLine(), "FAIL "+tc.check+": ") {
				t.Errorf("verdict line %q", got[tc.check].VerdictLine())
			}
		})
	}
}

// TestJudgeFailsWithoutLoads: no load of a cell is a failure, never a
// pass by default.
func TestJudgeFailsWithoutLoads(t *testing.T) {
	for _, c := range Judge(nil, nil, 100) {
		if c.Pass {
			t.Errorf("%s passed without loads", c.Name)
		}
	}
	ls := goodRun()
	for i := range ls {
		if ls[i].Page == BackendPage {
			ls[i].Error = "page load error net::ERR_CONNECTION_RESET"
		}
	}
	got := judged(ls)
	if got[CheckBackendNoise].Pass || got[CheckComplete].Pass {
		t.Errorf("failed backend loads: %s / %s", got[CheckBackendNoise].VerdictLine(), got[CheckComplete].VerdictLine())
	}
}

func TestNoiseBandFloor(t *testing.T) {
	h1 := Cell{MedianMS: 2000, P25MS: 1990, P75MS: 2000}
	h2 := Cell{MedianMS: 2010, P25MS: 2000, P75MS: 2030}
	if got := NoiseBand(h1, h2); got != 40 {
		t.Errorf("band %v; want the floor, 2%% of 2,000 ms", got)
	}
	h2.P75MS = 2100
	if got := NoiseBand(h1, h2); got != 100 {
		t.Errorf("band %v; want h2's IQR, 100 ms", got)
	}
}
