package history

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
	"time"
)

// A page's pack is one file: packMagic, then its records in the order they
// were appended (oldest first). A record is
//
//	u32 header length | u32 payload length | u32 CRC-32C of header+payload
//	header: JSON (packHeader)
//	payload: the content, encoded as the header's enc says
//
// The encodings: "raw" (the bytes), "flate" (DEFLATE of the bytes),
// "delta" and "delta-flate" (the line edits from revision base to the
// content, delta.go, as they are or DEFLATE'd: a small edit of a page
// costs a few dozen bytes) and "same" (no payload: the content is
// revision base's). A delta's base is always a raw or flate record, so
// any revision decodes in at most two steps.

const packMagic = "synapse-history 1\n"

// frameLen is the size of a record's fixed framing.
const frameLen = 12

// maxHeaderLen bounds a record's header (a title ≤ 200 characters and a
// path make a few hundred bytes).
const maxHeaderLen = 64 << 10

// maxPayloadLen bounds a record's payload: a page as written is at most
// 1 MiB, and a page read from disk (a hand edit) at most 32 MiB.
const maxPayloadLen = 40 << 20

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// encodings of a record's payload
const (
	encRaw    = "raw"
	encFlate  = "flate"
	encDelta  = "delta"
	encZDelta = "delta-flate"
	encSame   = "same"
)

// packHeader is a record's header as stored.
type packHeader struct {
	Rev    int    `json:"rev"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Time   string `json:"time"` // RFC 3339, nanoseconds, UTC
	Op     string `json:"op"`
	Origin string `json:"origin"`
	Path   string `json:"path,omitempty"`  // absent: as the previous record
	Title  string `json:"title,omitempty"` // absent with Path: as the previous record
	From   int    `json:"from,omitempty"`
	Moved  string `json:"moved_from,omitempty"`
	MoveOf string `json:"move_of,omitempty"`
	Enc    string `json:"enc"`
	Base   int    `json:"base,omitempty"`
}

// record is a parsed record of a pack.
type record struct {
	h       packHeader
	off     int64 // where its framing starts in the pack
	n       int64 // framing + header + payload
	payload []byte
	t       time.Time
	// content is a whole revision's bytes once decoded and checked (or
	// encoded here): the base of the deltas that follow it
	content []byte
}

func (r *record) revision() Revision {
	return Revision{Rev: r.h.Rev, SHA256: r.h.SHA256, Size: r.h.Size, Time: r.t, Op: r.h.Op,
		Origin: r.h.Origin, Path: r.h.Path, Title: r.h.Title, From: r.h.From, MovedFrom: r.h.Moved, MoveOf: r.h.MoveOf, Stored: r.n}
}

// keyframe reports whether the record holds its content whole (a delta's
// base).
func (r *record) keyframe() bool { return r.h.Enc == encRaw || r.h.Enc == encFlate }

// errTorn is a record cut short by a crash during its append: the pack's
// valid part ends before it.
var errTorn = errors.New("torn record")

// parsePack parses a pack's bytes. It returns the records of its valid
// prefix and that prefix's length; tail describes what follows it: nil
// (nothing), errTorn (an append cut short: safe to cut off), or another
// error (bytes that are not a record, followed by more: damage).
func parsePack(data []byte) (recs []*record, valid int64, tail error) {
	if len(data) == 0 {
		return nil, 0, nil
	}
	if !bytes.HasPrefix(data, []byte(packMagic)) {
		if bytes.HasPrefix([]byte(packMagic), data) || allZero(data) {
			return nil, 0, errTorn // the first write was cut short
		}
		return nil, 0, fmt.Errorf("not a history pack (no %q header)", packMagic[:len(packMagic)-1])
	}
	off := int64(len(packMagic))
	for off < int64(len(data)) {
		r, err := parseRecord(data, off)
		if err != nil {
			if errors.Is(err, errTorn) || allZero(data[off:]) {
				return recs, off, errTorn
			}
			return recs, off, err
		}
		if n := len(recs); n > 0 && r.h.Path == "" && r.h.Title == "" {
			r.h.Path, r.h.Title = recs[n-1].h.Path, recs[n-1].h.Title // as the previous record
		}
		recs = append(recs, r)
		off += r.n
	}
	return recs, off, nil
}

// parseRecord parses the record at off. A record that runs past the end of
// data, or the last record of data with a bad checksum, is errTorn.
func parseRecord(data []byte, off int64) (*record, error) {
	rest := data[off:]
	if len(rest) < frameLen {
		return nil, errTorn
	}
	hl := int64(binary.BigEndian.Uint32(rest[0:4]))
	pl := int64(binary.BigEndian.Uint32(rest[4:8]))
	sum := binary.BigEndian.Uint32(rest[8:12])
	if hl == 0 || hl > maxHeaderLen || pl > maxPayloadLen {
		return nil, fmt.Errorf("bad record framing at byte %d", off)
	}
	n := frameLen + hl + pl
	if n > int64(len(rest)) {
		return nil, errTorn
	}
	body := rest[frameLen:n]
	if crc32.Checksum(body, castagnoli()) != sum {
		if n == int64(len(rest)) {
			return nil, errTorn
		}
		return nil, fmt.Errorf("bad record checksum at byte %d", off)
	}
	r := &record{off: off, n: n, payload: body[hl:]}
	if err := json.Unmarshal(body[:hl], &r.h); err != nil {
		return nil, fmt.Errorf("bad record header at byte %d: %v", off, err)
	}
	if r.h.Rev <= 0 || len(r.h.SHA256) != 64 {
		return nil, fmt.Errorf("bad record header at byte %d", off)
	}
	r.t, _ = time.Parse(time.RFC3339Nano, r.h.Time)
	return r, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// appendRecord appends the encoded record of h and payload to b.
func appendRecord(b []byte, h *packHeader, payload []byte) ([]byte, error) {
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(hj)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	c := crc32.Update(0, castagnoli(), hj)
	c = crc32.Update(c, castagnoli(), payload)
	b = binary.BigEndian.AppendUint32(b, c)
	b = append(b, hj...)
	return append(b, payload...), nil
}

// deflate compresses data.
func deflate(data []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(data)/3 + 64)
	w := getWriter()
	defer putWriter(w)
	w.Reset(&buf)
	_, _ = w.Write(data) // a bytes.Buffer does not fail
	_ = w.Close()
	return buf.Bytes()
}

var readers = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// packLevel is the DEFLATE level of the records written: the fastest.
// On pages of ~3.5 KB it costs 40% less CPU than the default level for
// 4% more bytes (0.50 of the page instead of 0.48); the default level
// also clears 640 KiB of match tables on every reset, which outweighs
// the compression of a small page. Any level reads back the same way,
// so packs written at another level read as before.
const packLevel = flate.BestSpeed

// writers keeps a few compressors for good. A compressor is ~800 KiB to
// make; a sync.Pool loses its compressors at every garbage collection,
// and a page write allocates enough to collect every write or two, so a
// pool made one for almost every revision (a third of the history's CPU
// time in a write). The store's lock lets one change run at a time, so
// two are plenty.
var writers = make(chan *flate.Writer, 2)

func getWriter() *flate.Writer {
	select {
	case w := <-writers:
		return w
	default:
		w, _ := flate.NewWriter(nil, packLevel) // the level is valid
		return w
	}
}

func putWriter(w *flate.Writer) {
	select {
	case writers <- w:
	default:
	}
}

// inflate decompresses data, which must expand to at most max bytes
// (exactly max with exact set).
func inflate(data []byte, max int64, exact bool) ([]byte, error) {
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(data), nil); err != nil {
		return nil, err
	}
	size := max // exact: the size is known
	if !exact {
		size = min(max, 4*int64(len(data))+512)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	n, err := io.Copy(buf, io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if n > max || (exact && n != max) {
		return nil, fmt.Errorf("decompressed to %d bytes, want %d", n, max)
	}
	return buf.Bytes(), nil
}

// shaHex is the lowercase hex sha256 of data.
func shaHex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
