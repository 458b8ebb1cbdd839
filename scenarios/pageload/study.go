package pageload

// StudyFigure is one published page-load time of study C (docs/studies.md,
// "Study C: nginx HTTP/2": nginx 1.29.6 with `http2 on;`, a browser),
// ms. Resources 0 is the page bound by its backend.
type StudyFigure struct {
	Resources int
	H1MS      float64
	H2MS      float64
	// Change is the change the study published ("-37%"), which its
	// rounded times do not always give back; "no difference" for the
	// backend-bound page.
	Change string
}

// studyC are study C's figures (docs/studies.md, study C's table and its
// backend-bound page: 2.08 s vs 2.09 s).
var studyC = []StudyFigure{
	{Resources: 10, H1MS: 88, H2MS: 70, Change: "-21%"},
	{Resources: 50, H1MS: 170, H2MS: 110, Change: "-35%"},
	{Resources: 100, H1MS: 250, H2MS: 159, Change: "-37%"},
	{Resources: 0, H1MS: 2080, H2MS: 2090, Change: "no difference"},
}

// StudyC returns study C's figure for a page of resources images (0: the
// backend-bound page); ok is false where the study published none.
func StudyC(resources int) (StudyFigure, bool) {
	for _, f := range studyC {
		if f.Resources == resources {
			return f, true
		}
	}
	return StudyFigure{}, false
}

// StudyConnectionsH1 and StudyConnectionsH2 are study C's connections per
// host: "HTTP/1.1 browsers open 6 connections per host, HTTP/2
// multiplexes on one".
const (
	StudyConnectionsH1 = 6
	StudyConnectionsH2 = 1
)
