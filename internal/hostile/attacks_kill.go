package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// killedWrites: new pages written with a dangling link each, every
// write killed (SIGKILL) at a later moment than the one before, across
// the time a write takes; then a stale temporary file of a write killed
// long ago is planted. After the next command that opens the store
// read-write (a source rescan) and a reindex, every killed page that
// reached the disk has its missing-page item, and the stale temporary
// file is gone.
func killedWrites(a *Arena) Verdict {
	v, err := a.Vault("killed", true)
	if err != nil {
		return verdict(false, "setup: %v", err)
	}
	one := a.R.Run(v, "Links [[Gone warmup]].\n", "page", "write", "Warmup")
	if one.Code != 0 {
		return verdict(false, "a write: %s", one.Line(200))
	}
	const kills = 14
	for i := range kills {
		ctx, cancel := context.WithTimeout(context.Background(), one.Took*time.Duration(i+1)/kills)
		a.R.RunContext(ctx, v, fmt.Sprintf("Links [[Gone %d]].\n", i), "page", "write", fmt.Sprintf("Killed %d", i))
		cancel()
	}
	stale := filepath.Join(v, "wiki", ".stale.md.123456789.tmp")
	if err := writeFile(stale, "half a page"); err != nil {
		return verdict(false, "setup: %v", err)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)
	rescan := a.R.Run(v, "", "source", "rescan")
	reindex := a.R.Run(v, "", "reindex")
	res := a.R.Run(v, "", "review", "list", "--status", "all", "--json")
	var list struct{ Items []struct{ Title string } }
	json.Unmarshal([]byte(res.Stdout), &list)
	filed := map[string]bool{}
	for _, it := range list.Items {
		filed[strings.TrimPrefix(it.Title, "Missing page: ")] = true
	}
	onDisk, without := 0, []string{}
	for i := range kills {
		matches, _ := filepath.Glob(filepath.Join(v, "wiki", "*", fmt.Sprintf("killed-%d.md", i)))
		if len(matches) == 0 {
			continue
		}
		onDisk++
		if !filed[fmt.Sprintf("Gone %d", i)] {
			without = append(without, fmt.Sprintf("Killed %d", i))
		}
	}
	ok := rescan.Code == 0 && reindex.Code == 0 && len(without) == 0 && !exists(stale)
	return verdict(ok, "%d writes killed within %s, %d pages reached the disk, without their item: %v; a 2-hour-old temporary file removed by the scan: %v",
		kills, Secs(one.Took), onDisk, without, !exists(stale))
}

// emptyIfMatch: a write with an empty or blank --if-match (what a failed
// `jq -r .sha256` yields) is refused, never taken as "no check".
func emptyIfMatch(a *Arena) Verdict {
	v, err := a.Vault("ifmatch", true)
	if err != nil {
		return verdict(false, "setup: %v", err)
	}
	before, _ := os.ReadFile(filepath.Join(v, "wiki", "Notes.md"))
	var out []string
	ok := true
	for _, m := range []string{"", " "} {
		res := a.R.Run(v, "overwritten\n", "page", "write", "Notes", "--if-match", m)
		out = append(out, fmt.Sprintf("--if-match %q: exit %d", m, res.Code))
		ok = ok && res.Code == 2
	}
	after, _ := os.ReadFile(filepath.Join(v, "wiki", "Notes.md"))
	same := string(after) == string(before)
	return verdict(ok && same, "%s; the page unchanged: %v", strings.Join(out, ", "), same)
}

// longSourceName: a source path with a name over 255 bytes, read or
// cited, is invalid (exit 2), not an internal error.
func longSourceName(a *Arena) Verdict {
	v, err := a.Vault("longsource", false)
	if err != nil {
		return verdict(false, "setup: %v", err)
	}
	long := strings.Repeat("a", 300) + ".md"
	read := a.R.Run(v, "", "source", "read", long)
	cite := a.R.Run(v, "---\nsources: [raw/sources/"+long+"]\n---\nx\n", "page", "write", "Cites")
	ok := read.Code == 2 && cite.Code == 2
	return verdict(ok, "source read: exit %d (%s); page write citing it: exit %d", read.Code, read.Line(100), cite.Code)
}

// sigterm: verbs busy with hostile pages and a vault of many pages are
// sent SIGTERM mid-way; each ends within two seconds of it, saying it
// was interrupted (never an internal error or a crash), and the next
// reindex answers.
func sigterm(a *Arena) Verdict {
	v, err := a.Vault("sigterm", true)
	if err != nil {
		return verdict(false, "setup: %v", err)
	}
	for i := range 3000 {
		body := fmt.Sprintf("# Page %d\n\nzebu %d links [[Page %d]] and [[Missing %d]].\n", i, i, (i*7)%3000, i%50)
		if err := writeFile(filepath.Join(v, "wiki", fmt.Sprintf("gen/page-%d.md", i)), body); err != nil {
			return verdict(false, "setup: %v", err)
		}
	}
	for _, s := range Shapes(4 << 20) {
		if err := s.Write(v); err != nil {
			return verdict(false, "setup: %v", err)
		}
	}
	var out []string
	ok := true
	for _, args := range [][]string{{"reindex"}, {"lint"}, {"graph", "missing"}, {"search", "zebu"}} {
		whole := a.R.Run(v, "", args...).Took // uninterrupted
		for _, after := range []time.Duration{whole / 2, whole * 4 / 5} {
			took, res := a.R.Terminate(v, after, args...)
			// exit 5 says it was interrupted; 143 is the signal's own end
			// (before the handler is installed: nothing open yet); 0 ended
			// before the signal or finished meanwhile
			good := (res.Code == 5 || res.Code == 143 || res.Code == 0) && !Crashed(res.Stderr) && took < 2*time.Second
			out = append(out, fmt.Sprintf("%s (%s) at %s: exit %d %s later", strings.Join(args, " "), Secs(whole), Secs(after), res.Code, Secs(took)))
			ok = ok && good
		}
	}
	if res := a.R.Run(v, "", "reindex"); res.Code != 0 {
		ok = false
		out = append(out, "reindex after: "+res.Line(100))
	}
	return verdict(ok, "%s", strings.Join(out, "; "))
}
