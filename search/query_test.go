package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

// describe renders a parsed query compactly for table tests.
func describe(q *Query) string {
	var parts []string
	var text []string
	for _, t := range q.Text {
		s := t.Term
		if t.Kind == Whole {
			s = "=" + s
		}
		if t.Stop {
			s += "!"
		}
		text = append(text, s)
	}
	if len(text) > 0 {
		parts = append(parts, "text["+strings.Join(text, " ")+"]")
	}
	for _, p := range q.Phrases {
		parts = append(parts, fmt.Sprintf("phrase%q", p))
	}
	if len(q.Exclude) > 0 {
		parts = append(parts, fmt.Sprintf("not%q", q.Exclude))
	}
	for _, p := range q.ExPhrase {
		parts = append(parts, fmt.Sprintf("notphrase%q", p))
	}
	for _, x := range []struct {
		name string
		v    []string
	}{{"type", q.Types}, {"-type", q.NotTypes}, {"tag", q.Tags}, {"-tag", q.NotTags}} {
		if len(x.v) > 0 {
			parts = append(parts, x.name+":"+strings.Join(x.v, ","))
		}
	}
	return strings.Join(parts, " ")
}

func TestParseQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"vault", "text[vault]"},
		{"how do I make a new vault?", "text[how! do! i! make! a! new vault]"},
		{`"remote vault" sync`, `text[sync] phrase["remot" "vault"]`},
		{`“curly quotes”`, `phrase["cur" "quot"]`},
		{`"unclosed phrase`, `phrase["unclos" "phrase"]`},
		{`""`, ""},
		{`-sync vault`, `text[vault] not["sync"]`},
		{`-"remote vault" sync`, `text[sync] notphrase["remot" "vault"]`},
		{`x -gpt-4o`, `text[x] not["gpt-4o"]`},
		{`x -数据库`, `text[x] notphrase["数据" "据库"]`},
		// a query of nothing but exclusions searches for them
		{`-"remote vault"`, `phrase["remot" "vault"]`},
		{`-gpt-4o`, `text[=-gpt-4o =gpt-4o gpt 4o]`},
		{`-数据库`, `text[数据 据库]`},
		{`-sync -mobile`, `text[=-sync sync =-mobile mobil]`},
		{`-ApprovalStatus`, `text[=-approvalstatus approvalstatus]`},
		{`-sync type:note`, `text[=-sync sync] type:note`},
		{`-Force -type:note`, `text[=-force forc] -type:note`},
		// a dash that belongs to the term: never an exclusion
		{`--dry-run vault`, `text[=--dry-run =dry-run dri run vault]`},
		{`vault -v`, `text[vault =-v v]`},
		{`-1 vault`, `text[=-1 1 vault]`},
		{`-v, --verbose`, `text[=-v v =--verbose verbos]`},
		{`vault -Force`, `text[vault] not["forc"]`},
		{`vault -!!`, `text[vault]`},
		{`- -- ---`, ""},
		{`a - b`, "text[a! b]"},
		{`TYPE:entity vault`, "text[vault] type:entity"},
		{`type:entity type:concept`, "type:entity,concept"},
		{`-type:note`, "-type:note"},
		{`tag:#Project/Sub tag:x -tag:old`, "tag:project/sub,x -tag:old"},
		{`tag: type:`, "text[tag type]"},
		{`http://example.com/x`, "text[http =example.com exampl com x]"},
		{`what's C++? (really) [[link]] {x} <y> & | ; $ % ^ * \`, "text[what! c realli link x y]"},
		{`foo"bar baz"`, `text[foo] phrase["bar" "baz"]`},
		{`gpt-4o`, "text[=gpt-4o gpt 4o]"},
	} {
		q, err := ParseQuery(c.in)
		if err != nil {
			t.Errorf("ParseQuery(%q): %v", c.in, err)
			continue
		}
		if got := describe(q); got != c.want {
			t.Errorf("ParseQuery(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestQuery_Resolve: a -word the index holds with its dash (a flag) is
// searched for, not left out.
func TestQuery_Resolve(t *testing.T) {
	for _, c := range []struct {
		in      string
		indexed []string
		want    string
	}{
		{"Get-ChildItem -Force", []string{"-force"}, "text[=get-childitem get! childitem =-force forc]"},
		{"Get-ChildItem -Force", nil, `text[=get-childitem get! childitem] not["forc"]`},
		{"sync -mobile -Force", []string{"-force", "mobil"}, `text[sync =-force forc] not["mobil"]`},
		{`sync -"remote vault"`, []string{"-remote"}, `text[sync] notphrase["remot" "vault"]`},
	} {
		q, err := ParseQuery(c.in)
		if err != nil {
			t.Fatal(err)
		}
		q.Resolve(func(term string) int {
			if slices.Contains(c.indexed, term) {
				return 1
			}
			return 0
		})
		if got := describe(q); got != c.want {
			t.Errorf("Resolve(%q, %v)\n got %s\nwant %s", c.in, c.indexed, got, c.want)
		}
	}
}

func TestParseQuery_UnknownType(t *testing.T) {
	// types are open: a well-formed type is a filter, whether
	// or not a page has it; only a malformed one is invalid
	q, err := ParseQuery("vault type:bogus type:question")
	if err != nil || strings.Join(q.Types, ",") != "bogus,question" {
		t.Fatalf("well-formed types: %+v %v", q, err)
	}
	// a type is a lower-case word on every surface: upper case is refused,
	// naming the lower-case spelling
	_, err = ParseQuery("vault type:Question")
	if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), `did you mean "type:question"?`) {
		t.Fatalf("type:Question: %v", err)
	}
	_, err = ParseQuery("vault type:bo_gus")
	if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), "bo_gus") || !strings.Contains(err.Error(), "lower-case word") {
		t.Fatalf("err = %v, want an invalid error naming the type and what a type is", err)
	}
}

func TestParseQuery_Long(t *testing.T) {
	q, err := ParseQuery(strings.Repeat("é", 5000))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Text) != 1 || len(q.Text[0].Term) > maxTermBytes {
		// one overlong word: dropped or kept, but never an error or a panic
		t.Logf("tokens: %v", q.Text)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		`how do I make a new vault?`, `"remote vault" -sync type:note tag:a/b`, `-"x`, `"`, `-`,
		`type:`, `tag:#`, `-tag:x -type:entity`, `数据库 "東京タワー"`, "\xff\"\xfe-", `“a” „b“`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			if errs.CodeOf(err) != errs.Invalid || !strings.Contains(strings.ToLower(s), "type:") {
				t.Fatalf("ParseQuery(%q): unexpected error %v", s, err)
			}
			return
		}
		for _, p := range q.Phrases {
			if len(p) == 0 {
				t.Fatalf("empty phrase from %q", s)
			}
		}
		for _, tk := range q.Text {
			if tk.Term == "" {
				t.Fatalf("empty term from %q", s)
			}
		}
		// highlighting never fails either
		for _, sp := range Highlight(s, s) {
			if sp[0] < 0 || sp[1] > len(s) || sp[0] >= sp[1] {
				t.Fatalf("Highlight span %v out of range for %q", sp, s)
			}
		}
	})
}
