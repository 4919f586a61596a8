package search

import (
	"maps"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/arabic"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/hungarian"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/turkish"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
)

// Language is the language a text is stemmed in. English (the zero
// value) is also what text in a language without a stemmer gets: its
// ASCII words are stemmed as English, as before languages were known,
// and CJK text is indexed as bigrams whatever the language.
type Language uint8

// Languages with a Snowball stemmer.
const (
	English Language = iota
	Arabic
	Danish
	Dutch
	Finnish
	French
	German
	Hungarian
	Italian
	Norwegian
	Portuguese
	Romanian
	Russian
	Spanish
	Swedish
	Turkish
	numLanguages
)

// langInfo describes one language: its names (ISO 639-1 code first,
// then the English name, then others accepted in configuration and
// frontmatter), its Snowball stemmer and its most frequent function
// words, which are stopwords and the evidence for detecting it.
// loanPlurals marks a language whose stemmer keeps the -s of plurals
// borrowed from English (Backups, plugins, tags) that its own plurals
// never end in after a consonant (see stemmer.stem).
type langInfo struct {
	names       []string
	stem        func(*snowballstem.Env) bool
	stop        string
	loanPlurals bool
}

var langs = [numLanguages]langInfo{
	English: {names: []string{"en", "english", "eng"}},
	Arabic:  {names: []string{"ar", "arabic", "ara", "العربية"}, stem: arabic.Stem},
	Danish: {names: []string{"da", "danish", "dan", "dansk"}, stem: danish.Stem, stop: `og i jeg det at en den til er som på de med han af for ikke der var
		mig sig men et har om vi min havde ham hun nu over da fra du ud sin dem os op man hans hvor eller hvad skal
		selv her alle vil blev kunne ind når være dog noget ville jo deres efter ned skulle denne end dette mit
		også under have dig anden hende mine alt meget sit sine vor mod disse hvis din nogle hos blive mange ad
		bliver hendes været thi jer sådan`},
	Dutch: {names: []string{"nl", "dutch", "nld", "nederlands", "flemish"}, stem: dutch.Stem, stop: `de en van ik te dat die in een hij het niet zijn
		is was op aan met als voor had er maar om hem dan zou of wat mijn men dit zo door over ze zich bij ook
		tot je mij uit der daar haar naar heb hoe heeft hebben deze u want nog zal me zij nu ge geen omdat iets
		worden toch al waren veel meer doen toen moet ben zonder kan hun dus alles onder ja eens hier wie werd
		altijd doch wordt wezen kunnen ons zelf tegen na reeds wil kon niets uw iemand geweest andere`},
	Finnish: {names: []string{"fi", "finnish", "fin", "suomi"}, stem: finnish.Stem, stop: `olla olen olet on olemme olette ovat ole oli
		olisi olisit olisin olisimme olisitte olisivat olit olin olimme olitte olivat ollut olleet en et ei
		emme ette eivät minä sinä hän me te he tämä tuo se nämä nuo ne kuka mikä että ja jos koska kuin mutta
		niin sekä sillä tai vaan vai vaikka kanssa mukaan noin poikki yli kun niin nyt itse myös voi voit voidaan`},
	French: {names: []string{"fr", "french", "fra", "fre", "français", "francais"}, stem: french.Stem, stop: `au aux avec ce ces dans de des du elle en et eux il
		je la le les leur lui ma mais me même mes moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses
		son sur ta te tes toi ton tu un une vos votre vous c d j l à m n s t y été étée étées étés étant suis es
		est sommes êtes sont serai sera serons seront étais était étions étaient fus fut ai as avons avez ont aurai
		aura avais avait avions avaient eu comment quand où pourquoi peut peux faut cette cet ça sans plus très`},
	German: {names: []string{"de", "german", "deu", "ger", "deutsch"}, stem: german.Stem, loanPlurals: true},
	Hungarian: {names: []string{"hu", "hungarian", "hun", "magyar"}, stem: hungarian.Stem, stop: `a az egy be ki le fel meg el át rá ide oda szét
		és hogy nem is de ha csak már még mint vagy van volt lesz lett azt ezt ami aki amely ahol mert pedig sem
		minden mindig nagyon után alatt között által ezek azok mi ti ők én te ő mely hol hogyan miért`},
	Italian: {names: []string{"it", "italian", "ita", "italiano"}, stem: italian.Stem, loanPlurals: true, stop: `ad al allo ai agli all agl alla alle con col coi da dal
		dallo dai dagli dall dagl dalla dalle di del dello dei degli dell degl della delle in nel nello nei negli
		nell negl nella nelle su sul sullo sui sugli sull sugl sulla sulle per tra contro io tu lui lei noi voi
		loro mio mia miei mie tuo tua tuoi tue suo sua suoi sue nostro nostra nostri nostre vostro vostra vostri
		vostre mi ti ci vi lo la li le gli ne il un uno una ma ed se perché anche come dov dove che chi cui non
		più quale quanto quanti quanta quante quello quelli quella quelle questo questi questa queste si tutto
		tutti a c e i l o ho hai ha abbiamo avete hanno è sono sei siamo siete essere può posso puoi viene vengono
		cosa quando molto senza ogni`},
	Norwegian: {names: []string{"no", "norwegian", "nor", "nb", "nn", "norsk", "bokmål", "nynorsk"}, stem: norwegian.Stem, stop: `og i jeg det at en et den til er som på de med han av
		ikke ikkje der så var meg seg men ett har om vi min mitt ha hadde hun nå over da ved fra du ut sin dem
		oss opp man kan hans hvor eller hva skal selv sjøl her alle vil bli ble blei blitt kunne inn når være kom
		noen noe ville dere som deres kun ja etter ned skulle denne for deg si sine sitt mot å meget hvorfor dette
		disse uten hvordan ingen din ditt blir samme hvilken hvilke sånn inni mellom vår hver hvem vors hvis både
		bare enn fordi før mange også slik vært`},
	Portuguese: {names: []string{"pt", "portuguese", "por", "português", "portugues"}, stem: portuguese.Stem, loanPlurals: true, stop: `de a o que e do da em um para com não uma os no se na
		por mais as dos como mas ao ele das à seu sua ou quando muito nos já eu também só pelo pela até isso ela
		entre depois sem mesmo aos seus quem nas me esse eles você essa num nem suas meu às minha numa pelos elas
		qual nós lhe deles essas esses pelas este dele tu te vocês vos lhes meus minhas teu tua teus tuas nosso
		nossa nossos nossas dela delas esta estes estas aquele aquela aqueles aquelas isto aquilo estou está
		estamos estão foi ser tem é são posso pode onde como porque então`},
	Romanian: {names: []string{"ro", "romanian", "ron", "rum", "română", "romana"}, stem: romanian.Stem, stop: `și în a la de cu pe un o nu să că este sunt din
		pentru mai care ce cum dar sau fi fost acest această aceste acestea lui ei le lor îl îi ne vă se mă te
		am ai are au avem aveți era eram poate pot dacă când unde cine foarte după până prin spre fără sub între`},
	Russian: {names: []string{"ru", "russian", "rus", "русский"}, stem: russian.Stem, stop: `и в во не что он на я с со как а то все она так его но
		да ты к у же вы за бы по только ее мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли
		если уже или ни быть был него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут
		где есть надо ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто
		этот того потому этого какой совсем ним здесь этом один почти мой чтобы нее сейчас были куда зачем
		всех никогда можно при наконец два об другой хоть после над больше тот через эти нас про всего них
		какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им
		более всегда конечно всю между это как ли чтобы какие каких`},
	Spanish: {names: []string{"es", "spanish", "spa", "español", "espanol", "castellano"}, stem: spanish.Stem, loanPlurals: true, stop: `de la que el en y a los del se las por un para con no una su al lo
		como más pero sus le ya o este sí porque esta entre cuando muy sin sobre también me hasta hay donde quien
		desde todo nos durante todos uno les ni contra otros ese eso ante ellos e esto mí antes algunos qué unos
		yo otro otras otra él tanto esa estos mucho quienes nada muchos cual poco ella estar estas algunas algo
		nosotros mi mis tú te ti tu tus ellas nosotras vosotros vosotras os mío mía míos mías tuyo tuya tuyos
		tuyas suyo suya suyos suyas nuestro nuestra nuestros nuestras vuestro vuestra vuestros vuestras esos
		esas estoy estás está estamos estáis están es son fue ser puedo puede pueden cómo dónde cuándo hago
		hace quiero`},
	Swedish: {names: []string{"sv", "swedish", "swe", "svenska"}, stem: swedish.Stem, stop: `och det att i en jag hon som han på den med var sig för så
		till är men ett om hade de av icke mig du henne då sin nu har inte hans honom skulle hennes där min man
		ej vid kunde något från ut när efter upp vi dem vara vad över än dig kan sina här ha mot alla under
		någon eller allt mycket sedan ju denna själv detta åt utan varit hur ingen mitt ni bli blev oss din
		dessa några deras blir mina samma vilken er sådan vår blivit dess inom mellan sådant varför varje vilka
		ditt vem vilket sitta sådana vart dina vars vårt våra ert era vilkas också`},
	Turkish: {names: []string{"tr", "turkish", "tur", "türkçe", "turkce"}, stem: turkish.Stem, stop: `ve bir bu da de için ile çok gibi daha ne en ama o
		ben sen biz siz onlar şu mi mı mu mü ya veya ki kadar sonra önce her hiç nasıl neden niçin nerede şey
		olan olarak oldu olduğu olur var yok değil bile diye göre ise`},
}

// langByName maps every accepted name of a language to it.
var langByName = func() map[string]Language {
	m := map[string]Language{}
	for l, info := range langs {
		for _, n := range info.names {
			m[n] = Language(l)
		}
	}
	// languages without a stemmer whose text is still well served by the
	// default analysis (CJK bigrams, English for Latin letters)
	for _, n := range []string{"zh", "ja", "ko", "chinese", "japanese", "korean", "cjk"} {
		m[n] = English
	}
	return m
}()

// LanguageNames lists the language names that configuration and
// frontmatter accept (each language's code and English name).
func LanguageNames() []string {
	out := make([]string, 0, 2*numLanguages)
	for _, info := range langs {
		out = append(out, info.names[1])
	}
	return out
}

// ParseLanguage returns the language named by s: an ISO 639-1 or 639-2
// code, a BCP 47 tag (pt-BR, de_CH: the primary subtag counts) or an
// English or native name, in any case. ok is false for a language synapse
// has no stemmer for (the caller then falls back to its default).
func ParseLanguage(s string) (Language, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if l, ok := langByName[s]; ok {
		return l, true
	}
	if i := strings.IndexAny(s, "-_"); i > 0 {
		l, ok := langByName[s[:i]]
		return l, ok
	}
	return English, false
}

// String returns the language's English name.
func (l Language) String() string {
	if l >= numLanguages {
		return "unknown"
	}
	return langs[l].names[1]
}

// Code returns the language's ISO 639-1 code.
func (l Language) Code() string {
	if l >= numLanguages {
		return ""
	}
	return langs[l].names[0]
}

// Snowball's Russian list also holds тем ("by that"), left out here: it
// is as often the genitive plural of тема (Обновление тем, "updating
// themes"), a word wikis about software are full of.

// langStop holds each language's stopwords, folded (English's and
// German's are the shared list in fold.go), each built on its first use:
// a process that analyzes text in one language builds that language's
// list only, and one that analyzes none builds none.
var langStop = func() (t [numLanguages]func() map[string]bool) {
	for l := range langs {
		stop := langs[l].stop
		if stop == "" {
			t[l] = func() map[string]bool { return nil }
			continue
		}
		t[l] = sync.OnceValue(func() map[string]bool {
			m := map[string]bool{}
			for _, w := range strings.Fields(stop) {
				m[fold(w)] = true
			}
			return m
		})
	}
	return
}()

// detectTables are the tables language detection looks function words up
// in, built on the first detection.
type detectTables struct {
	// stopTable maps a folded function word to the languages it is one
	// in (bit l for Language l) as a word table, which detection looks
	// words up in without hashing them twice or allocating.
	stopTable *wordTable
	// stopMaxLen is the length of the longest function word detection
	// knows (at most maxStopBytes).
	stopMaxLen int
}

// detection returns the tables detection looks function words up in:
// the table buildDetection makes, generated into lang_table.go (a test
// keeps the two the same), so that no process builds it: a search
// detects its query's language, and building the table cost it more than
// the detection (1,055 words folded and hashed, 2.7M instructions and
// a hundred page faults).
var detection = sync.OnceValue(func() *detectTables {
	return &detectTables{
		stopTable:  &wordTable{slots: detectSlots[:], keys: []byte(detectKeys), n: detectCount, max: len(detectSlots)},
		stopMaxLen: detectMaxLen,
	}
})

// buildDetection builds the tables detection looks function words up in
// (TestDetectTable_Generated writes them into lang_table.go), inserting
// the words in sorted order so that the table is the same every time.
func buildDetection() *detectTables {
	// the words of the shared list that detection counts for English
	// and German
	m := make(map[string]uint32, 2048)
	for _, w := range strings.Fields(`the and of to a in is it that for on with as are this be by or you your
		from can not an at if have what how which when do does will all there their more other`) {
		m[w] |= 1 << English
	}
	for _, w := range strings.Fields(`der die das und ist nicht ein eine zu mit den sich auf für dem des im
		auch es an werden wird oder aus bei wie kann sie wenn nach einer noch über nur sind`) {
		m[fold(w)] |= 1 << German
	}
	// (from each language's list itself: the lists as maps are built
	// only for the languages text is analyzed in)
	for l := range langs {
		for _, w := range strings.Fields(langs[l].stop) {
			m[fold(w)] |= 1 << l
		}
	}
	d := &detectTables{stopTable: newWordTable(1 << 14)}
	for _, w := range slices.Sorted(maps.Keys(m)) {
		d.stopTable.put(w, int32(m[w]), -1)
		d.stopMaxLen = max(d.stopMaxLen, len(w))
	}
	d.stopMaxLen = min(d.stopMaxLen, maxStopBytes)
	return d
}

// maxStopBytes bounds the function words detection looks up.
const maxStopBytes = 16

// stopMaskOf returns the languages a word's folded form is a function
// word in (the word is at
// most maxStopBytes long), folding it into a buffer on the stack.
func stopMaskOf(w string) uint32 {
	var buf [4 * maxStopBytes]byte
	b := buf[:0]
	h := uint64(fnvOffset)
	for i := 0; i < len(w); {
		if c := w[i]; c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			h = (h ^ uint64(c)) * fnvPrime
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(w[i:])
		n := len(b)
		b = append(b, foldRune(r)...)
		for _, c := range b[n:] {
			h = (h ^ uint64(c)) * fnvPrime
		}
		i += size
	}
	v, _, ok := detection().stopTable.getHashed(string(b), h)
	if !ok {
		return 0
	}
	return uint32(v)
}

// isStop reports whether a folded word is a stopword in language l: the
// shared English and German list counts in every language (wikis mix
// English words into other languages), l's own list besides.
func isStop(l Language, f string) bool {
	if stopwords()[f] {
		return true
	}
	m := langStop[l]()
	return m != nil && m[f]
}

// detectMinWords is how many stopwords a text must hold before detection
// trusts them; detectWords is how many words it reads at most, and
// detectBytes how much of a page's body. (200 words and 1.5 KiB decide as
// 300 words and 2 KiB did on every page of the test corpora and a
// generated 10k vault, 11,495 pages, for three quarters of the work; 150
// words and 1 KiB already lose two Spanish pages.)
const (
	detectMinWords = 3
	detectWords    = 200
	detectBytes    = 1536
)

// DetectLanguage guesses the language of a text from its script and its
// function words. ok is false when the evidence is too thin (a short or
// mixed text): the caller then uses its default.
func DetectLanguage(text string) (Language, bool) { return detectLanguage(text, detectMinWords) }

// detectLanguage is DetectLanguage needing min function words (a query
// has few words: one may do).
func detectLanguage(text string, min int) (Language, bool) {
	var e langEvidence
	e.add(text)
	return e.decide(min)
}

// langEvidence is what detection has counted: words by script, and the
// function words of each language.
type langEvidence struct {
	counts                               [numLanguages]int
	cyrillic, arabicScript, latin, words int
}

// add counts the words of text (up to detectWords in all).
func (e *langEvidence) add(text string) {
	var low [maxStopBytes]byte
	d := detection()
	for i := 0; i < len(text) && e.words < detectWords; {
		// a word: a run of word runes and apostrophes
		start := i
		ascii := true
		for i < len(text) {
			// a run of ASCII word bytes: the tight loop most text takes
			for i < len(text) {
				if l := detectLower[text[i]]; l == 0 || l == nonASCII {
					break
				}
				i++
			}
			if i == len(text) || detectLower[text[i]] == 0 {
				break
			}
			ascii = false
			r, size := utf8.DecodeRuneInString(text[i:])
			if !isWordRune(r) && r != '’' {
				break
			}
			i += size
		}
		if i == start {
			if text[i] < utf8.RuneSelf {
				i++
			} else {
				_, size := utf8.DecodeRuneInString(text[i:])
				i += size
			}
			continue
		}
		f := text[start:i]
		e.words++
		if c := f[0]; c < utf8.RuneSelf {
			if c|0x20 < 'a' || c|0x20 > 'z' {
				continue // a digit or an apostrophe
			}
			e.latin++
		} else {
			r, _ := utf8.DecodeRuneInString(f)
			switch {
			case r >= 0xc0 && r < 0x250 && r != 0xd7 && r != 0xf7:
				e.latin++ // Latin-1 letters, Latin Extended-A and B (unicode.Is's answer, without its search)
			case r >= 0x400 && r < 0x530 && r != 0x485 && r != 0x486:
				e.cyrillic++ // Cyrillic and its supplement, but for two combining marks
			case unicode.Is(unicode.Cyrillic, r):
				e.cyrillic++
			case unicode.Is(unicode.Arabic, r):
				e.arabicScript++
			case unicode.Is(unicode.Latin, r):
				e.latin++
			default:
				continue
			}
		}
		if len(f) < 2 || len(f) > maxStopBytes {
			continue // one letter (a, e, y, c'…) says little; long words are no function words
		}
		var m uint32
		if ascii {
			if len(f) > d.stopMaxLen {
				continue
			}
			// lowercased and hashed here, not by stopMaskOf: no second
			// pass over the word, no string made of it
			h := uint64(fnvOffset)
			for j := 0; j < len(f); j++ {
				l := detectLower[f[j]]
				low[j] = l
				h = (h ^ uint64(l)) * fnvPrime
			}
			if v, _, ok := d.stopTable.getHashedBytes(low[:len(f)], h); ok {
				m = uint32(v)
			}
		} else {
			m = stopMaskOf(f)
		}
		for ; m != 0; m &= m - 1 {
			e.counts[bits.TrailingZeros32(m)]++
		}
	}
}

// nonASCII is detectLower's value for a byte of a multi-byte character.
const nonASCII = 0xff

// detectLower maps an ASCII byte of a word (a letter, a digit or an
// apostrophe) to its lower case, a byte of a multi-byte character to
// nonASCII, any other byte to 0.
var detectLower = func() (t [256]byte) {
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = nonASCII
	}
	for c := range utf8.RuneSelf {
		switch {
		case asciiClass[c] == clsWord && c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		case asciiClass[c] == clsWord || c == '\'':
			t[c] = byte(c)
		}
	}
	return
}()

// decide returns the language the evidence shows, needing min function
// words; ok is false when it is too thin.
func (e *langEvidence) decide(min int) (Language, bool) {
	counts, cyrillic, arabicScript, latin := &e.counts, e.cyrillic, e.arabicScript, e.latin
	switch {
	case cyrillic > latin && cyrillic > arabicScript:
		return Russian, counts[Russian] >= min || min <= queryMinWords
	case arabicScript > latin:
		return Arabic, arabicScript >= min
	}
	// Latin letters are the majority, but they may be code, markup or
	// names around Russian prose (a page of YAML examples, a list of
	// contributors): Russian's function words compete with the others'
	best, second := -1, -1
	for l := range counts {
		if l == int(Arabic) {
			continue
		}
		switch {
		case best < 0 || counts[l] > counts[best]:
			best, second = l, best
		case second < 0 || counts[l] > counts[second]:
			second = l
		}
	}
	n := counts[best]
	// a clear winner: enough evidence, and ahead of the runner-up
	if n < min || float64(n) < 1.3*float64(counts[second]) {
		return English, false
	}
	return Language(best), true
}

// stemmer stems words in one language with a reusable Snowball
// environment.
type stemmer struct {
	env *snowballstem.Env
}

// stem returns the Snowball stem of a lowercase word in language l (l
// other than English, which analyzeWord stems as before).
//
// In a language with loanPlurals (German, Spanish, Italian, Portuguese),
// a word of ASCII letters that the stemmer leaves as it is and that ends
// in -s after a consonant, with a vowel before (Backups, Laptops, Handys;
// plugins, tags, links) is an English plural: the s goes, as in step 1a
// of the English Snowball stemmer, and the singular is stemmed (so
// Backups meets Backup). The languages' own plurals in -s follow a vowel
// (Autos, Kameras; notas, file) or the stemmer already removes the s
// (Hotels, Dokuments); a native word the rule still reaches (Schnaps, Gips) only
// loses a letter none of its forms differ by.
func (s *stemmer) stem(l Language, w string) string {
	fn := langs[l].stem
	if fn == nil {
		return w
	}
	st := s.run(fn, w)
	if langs[l].loanPlurals && st == w && loanPlural(w) {
		st = s.run(fn, w[:len(w)-1])
	}
	return st
}

func (s *stemmer) run(fn func(*snowballstem.Env) bool, w string) string {
	if s.env == nil {
		s.env = snowballstem.NewEnv("")
	}
	s.env.SetCurrent(w)
	fn(s.env)
	return s.env.Current()
}

// loanPlural reports whether a lowercase word is ASCII letters ending in
// -s after a consonant other than s, with a vowel before it (see stem).
func loanPlural(w string) bool {
	n := len(w)
	if n < 4 || w[n-1] != 's' || !asciiLetters(w) || isVowel(w[n-2]) || w[n-2] == 's' {
		return false
	}
	return strings.ContainsAny(w[:n-2], "aeiouy")
}

func isVowel(c byte) bool { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' }

// englishOnly makes every page English (an evaluation measures what
// stemming in the page's language gains over that; export_test.go).
var englishOnly bool

// langKeys are the frontmatter keys that declare a page's language.
var langKeys = []string{"lang", "language"}

// PageLanguage picks the language a page is stemmed in: its frontmatter
// lang or language (a name ParseLanguage knows), else the language its
// title and body are detected in, else def (the vault's default).
func PageLanguage(fm *markdown.Frontmatter, title, body string, def Language) Language {
	if englishOnly {
		return English
	}
	if fm != nil {
		for _, k := range langKeys {
			if v := fm.String(k); v != "" {
				if l, ok := ParseLanguage(v); ok {
					return l
				}
			}
		}
	}
	// detection reads a few hundred words: the start of the body will do
	if len(body) > detectBytes {
		body = body[:detectBytes]
	}
	var e langEvidence
	e.add(title)
	e.add(body)
	if l, ok := e.decide(detectMinWords); ok {
		return l
	}
	return def
}

// TextLanguage is PageLanguage for a page's raw text (frontmatter
// included), with English as the default; snippets use it.
func TextLanguage(text string) Language {
	if englishOnly {
		return English
	}
	fmText, body, ok := markdown.SplitFrontmatter(text)
	if !ok {
		return PageLanguage(nil, "", text, English)
	}
	for _, line := range strings.Split(fmText, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(langKeys, strings.TrimSpace(k)) {
			continue
		}
		if l, ok := ParseLanguage(strings.Trim(strings.TrimSpace(v), `"'`)); ok {
			return l
		}
	}
	return PageLanguage(nil, "", body, English)
}

// ConfigLanguage parses the vault's default language (configuration key
// search.language): empty means English; an unknown name is an invalid
// error naming it and the accepted names.
func ConfigLanguage(name string) (Language, error) {
	if strings.TrimSpace(name) == "" {
		return English, nil
	}
	l, ok := ParseLanguage(name)
	if !ok {
		return English, errs.E(errs.Invalid, "search.language: unknown language %q; use one of %s", name, strings.Join(LanguageNames(), ", "))
	}
	return l, nil
}
