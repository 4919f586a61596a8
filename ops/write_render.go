package ops

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
)

// Stage 4 of write_page: render the file. An existing file keeps its BOM,
// its fence lines and its line endings, and its frontmatter keeps the
// original lines of every key the merge did not change (a frontmatter
// that is not valid YAML is kept byte for byte). Then the rules on the
// bytes: a write that changes nothing is "unchanged"; the page as written
// is at most MaxContentBytes; a title several pages share addresses none
// of them for a change.

// rendered is a write's file, ready to commit.
type rendered struct {
	data      []byte
	sha256    string
	unchanged bool // the file already holds exactly these bytes
	m         *merged
}

func (w *pageWrite) render(t *target, m *merged) (*rendered, error) {
	var fmText string
	if m.keepFM {
		fmText = t.doc.FM
	} else {
		var err error
		if fmText, err = m.fm.YAML(); err != nil {
			return nil, errs.Wrap(errs.Internal, err, "encode frontmatter: %v", err)
		}
		if m.crlf && !t.doc.HasFM {
			fmText = strings.ReplaceAll(fmText, "\n", "\r\n") // a new block in a CRLF file
		}
	}
	nl := "\n"
	if m.crlf {
		nl = "\r\n"
	}
	var b bytes.Buffer
	b.Grow(len(fmText) + len(m.body) + 16)
	b.WriteString(t.doc.BOM)
	switch {
	case t.doc.HasFM:
		b.WriteString(t.doc.Open)
		b.WriteString(fmText)
		b.WriteString(t.doc.Close)
		if !strings.HasSuffix(t.doc.Close, "\n") && m.body != "" {
			b.WriteString(nl) // the closing fence ended the file
		}
	case fmText != "":
		b.WriteString("---" + nl + fmText + "---" + nl)
	}
	b.WriteString(m.body)
	r := &rendered{data: b.Bytes(), m: m}
	sum := sha256.Sum256(r.data)
	r.sha256 = hex.EncodeToString(sum[:])
	r.unchanged = t.rec != nil && bytes.Equal(r.data, t.old)
	if r.unchanged {
		return r, nil
	}
	if len(r.data) > MaxContentBytes {
		return nil, errs.E(errs.TooLarge, "the page as written would be %d bytes (frontmatter included); the limit is 1 MiB (%d bytes); split the page", len(r.data), MaxContentBytes)
	}
	if err := withinParseLimits(t.path, r.data); err != nil {
		return nil, err
	}
	if len(t.twins) > 0 {
		return nil, errs.E(errs.Conflict, "%s has a twin, %s, whose name differs only by case or Unicode normalization, and %q may mean either file; synapse writes neither: rename one of them", t.path, strings.Join(t.twins, ", "), w.c.title)
	}
	if len(t.others) > 0 {
		return nil, errs.E(errs.Conflict, "title %q matches %d pages (%s); write to one by its path or id", w.c.title, len(t.others)+1, strings.Join(append([]string{t.path}, t.others...), ", "))
	}
	return r, nil
}

// withinParseLimits refuses a page that would be indexed only in part
// (markdown.Limits: a link target too long to be a key, more links than
// a page may have, a YAML alias bomb): synapse writes nothing it would
// then have to leave out of its own index.
func withinParseLimits(p string, data []byte) error {
	cs := markdown.Parse(p, data).Capped
	if len(cs) == 0 {
		return nil
	}
	code := errs.Invalid
	for _, c := range cs {
		if c.Limit == "links" || c.Limit == "headings" || c.Limit == "frontmatter_bytes" || c.Limit == "scan_bytes" {
			code = errs.TooLarge
		}
	}
	return errs.E(code, "the page as written goes past what synapse indexes of a page (%s); nothing was written", markdown.CappedText(cs))
}
