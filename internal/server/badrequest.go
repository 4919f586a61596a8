package server

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
)

// net/http answers a request it cannot parse (a path with a bad
// %-escape such as /pages/%ZZ, a malformed header) before any handler
// runs, in plain text, and closes the connection: a client of this JSON
// API could not read why. No hook exists for it, so the connection
// rewrites that one answer — written whole in a single Write — into the
// error envelope every other answer uses.

// goPlainError is the head of net/http's answer to a request it could
// not parse; the status line comes before it, the reason after it.
const goPlainError = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// jsonParseError is p rewritten as the error envelope when p is net/http's
// plain-text answer to an unparsable request (ok false otherwise).
func jsonParseError(p []byte) ([]byte, bool) {
	status, reason, ok := bytes.Cut(p, []byte(goPlainError))
	if !ok || !bytes.HasPrefix(status, []byte("HTTP/1.1 4")) {
		return nil, false
	}
	code := errs.Invalid
	if bytes.HasPrefix(status, []byte("HTTP/1.1 431")) || bytes.HasPrefix(status, []byte("HTTP/1.1 413")) {
		code = errs.TooLarge
	}
	msg := "the request could not be parsed (" + string(reason) + ")"
	if string(reason) == "400 Bad Request" {
		msg = "the request line or a header could not be parsed: a '%' in a path or query must start a %XX escape of two hex digits (send '%' itself as %25)"
	}
	body, _ := json.Marshal(ops.ErrorBody{Error: ops.ErrorDetail{Code: code, Message: msg}})
	return fmt.Appendf(nil, "%s\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body), true
}

// Write passes the server's bytes on, rewriting net/http's plain-text
// answer to an unparsable request (written while no handler runs).
func (c *limitedConn) Write(p []byte) (int, error) {
	if !c.handling.Load() {
		if out, ok := jsonParseError(p); ok {
			if _, err := c.Conn.Write(out); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return c.Conn.Write(p)
}
