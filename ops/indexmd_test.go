package ops

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// renderWhole is index.md rendered from the whole catalogue.
func renderWhole(t *testing.T, e *Env) string {
	t.Helper()
	var b []byte
	_ = e.Store.View(func(tx *store.Tx) error { b = Catalog(tx); return nil })
	return string(b)
}

// countSplices counts the index.md renders spliced and rendered whole.
func countSplices(e *Env) (spliced, whole *int) {
	spliced, whole = new(int), new(int)
	e.observe.indexMD = func(s bool) {
		if s {
			*spliced++
		} else {
			*whole++
		}
	}
	return spliced, whole
}

// TestIndexMD_SpliceMatchesWholeRender: over a random history of page
// writes (new pages of built-in and open types, type changes, awkward
// titles that need markdown links, duplicate titles) and outside changes
// seen by a rescan (title changes, deletions, moves, a type's last page
// going), every index.md a write leaves is byte for byte the whole render,
// and after the first write each one was spliced, not rendered whole.
func TestIndexMD_SpliceMatchesWholeRender(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			v := testvault.New(t)
			e, _ := openEnv(t, v)
			rng := rand.New(rand.NewSource(seed))
			types := []string{"concept", "entity", "note", "topic", "person", "zeta-type", "a1"}
			titles := []string{"Alpha", "alpha", "Beta", "Weird [t] | #x", "Café au lait", "zed", "Mid", "b`q", "Zz Top", "ünï"}
			write(t, e, &WritePageIn{Title: "Seed page", Content: "s\n", Type: "concept"})
			spliced, whole := countSplices(e)
			var written []string // titles written so far
			for step := 0; step < 60; step++ {
				switch r := rng.Intn(10); {
				case r < 5 || len(written) == 0: // a new page
					title := fmt.Sprintf("%s %d", titles[rng.Intn(len(titles))], rng.Intn(4))
					typ := types[rng.Intn(len(types))]
					if !slices.Contains(vault.PageTypes, typ) {
						// a type of the vault's own: a page written by
						// another tool, seen by a rescan
						testvault.Write(t, v, fmt.Sprintf("wiki/%s/p%d.md", typ, step), fmt.Sprintf("---\ntitle: %s\ntype: %s\n---\nx\n", title, typ))
						if _, err := e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
							t.Fatal(err)
						}
						title, typ = fmt.Sprintf("Beside %d", step), "note"
					}
					out, err := WritePage(context.Background(), e, &WritePageIn{Title: title, Content: "body\n", Type: typ})
					if err != nil && !strings.Contains(err.Error(), "matches 2 pages") {
						t.Fatal(err)
					} else if err == nil && out.Created {
						written = append(written, title)
					}
				case r < 7: // an existing page changes type through a write
					title := written[rng.Intn(len(written))]
					_, err := WritePage(context.Background(), e, &WritePageIn{Title: title, Content: fmt.Sprintf("edit %d\n", step), Type: vault.PageTypes[rng.Intn(len(vault.PageTypes))]})
					if err != nil && !strings.Contains(err.Error(), "matches 2 pages") {
						t.Fatal(err)
					}
				default: // outside changes, seen by a rescan, then a write
					i := rng.Intn(len(written))
					g, err := getPage(context.Background(), e, &GetPageIn{Title: written[i]})
					if err != nil {
						continue // a title two pages share
					}
					abs := v.Abs(g.Path)
					switch rng.Intn(3) {
					case 0: // retitled
						nt := fmt.Sprintf("Retitled %d", step)
						testvault.Write(t, v, g.Path, fmt.Sprintf("---\ntitle: %s\ntype: %s\n---\nx\n", nt, g.Type))
						written[i] = nt
					case 1: // deleted
						if err := os.Remove(abs); err != nil {
							t.Fatal(err)
						}
						written = append(written[:i], written[i+1:]...)
					case 2: // moved
						np := strings.TrimSuffix(g.Path, ".md") + "-moved.md"
						if err := os.Rename(abs, v.Abs(np)); err != nil {
							t.Fatal(err)
						}
					}
					if _, err := e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
						t.Fatal(err)
					}
					out := write(t, e, &WritePageIn{Title: fmt.Sprintf("After outside %d", step), Content: "y\n", Type: "note"})
					written = append(written, out.Title)
				}
				if got, want := readFile(t, v, vault.IndexPage), renderWhole(t, e); got != want {
					t.Fatalf("step %d: index.md differs from the whole render:\n%s\nwant:\n%s", step, got, want)
				}
			}
			if *whole != 0 || *spliced < 50 {
				t.Fatalf("%d index.md spliced, %d rendered whole", *spliced, *whole)
			}
		})
	}
}

// TestIndexMD_OutsideEditRendersWhole: a catalogue edited by hand is not
// spliced (it is not what synapse wrote); the next write renders it whole.
// (An index.md that is no longer the catalogue is left alone:
// TestIndexMD_HandWrittenKept.)
func TestIndexMD_OutsideEditRendersWhole(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "One", Content: "1\n", Type: "concept"})
	spliced, whole := countSplices(e)
	testvault.Write(t, v, vault.IndexPage, indexHeader+"\n## concept (1)\n\n- my own line\n")
	write(t, e, &WritePageIn{Title: "Two", Content: "2\n", Type: "concept"})
	if *spliced != 0 || *whole != 1 {
		t.Fatalf("%d spliced, %d whole", *spliced, *whole)
	}
	want := indexHeader + "\n## concept (2)\n\n- [[wiki/concepts/one|One]]\n- [[wiki/concepts/two|Two]]\n"
	if got := readFile(t, v, vault.IndexPage); got != want {
		t.Fatalf("index.md:\n%s", got)
	}
	// a reindex drops the change set: the next write renders whole, the
	// one after splices again
	if _, err := reindex(context.Background(), e, &ReindexIn{}); err != nil {
		t.Fatal(err)
	}
	testvault.Write(t, v, "wiki/topic/four.md", "---\ntype: topic\ntitle: Four\n---\n4\n")
	write(t, e, &WritePageIn{Title: "Three", Content: "3\n", Type: "note"})
	testvault.Write(t, v, "wiki/topic/five.md", "---\ntype: topic\ntitle: Five\n---\n5\n")
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	write(t, e, &WritePageIn{Title: "Six", Content: "6\n", Type: "note"})
	if *spliced != 1 || *whole != 2 {
		t.Fatalf("%d spliced, %d whole", *spliced, *whole)
	}
	want = indexHeader + "\n## concept (2)\n\n- [[wiki/concepts/one|One]]\n- [[wiki/concepts/two|Two]]\n" +
		"\n## note (2)\n\n- [[wiki/six|Six]]\n- [[wiki/three|Three]]\n" +
		"\n## topic (2)\n\n- [[wiki/topic/five|Five]]\n- [[wiki/topic/four|Four]]\n"
	if got := readFile(t, v, vault.IndexPage); got != want {
		t.Fatalf("index.md:\n%s", got)
	}
}

// TestIndexMD_ChangeSetOverflowRendersWhole: more outside changes than the
// change set keeps make the next write render whole, correctly.
func TestIndexMD_ChangeSetOverflowRendersWhole(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "One", Content: "1\n", Type: "concept"})
	for i := 0; i < store.CatalogChangesCap+5; i++ {
		testvault.Write(t, v, fmt.Sprintf("wiki/notes/n%04d.md", i), "x\n")
	}
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	spliced, whole := countSplices(e)
	write(t, e, &WritePageIn{Title: "Two", Content: "2\n", Type: "concept"})
	if *spliced != 0 || *whole != 1 {
		t.Fatalf("%d spliced, %d whole", *spliced, *whole)
	}
	if got, want := readFile(t, v, vault.IndexPage), renderWhole(t, e); got != want {
		t.Fatal("index.md differs from the whole render")
	}
	write(t, e, &WritePageIn{Title: "Three", Content: "3\n", Type: "concept"})
	if *spliced != 1 {
		t.Fatalf("%d spliced after the whole render", *spliced)
	}
}
