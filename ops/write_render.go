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
	if err := withinWriteCap(t, r.data, m.body); err != nil {
		return nil, err
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

// withinWriteCap refuses a page as written over MaxContentBytes, except
// on a page that is over it already (written by hand) when the write does
// not lengthen its body: a change of frontmatter alone (the body kept byte
// for byte) or a section write that keeps the body as long or shortens
// it. Such a page can then be tagged, aliased and split, a section at a
// time, but not grown.
func withinWriteCap(t *target, data []byte, body string) error {
	if len(data) <= MaxContentBytes {
		return nil
	}
	if t.rec != nil && len(t.old) > MaxContentBytes {
		if len(body) <= len(t.doc.Body) {
			return nil
		}
		return errs.E(errs.TooLarge, "%s is %d bytes, over the 1 MiB (%d bytes) a write may replace; a write may change its frontmatter or replace a section with text no longer than the section's, but this one would lengthen the body by %d bytes; split the page: move sections to new pages, then write the section shorter", t.path, len(t.old), MaxContentBytes, len(body)-len(t.doc.Body))
	}
	return errs.E(errs.TooLarge, "the page as written would be %d bytes (frontmatter included); the limit is 1 MiB (%d bytes); split the page", len(data), MaxContentBytes)
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
