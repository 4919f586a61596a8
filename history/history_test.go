package history

import (
	"bytes"
	"compress/flate"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/vaultfs"
)

// newStore makes a vault folder with .synapse/ and its history.
func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".synapse"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := For(dir)
	clock := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { clock = clock.Add(time.Second); return clock })
	return s, dir
}

// histPath is the absolute path of a history file.
func histPath(dir, rel string) string {
	return filepath.Join(dir, filepath.FromSlash(Dir), filepath.FromSlash(rel))
}

// save appends one entry per content to page id and closes it.
func save(t *testing.T, s *Store, id string, contents ...string) []Revision {
	t.Helper()
	var out []Revision
	for _, c := range contents {
		p, err := s.Edit(id)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Append(Entry{Content: []byte(c), Op: OpWrite, Origin: OriginSynapse, Path: "wiki/" + id + ".md", Title: id})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Sync()(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// pageText makes a page of about n bytes of words drawn at random (by
// seed) from a vocabulary: two seeds share little beyond the words.
func pageText(seed, n int) string {
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntitle: Page %d\n---\n# Page %d\n\n", seed, seed)
	for b.Len() < n {
		for w := 0; w < 12; w++ {
			b.WriteString(vocabulary[r.IntN(len(vocabulary))])
			b.WriteByte(' ')
		}
		b.WriteString("\n")
	}
	return b.String()
}

var vocabulary = strings.Fields(`the wiki page links sources agent review queue graph search index
	history revision delta keyframe compress bytes write restore diff unified hunk vault folder
	markdown title alias tag type concept entity synthesis comparison query note schema purpose
	obsidian backlink orphan dangling missing created updated log overview moved renamed file
	network program trust config bound prune newest oldest page total size count default`)

func TestHistory_RoundTripAndEncodings(t *testing.T) {
	s, _ := newStore(t)
	base := pageText(1, 3000)
	edited := strings.Replace(base, " page ", " PAGE ", 1)
	other := pageText(2, 3000)
	contents := []string{base, edited, base, other, "", "tiny"}
	revs := save(t, s, "abcd1234", contents...)
	p, err := s.Read("abcd1234")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Problems) > 0 {
		t.Fatal(p.Problems)
	}
	got := p.Revisions()
	if len(got) != len(contents) {
		t.Fatalf("%d revisions, want %d", len(got), len(contents))
	}
	for i, c := range contents {
		if got[len(got)-1-i].Rev != i+1 {
			t.Errorf("revision %d numbered %d", i+1, got[len(got)-1-i].Rev)
		}
		data, err := p.Content(i + 1)
		if err != nil {
			t.Fatalf("rev %d: %v", i+1, err)
		}
		if string(data) != c {
			t.Errorf("rev %d: content differs", i+1)
		}
	}
	// the encodings that make the history small
	enc := map[int]string{}
	for _, r := range p.recs {
		enc[r.h.Rev] = r.h.Enc
	}
	want := map[int]string{1: encFlate, 2: encDelta, 3: encSame, 4: encFlate}
	for rev, e := range want {
		if enc[rev] != e {
			t.Errorf("rev %d stored as %s, want %s", rev, enc[rev], e)
		}
	}
	if n := len(p.recs[1].payload); n > 160 {
		t.Errorf("a one-word edit of a 3 KB page stores %d bytes of content (more than its line)", n)
	}
	if n := len(p.recs[2].payload); n != 0 {
		t.Errorf("a repeat of revision 1 stores %d bytes of content", n)
	}
	if revs[0].Stored > int64(len(base))/2 {
		t.Errorf("a 3 KB page is stored in %d bytes", revs[0].Stored)
	}
}

func TestHistory_DeltaOfALargePage(t *testing.T) {
	s, _ := newStore(t)
	big := pageText(9, 300<<10)
	lines := strings.Split(big, "\n")
	lines[len(lines)/2] = "a line rewritten in the middle of a 300 KB page"
	edited := strings.Join(lines, "\n") + "and a line added at its end\n"
	save(t, s, "big00001", big, edited)
	p, _ := s.Read("big00001")
	if r := p.recs[1]; (r.h.Enc != encDelta && r.h.Enc != encZDelta) || len(r.payload) > 400 {
		t.Fatalf("the edit of a 300 KB page is stored as %s, %d bytes", r.h.Enc, len(r.payload))
	}
	if c, err := p.Content(2); err != nil || string(c) != edited {
		t.Fatalf("revision 2 decodes wrong: %v", err)
	}
}

func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("one\ntwo\nthree\n"), []byte("one\n2\nthree\nfour\n"), []byte{})
	f.Add([]byte(""), []byte("new\n"), []byte{1, 2})
	f.Fuzz(func(t *testing.T, base, content, junk []byte) {
		d := makeDelta(base, content)
		got, err := applyDelta(base, d, int64(len(content)))
		if err != nil || string(got) != string(content) {
			t.Fatalf("round trip: %q, %v", got, err)
		}
		// damaged deltas fail, never panic
		_, _ = applyDelta(base, append(d[:len(d)/2], junk...), int64(len(content)))
		_, _ = applyDelta(base, junk, int64(len(content)))
	})
}

func TestHistory_TornTailIsCutOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		tail func(rec []byte) []byte
	}{
		{"half a record", func(rec []byte) []byte { return rec[:len(rec)/2] }},
		{"framing only", func(rec []byte) []byte { return rec[:frameLen] }},
		{"zeros", func(rec []byte) []byte { return make([]byte, len(rec)) }},
		{"bad checksum at the end", func(rec []byte) []byte {
			b := append([]byte(nil), rec...)
			b[len(b)-1] ^= 0xff
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t)
			save(t, s, "torn0001", "one\n", "two\n")
			abs := histPath(dir, packPath("torn0001"))
			before, _ := os.ReadFile(abs)
			// a third record, as an append would write it, damaged
			p, _ := s.Read("torn0001")
			b, _, err := p.encode(packHeader{Rev: 3, Time: time.Now().UTC().Format(time.RFC3339Nano), Op: OpWrite, Origin: OriginSynapse}, []byte("three\n"), p.size)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(abs, append(append([]byte(nil), before...), tc.tail(b)...), 0o644); err != nil {
				t.Fatal(err)
			}
			if p, _ := s.Read("torn0001"); len(p.Revisions()) != 2 || len(p.Problems) != 0 {
				t.Fatalf("reader: %d revisions, problems %v", len(p.Revisions()), p.Problems)
			}
			save(t, s, "torn0001", "four\n")
			after, _ := os.ReadFile(abs)
			if !bytes.HasPrefix(after, before) {
				t.Fatal("the valid part changed")
			}
			p, _ = s.Read("torn0001")
			if n := p.Newest(); n == nil || n.Rev != 3 || len(p.Revisions()) != 3 {
				t.Fatalf("after the repair: %+v", p.Revisions())
			}
			if c, err := p.Content(3); err != nil || string(c) != "four\n" {
				t.Fatalf("rev 3 = %q, %v", c, err)
			}
		})
	}
}

func TestHistory_DamagedPackSetAside(t *testing.T) {
	s, dir := newStore(t)
	save(t, s, "dmg00001", "one\n", "two\n", "three\n")
	abs := histPath(dir, packPath("dmg00001"))
	data, _ := os.ReadFile(abs)
	p, _ := s.Read("dmg00001")
	// flip a byte inside the second record's header: damage, not a tear
	data[p.recs[1].off+frameLen+2] ^= 0x20
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ = s.Read("dmg00001")
	if len(p.Revisions()) != 1 || len(p.Problems) == 0 {
		t.Fatalf("reader: %d revisions, problems %v", len(p.Revisions()), p.Problems)
	}
	e, err := s.Edit("dmg00001")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Problems) < 2 || !strings.Contains(e.Problems[1], "set aside") {
		t.Fatalf("problems: %v", e.Problems)
	}
	if _, err := e.Append(Entry{Content: []byte("four\n"), Op: OpWrite, Origin: OriginSynapse}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	aside, _ := filepath.Glob(filepath.Join(dir, ".synapse/history/orphans/dmg00001-damaged-*.pack"))
	if len(aside) != 1 {
		t.Fatalf("set aside: %v", aside)
	}
	if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, data) {
		t.Error("the damaged file was not kept as it was")
	}
	p, _ = s.Read("dmg00001")
	if got := p.Revisions(); len(got) != 2 || got[0].Rev != 2 || len(p.Problems) != 0 {
		t.Fatalf("after: %+v %v", got, p.Problems)
	}
}

func TestHistory_PrunePerPage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits Limits
		writes int
		size   int
		check  func(t *testing.T, p *Page)
	}{
		{"revisions", Limits{PageRevisions: 10}, 25, 500, func(t *testing.T, p *Page) {
			if n := len(p.recs); n > 10 || n < 9 {
				t.Errorf("%d revisions kept, want 9..10", n)
			}
		}},
		{"bytes", Limits{PageBytes: 20 << 10}, 30, 4000, func(t *testing.T, p *Page) {
			if p.size > 20<<10 {
				t.Errorf("%d bytes kept, bound 20 KiB", p.size)
			}
		}},
		{"one huge revision", Limits{PageBytes: 1 << 10}, 3, 8000, func(t *testing.T, p *Page) {
			if len(p.recs) != 1 {
				t.Errorf("%d revisions kept, want the newest alone", len(p.recs))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newStore(t)
			s.SetLimits(tc.limits)
			var last string
			for i := 0; i < tc.writes; i++ {
				last = pageText(i*31, tc.size) // unrelated texts: no deltas
				save(t, s, "prune001", last)
			}
			p, _ := s.Read("prune001")
			tc.check(t, p)
			n := p.Newest()
			if n == nil || n.Rev != tc.writes {
				t.Fatalf("newest %+v, want rev %d", n, tc.writes)
			}
			if c, err := p.Content(n.Rev); err != nil || string(c) != last {
				t.Fatalf("the newest revision is not kept whole: %v", err)
			}
			for _, r := range p.Revisions() {
				if _, err := p.Content(r.Rev); err != nil {
					t.Errorf("rev %d after pruning: %v", r.Rev, err)
				}
			}
			sum, _ := s.Summary()
			if sum.PrunedRevisions != tc.writes-len(p.recs) || sum.Revisions != len(p.recs) || sum.Bytes != p.size || sum.DiskBytes != blocks(p.size) || sum.Pages != 1 {
				t.Errorf("summary %+v; pack %d revisions, %d bytes", sum, len(p.recs), p.size)
			}
		})
	}
}

func TestHistory_PruneTotalKeepsNewest(t *testing.T) {
	s, _ := newStore(t)
	s.SetLimits(Limits{TotalBytes: 40 << 10})
	ids := []string{"tot00001", "tot00002", "tot00003", "tot00004"}
	for round := 0; round < 6; round++ {
		for k, id := range ids {
			save(t, s, id, pageText(round*100+k, 4000))
		}
	}
	sum, err := s.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if sum.DiskBytes > 40<<10 {
		t.Errorf("history takes %d bytes on disk, bound %d", sum.DiskBytes, 40<<10)
	}
	if sum.PrunedRevisions == 0 || sum.LastPruned == "" {
		t.Errorf("nothing pruned: %+v", sum)
	}
	var total, disk int64
	revs := 0
	for k, id := range ids {
		p, _ := s.Read(id)
		n := p.Newest()
		if n == nil || n.Rev != 6 {
			t.Fatalf("%s: newest %+v", id, n)
		}
		if c, _ := p.Content(6); string(c) != pageText(500+k, 4000) {
			t.Errorf("%s: newest revision damaged", id)
		}
		total += p.size
		disk += blocks(p.size)
		revs += len(p.recs)
	}
	if sum.Bytes != total || sum.DiskBytes != disk || sum.Revisions != revs || sum.Pages != len(ids) {
		t.Errorf("summary %+v; packs hold %d revisions, %d bytes", sum, revs, total)
	}
}

func TestHistory_SummaryRecountedWhenMissing(t *testing.T) {
	s, dir := newStore(t)
	save(t, s, "sum00001", "a\n", "b\n")
	save(t, s, "sum00002", "c\n")
	want, _ := s.Summary()
	// a new process reads the totals from the feed
	s.mu.Lock()
	s.sum = nil
	s.mu.Unlock()
	if got, err := s.Summary(); err != nil || got != want {
		t.Fatalf("reloaded %+v (%v), want %+v", got, err, want)
	}
	if err := os.Remove(histPath(dir, recentFile)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.sum = nil
	s.mu.Unlock()
	got, err := s.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if got.Pages != 2 || got.Revisions != 3 || got.Bytes != want.Bytes || got.Recounted == "" {
		t.Errorf("recounted %+v, want %+v", got, want)
	}
}

func TestHistory_RecentNewestFirst(t *testing.T) {
	s, _ := newStore(t)
	save(t, s, "rec00001", "a\n")
	save(t, s, "rec00002", "b\n")
	mid := s.now()
	save(t, s, "rec00001", "c\n")
	all, more, err := s.Recent(time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if more || len(all) != 3 || all[0].ID != "rec00001" || all[0].Rev != 2 || all[2].Rev != 1 {
		t.Fatalf("recent: %+v more=%v", all, more)
	}
	two, more, _ := s.Recent(time.Time{}, 2)
	if len(two) != 2 || !more {
		t.Errorf("limit 2: %d items, more=%v", len(two), more)
	}
	since, _, _ := s.Recent(mid, 10)
	if len(since) != 1 || since[0].Rev != 2 {
		t.Errorf("since: %+v", since)
	}
}

func TestHistory_RecentTrimmed(t *testing.T) {
	s, dir := newStore(t)
	line := strings.Repeat("x", 1000)
	var b strings.Builder
	for b.Len() < recentMax {
		fmt.Fprintf(&b, `{"id":"old00001","rev":1,"sha256":"%s","time":"2026-01-01T00:00:00Z","recorded":"2026-01-01T00:00:00Z","title":"%s"}`+"\n", strings.Repeat("0", 64), line)
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(Dir)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(histPath(dir, recentFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	save(t, s, "new00001", "fresh\n")
	st, err := os.Stat(histPath(dir, recentFile))
	if err != nil || st.Size() > recentKeep+4096 {
		t.Fatalf("feed is %d bytes after the trim (keep %d)", st.Size(), recentKeep)
	}
	got, _, _ := s.Recent(time.Time{}, 1)
	if len(got) != 1 || got[0].ID != "new00001" {
		t.Fatalf("newest after the trim: %+v", got)
	}
}

func TestHistory_EditMovedCarriesThePack(t *testing.T) {
	s, dir := newStore(t)
	save(t, s, "from0001", "one\n", "two\n")
	save(t, s, "to000001", "a page that was deleted\n")
	p, err := s.EditMoved("from0001", "to000001")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(Entry{Content: []byte("two\n"), Op: OpMove, Origin: OriginSynapse, Path: "wiki/new.md", MovedFrom: "wiki/old.md"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Has("from0001") {
		t.Error("the old id still has a history")
	}
	q, _ := s.Read("to000001")
	revs := q.Revisions()
	if len(revs) != 3 || revs[0].Op != OpMove || revs[0].MovedFrom != "wiki/old.md" || len(q.recs[2].payload) != 0 {
		t.Fatalf("moved history: %+v", revs)
	}
	if aside, _ := filepath.Glob(filepath.Join(dir, ".synapse/history/orphans/to000001-replaced-*.pack")); len(aside) != 1 {
		t.Errorf("the replaced history was not set aside: %v", aside)
	}
	sum, _ := s.Summary()
	if sum.Pages != 1 || sum.Revisions != 3 || sum.Bytes != q.size || sum.DiskBytes != blocks(q.size) {
		t.Errorf("summary %+v, pack %d bytes", sum, q.size)
	}
}

func TestHistory_RefusesBadIDs(t *testing.T) {
	s, _ := newStore(t)
	for _, id := range []string{"", "a", "../../etc", "AB12", "ab/cd", "ab.cd"} {
		if _, err := s.Edit(id); err == nil {
			t.Errorf("Edit(%q) accepted", id)
		}
		if _, err := s.Read(id); err == nil {
			t.Errorf("Read(%q) accepted", id)
		}
	}
}

// A page edited again and again refers to a whole revision less than ten
// records back (deltaRun, as docs/history.md says), before pruning and
// after it, so that a prune re-encodes at most one run; every kept
// revision still decodes.
func TestHistory_DeltaRunsAreBounded(t *testing.T) {
	s, _ := newStore(t)
	s.SetLimits(Limits{PageRevisions: 30})
	text := pageText(5, 3000)
	var want []string
	for i := 0; i < 75; i++ {
		text += fmt.Sprintf("edit %d\n", i) // a small edit: always a delta if allowed
		want = append(want, text)
		save(t, s, "runs0001", text)
		p, err := s.Read("runs0001")
		if err != nil {
			t.Fatal(err)
		}
		whole := 0
		for k, r := range p.recs {
			if r.keyframe() {
				whole = k
			}
			if !r.keyframe() && r.h.Enc != encSame && (k-whole >= 10 || p.find(r.h.Base) != p.recs[whole]) {
				t.Fatalf("after write %d: revision %d refers to revision %d, %d records back", i+1, r.h.Rev, r.h.Base, k-whole)
			}
		}
	}
	p, _ := s.Read("runs0001")
	if n := len(p.recs); n < 27 || n > 30 {
		t.Fatalf("%d revisions kept, want 27..30", n)
	}
	wholes := 0
	for _, r := range p.recs {
		if r.keyframe() {
			wholes++
		}
		if c, err := p.Content(r.h.Rev); err != nil || string(c) != want[r.h.Rev-1] {
			t.Fatalf("revision %d: %v", r.h.Rev, err)
		}
	}
	if max := (len(p.recs) + 9) / 10; wholes > max+1 {
		t.Errorf("%d whole revisions among %d: more than one per run", wholes, len(p.recs))
	}
}

// A pack's folder is flushed while the pack's entry may not be on disk:
// by the write that follows a new page's unflushed first revision, and
// by the scan that gives such a pack its second revision; an edit of a
// pack of two revisions or more flushes the pack alone.
func TestHistory_FolderFlushedUntilTheEntryIsOnDisk(t *testing.T) {
	var n int
	orig := syncDir
	syncDir = func(fs *vaultfs.FS, dir string) error { n++; return orig(fs, dir) }
	t.Cleanup(func() { syncDir = orig })
	s, _ := newStore(t)
	edit := func(id, content string, sync bool) int {
		t.Helper()
		n = 0
		p, err := s.Edit(id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Append(Entry{Content: []byte(content), Op: OpWrite, Origin: OriginSynapse, Path: "wiki/x.md"}); err != nil {
			t.Fatal(err)
		}
		if sync {
			if err := p.Sync()(); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		name  string
		id    string
		text  string
		sync  bool
		flush int
	}{
		{"a new page: unflushed", "flush001", "one", false, 0},
		{"its first write: the folder too", "flush001", "two", true, 1},
		{"a later write: the pack alone", "flush001", "three", true, 0},
		{"another new page", "flush002", "one", false, 0},
		{"a scan's second revision: the folder", "flush002", "edited", false, 1},
		{"then a write: the pack alone", "flush002", "two", true, 0},
		{"a pack made and flushed by one write", "flush003", "one", true, 1},
	} {
		if got := edit(tc.id, tc.text, tc.sync); got != tc.flush {
			t.Errorf("%s: %d folder flushes, want %d", tc.name, got, tc.flush)
		}
	}
}

// A history folder deleted while a process holds its Store (a user
// resetting .synapse/ beside a running server) is made again on the next
// change, and the totals count the new folder only.
func TestHistory_FolderDeletedBesideAProcess(t *testing.T) {
	s, dir := newStore(t)
	save(t, s, "abcd1234", "one", "two")
	if sum, err := s.Summary(); err != nil || sum.Revisions != 2 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".synapse")); err != nil {
		t.Fatal(err)
	}
	if sum, err := s.Summary(); err != nil || sum.Revisions != 0 {
		t.Fatalf("after the folder went: summary %+v, %v", sum, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".synapse"), 0o700); err != nil {
		t.Fatal(err)
	}
	save(t, s, "abcd1234", "three")
	p, err := s.Read("abcd1234")
	if err != nil || len(p.Revisions()) != 1 {
		t.Fatalf("read after the reset: %v, %v", p, err)
	}
	if sum, err := s.Summary(); err != nil || sum.Revisions != 1 || sum.Pages != 1 {
		t.Fatalf("summary after the reset %+v, %v", sum, err)
	}
}

// TestHistory_LastPackTakenOnlyWhileItIsTheFile: an Edit takes the pack
// the last change left as it was parsed then (no read, no parse), but
// only while the file is that one: a pack replaced by another of the same
// size, or appended to, is read again.
func TestHistory_LastPackTakenOnlyWhileItIsTheFile(t *testing.T) {
	s, dir := newStore(t)
	save(t, s, "aa1", "one\n", "two\n")
	p, err := s.Edit("aa1")
	if err != nil {
		t.Fatal(err)
	}
	if s.last == nil || len(p.recs) != 2 || p.recs[0] != s.last.recs[0] {
		t.Fatalf("the pack just written was read again (last %v)", s.last)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	save(t, s, "aa1", "three\n")
	// another page's pack of the same size put in its place
	save(t, s, "bb1", "one\n", "two\n", "three\n")
	a, errA := os.Stat(histPath(dir, packPath("aa1")))
	b, errB := os.Stat(histPath(dir, packPath("bb1")))
	if errA != nil || errB != nil || a.Size() != b.Size() {
		t.Fatalf("the two packs differ in size: %v %v", errA, errB)
	}
	if p, err = s.Edit("aa1"); err != nil { // s.last is aa1's pack again
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s.last == nil || s.last.id != "aa1" {
		t.Fatal("aa1's pack is not the last")
	}
	if err := os.Rename(histPath(dir, packPath("bb1")), histPath(dir, packPath("aa1"))); err != nil {
		t.Fatal(err)
	}
	save(t, s, "aa1", "four\n") // s.last is aa1's pack now
	got := revisionsOf(t, s, "aa1")
	if len(got) != 4 || got[0].Path != "wiki/aa1.md" || got[1].Path != "wiki/bb1.md" {
		t.Fatalf("after the pack was replaced: %+v", got)
	}
	// appended to by someone else: a record cut short, cut off by the next change
	f, err := os.OpenFile(histPath(dir, packPath("aa1")), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0, 0, 0, 9, 0, 0}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p, err = s.Edit("aa1")
	if err != nil {
		t.Fatal(err)
	}
	if p.onDisk != p.size+6 {
		t.Fatalf("the pack appended to was not read again: on disk %d, valid %d", p.onDisk, p.size)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// revisionsOf reads page id's revisions from its pack, newest first.
func revisionsOf(t *testing.T, s *Store, id string) []Revision {
	t.Helper()
	p, err := s.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Revisions()
}

// TestHistory_PackCutShortAtItsBirth: a pack is made in place by its
// first append; a crash right after it was made (an empty file) or in the
// middle of its first record leaves a pack the next change writes anew.
func TestHistory_PackCutShortAtItsBirth(t *testing.T) {
	s, dir := newStore(t)
	save(t, s, "cc1", pageText(1, 3000))
	whole, err := os.ReadFile(histPath(dir, packPath("cc1")))
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{0, 5, len(packMagic) + 7, len(whole) - 1} {
		if err := os.WriteFile(histPath(dir, packPath("cc1")), whole[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		if s.Has("cc1") != (cut > 0) {
			t.Fatalf("cut at %d: Has is %v", cut, !(cut > 0))
		}
		save(t, s, "cc1", "after\n")
		got := revisionsOf(t, s, "cc1")
		if len(got) != 1 || got[0].Rev != 1 || got[0].Size != int64(len("after\n")) {
			t.Fatalf("cut at %d: %+v", cut, got)
		}
		if c, err := s.mustRead(t, "cc1"); err != nil || string(c) != "after\n" {
			t.Fatalf("cut at %d: %q %v", cut, c, err)
		}
	}
}

// mustRead is the newest content of page id.
func (s *Store) mustRead(t *testing.T, id string) ([]byte, error) {
	t.Helper()
	p, err := s.Read(id)
	if err != nil {
		return nil, err
	}
	return p.Content(p.Newest().Rev)
}

// TestHistory_PackOfAnotherLevelReads: a pack whose records were
// compressed at another DEFLATE level (the default one, as packs were
// written before) reads back, and a revision appended to it is a delta
// of its whole revision, decoded from it.
func TestHistory_PackOfAnotherLevelReads(t *testing.T) {
	s, dir := newStore(t)
	base := pageText(7, 3000)
	edited := strings.Replace(base, " page ", " PAGE ", 1)
	z := func(data []byte) []byte {
		var buf bytes.Buffer
		w, err := flate.NewWriter(&buf, flate.DefaultCompression)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
		return buf.Bytes()
	}
	pack := []byte(packMagic)
	at := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	h := packHeader{Rev: 1, SHA256: shaHex([]byte(base)), Size: int64(len(base)), Time: at, Op: OpCreate,
		Origin: OriginSynapse, Path: "wiki/old.md", Title: "Old", Enc: encFlate}
	pack, err := appendRecord(pack, &h, z([]byte(base)))
	if err != nil {
		t.Fatal(err)
	}
	h = packHeader{Rev: 2, SHA256: shaHex([]byte(edited)), Size: int64(len(edited)), Time: at, Op: OpWrite,
		Origin: OriginSynapse, Enc: encZDelta, Base: 1}
	if pack, err = appendRecord(pack, &h, z(makeDelta([]byte(base), []byte(edited)))); err != nil {
		t.Fatal(err)
	}
	rel := packPath("old12345")
	if err := os.MkdirAll(filepath.Dir(histPath(dir, rel)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(histPath(dir, rel), pack, 0o600); err != nil {
		t.Fatal(err)
	}
	third := edited + "\nOne more line.\n"
	save(t, s, "old12345", third)
	p, err := s.Read("old12345")
	if err != nil || len(p.Problems) > 0 {
		t.Fatal(err, p.Problems)
	}
	for rev, want := range []string{"", base, edited, third} {
		if rev == 0 {
			continue
		}
		got, err := p.Content(rev)
		if err != nil || string(got) != want {
			t.Errorf("revision %d: %v, content equal: %v", rev, err, string(got) == want)
		}
	}
	if r := p.recs[2]; r.h.Base != 1 || (r.h.Enc != encDelta && r.h.Enc != encZDelta) {
		t.Errorf("the appended revision is stored as %s of %d, want a delta of revision 1", r.h.Enc, r.h.Base)
	}
}

// TestHistory_FeedKeptOpenOnlyWhileItIsTheFile: the activity feed stays
// open between changes, but a feed deleted or replaced meanwhile (a
// user, a restore, another process) gets the next line in the file now
// at its path.
func TestHistory_FeedKeptOpenOnlyWhileItIsTheFile(t *testing.T) {
	s, dir := newStore(t)
	feed := histPath(dir, recentFile)
	save(t, s, "feed0001", "one\n")
	if err := os.Remove(feed); err != nil {
		t.Fatal(err)
	}
	save(t, s, "feed0001", "two\n")
	if got, _, err := s.Recent(time.Time{}, 0); err != nil || len(got) != 1 || got[0].Rev != 2 {
		t.Fatalf("after the feed was deleted: %+v, %v", got, err)
	}
	old, err := os.ReadFile(feed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(feed+".new", old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(feed+".new", feed); err != nil {
		t.Fatal(err)
	}
	save(t, s, "feed0001", "three\n")
	if got, _, err := s.Recent(time.Time{}, 0); err != nil || len(got) != 2 || got[0].Rev != 3 {
		t.Fatalf("after the feed was replaced: %+v, %v", got, err)
	}
}
