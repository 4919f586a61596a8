package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// toks renders tokens as "term" (Word), "=term" (Whole), "+term" (Part),
// "~term" (Gram), with "!" appended to stopwords.
func toks(s string) string {
	a := NewAnalyzer()
	var out []string
	a.Each(s, func(t Token) {
		x := t.Term
		switch t.Kind {
		case Whole:
			x = "=" + x
		case Part:
			x = "+" + x
		case Gram:
			x = "~" + x
		}
		if t.Stop {
			x += "!"
		}
		out = append(out, x)
	})
	return strings.Join(out, " ")
}

func TestAnalyzer(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"Hello, World!", "hello world"},
		{"running runs ran", "run run ran"},
		{"Vaults VAULT vault's", "vault vault vault"},
		{"Café crème brûlée", "cafe creme brule"},
		{"cafe\u0301 (decomposed)", "cafe decompos"},
		{"Straße Æsir Øresund", "strass aesir oresund"},
		{"Ｆｕｌｌ ｗｉｄｔｈ", "full width"},
		{"gpt-4o", "=gpt-4o +gpt +4o"},
		{"v1.2 release", "=v1.2 +v1 +2 releas"},
		{"snake_case_name", "=snake_case_name +snake +case +name"},
		{"end of sentence. Next", "end of! sentenc next"},
		{"trailing-", "trail"},
		{"-leading", "=-leading lead"},
		// flags: a dash that starts a token is kept with it
		{"-Force -ApprovalStatus", "=-force forc =-approvalstatus approvalstatus"},
		{"--dry-run", "=--dry-run =dry-run +dri +run"},
		{"ls -1 and -v, (-x) `--exclude=PAT`", "ls =-1 1 and! =-v v =-x x =--exclude exclud pat"},
		{"-n, --lines=[-]NUM", "=-n n =--lines line num"},
		{"e-mail well-known x -- y - z ---w", "=e-mail +e +mail =well-known +well +known x y z w"},
		{"Get-ChildItem -Recurse.", "=get-childitem +get! +childitem =-recurse recurs"},
		{"«-weiß»", "=-weiss weiss"},
		{"e.g. this", "=e.g +e +g this!"},
		{"obsidian.md/help", "=obsidian.md +obsidian +md help"},
		{"don't", "=don't +don! +t!"},
		{"Obsidian’s vault", "obsidian vault"},
		{"how do I make a new vault?", "how! do! i! make! a! new vault"},
		{"数据库设计", "~数据 ~据库 ~库设 ~设计"},
		{"猫", "~猫"},
		{"GPT模型很好", "gpt ~模型 ~型很 ~很好"},
		{"東京タワーへ行く", "~東京 ~京タ ~タワ ~ワー ~ーへ ~へ行 ~行く"},
		{"한국어 검색", "~한국 ~국어 ~검색"},
		{"ｶﾀｶﾅ", "~カタ ~タカ ~カナ"},
		{"Müller über Öl", "muller uber! ol"},
		{"#tag [[Link|label]] **bold**", "tag link label bold"},
		{"C++ and C#", "c and! c"},
		// character references are no words (their names were indexed)
		{"App&nbsp;version &amp; caf&eacute; &#8212;&#x2014; R&D; AT&T &nbsp", "app version caf r d! at! t! nbsp"},
		{"\x00\xff\xfebroken\xc3", "broken"},
		{strings.Repeat("x", 100), ""},
		{"a." + strings.Repeat("b.", 20) + "c", "=a.b.b.b.b.b.b.b +a! +b +b +b +b +b +b +b =b.b.b.b.b.b.b.b +b +b +b +b +b +b +b +b =b.b.b.b.b.c +b +b +b +b +b +c"},
	} {
		if got := toks(c.in); got != c.want {
			t.Errorf("analyze %q\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestAnalyzer_Offsets checks that every token's offsets cover source text
// whose analysis is the token itself.
func TestAnalyzer_Offsets(t *testing.T) {
	a := NewAnalyzer()
	s := "The gpt-4o model, v1.2 — 数据库 and Café's crème."
	a.Each(s, func(tk Token) {
		if tk.Start < 0 || tk.End > len(s) || tk.Start >= tk.End {
			t.Fatalf("token %+v out of range", tk)
		}
		sub := s[tk.Start:tk.End]
		b := NewAnalyzer()
		found := false
		b.Each(sub, func(x Token) { found = found || x.Term == tk.Term })
		if !found {
			t.Errorf("token %q at %q does not re-analyze to itself", tk.Term, sub)
		}
	})
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"Hello, World!", "gpt-4o v1.2", "数据库设计", "東京タワー", "Straße café", "don't obsidian's",
		"a.b.c.d.e.f.g.h.i.j", "\xff\xfe", "ｶﾀｶﾅ", "e\u0301", "--", "'s", "x'", "’", "a’s",
	} {
		f.Add(s)
	}
	a := NewAnalyzer()
	f.Fuzz(func(t *testing.T, s string) {
		// every language's stemmer keeps the same invariants
		a.SetLanguage(Language(len(s) % int(numLanguages)))
		defer a.SetLanguage(English)
		prevStart := -1
		a.Each(s, func(tk Token) {
			if tk.Term == "" || !utf8.ValidString(tk.Term) {
				t.Fatalf("bad term %q from %q", tk.Term, s)
			}
			if len(tk.Term) > maxTermBytes && tk.Kind != Gram {
				t.Fatalf("term %q longer than %d bytes", tk.Term, maxTermBytes)
			}
			if strings.ContainsRune(tk.Term, 0) {
				t.Fatalf("term %q holds NUL", tk.Term)
			}
			if tk.Start < 0 || tk.End > len(s) || tk.Start >= tk.End {
				t.Fatalf("token %+v out of range for %q", tk, s)
			}
			if tk.Kind != Part && tk.Start < prevStart {
				t.Fatalf("tokens out of order in %q", s)
			}
			if tk.Kind != Part {
				prevStart = tk.Start
			}
			if fold(tk.Term) != tk.Term && tk.Kind != Gram {
				t.Fatalf("term %q is not folded", tk.Term)
			}
		})
		// snippets of any text, around any of its terms, are short valid text
		terms := map[string]float64{}
		for _, x := range Terms(s) {
			terms[x] = 1
			break
		}
		sn := Snippet(s, terms)
		if len(sn) > snippetMax+8 || (utf8.ValidString(s) && !utf8.ValidString(sn)) {
			t.Fatalf("snippet %q of %q", sn, s)
		}
	})
}
