// Package errs holds synapse's one domain error type. Every operation
// returns either nil or an error that maps, through Code, to exactly one
// HTTP status, one CLI exit code and one MCP error result. The mapping
// lives here so the three adapters cannot disagree.
package errs

import (
	"errors"
	"fmt"
)

// Code classifies a domain error. The set is closed; the names are part of
// the public surface (REST envelopes, MCP error results, --json errors).
type Code string

// The error codes (docs/operations.md#errors): the design's seven, plus
// unauthorized (401) for requests without valid credentials: reporting them as forbidden (403)
// would tell a client to give up where it should fix its token.
const (
	Invalid   Code = "invalid"   // bad input or usage
	NotFound  Code = "not_found" // the named thing does not exist
	Conflict  Code = "conflict"  // state forbids the change (stale if_match, terminal review)
	Forbidden Code = "forbidden" // not allowed on this surface (read-only HTTP)
	// Unauthorized: the request carries no valid credentials (HTTP 401, a
	// missing or wrong bearer token), where Forbidden (403) refuses a
	// request whatever its credentials.
	Unauthorized Code = "unauthorized"
	Unavailable  Code = "unavailable" // a needed facility is absent or busy (store lock, research cmd)
	TooLarge     Code = "too_large"   // an input exceeds a hard cap
	Internal     Code = "internal"    // a bug or an I/O failure
)

// Error is a coded, user-facing error. Message is safe to show to any
// caller; wrapped internal detail stays in Err and is only logged.
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error is the message rendered Plain (see Render).
func (e *Error) Error() string { return Render(e.raw(), Plain) }

// raw is the message with its references (Param, Cmd) kept.
func (e *Error) raw() string {
	if e.Message != "" {
		return e.Message
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return string(e.Code)
}

func asError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Unwrap returns the wrapped cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// E builds a coded error with a formatted message.
func E(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds a coded error that keeps err as its cause.
func Wrap(code Code, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// CodeOf returns the code of err: the code of the first *Error in its
// chain, Internal for any other non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Message returns the user-facing message of err, rendered Plain (adapters
// use MessageFor). For errors that carry no code the message is generic,
// so internal detail never leaks to callers.
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	if err == nil {
		return ""
	}
	return "internal error: " + err.Error()
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return CodeOf(err) == code }

// ExitCode maps a code to the CLI's exit status (docs/operations.md#errors).
func ExitCode(c Code) int {
	switch c {
	case "":
		return 0
	case Invalid, TooLarge:
		return 2
	case NotFound:
		return 3
	case Conflict:
		return 4
	case Forbidden, Unauthorized, Unavailable:
		return 5
	default:
		return 1
	}
}

// HTTPStatus maps a code to the REST status (numbers, so that domain
// packages importing errs never pull in net/http).
func HTTPStatus(c Code) int {
	switch c {
	case "":
		return 200
	case Invalid:
		return 400
	case NotFound:
		return 404
	case Conflict:
		return 409
	case Forbidden:
		return 403
	case Unauthorized:
		return 401
	case Unavailable:
		return 503
	case TooLarge:
		return 413
	default:
		return 500
	}
}
