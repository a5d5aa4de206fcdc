package plan

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Notes the API server would refuse are cut to its limit, never inside a
// character; those within it are left as they are.
func TestFitNote(t *testing.T) {
	for _, tc := range []struct {
		name, note string
		want       int // the length of the note given
	}{
		{"short", "a note", 6},
		{"at the limit", strings.Repeat("n", noteLimit), noteLimit},
		{"over it", strings.Repeat("n", noteLimit+1), noteLimit},
		{"over it, a character across the cut", strings.Repeat("n", noteLimit-4) + "€€", noteLimit - 1},
	} {
		got := FitNote(tc.note)
		if len(got) != tc.want || !utf8.ValidString(got) || (len(tc.note) > noteLimit) != strings.HasSuffix(got, "...") {
			t.Errorf("%s: FitNote gave %d bytes (valid UTF-8 %v, ends %q), want %d", tc.name, len(got), utf8.ValidString(got), got[len(got)-3:], tc.want)
		}
	}
}
