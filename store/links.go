package store

import (
	"encoding/binary"
	"math"
	"path"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Backlink is a page linking to another, with its link count.
type Backlink struct {
	Src   uint32
	Count int
}

// Backlinks returns the pages linking to dst (from its graph node), in doc
// order.
func (tx *Tx) Backlinks(dst uint32) []Backlink {
	a, err := tx.Adj(dst)
	if err != nil || a == nil {
		return nil
	}
	var out []Backlink
	for _, e := range a.Edges {
		if e.In > 0 {
			out = append(out, Backlink{Src: e.To, Count: int(e.In)})
		}
	}
	return out
}

// HasBacklinks reports whether any page links to dst.
func (tx *Tx) HasBacklinks(dst uint32) bool {
	a, err := tx.Adj(dst)
	if err != nil || a == nil {
		return false
	}
	for _, e := range a.Edges {
		if e.In > 0 {
			return true
		}
	}
	return false
}

func danglingPrefix(target string) []byte {
	return append(key(LastSegment(target), target), 0)
}

// AddDangling adds n unresolved links from src under the folded target
// key, remembering raw as the written form.
func (tx *Tx) AddDangling(target string, raw string, src uint32, n int) error {
	return addLinkCount(tx.b(bDangling), target, raw, src, n)
}

// addLinkCount adds n links from src under a folded target key in a
// bucket keyed last segment · target · src (dangling, offgraph); a count
// that drops to zero or below removes the entry.
func addLinkCount(b *bolt.Bucket, target string, raw string, src uint32, n int) error {
	k := append(danglingPrefix(target), u32(src)...)
	old := b.Get(k)
	v := int64(n)
	if old != nil {
		v += int64(getU32(old))
		if len(old) > 4 {
			raw = string(old[4:])
		}
	}
	if v <= 0 {
		return b.Delete(k)
	}
	return b.Put(k, append(u32(uint32(v)), raw...))
}

// Links that reach something that is no graph node, and file names.
//
//	offgraph                 last segment of target · fold(target) · src doc → u32 count
//	                         links that reach no graph node: to a reserved top
//	                         file (index, log, overview), to a file that is no
//	                         page (a raw source, an attachment), and every link
//	                         that can only name a file, reached or not. Their
//	                         resolution changes when a page or file with that
//	                         last segment as its name comes or goes, and no
//	                         graph edge leads back to them: this finds them.
//	file_names               'n' fold(name) · path → ∅  tracked files that are no page, by
//	                         name (LinkKey of the file name: ".md" dropped)
//	                         'p' fold(path) · path → ∅  the same by path (PathKey: ".md" dropped)
var (
	bOffGraph  = []byte("offgraph")
	bFileNames = []byte("file_names")
)

func init() { registerDerived(string(bOffGraph), string(bFileNames)) }

// AddOffGraph adds n links from src under the folded target key to the
// links that reach no graph node (see bOffGraph).
func (tx *Tx) AddOffGraph(target string, src uint32, n int) error {
	return addLinkCount(tx.b(bOffGraph), target, "", src, n)
}

// OffGraphBySegment returns the pages holding links that reach no graph
// node whose target's last segment folds to seg (a page may repeat).
func (tx *Tx) OffGraphBySegment(seg string) []uint32 { return bySegment(tx.b(bOffGraph), seg) }

// OffGraph returns every off-graph link target, grouped by key (tests).
func (tx *Tx) OffGraph() []DanglingRef { return eachTarget(tx.b(bOffGraph)) }

// FileName is the name under which links reach a file that is no page:
// its file name as a link key (folded, ".md" dropped).
func FileName(vaultPath string) string { return LinkKey(path.Base(vaultPath)) }

func fileNameKeys(vaultPath string) [][]byte {
	return [][]byte{
		key("n"+FileName(vaultPath), vaultPath),
		key("p"+PathKey(vaultPath), vaultPath),
	}
}

// PutFileName indexes a tracked file that is no page (a raw source, an
// attachment) by name and by path, for link resolution.
func (tx *Tx) PutFileName(vaultPath string) error {
	for _, k := range fileNameKeys(vaultPath) {
		if err := tx.b(bFileNames).Put(k, []byte{}); err != nil {
			return err
		}
	}
	return nil
}

// DeleteFileName removes what PutFileName indexed.
func (tx *Tx) DeleteFileName(vaultPath string) error {
	for _, k := range fileNameKeys(vaultPath) {
		if err := tx.b(bFileNames).Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// HasFileName reports whether vaultPath is indexed by PutFileName.
func (tx *Tx) HasFileName(vaultPath string) bool {
	return tx.b(bFileNames).Get(fileNameKeys(vaultPath)[0]) != nil
}

// FilesNamed returns the tracked files that are no page whose FileName is
// name (a folded link key), in path order. Doc is 0.
func (tx *Tx) FilesNamed(name string) []NameCandidate { return tx.filesUnder("n" + name) }

// FilesAt returns the tracked files that are no page whose PathKey is
// pathKey (folded, ".md" dropped), in path order. Doc is 0.
func (tx *Tx) FilesAt(pathKey string) []NameCandidate { return tx.filesUnder("p" + pathKey) }

func (tx *Tx) filesUnder(prefix string) []NameCandidate {
	p := append([]byte(prefix), 0)
	var out []NameCandidate
	c := tx.b(bFileNames).Cursor()
	for k, _ := c.Seek(p); k != nil && hasPrefixBytes(k, p); k, _ = c.Next() {
		out = append(out, NameCandidate{Path: string(k[len(p):])})
	}
	return out
}

// DanglingRef is an unresolved link target with the pages that use it.
type DanglingRef struct {
	Key     string     // folded target
	Raw     string     // the form written first
	Count   int        // number of links
	Sources []Backlink // linking pages with their counts
}

// Dangling returns every unresolved target, grouped by key.
func (tx *Tx) Dangling() []DanglingRef { return eachTarget(tx.b(bDangling)) }

func eachTarget(b *bolt.Bucket) []DanglingRef {
	var out []DanglingRef
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		seg, rest, ok := strings.Cut(string(k), "\x00")
		if !ok || len(rest) < 5 {
			continue
		}
		_ = seg
		tkey := rest[:len(rest)-5]
		src := getU32([]byte(rest[len(rest)-4:]))
		n := int(getU32(v))
		if len(out) == 0 || out[len(out)-1].Key != tkey {
			raw := ""
			if len(v) > 4 {
				raw = string(v[4:])
			}
			out = append(out, DanglingRef{Key: tkey, Raw: raw})
		}
		d := &out[len(out)-1]
		d.Count += n
		d.Sources = append(d.Sources, Backlink{Src: src, Count: n})
	}
	return out
}

// DanglingFor returns the pages holding unresolved links to one target key.
func (tx *Tx) DanglingFor(target string) []Backlink {
	prefix := danglingPrefix(target)
	var out []Backlink
	c := tx.b(bDangling).Cursor()
	for k, v := c.Seek(prefix); k != nil && hasPrefixBytes(k, prefix); k, v = c.Next() {
		if len(k) == len(prefix)+4 {
			out = append(out, Backlink{Src: getU32(k[len(prefix):]), Count: int(getU32(v))})
		}
	}
	return out
}

// HasDangling reports whether any page holds an unresolved link to one
// target key (DanglingFor without collecting them).
func (tx *Tx) HasDangling(target string) bool {
	prefix := danglingPrefix(target)
	c := tx.b(bDangling).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefixBytes(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+4 {
			return true
		}
	}
	return false
}

// DanglingBySegment returns the pages holding unresolved links whose
// target's last segment folds to seg.
func (tx *Tx) DanglingBySegment(seg string) []uint32 { return bySegment(tx.b(bDangling), seg) }

func bySegment(b *bolt.Bucket, seg string) []uint32 {
	prefix := append([]byte(seg), 0)
	var out []uint32
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefixBytes(k, prefix); k, _ = c.Next() {
		if len(k) >= len(prefix)+5 {
			out = append(out, getU32(k[len(k)-4:]))
		}
	}
	return out
}

// Edge is one neighbour of a node in the persisted graph. It also carries
// the link counts in both directions, so backlinks need no bucket of
// their own.
type Edge struct {
	To     uint32
	Out    uint32  // links from this node to To
	In     uint32  // links from To to this node
	Weight float32 // edge weight (docs/vault.md#links), current once graph_dirty is drained
}

// Direct returns the number of link directions (0–2).
func (e Edge) Direct() int {
	n := 0
	if e.Out > 0 {
		n++
	}
	if e.In > 0 {
		n++
	}
	return n
}

// GraphEpsilon bounds how far a stored edge weight may lag the degree of a
// common neighbour: a node's degree change is propagated to the edges
// between its neighbours once it moves their adamic_adar term,
// 1.5/ln(deg), by at least this much. Propagating it rewrites every
// neighbour of the node, so the bound sets what a new link to a popular
// page costs: a node of degree d is re-weighed about every
// GraphEpsilon·d·ln²(d)/1.5 changes of its degree, which amortizes to at
// most ~1.5/(GraphEpsilon·ln²d) neighbour rewrites per change (≤ 40 here;
// at 1e-4 every node up to degree ~300 rewrote all its neighbours on every
// change, ~30 ms per new page with 10 links at 100,000 pages). A weight
// lags the exact value by less than GraphEpsilon per common neighbour.
// Weights are exact with respect to each node's AdjRec.Deg.
const GraphEpsilon = 2e-3

// AdjRec is a graph node: its type, the source keys it cites, and its
// neighbours sorted by doc.
type AdjRec struct {
	Type    string
	Sources []string
	Edges   []Edge
	// Deg is the degree the stored weights of edges between this node's
	// neighbours account for (adamic_adar counts 1/ln(deg) of common
	// neighbours); it lags len(Edges) only while the node is graph-dirty.
	Deg uint32
}

func (a *AdjRec) encode() []byte {
	b := make([]byte, 0, 16+len(a.Edges)*10)
	b = appendStr(b, a.Type)
	b = binary.AppendUvarint(b, uint64(a.Deg))
	b = binary.AppendUvarint(b, uint64(len(a.Sources)))
	for _, s := range a.Sources {
		b = appendStr(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(a.Edges)))
	prev := uint32(0)
	for _, e := range a.Edges {
		for _, x := range [3]uint32{e.To - prev, e.Out, e.In} {
			if x < 0x80 {
				b = append(b, byte(x))
			} else {
				b = binary.AppendUvarint(b, uint64(x))
			}
		}
		prev = e.To
		b = binary.BigEndian.AppendUint32(b, mathFloat32bits(e.Weight))
	}
	return b
}

func decodeAdj(v []byte) (*AdjRec, error) {
	r := reader{b: v}
	a := &AdjRec{Type: r.str()}
	a.Deg = uint32(r.uvarint())
	n := r.uvarint()
	if n > uint64(len(v)) {
		return nil, errCorrupt
	}
	for i := uint64(0); i < n; i++ {
		a.Sources = append(a.Sources, r.str())
	}
	n = r.uvarint()
	if n > uint64(len(v)) {
		return nil, errCorrupt
	}
	if r.err != nil {
		return nil, r.err
	}
	// the edges: a hub has tens of thousands, decoded on every link to it,
	// so one-byte varints (almost all counts and many doc deltas) take a
	// fast path
	a.Edges = make([]Edge, n)
	b := r.b
	prev := uint32(0)
	for i := range a.Edges {
		var f [3]uint32
		for j := range f {
			if len(b) > 0 && b[0] < 0x80 {
				f[j] = uint32(b[0])
				b = b[1:]
				continue
			}
			x, k := binary.Uvarint(b)
			if k <= 0 || x > math.MaxUint32 {
				return nil, errCorrupt
			}
			f[j] = uint32(x)
			b = b[k:]
		}
		if len(b) < 4 {
			return nil, errCorrupt
		}
		prev += f[0]
		a.Edges[i] = Edge{To: prev, Out: f[1], In: f[2], Weight: mathFloat32frombits(binary.BigEndian.Uint32(b))}
		b = b[4:]
	}
	return a, nil
}

// Adj returns a node's adjacency (nil when the node is not in the graph).
func (tx *Tx) Adj(doc uint32) (*AdjRec, error) {
	v := tx.b(bAdj).Get(u32(doc))
	if v == nil {
		return nil, nil
	}
	return decodeAdj(v)
}

// AdjDeg returns a node's accounted degree (AdjRec.Deg): from the degree
// table when it is complete (degrees.go), else from the record's header
// without decoding the edges; 0 for a missing node.
func (tx *Tx) AdjDeg(doc uint32) uint32 {
	if tx.AdjDegreesComplete() {
		return tx.tableDeg(doc)
	}
	v := tx.b(bAdj).Get(u32(doc))
	if v == nil {
		return 0
	}
	return headerDeg(v)
}

// PutAdj stores a node's adjacency, sorting its edges (and its Deg in the
// degree table, when complete).
func (tx *Tx) PutAdj(doc uint32, a *AdjRec) error {
	sort.Slice(a.Edges, func(i, j int) bool { return a.Edges[i].To < a.Edges[j].To })
	if err := tx.b(bAdj).Put(u32(doc), a.encode()); err != nil {
		return err
	}
	if tx.AdjDegreesComplete() {
		return tx.setTableDeg(doc, a.Deg)
	}
	return nil
}

// DeleteAdj removes a node.
func (tx *Tx) DeleteAdj(doc uint32) error {
	if err := tx.b(bAdj).Delete(u32(doc)); err != nil {
		return err
	}
	if tx.AdjDegreesComplete() {
		return tx.setTableDeg(doc, 0)
	}
	return nil
}

// EachAdj calls fn for every graph node in doc order.
func (tx *Tx) EachAdj(fn func(doc uint32, a *AdjRec) bool) error {
	c := tx.b(bAdj).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		a, err := decodeAdj(v)
		if err != nil {
			return err
		}
		if !fn(getU32(k), a) {
			return nil
		}
	}
	return nil
}

// MarkGraphDirty records that the weights of edges around doc must be
// recomputed.
func (tx *Tx) MarkGraphDirty(doc uint32) error { return tx.b(bGraphDirty).Put(u32(doc), []byte{}) }

// GraphDirty returns up to max dirty graph nodes (all when max <= 0).
func (tx *Tx) GraphDirty(max int) []uint32 { return tx.docSet(bGraphDirty, max) }

// GraphDirtyCount returns the number of dirty graph nodes.
func (tx *Tx) GraphDirtyCount() int { return tx.b(bGraphDirty).Stats().KeyN }

// ClearGraphDirty removes docs from the graph dirty set.
func (tx *Tx) ClearGraphDirty(docs []uint32) error { return tx.clearDocSet(bGraphDirty, docs) }

// MarkLinksDirty records that the links of doc must be (re-)resolved.
func (tx *Tx) MarkLinksDirty(doc uint32) error { return tx.b(bLinksDirty).Put(u32(doc), []byte{}) }

// LinksDirty returns up to max pages whose links await resolution.
func (tx *Tx) LinksDirty(max int) []uint32 { return tx.docSet(bLinksDirty, max) }

// LinksDirtyCount returns the number of pages whose links await
// resolution.
func (tx *Tx) LinksDirtyCount() int { return tx.b(bLinksDirty).Stats().KeyN }

// ClearLinksDirty removes docs from the links dirty set.
func (tx *Tx) ClearLinksDirty(docs []uint32) error { return tx.clearDocSet(bLinksDirty, docs) }

func (tx *Tx) docSet(name []byte, max int) []uint32 {
	var out []uint32
	c := tx.b(name).Cursor()
	for k, _ := c.First(); k != nil && (max <= 0 || len(out) < max); k, _ = c.Next() {
		out = append(out, getU32(k))
	}
	return out
}

func (tx *Tx) clearDocSet(name []byte, docs []uint32) error {
	b := tx.b(name)
	for _, d := range docs {
		if err := b.Delete(u32(d)); err != nil {
			return err
		}
	}
	return nil
}

// IsGraphDirty reports whether doc awaits a weight recomputation.
func (tx *Tx) IsGraphDirty(doc uint32) bool { return tx.b(bGraphDirty).Get(u32(doc)) != nil }
