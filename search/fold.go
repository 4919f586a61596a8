package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Rune classes of the tokenizer.
const (
	clsOther    = iota // a separator
	clsWord            // part of a word: letter, digit, combining mark
	clsJoiner          // joins word segments into a compound: - . _ '
	clsNonASCII        // a byte of a multi-byte rune
)

// asciiClass classifies bytes; every byte ≥ 0x80 is clsNonASCII.
var asciiClass = func() (t [256]uint8) {
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = clsNonASCII
	}
	for c := 0; c < utf8.RuneSelf; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			t[c] = clsWord
		case c == '-' || c == '.' || c == '_' || c == '\'':
			t[c] = clsJoiner
		}
	}
	return
}()

// isCJK reports whether r is written without spaces between words and so
// is indexed as overlapping bigrams: Han, Hiragana, Katakana (full and half
// width), Hangul, and the marks that live inside such words.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	switch {
	case r == 0x3005 || r == 0x3006 || r == 0x30FC || r == 0x309D || r == 0x309E || r == 0x30FD || r == 0x30FE:
		return true // 々 〆 ー ゝ ゞ ヽ ヾ
	case r >= 0xFF66 && r <= 0xFF9F:
		return true // half-width katakana
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// isWordRune reports whether a non-ASCII rune belongs inside a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// isJoinerRune reports whether r joins compound segments (besides the
// ASCII - . _ ').
func isJoinerRune(r rune) bool {
	return r == '\u2019' || r == '\u2010' || r == '\u2011'
}

// foldBlocks hold the folded form of each rune below foldTableSize:
// lowercased, accents removed (é → e, Å → a), a few letters expanded (ß →
// ss, æ → ae); "" drops the rune (a combining accent). A block of
// foldBlockSize runes is built on its first use: a process that folds
// Latin text builds the blocks of Latin letters only (building them all
// took 5 ms, most of a short CLI search's analysis).
var foldBlocks [foldTableSize / foldBlockSize]struct {
	once sync.Once
	t    [foldBlockSize]string
}

const (
	foldTableSize = 0x2000
	foldBlockSize = 0x80
)

// special folds that decomposition does not produce.
var specialFolds = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
	'đ': "d", 'Đ': "d", 'ł': "l", 'Ł': "l", 'ı': "i", 'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d",
	'ħ': "h", 'Ħ': "h", 'ŀ': "l", 'Ŀ': "l", 'ſ': "s",
	'\u2019': "'", '\u2010': "-", '\u2011': "-",
}

// foldSlow folds one rune: combining diacritical marks are dropped, other
// runes lowercased and stripped of the combining marks their canonical
// decomposition adds.
func foldSlow(r rune) string {
	if s, ok := specialFolds[r]; ok {
		return s
	}
	if r >= 0x0300 && r <= 0x036F {
		return ""
	}
	if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII
		return strings.ToLower(string(r - 0xFEE0))
	}
	if r >= 0xFF61 && r <= 0xFFEF { // half-width forms
		return norm.NFKC.String(string(r))
	}
	l := unicode.ToLower(r)
	if r >= 0x2000 {
		return string(l)
	}
	var b strings.Builder
	for _, x := range norm.NFD.String(string(l)) {
		if x >= 0x0300 && x <= 0x036F {
			continue
		}
		if sf, ok := specialFolds[x]; ok && x != r {
			b.WriteString(sf) // ǣ → æ → ae
			continue
		}
		b.WriteRune(x)
	}
	return b.String()
}

// foldRune returns the folded form of r.
func foldRune(r rune) string {
	if r < 0 || r >= foldTableSize {
		return foldSlow(r)
	}
	b := &foldBlocks[r/foldBlockSize]
	b.once.Do(func() {
		base := r &^ (foldBlockSize - 1)
		for i := range b.t {
			b.t[i] = foldSlow(base + rune(i))
		}
	})
	return b.t[r%foldBlockSize]
}

// fold returns s lowercased and folded rune by rune; ASCII without
// capitals is returned as is.
func fold(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf || (c >= 'A' && c <= 'Z') {
			break
		}
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if r < utf8.RuneSelf {
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		b.WriteString(foldRune(r))
	}
	return b.String()
}

// Stopwords: function words dropped from a query that has other terms
// (they are still indexed, so a query of nothing but stopwords, or a
// quoted phrase, still finds them). English and German. Built on first
// use.
var stopwords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves s t ll d m ve re don
get got make makes made want need
aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes
auch auf aus bei bis bist da damit dann das dass dein deine dem denn der des dessen
dich die dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen
einer eines er es etwas euch euer eure für gegen gewesen hab habe haben hatte hier
hinter ich ihm ihn ihr ihre im in indem ins ist jede jedem jeden jeder jedes jetzt kann kein
keine können könnte mein meine mich mir mit muss nach nicht nichts noch nun nur ob oder
ohne sehr sein seine sich sie sind so soll sollte sondern über um und uns unser unter viel
vom von vor waren warum was weil welche welchem welchen welcher welches wenn wer werde
werden wie wieder will wir wird wo wollen würde zu zum zur zwischen`) {
		m[fold(w)] = true
	}
	return m
})

// stopTerm reports whether term (an analyzed base term) is a stopword's.
func stopTerm(a *Analyzer, term string) bool {
	stop := false
	a.Each(term, func(t Token) { stop = t.Stop })
	return stop
}

// synonyms relates a few verbs that how-to questions use interchangeably
// ("how do I make a vault" means create one); they count when a query is
// matched against page names, not as ranked terms. Keys and values are
// stemmed terms. The list is deliberately short: it only bridges words that
// documentation titles and questions habitually choose differently. Built
// on first use.
var synonyms = sync.OnceValue(func() map[string][]string {
	groups := [][]string{
		{"make", "create"},
		{"delete", "remove"},
		{"edit", "modify", "change"},
		{"find", "search"},
		{"setup", "configure"},
		{"fix", "troubleshoot"},
	}
	a := Acquire() // (a search's own analyzer, when it has released it)
	defer Release(a)
	stem := func(w string) string { return a.Tokens(w)[0].Term }
	m := map[string][]string{}
	for _, g := range groups {
		for _, w := range g {
			for _, o := range g {
				if o != w {
					m[stem(w)] = append(m[stem(w)], stem(o))
				}
			}
		}
	}
	m["made"] = m["make"]
	return m
})
