package ops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/synapse-wiki/synapse/vault"
)

// The top files synapse maintains (docs/vault.md#pages) on a vault that had them
// before synapse: the user's vault is the fixed point. A wiki/index.md
// that synapse did not write (a migrated wiki's hand-kept index) is never
// replaced by the catalogue: writes go on, index.md stays as it is, and
// status and lint say so and how to hand index.md over. wiki/log.md is
// only ever appended to (appendLog), so a hand-kept log keeps its bytes.

// ReservedFile is a top file of wiki/ that synapse maintains but leaves
// alone as it is, with what to do about it.
type ReservedFile struct {
	Path    string `json:"path"`    // vault path, e.g. wiki/index.md
	Problem string `json:"problem"` // what synapse found and does not do
	Fix     string `json:"fix"`     // how to let synapse maintain it
}

// indexHandWritten is the finding of a hand-written wiki/index.md.
func indexHandWritten(e *Env) ReservedFile {
	return ReservedFile{
		Path:    vault.IndexPage,
		Problem: "hand-written (it does not start with synapse's catalogue header): synapse leaves it as it is and keeps no catalogue there; page writes go on",
		Fix:     "rename it, e.g. to " + freeTopName(e) + ", and synapse will maintain index.md (the catalogue is written at the next page write)",
	}
}

// freeTopName suggests a name for a hand-written index.md that no file at
// the top of wiki/ has, compared without case (a case-insensitive file
// system would otherwise overwrite it).
func freeTopName(e *Env) string {
	taken := map[string]bool{}
	if ents, err := os.ReadDir(e.Vault.Abs(vault.WikiDir)); err == nil {
		for _, d := range ents {
			taken[strings.ToLower(d.Name())] = true
		}
	}
	for _, n := range []string{"home", "start", "contents", "main-index", "hand-index"} {
		if !taken[n+".md"] {
			return vault.WikiDir + "/" + n + ".md"
		}
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("home-%d.md", i); !taken[n] {
			return vault.WikiDir + "/" + n
		}
	}
}

// isCatalogue reports whether head, the start of an index.md, is synapse's
// catalogue (it starts with indexHeader, as vault.Init and Catalog write
// it; a BOM and CRLF line endings, as an editor or git may leave them, are
// allowed) or holds nothing but blanks (nothing is lost replacing it).
// full says head is the whole file.
func isCatalogue(head []byte, full bool) bool {
	h := bytes.TrimPrefix(head, []byte("\ufeff"))
	if full && len(bytes.TrimSpace(h)) == 0 {
		return true
	}
	if bytes.Contains(h, []byte("\r\n")) {
		h = bytes.ReplaceAll(h, []byte("\r\n"), []byte("\n"))
	}
	return bytes.HasPrefix(h, []byte(indexHeader))
}

// handWrittenIndex reports whether wiki/index.md exists and is not
// synapse's catalogue (isCatalogue), reading only its first bytes through
// the vault's file layer. A missing index.md is not hand-written.
func handWrittenIndex(e *Env) (bool, error) {
	f, st, err := e.files().Open(vault.IndexPage)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 2*len(indexHeader)+3) // CRLF and a BOM included
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	return !isCatalogue(head[:n], int64(n) == st.Size()), nil
}

// reservedFiles lists the top files synapse leaves alone (for status and
// lint). A file that cannot be read is left to the write path, which
// refuses it with its reason.
func reservedFiles(e *Env) []ReservedFile {
	out := []ReservedFile{}
	if hw, err := handWrittenIndex(e); err == nil && hw {
		out = append(out, indexHandWritten(e))
	}
	return out
}
