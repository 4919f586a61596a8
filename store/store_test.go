package store

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/synapse-wiki/synapse/errs"
)

func TestOpen_CreatesBucketsAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(func(tx *Tx) error {
		for _, b := range append(append([][]byte{}, keptBuckets...), derivedBuckets...) {
			if tx.b(b) == nil {
				t.Errorf("bucket %s missing", b)
			}
		}
		if v := tx.MetaU32("schema"); v != SchemaVersion {
			t.Errorf("schema = %d", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpen_LockedNamesHolder: a second read-write open of a held store
// fails within the timeout with an unavailable error naming the holder.
// The holder is another process, since flock is per open file.
func TestOpen_LockedNamesHolder(t *testing.T) {
	if os.Getenv("STORE_HOLD") != "" {
		s, err := Open(os.Getenv("STORE_HOLD"), Options{Holder: "synapse serve --mcp-stdio"})
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(20 * time.Second)
		s.Close()
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "s.db")
	cmd := exec.Command(os.Args[0], "-test.run=TestOpen_LockedNamesHolder")
	cmd.Env = append(os.Environ(), "STORE_HOLD="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("holder did not start: %q %v", buf, err)
	}
	start := time.Now()
	_, err := Open(path, Options{Timeout: 300 * time.Millisecond})
	if !errs.Is(err, errs.Unavailable) {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if !strings.Contains(err.Error(), "synapse serve --mcp-stdio") || !strings.Contains(err.Error(), "pid") {
		t.Errorf("error does not name the holder: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("open waited %v", time.Since(start))
	}
	_, err = Open(path, Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if !errs.Is(err, errs.Unavailable) {
		t.Errorf("read-only open of a held store: %v", err)
	}
}

func TestOpen_MigrationsRunInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// pretend the file was written by schema 1 of a layout that is now at 3
	saved, savedVersion := migrations, schemaVersion
	defer func() { migrations = saved; schemaVersion = savedVersion }()
	var ran []int
	migrations = []func(*Tx) error{
		func(tx *Tx) error { ran = append(ran, 2); return tx.SetMeta("m2", []byte("x")) },
		func(tx *Tx) error { ran = append(ran, 3); return tx.ResetDerived() },
	}
	schemaVersion = 3
	if err := s.Update(func(tx *Tx) error { return tx.SetMeta("schema", u32(1)) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(ran) != 2 || ran[0] != 2 || ran[1] != 3 {
		t.Fatalf("migrations ran %v", ran)
	}
	s.View(func(tx *Tx) error {
		if tx.MetaU32("schema") != 3 || string(tx.Meta("m2")) != "x" {
			t.Errorf("schema %d m2 %q", tx.MetaU32("schema"), tx.Meta("m2"))
		}
		return nil
	})
	// a store newer than the binary is refused
	s.Update(func(tx *Tx) error { return tx.SetMeta("schema", u32(9)) })
	s.Close()
	if _, err := Open(path, Options{}); !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer store: %v", err)
	}
}

// TestView_DoesNotModifyFile: read paths never write.
func TestView_DoesNotModifyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Update(func(tx *Tx) error {
		doc, id, _ := tx.NewPage("wiki/a.md")
		return tx.PutPage(&PageRec{Doc: doc, ID: id, Path: "wiki/a.md", Title: "A", Type: "note", Links: []LinkRec{{Target: "B", Key: "b"}}}, nil)
	})
	s.Close()
	before, _ := os.ReadFile(path)
	s, err = Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *Tx) error {
		tx.ListPages(ListFilter{Limit: 10})
		tx.Dangling()
		tx.LookupName(NameTitle, "a")
		return nil
	})
	s.Close()
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("a read-only session changed the store file")
	}
	if err := s.Update(func(*Tx) error { return nil }); err == nil {
		t.Fatal("update on a closed read-only store succeeded")
	}
}

// TestPageCodec_RoundTrip: a record with every field set decodes to the
// same values. The fixture must set every field (allSet fails naming one
// left zero), so a field added to PageRec or LinkRec without a place in
// the codec fails here.
func TestPageCodec_RoundTrip(t *testing.T) {
	link := LinkRec{Target: "T", Key: LinkKey("T"), Heading: "h", Embed: true, Markdown: true, Line: 3, To: 7,
		ToReserved: true, Ambiguous: 2, File: "raw/sources/t.md"}
	// a file link has no resolved doc: To and ToReserved are not stored
	fileLink := LinkRec{Target: "d.png", Key: LinkKey("d.png"), Heading: "x", Embed: true, Markdown: true, Line: 9,
		Ambiguous: 3, File: "raw/assets/d.png"}
	p := &PageRec{ID: "abc", Path: "wiki/x y.md", Title: "X Y", Type: "concept", Aliases: []string{"a", "b"},
		Tags: []string{"t"}, Sources: []string{"s.md"}, SourceKeys: []string{"raw/sources/s.md"},
		Created: "2026-01-01", Updated: "2026-01-02", MtimeNS: -5, Size: 12, ChangedNS: 99,
		SHA256: strings.Repeat("ab", 32), Reserved: true, LinksPending: true, FMError: "bad", TypeDeclared: true,
		Links: []LinkRec{link}, FileLinks: []LinkRec{fileLink}}
	// Doc is the record's key, not part of its value
	allSet(t, "PageRec", reflect.ValueOf(*p), "Doc")
	allSet(t, "a page link", reflect.ValueOf(link))
	allSet(t, "a file link", reflect.ValueOf(fileLink), "To", "ToReserved")
	q, err := decodePage(encodePage(p))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", q, p)
	}
	if _, err := decodePage(encodePage(p)[:20]); !errors.Is(err, errCorrupt) {
		t.Fatalf("truncated record: %v", err)
	}
	// the record but its links (Tx.PageFields): every other field the same
	f, _, err := decodePageFields(encodePage(p))
	if err != nil {
		t.Fatal(err)
	}
	want := *p
	want.Links, want.FileLinks = nil, nil
	if !reflect.DeepEqual(&want, f) {
		t.Fatalf("fields differ:\n got %+v\nwant %+v", f, &want)
	}
}

// allSet fails for every field of the struct v that is zero, but those
// named in except.
func allSet(t *testing.T, what string, v reflect.Value, except ...string) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if v.Field(i).IsZero() && !slices.Contains(except, name) {
			t.Errorf("%s: the fixture leaves %s zero; set it, so that the round trip checks it", what, name)
		}
	}
}

func TestResetDerived_KeepsKeptDropsStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx *Tx) error {
		if _, err := tx.tx.CreateBucket([]byte("stale_from_old_layout")); err != nil {
			return err
		}
		if err := tx.SetMeta("keep-me", []byte("1")); err != nil {
			return err
		}
		doc, id, _ := tx.NewPage("wiki/a.md")
		return tx.PutPage(&PageRec{Doc: doc, ID: id, Path: "wiki/a.md", Title: "A", Type: "note"}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.ResetDerived() }); err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *Tx) error {
		if tx.b([]byte("stale_from_old_layout")) != nil {
			t.Error("stale bucket survived a reset")
		}
		if tx.PageCount() != 0 || tx.DocByPath("wiki/a.md") != 0 {
			t.Error("derived data survived a reset")
		}
		if string(tx.Meta("keep-me")) != "1" || tx.MetaU32("schema") != SchemaVersion {
			t.Error("meta lost in a reset")
		}
		return nil
	})
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"abc": "abc", "Create a Vault": "create a vault", "CAFÉ": "café", "Cafe\u0301": "café",
		"ÅNGSTRÖM": "ångström", "": "", "Straße": "straße", "x/Y.md": "x/y.md",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOpen_PersistsFreelist: every commit writes bbolt's freelist, so the
// next read-write open reads it from its page instead of walking every page
// of the store to rebuild it (which took ~0.3 s at 100,000 pages, paid by
// every CLI write). The newest meta page must name a freelist page.
func TestOpen_PersistsFreelist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// some churn, so that pages are freed
	for i := 0; i < 20; i++ {
		if err := s.Update(func(tx *Tx) error { return tx.SetMeta("k", make([]byte, 3000+i)) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// a meta page: 16-byte page header, then magic, version, page size,
	// flags (4 bytes each), root bucket (16), freelist pgid, high-water
	// pgid, txid (8 each)
	pageSize := int(binary.LittleEndian.Uint32(data[16+8:]))
	var freelist, txid uint64
	for _, off := range []int{0, pageSize} {
		m := data[off+16:]
		if id := binary.LittleEndian.Uint64(m[48:]); id >= txid {
			txid, freelist = id, binary.LittleEndian.Uint64(m[32:])
		}
	}
	if freelist == ^uint64(0) {
		t.Fatal("the store's freelist is not persisted: every read-write open rebuilds it by walking the whole store")
	}
}

// TestOpen_CurrentStoreIsNotWritten: opening a store that needs no
// preparing commits nothing (every CLI verb opens the store; an empty
// write transaction costs two fdatasyncs and a freelist write), while a
// store missing a bucket is still prepared.
func TestOpen_CurrentStoreIsNotWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	txid := func() int {
		t.Helper()
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		id := 0
		_ = s.View(func(tx *Tx) error { id = tx.tx.ID(); return nil })
		return id
	}
	first := txid()
	if again := txid(); again != first {
		t.Fatalf("reopening a current store committed %d transactions", again-first)
	}
	// a bucket of a newer layout is created on open
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Load().Update(func(btx *bolt.Tx) error { return btx.DeleteBucket(bTitles) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	txid()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = s.View(func(tx *Tx) error {
		if tx.b(bTitles) == nil {
			t.Error("a missing bucket was not created on open")
		}
		return nil
	})
}
