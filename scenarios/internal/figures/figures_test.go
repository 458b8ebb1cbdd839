package figures

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository root, three folders up.
var root = filepath.Join("..", "..", "..")

func TestREADMEFiguresAreInTheFilesTheyCite(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Check(string(b), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("README.md %s", p)
	}
}

// The negative control: the real README with one figure planted wrong,
// and one table stripped of its citation, must fail.
func TestAPlantedWrongFigureIsCaught(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	const row = "| 10 ms | pooled | 32.5 | 30.4 |"
	if !strings.Contains(readme, row) {
		t.Fatalf("the README no longer has the row %q this test plants into; update the test", row)
	}
	planted := strings.Replace(readme, row, "| 10 ms | pooled | 32.5 | 29.3 |", 1)
	problems, err := Check(planted, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].Figure != "29.3" {
		t.Fatalf("planted 29.3: problems %v, want exactly that figure", problems)
	}

	uncited := strings.Replace(readme, "<!-- figures: results/summary.md -->\n", "", 1)
	problems, err = Check(uncited, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].Figure != "" {
		t.Fatalf("removed a citation: problems %v, want one uncited table", problems)
	}
}

func TestRules(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "r.md"), []byte("p50 23.5, conns 1050, ratio 1.79x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, md string
		want     []string // figures refused; "" for an uncited table
	}{
		{"cited and present, thousands separator ignored", "<!-- figures: r.md -->\n| a | b |\n|---|---|\n| 23.5 ms | 1,050 |\n", nil},
		{"a figure absent", "<!-- figures: r.md -->\n| a |\n|---|\n| 23.6 |\n", []string{"23.6"}},
		{"code spans are not figures", "| a |\n|---|\n| `COUNT=1000` |\n", nil},
		{"no citation", "| a |\n|---|\n| 1.79x |\n", []string{""}},
		{"a citation reaches only the next table", "<!-- figures: r.md -->\n| a |\n|---|\n| 1.79 |\n\ntext\n\n| b |\n|---|\n| 1.79 |\n", []string{""}},
		{"header numbers are not checked", "| 1,000 sends |\n|---|\n| pooled |\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, err := Check(tc.md, dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.Figure)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Fatalf("refused %q, want %q (%v)", got, tc.want, problems)
			}
		})
	}
	if _, err := Check("<!-- figures: missing.md -->\n| a |\n|---|\n| 1 |\n", dir); err == nil {
		t.Fatal("a missing cited file: no error")
	}
}
