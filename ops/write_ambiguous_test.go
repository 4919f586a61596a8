package ops

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestWrite_Ambiguous: a write lists its page's links whose target
// matches several pages where the tie-break guessed, with the page
// chosen, the rule and the others, as lint does for the page; links its
// folder decides, links by path and other pages' links are left out. An
// append and a section write go through the same path.
func TestWrite_Ambiguous(t *testing.T) {
	e := twinVault(t)
	w := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Notes", "path": "wiki/ru/sub/notes.md",
		"content": "[[kan]], [[transformer]], [[kan|again]], [[ru/transformer]], [[deep/er/kan]].\n"})
	want := []AmbiguousLink{
		{Target: "kan", Chosen: "wiki/a/kan.md", ChosenBy: "shortest path", Others: []string{"wiki/deep/er/kan.md"}, OthersTotal: 1, Added: true},
		{Target: "transformer", Chosen: "wiki/en/transformer.md", ChosenBy: "name order", Others: []string{"wiki/ru/transformer.md"}, OthersTotal: 1, Added: true},
	}
	if !reflect.DeepEqual(w.Ambiguous, want) || w.AmbiguousTotal != 0 {
		t.Fatalf("ambiguous %+v (total %d), want %+v", w.Ambiguous, w.AmbiguousTotal, want)
	}
	// the same as lint --page says
	l := mustCall[LintOut](t, e, opLint, obj{"page": []string{"wiki/ru/sub/notes.md"}})
	if l.Counts.AmbiguousLinks != len(w.Ambiguous) {
		t.Errorf("lint --page counts %d ambiguous links, the write %d", l.Counts.AmbiguousLinks, len(w.Ambiguous))
	}

	// in ru/: the folder decides transformer; kan stays a guess
	w = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Folder", "path": "wiki/ru/folder.md", "content": "[[transformer]] [[kan]]\n"})
	if len(w.Ambiguous) != 1 || w.Ambiguous[0].Target != "kan" {
		t.Errorf("a link its folder decides is listed: %+v", w.Ambiguous)
	}
	w = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Plain", "content": "[[ru/transformer]] and [[Внимание]].\n"})
	if w.Ambiguous != nil {
		t.Errorf("links by path and unique names listed: %+v", w.Ambiguous)
	}
	// an append adds an ambiguous link: the result lists the page's
	w = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Plain", "append": true, "section": "More", "content": "[[transformer]]\n"})
	if len(w.Ambiguous) != 1 || w.Ambiguous[0].Target != "transformer" || w.Ambiguous[0].Chosen != "wiki/en/transformer.md" || !w.Ambiguous[0].Added {
		t.Errorf("append: %+v", w.Ambiguous)
	}
	// a second append: the page's links are still listed, but as the
	// page's own (not added), apart from what this write adds
	w = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Plain", "append": true, "content": "[[Nowhere]]\n"})
	if len(w.Ambiguous) != 1 || w.Ambiguous[0].Added || !reflect.DeepEqual(w.DanglingAdded, []string{"Nowhere"}) {
		t.Errorf("second append: ambiguous %+v, dangling_added %v", w.Ambiguous, w.DanglingAdded)
	}
	w = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Plain", "append": true, "content": "More.\n"})
	if !reflect.DeepEqual(w.Dangling, []string{"Nowhere"}) || len(w.DanglingAdded) != 0 || w.DanglingAdded == nil {
		t.Errorf("third append: dangling %v, dangling_added %v", w.Dangling, w.DanglingAdded)
	}
}

// TestWrite_AmbiguousCapped: the list holds at most MaxWriteAmbiguous
// targets, each with at most MaxAmbiguousOthers others, and says how
// many there are in all.
func TestWrite_AmbiguousCapped(t *testing.T) {
	v := testvault.New(t)
	var body strings.Builder
	for i := range MaxWriteAmbiguous + 3 {
		for d := range MaxAmbiguousOthers + 2 {
			testvault.Write(t, v, fmt.Sprintf("wiki/d%d/n%d.md", d, i), fmt.Sprintf("---\ntitle: Twin %d\n---\nx\n", i))
		}
		fmt.Fprintf(&body, "[[Twin %d]]\n", i)
	}
	e := newTestEnv(t, v)
	w := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Many", "content": body.String()})
	if len(w.Ambiguous) != MaxWriteAmbiguous || w.AmbiguousTotal != MaxWriteAmbiguous+3 {
		t.Fatalf("listed %d of %d", len(w.Ambiguous), w.AmbiguousTotal)
	}
	a := w.Ambiguous[0]
	if a.Target != "Twin 0" || a.Chosen != "wiki/d0/n0.md" || a.ChosenBy != "name order" ||
		len(a.Others) != MaxAmbiguousOthers || a.OthersTotal != MaxAmbiguousOthers+1 || !slices.IsSorted(a.Others) {
		t.Errorf("first: %+v", a)
	}
}

// TestReviewList_SameName: a pending missing-page item lists the pages
// whose name differs from its title only by case, dashes or spaces, as
// review show does; other items and decided ones list none.
func TestReviewList_SameName(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/synthesis/Sierra Mirage Café Ünïcode.md", "---\ntitle: Sierra Mirage\n---\nx\n")
	testvault.Write(t, v, "wiki/zenith.md", "---\ntitle: Zenith\n---\n[[sierra-mirage]] [[Nowhere]]\n")
	e := newTestEnv(t, v)
	mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	items := mustCall[ListReviewsOut](t, e, opListReviews, obj{}).Items
	byTitle := map[string]ReviewItem{}
	for _, it := range items {
		byTitle[ProposedTitle(it.Title)] = it
	}
	sm, ok := byTitle["sierra-mirage"]
	if !ok {
		t.Fatalf("no item for sierra-mirage: %+v", items)
	}
	if len(sm.SameName) != 1 || sm.SameName[0].Title != "Sierra Mirage" || sm.SameName[0].Path != "wiki/synthesis/Sierra Mirage Café Ünïcode.md" {
		t.Errorf("same_name %+v", sm.SameName)
	}
	if n := byTitle["Nowhere"]; n.ID == "" || n.SameName != nil {
		t.Errorf("Nowhere: %+v", n)
	}
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": sm.ID, "action": "dismiss"})
	for _, it := range mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}).Items {
		if it.SameName != nil {
			t.Errorf("a decided item lists same_name: %+v", it)
		}
	}
}

// TestWrite_DryRun: a dry run answers what the write would say (path,
// sha256, dangling, ambiguous, the items it would file) and changes
// nothing: no file, no log line, no review item, no history; the write
// made afterwards says the same.
func TestWrite_DryRun(t *testing.T) {
	e := twinVault(t)
	snap := vaultFiles(t, e.Vault.Root)
	call := obj{"title": "Notes", "path": "wiki/ru/sub/notes.md",
		"content": "[[kan]], [[transformer]], [[Nowhere]], [[Notes]], [[ru/transformer]].\n"}
	dry := obj{"dry_run": true}
	for k, v := range call {
		dry[k] = v
	}
	d := mustCall[WritePageOut](t, e, opWritePage, dry)
	if !d.DryRun || !d.Created || d.Path != "wiki/ru/sub/notes.md" || d.ID != "" {
		t.Fatalf("dry run: %+v", d)
	}
	if got := vaultFiles(t, e.Vault.Root); !reflect.DeepEqual(got, snap) {
		t.Fatalf("a dry run changed the vault's files")
	}
	if q := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}); q.Total != 0 {
		t.Fatalf("a dry run filed %d items", q.Total)
	}
	w := mustCall[WritePageOut](t, e, opWritePage, call)
	if w.DryRun || w.SHA256 != d.SHA256 || w.Path != d.Path || !reflect.DeepEqual(w.Dangling, d.Dangling) ||
		!reflect.DeepEqual(w.Filed, d.Filed) || !reflect.DeepEqual(w.Ambiguous, d.Ambiguous) {
		t.Fatalf("the write says\n%+v\nthe dry run said\n%+v", w, d)
	}
	if !reflect.DeepEqual(d.Dangling, []string{"Nowhere"}) || len(d.Ambiguous) != 2 {
		t.Errorf("dangling %v, ambiguous %+v", d.Dangling, d.Ambiguous)
	}
	// an edit's dry run: the link the page has files nothing again
	d = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "wiki/ru/sub/notes.md", "dry_run": true, "content": "[[Nowhere]] [[Elsewhere]]\n"})
	if d.Created || d.ID != w.ID || !reflect.DeepEqual(d.Filed, []string{"Elsewhere"}) || d.Ambiguous != nil {
		t.Errorf("edit dry run: %+v", d)
	}
	// the page a pending item asks for: the dry run names the item it
	// would close, and gives the frontmatter as it would be
	q := mustCall[ListReviewsOut](t, e, opListReviews, obj{})
	d = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Nowhere", "dry_run": true, "content": "Here.\n", "aliases": []string{"Nix"}})
	if len(q.Items) != 1 || !reflect.DeepEqual(d.AutoResolved, []string{q.Items[0].ID}) {
		t.Errorf("would close %v; pending %+v", d.AutoResolved, q.Items)
	}
	if d.Frontmatter == nil || !reflect.DeepEqual(d.Frontmatter.List("aliases", false), []string{"Nix"}) || d.Frontmatter.String("type") != "concept" {
		t.Errorf("frontmatter %+v", d.Frontmatter)
	}
}

// vaultFiles maps every file of the vault but the store (history and
// runtime files included) to its bytes.
func vaultFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "synapse.db" {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWrite_AliasShared: an alias the write adds that another page has
// as its file name, title or alias is reported with those pages; the
// aliases the page had are not reported again, and a dry run says the
// same.
func TestWrite_AliasShared(t *testing.T) {
	e := twinVault(t)
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Other", "content": "---\naliases: [Nick]\n---\nOther.\n"})
	call := obj{"title": "Mine", "content": "Mine.\n", "aliases": []string{"kan", "Nick", "Unique one"}}
	d := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Mine", "content": "Mine.\n", "aliases": []string{"kan", "Nick", "Unique one"}, "dry_run": true})
	w := mustCall[WritePageOut](t, e, opWritePage, call)
	want := []SharedAlias{
		{Alias: "kan", By: "file name", Pages: []string{"wiki/a/kan.md", "wiki/deep/er/kan.md"}},
		{Alias: "Nick", By: "alias", Pages: []string{"wiki/concepts/other.md"}},
	}
	if !reflect.DeepEqual(w.AliasShared, want) || !reflect.DeepEqual(d.AliasShared, want) {
		t.Fatalf("alias_shared %+v (dry run %+v), want %+v", w.AliasShared, d.AliasShared, want)
	}
	w = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Mine", "aliases": []string{"Another"}})
	if w.AliasShared != nil {
		t.Errorf("aliases the page had reported again: %+v", w.AliasShared)
	}
}

// TestWrite_DryRunPastTheFilingCap: past MaxFiledPerWrite dangling
// targets, a dry run names the items the write then files, and counts
// the same not_filed, also when one of the first targets is queued.
func TestWrite_DryRunPastTheFilingCap(t *testing.T) {
	e := twinVault(t)
	add(t, e, TypeMissingPage, "Gone 0")
	var b strings.Builder
	for i := range MaxFiledPerWrite + 2 {
		fmt.Fprintf(&b, "[[Gone %d]] ", i)
	}
	call := obj{"title": "Many", "content": b.String() + "\n"}
	d := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Many", "content": b.String() + "\n", "dry_run": true})
	w := mustCall[WritePageOut](t, e, opWritePage, call)
	if !reflect.DeepEqual(d.Filed, w.Filed) || d.NotFiled != w.NotFiled || len(w.Filed) != MaxFiledPerWrite-1 || w.NotFiled != 2 {
		t.Errorf("dry run filed %d (not_filed %d), the write %d (not_filed %d)", len(d.Filed), d.NotFiled, len(w.Filed), w.NotFiled)
	}
}
