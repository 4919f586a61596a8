package store

import (
	"encoding/binary"
	"encoding/hex"
)

// PageRec binary encoding (version 3; version 2 is read too: it has no
// link files and no file links):
//
//	u8 version
//	str id, path, title, type, created, updated, fm_error
//	varint mtime, size, changed
//	[32]byte sha256 (zeros when unknown)
//	u8 flags (1 reserved, 2 links pending, 4 type declared in frontmatter)
//	strs aliases, tags, sources, source_keys (uvarint count, then strings)
//	uvarint link count, then per link:
//	  str target, heading; u8 flags (1 embed, 2 markdown, 4 to a reserved file);
//	  uvarint line, to, ambiguous; str file
//	uvarint file link count, then per file link:
//	  str target, heading; u8 flags; uvarint line, ambiguous; str file
//
// A link's Key is derived from its target on decode.
const pageCodecVersion = 3

func appendStrs(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

// count reads a list's length. Every element takes at least one byte, so
// a length beyond the bytes left is corrupt; it and a failed read give 0.
func (r *reader) count() int {
	n := r.uvarint()
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.b)) {
		r.err = errCorrupt
		return 0
	}
	return int(n)
}

func (r *reader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func encodePage(p *PageRec) []byte {
	n := 64 + len(p.Path) + len(p.Title) + len(p.Links)*48
	b := make([]byte, 0, n)
	b = append(b, pageCodecVersion)
	for _, s := range []string{p.ID, p.Path, p.Title, p.Type, p.Created, p.Updated, p.FMError} {
		b = appendStr(b, s)
	}
	b = binary.AppendVarint(b, p.MtimeNS)
	b = binary.AppendVarint(b, p.Size)
	b = binary.AppendVarint(b, p.ChangedNS)
	var sum [32]byte
	hex.Decode(sum[:], []byte(p.SHA256))
	b = append(b, sum[:]...)
	var flags byte
	if p.Reserved {
		flags |= 1
	}
	if p.LinksPending {
		flags |= 2
	}
	if p.TypeDeclared {
		flags |= 4
	}
	b = append(b, flags)
	b = appendStrs(b, p.Aliases)
	b = appendStrs(b, p.Tags)
	b = appendStrs(b, p.Sources)
	b = appendStrs(b, p.SourceKeys)
	b = appendLinks(b, p.Links, true)
	return appendLinks(b, p.FileLinks, false)
}

// appendLinks encodes a page's links; file links (withTo false) have no
// resolved doc.
func appendLinks(b []byte, ls []LinkRec, withTo bool) []byte {
	b = binary.AppendUvarint(b, uint64(len(ls)))
	for _, l := range ls {
		b = appendStr(b, l.Target)
		b = appendStr(b, l.Heading)
		b = append(b, linkFlags(l))
		b = binary.AppendUvarint(b, uint64(l.Line))
		if withTo {
			b = binary.AppendUvarint(b, uint64(l.To))
		}
		b = binary.AppendUvarint(b, uint64(l.Ambiguous))
		b = appendStr(b, l.File)
	}
	return b
}

// links decodes what appendLinks wrote; a v2 record's page links
// (withFile false) have no File.
func (r *reader) links(withTo, withFile bool) []LinkRec {
	n := r.count()
	if n == 0 {
		return nil
	}
	ls := make([]LinkRec, n)
	for i := range ls {
		l := &ls[i]
		l.Target, l.Heading = r.str(), r.str()
		l.Key = LinkKey(l.Target)
		if f := r.bytes(1); f != nil {
			l.Embed, l.Markdown = f[0]&1 != 0, f[0]&2 != 0
			l.ToReserved = withTo && f[0]&4 != 0
		}
		l.Line = int(r.uvarint())
		if withTo {
			l.To = uint32(r.uvarint())
		}
		l.Ambiguous = int(r.uvarint())
		if withFile {
			l.File = r.str()
		}
	}
	return ls
}

func linkFlags(l LinkRec) byte {
	var lf byte
	if l.Embed {
		lf |= 1
	}
	if l.Markdown {
		lf |= 2
	}
	if l.ToReserved {
		lf |= 4
	}
	return lf
}

func decodePage(v []byte) (*PageRec, error) {
	p, r, err := decodePageFields(v)
	if err != nil {
		return nil, err
	}
	v3 := v[0] >= 3
	p.Links = r.links(true, v3)
	if v3 {
		p.FileLinks = r.links(false, true)
	}
	if r.err != nil {
		return nil, r.err
	}
	return p, nil
}

// decodePageFields decodes a page record but its links (the bulk of a
// big page's record), returning the reader positioned at them.
func decodePageFields(v []byte) (*PageRec, *reader, error) {
	if len(v) == 0 || (v[0] != pageCodecVersion && v[0] != 2) {
		return nil, nil, errCorrupt
	}
	r := &reader{b: v[1:]}
	p := &PageRec{}
	p.ID, p.Path, p.Title, p.Type = r.str(), r.str(), r.str(), r.str()
	p.Created, p.Updated, p.FMError = r.str(), r.str(), r.str()
	p.MtimeNS, p.Size, p.ChangedNS = r.varint(), r.varint(), r.varint()
	if sum := r.bytes(32); sum != nil {
		var zero [32]byte
		if string(sum) != string(zero[:]) {
			p.SHA256 = hex.EncodeToString(sum)
		}
	}
	if f := r.bytes(1); f != nil {
		p.Reserved, p.LinksPending, p.TypeDeclared = f[0]&1 != 0, f[0]&2 != 0, f[0]&4 != 0
	}
	p.Aliases, p.Tags, p.Sources, p.SourceKeys = r.strs(), r.strs(), r.strs(), r.strs()
	if r.err != nil {
		return nil, nil, r.err
	}
	return p, r, nil
}
