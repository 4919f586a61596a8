// Package store owns synapse's bbolt file (.synapse/synapse.db): the
// bucket layout, the schema version and its migrations, and every encoding
// of a stored value. Callers read inside View and write inside Update,
// through the typed methods of Tx; nothing outside this package touches
// bbolt.
//
// Everything is derived from the vault's files: the pages, links, graph
// and search index are rebuilt by `synapse reindex` (ResetDerived), the
// review queue is a cache of the vault's review journal that package ops
// replays (reviews.go, reviews_journal.go). Internal document numbers
// (doc, a uint32 > 0) key the derived buckets; the public page id is a
// short string derived from the page's path.
//
// Bucket layout (keys → values; "·" is a 0x00 separator, doc is 4 bytes
// big-endian, fold(s) is s in NFC, lowercased):
//
//	meta                     schema version, doc counter, counters, scan marks
//	  "schema"               → u32
//	  "next_doc"             → u32 (last doc number handed out)
//	  "pages"                → u32 (number of non-reserved pages)
//	  "links"                → u32 (number of page links in non-reserved pages)
//	  "scanned"              → RFC 3339 time of the last completed full scan
//	  "review_clock"         → u64 the latest review event time (reviews_journal.go)
//	  "review_journal"       → the mark of the review journal the queue matches (package ops)
//	files                    vault path → FileRec (size, mtime, sha256, seen/changed times, doc)
//	pages                    doc → PageRec (binary, pagecodec.go): path, title, type, aliases, tags, sources, links…
//	page_path                fold(vault path) → doc
//	page_id                  public id → doc
//	names                    kind byte ('f' file stem, 't' title, 'a' alias) + fold(name) · doc → vault path
//	dangling                 last segment of target · fold(target) · src doc → u32 count + raw target
//	adj                      doc → AdjRec: type, weighted degree, source keys, neighbours (doc, links out, links in, weight);
//	                         backlinks are the neighbours with links in
//	adj_deg                  u32 chunk → 1024 × u32: every node's accounted degree (AdjRec.Deg), "v" → complete (degrees.go)
//	graph_dirty              doc → ∅ (nodes whose incident edge weights must be recomputed)
//	links_dirty              doc → ∅ (pages whose links must be (re-)resolved)
//	titles                   fold(title) · doc → ∅ (list order)
//	by_type                  type · fold(title) · doc → ∅
//	by_tag                   tag · fold(title) · doc → ∅
//	cites                    fold(source path) · doc → ∅ (pages citing a source)
//
// Other buckets are documented in the files that own them (search index,
// review queue, sources, embedding vectors in vectors.go).
package store
