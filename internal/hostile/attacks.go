package hostile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Attack is one of the red team's findings, replayed against a binary:
// what they did, what they saw, and a check of what happens now.
type Attack struct {
	Name string
	// Found is what the red team saw on the main they attacked.
	Found string
	// Quick marks the attacks `go test` runs (a few seconds each); the
	// others run in tools/hostile attacks.
	Quick bool
	Run   func(a *Arena) Verdict
}

// Verdict is what an attack found: OK when no harm was done.
type Verdict struct {
	OK  bool
	Now string
}

func verdict(ok bool, format string, args ...any) Verdict {
	return Verdict{OK: ok, Now: fmt.Sprintf(format, args...)}
}

// Arena is where an attack runs: a binary and a work folder of its own.
type Arena struct {
	R   Runner
	Dir string
}

// NewArena returns an arena for one attack.
func NewArena(bin, dir string) *Arena {
	return &Arena{R: Runner{Bin: bin, Hang: 60 * time.Second}, Dir: dir}
}

// Vault creates a vault named name in the arena; with pages, its wiki/
// holds a few linked pages.
func (a *Arena) Vault(name string, pages bool) (string, error) {
	v := filepath.Join(a.Dir, name)
	if err := a.R.Init(v); err != nil {
		return "", err
	}
	if pages {
		for rel, body := range map[string]string{
			"wiki/Home.md":       "# Home\n\nStart at [[Notes]] and [[Ideas]].\n",
			"wiki/Notes.md":      "# Notes\n\nBack [[Home]]. See [[Ideas]].\n",
			"wiki/Ideas.md":      "# Ideas\n\nA zebu idea, from [[Notes]].\n",
			"wiki/deep/Inner.md": "# Inner\n\n[[Home]]\n",
		} {
			if err := writeFile(filepath.Join(v, rel), body); err != nil {
				return "", err
			}
		}
	}
	if res := a.R.Run(v, "", "reindex"); res.Code != 0 {
		return "", fmt.Errorf("reindex: %s", res.Line(200))
	}
	return v, nil
}

func writeFile(p, body string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(body), 0o644)
}

// Other runs the arena's calls as another user when this process is root
// (uid 65534, owning the vault: root reads a mode-000 folder anyway); the
// folders above the arena and the binary's are opened to others.
func (a *Arena) Other(vault string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for _, d := range []string{a.Dir, filepath.Dir(a.R.Bin)} {
		for ; d != "/" && d != "."; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o005 != 0o005 {
				os.Chmod(d, st.Mode().Perm()|0o005)
			}
		}
	}
	if err := filepath.Walk(vault, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	}); err != nil {
		return err
	}
	a.R.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	return nil
}

// Attacks are the reproductions of the findings this suite keeps.
func Attacks() []Attack {
	return []Attack{
		{Name: "unreadable-folder", Quick: true, Run: unreadableFolder,
			Found: "a mode-000 folder under wiki/ made status, search, page get, page list and review list exit 1 until a lint or reindex"},
		{Name: "over-cap-pages", Quick: true, Run: overCapPages,
			Found: "a 32 KiB+ link target, alias, tag, source or title bricked every verb (internal error: key too large, naming no file), and page write accepted [[aaa…40k]]; a 440-byte alias bomb took page get --json past 30 s (7 levels: 19 s, 279 MB)"},
		{Name: "twin-names", Quick: true, Run: twinNames,
			Found: "Upper.md + upper.md, NFC + NFD Résumé.md: 2 of 4 files were pages, the others appeared nowhere; writing the NFD title overwrote the NFC file"},
		{Name: "empty-if-match", Quick: true, Run: emptyIfMatch,
			Found: `an empty --if-match ("", " ", REST {"if_match": ""}) overwrote a changed page: no check at all`},
		{Name: "long-source-name", Quick: true, Run: longSourceName,
			Found: "a source name over 255 bytes answered internal (500 / exit 1), the path printed twice"},
		{Name: "sigterm", Run: sigterm,
			Found: "SIGTERM was not honoured while a page's alias bomb expanded, nor while 120k aliases were put in the store"},
		{Name: "killed-writes", Run: killedWrites,
			Found: ".name.md.NNN.tmp files of killed writes were never cleaned; 5 of 14 killed new pages kept dangling links without items"},
	}
}

// overCapPages: pages whose names no store key could hold, an alias bomb
// and a page over 32 MiB are dropped into a vault; every verb answers,
// status and lint name each page and what it left out (or refused), and
// write_page refuses such content before writing.
func overCapPages(a *Arena) Verdict {
	v, err := a.Vault("overcap", true)
	if err != nil {
		return verdict(false, "setup: %v", err)
	}
	long := strings.Repeat("a", 40<<10)
	drop := map[string]string{
		"LongLink.md":   "[[" + long + "]] zebu\n",
		"LongAlias.md":  "---\naliases: [" + long + "]\n---\nzebu\n",
		"LongTag.md":    "---\ntags: [" + long + "]\n---\nzebu #" + long + "\n",
		"LongSource.md": "---\nsources: [" + long + ".md]\n---\nzebu\n",
		"LongTitle.md":  "---\ntitle: " + long + "\n---\nzebu\n",
		"Bomb.md":       aliasBomb(9) + "zebu\n",
	}
	for name, body := range drop {
		if err := writeFile(filepath.Join(v, "wiki", name), body); err != nil {
			return verdict(false, "setup: %v", err)
		}
	}
	huge, err := os.Create(filepath.Join(v, "wiki", "Huge.md"))
	if err == nil {
		err = huge.Truncate(32<<20 + 1)
		huge.Close()
	}
	if err != nil {
		return verdict(false, "setup: %v", err)
	}
	var out []string
	ok := true
	for _, args := range [][]string{{"status"}, {"search", "zebu"}, {"page", "get", "Bomb", "--json"}, {"page", "get", "LongLink", "--full"},
		{"page", "list"}, {"graph", "missing"}, {"lint"}, {"source", "rescan"}, {"reindex"}} {
		res := a.R.Run(v, "", args...)
		out = append(out, fmt.Sprintf("%s exit %d in %s (CPU %s)", strings.Join(args, " "), res.Code, Secs(res.Took), Secs(res.CPU)))
		ok = ok && res.Code == 0 && !res.Hung && res.CPU < 20*time.Second // CPU, not wall: a loaded machine waits
	}
	res := a.R.Run(v, "", "status", "--json")
	var st struct {
		OverCapCount int `json:"over_cap_count"`
		Refused      []struct{ Path, Reason string }
	}
	json.Unmarshal([]byte(res.Stdout), &st)
	listed := st.OverCapCount == len(drop) && len(st.Refused) == 1 && st.Refused[0].Reason == "too_large"
	w := a.R.Run(v, "[["+long+"]]\n", "page", "write", "Another")
	refused := w.Code == 2 && strings.Contains(w.Stderr, "longer than 1024 bytes") && !exists(filepath.Join(v, "wiki", "concepts", "another.md"))
	return verdict(ok && listed && refused, "%s; status: %d pages over a limit, refused %v; page write [[a…40k]]: exit %d %s",
		strings.Join(out, ", "), st.OverCapCount, st.Refused, w.Code, w.Line(120))
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// twinNames: four files, two pairs of names that links cannot tell apart;
// each is a page or named as a twin, and a write by the shared title
// changes neither file.
func twinNames(a *Arena) Verdict {
	v, err := a.Vault("twins", false)
	if err != nil {
		return verdict(false, "setup: %v", err)
	}
	nfc, nfd := "R\u00e9sum\u00e9.md", "Re\u0301sume\u0301.md"
	files := map[string]string{"Upper.md": "# upper one\n", "upper.md": "# upper two\n", nfc: "# nfc\n", nfd: "# nfd\n"}
	for name, body := range files {
		if err := writeFile(filepath.Join(v, "wiki", name), body); err != nil {
			return verdict(false, "setup: %v", err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(v, "wiki", "Upper.md")); string(data) != files["Upper.md"] {
		return verdict(true, "skipped: this file system folds case")
	}
	res := a.R.Run(v, "", "status", "--json")
	var st struct {
		Pages   int
		Refused []struct{ Path, Reason string }
	}
	json.Unmarshal([]byte(res.Stdout), &st)
	twins := 0
	for _, r := range st.Refused {
		if r.Reason == "twin" {
			twins++
		}
	}
	w := a.R.Run(v, "changed\n", "page", "write", strings.TrimSuffix(nfd, ".md"))
	same := true
	for name, body := range files {
		data, _ := os.ReadFile(filepath.Join(v, "wiki", name))
		same = same && string(data) == body
	}
	ok := st.Pages == 2 && twins == 2 && w.Code == 4 && same
	return verdict(ok, "%d pages and %d named twins of 4 files; a write by the NFD title: exit %d (%s), files unchanged: %v", st.Pages, twins, w.Code, w.Line(100), same)
}

// unreadableFolder: a folder under wiki/ turns unreadable after the
// index holds its page; every read verb answers, and status and lint
// name the folder.
func unreadableFolder(a *Arena) Verdict {
	v, err := a.Vault("unreadable", true)
	if err != nil {
		return verdict(false, "setup: %v", err)
	}
	if err := a.Other(v); err != nil {
		return verdict(false, "setup: %v", err)
	}
	if res := a.R.Run(v, "", "reindex"); res.Code != 0 { // as the other user
		return verdict(false, "reindex: %s", res.Line(200))
	}
	secret := filepath.Join(v, "wiki", "deep")
	if err := os.Chmod(secret, 0); err != nil {
		return verdict(false, "chmod: %v", err)
	}
	defer os.Chmod(secret, 0o755)
	var out []string
	ok := true
	for _, args := range [][]string{{"status"}, {"search", "zebu"}, {"page", "get", "Home"}, {"page", "list"}, {"review", "list"}, {"graph", "missing"}} {
		res := a.R.Run(v, "", args...)
		out = append(out, fmt.Sprintf("%s exit %d", strings.Join(args, " "), res.Code))
		ok = ok && res.Code == 0
	}
	res := a.R.Run(v, "", "status", "--json")
	var st struct {
		Refused []struct{ Path, Reason string }
	}
	json.Unmarshal([]byte(res.Stdout), &st)
	// the folder, or the page under it that the freshness check found
	// it could not stat any more
	listed := len(st.Refused) == 1 && strings.HasPrefix(st.Refused[0].Path, "wiki/deep") && st.Refused[0].Reason == "unreadable"
	lint := a.R.Run(v, "", "lint", "--category", "refused_files")
	listed = listed && strings.Contains(lint.Stdout, "wiki/deep")
	return verdict(ok && listed, "%s; status and lint name what cannot be read: %v %v", strings.Join(out, ", "), listed, st.Refused)
}
