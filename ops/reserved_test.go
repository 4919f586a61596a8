package ops

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/wildgen"
	"github.com/synapse-wiki/synapse/vault"
)

// TestIndexMD_HandWrittenKept: on a migrated vault whose wiki/index.md
// was kept by hand (the wild vault's is 985 KB), writes go on and never
// replace it; status and lint say so and how to fix it; once it is
// renamed, the next write writes the catalogue. An index.md synapse wrote
// (init's, or a catalogue) and an empty one are replaced as before.
func TestIndexMD_HandWrittenKept(t *testing.T) {
	e, _ := wildVault(t, wildgen.Options{Seed: 7})
	ctx := context.Background()
	before := readFile(t, e.Vault, vault.IndexPage)
	if len(before) < 985<<10 {
		t.Fatalf("the wild vault's index.md is %d bytes", len(before))
	}
	logBefore := readFile(t, e.Vault, vault.LogPage)
	out := write(t, e, &WritePageIn{Title: "After Migration", Content: "A page written after the move to synapse.\n", Type: "topic"})
	write(t, e, &WritePageIn{Title: "After Migration", Content: "Edited.\n"})
	if got := readFile(t, e.Vault, vault.IndexPage); got != before {
		t.Fatalf("the hand-written index.md was rewritten (%d bytes → %d)", len(before), len(got))
	}
	if got := readFile(t, e.Vault, vault.LogPage); !strings.HasPrefix(got, logBefore) || strings.Count(got[len(logBefore):], "] created | After Migration") != 1 || strings.Count(got[len(logBefore):], "] updated | After Migration") != 1 {
		t.Errorf("the hand-kept log.md was not just appended to:\n%s", got[max(0, len(logBefore)-200):])
	}
	if _, err := os.Stat(e.Vault.Abs(out.Path)); err != nil {
		t.Fatalf("the write did not happen: %v", err)
	}
	st, err := status(ctx, e, &StatusIn{})
	must(t, err)
	if len(st.ReservedFiles) != 1 || st.ReservedFiles[0].Path != vault.IndexPage ||
		!strings.Contains(st.ReservedFiles[0].Fix, "rename it, e.g. to wiki/home.md, and synapse will maintain index.md") {
		t.Errorf("status: %+v", st.ReservedFiles)
	}
	// a suggested name no top file has, without case (Home.md is taken)
	testvault.Write(t, e.Vault, "wiki/Home.md", "# Home\n")
	if st, err := status(ctx, e, &StatusIn{}); err != nil || len(st.ReservedFiles) != 1 || !strings.Contains(st.ReservedFiles[0].Fix, "e.g. to wiki/start.md,") {
		t.Errorf("status with wiki/Home.md: %v %+v", err, st.ReservedFiles)
	}
	must(t, os.Remove(e.Vault.Abs("wiki/Home.md")))
	l, err := lint(ctx, e, &LintIn{Limit: 10})
	must(t, err)
	if l.Counts.ReservedFiles != 1 || len(l.ReservedFiles) != 1 || l.ReservedFiles[0] != st.ReservedFiles[0] {
		t.Errorf("lint: %d %+v", l.Counts.ReservedFiles, l.ReservedFiles)
	}
	if l, err := lint(ctx, e, &LintIn{Limit: 10, Page: []string{"After Migration"}}); err != nil || l.Counts.ReservedFiles != 0 {
		t.Errorf("lint --page reports the vault's index.md: %v %+v", err, l)
	}
	// the fix: rename it, and synapse maintains index.md from the next write
	must(t, os.Rename(e.Vault.Abs(vault.IndexPage), e.Vault.Abs("wiki/home.md")))
	write(t, e, &WritePageIn{Title: "After Migration", Content: "Edited again.\n"})
	if got := readFile(t, e.Vault, vault.IndexPage); !strings.HasPrefix(got, indexHeader) || !strings.Contains(got, "[[wiki/topics/after-migration|After Migration]]") {
		t.Errorf("after the rename, index.md is not the catalogue:\n%.300s", got)
	}
	if got := readFile(t, e.Vault, "wiki/home.md"); got != before {
		t.Error("the renamed index changed")
	}
	st, err = status(ctx, e, &StatusIn{})
	must(t, err)
	if len(st.ReservedFiles) != 0 {
		t.Errorf("status after the fix: %+v", st.ReservedFiles)
	}

	// an index.md synapse wrote, or an empty one, is the catalogue's to replace
	for name, text := range map[string]string{
		"init's":    indexHeader,
		"CRLF":      strings.ReplaceAll(indexHeader, "\n", "\r\n") + "\r\n## concept (1)\r\n\r\n- [[wiki/concepts/x|X]]\r\n",
		"with BOM":  "\ufeff" + indexHeader,
		"empty":     "",
		"blank":     "\n\n",
		"catalogue": indexHeader + "\n## concept (9)\n\n- [[wiki/concepts/gone|Gone]]\n",
	} {
		t.Run(name, func(t *testing.T) {
			v := testvault.New(t)
			testvault.Write(t, v, vault.IndexPage, text)
			e, _ := openEnv(t, v)
			write(t, e, &WritePageIn{Title: "Some Page", Content: "Body.\n"})
			if got := readFile(t, v, vault.IndexPage); !strings.HasPrefix(got, indexHeader) || !strings.Contains(got, "Some Page") {
				t.Errorf("index.md not replaced by the catalogue:\n%s", got)
			}
			st, err := status(context.Background(), e, &StatusIn{})
			if err != nil || len(st.ReservedFiles) != 0 {
				t.Errorf("status: %v %+v", err, st.ReservedFiles)
			}
		})
	}
}

// TestLogMD_HandWrittenOnlyAppended: a hand-kept wiki/log.md (no final
// newline, CRLF, a BOM, a big one) is only ever appended to: its bytes
// stay, in front of the new entries.
func TestLogMD_HandWrittenOnlyAppended(t *testing.T) {
	big := strings.Repeat("## 2024-01-02 ingest | a source, by hand\n\nNotes kept by a person.\n\n", 40000)
	for name, text := range map[string]string{
		"no final newline": "# Change log\n\n- 2024-01-01: migrated",
		"CRLF":             "# Log\r\n\r\n## [2024-01-01] ingest | X\r\n",
		"BOM":              "\ufeff# Log\n\nkept by hand\n",
		"big":              big,
	} {
		t.Run(name, func(t *testing.T) {
			v := testvault.New(t)
			testvault.Write(t, v, vault.LogPage, text)
			e, _ := openEnv(t, v)
			write(t, e, &WritePageIn{Title: "First", Content: "One.\n"})
			write(t, e, &WritePageIn{Title: "First", Content: "Two.\n"})
			write(t, e, &WritePageIn{Title: "Second", Content: "Three.\n"})
			got := readFile(t, v, vault.LogPage)
			if !strings.HasPrefix(got, text) {
				t.Fatalf("log.md lost its hand-written start:\n%.200q", got)
			}
			if n := strings.Count(got[len(text):], "## [2026-05-01] "); n != 3 {
				t.Errorf("%d entries appended, want 3:\n%q", n, got[len(text):])
			}
		})
	}
}

// TestWritePage_LinksToTheTopFilesItCreates: the first write to a vault
// without wiki/index.md and wiki/log.md creates them, so its own [[index]]
// and [[log]] are not dangling: the result lists none, no missing-page item
// is filed for them, and the store resolves them to the reserved files.
func TestWritePage_LinksToTheTopFilesItCreates(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/other.md", "# Other\n")
	for _, f := range []string{vault.IndexPage, vault.LogPage} {
		if err := os.Remove(v.Abs(f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{NoInitialScan: true})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	rescanT(t, e)
	for _, f := range []string{vault.IndexPage, vault.LogPage} {
		if _, err := os.Stat(v.Abs(f)); err == nil {
			t.Fatalf("%s exists before the first write", f)
		}
	}
	out := write(t, e, &WritePageIn{Title: "Linker", Content: "See [[index]], [[log]] and [[nowhere]].\n"})
	if strings.Join(out.Dangling, ",") != "nowhere" {
		t.Errorf("dangling %q, want only nowhere", out.Dangling)
	}
	items := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"})
	var titles []string
	for _, it := range items.Items {
		titles = append(titles, it.Title)
	}
	if strings.Join(titles, ",") != "nowhere" {
		t.Errorf("review items %q, want only nowhere", titles)
	}
	g := getPageOut(t, e, "Linker")
	for _, l := range g.Links {
		if l.Target != "nowhere" && (!l.Resolved || l.Path != "wiki/"+l.Target+".md") {
			t.Errorf("link %+v, want it resolved to the reserved file", l)
		}
	}
	if diffs, err := storecheck.CheckGraph(e.Store); err != nil || len(diffs) > 0 {
		t.Errorf("graph: %v %v", err, diffs)
	}
}
