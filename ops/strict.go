package ops

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
)

// Strict JSON keys (unknown parameters are rejected on every surface). Go's
// decoder matches object keys to struct fields case-insensitively and lets
// a repeated key win silently; every surface (MCP arguments, REST bodies,
// the socket) decodes through Op.Decode, which first walks the input with
// checkKeys:
//
//   - a key of an input struct must be a parameter name exactly as
//     spelled ("CONTENT" and "Path" are unknown parameters, the message
//     names the one meant);
//   - a key given twice in any object, at any depth (frontmatter
//     included), is invalid.
//
// Syntax errors are left to the decoder, which reports them.

// checkKeys checks the keys of raw against the input type t.
func checkKeys(raw []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a number float64 cannot hold (1e400) does not end the walk
	err := walkKeys(dec, t, "")
	if _, ok := err.(*errs.Error); ok {
		return err
	}
	return nil // a syntax error: the decoder reports it
}

// CheckDuplicateKeys reports a key given twice in any object of raw (for
// adapters that look into a JSON body before Op.Decode does).
func CheckDuplicateKeys(raw []byte) error { return checkKeys(raw, nil) }

// walkKeys reads one value from dec, checking the keys of its objects.
// t is the Go type it decodes into (nil: any value, duplicates only); in
// names where it is, for messages ("" at the top).
func walkKeys(dec *json.Decoder, t reflect.Type, in string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkKeys(dec, elem, in); err != nil {
				return err
			}
		}
	case '{':
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			if seen[key] {
				if in == "" {
					return errs.E(errs.Invalid, "parameter %q is given twice; give each parameter once", key)
				}
				return errs.E(errs.Invalid, "key %q is given twice in %q; give each key once", key, in)
			}
			seen[key] = true
			var sub reflect.Type
			switch {
			case fields != nil:
				ft, ok := fields[key]
				if !ok {
					return unknownKey(key, in, fields)
				}
				sub = ft
			case t != nil && t.Kind() == reflect.Map:
				sub = t.Elem()
			}
			where := key
			if in != "" {
				where = in + "." + key
			}
			if err := walkKeys(dec, sub, where); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// unknownKey is the error for a key that names no field, pointing at the
// one a case-insensitive match would have taken.
func unknownKey(key, in string, fields map[string]reflect.Type) error {
	what := "parameter"
	if in != "" {
		what = "key in " + strings.TrimPrefix(in, ".")
	}
	for name := range fields {
		if strings.EqualFold(name, key) {
			return errs.E(errs.Invalid, "unknown %s %q: names are case-sensitive; did you mean %q?", what, key, name)
		}
	}
	return errs.E(errs.Invalid, "unknown %s %q", what, key)
}

// jsonFields maps the JSON names of a struct's fields to their types, as
// encoding/json names them (tag name, else the field name; "-" skipped;
// embedded structs flattened).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, x := range jsonFields(ft) {
					if _, ok := out[n]; !ok {
						out[n] = x
					}
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = sf.Type
	}
	return out
}
