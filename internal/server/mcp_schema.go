package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/markdown"
)

// outputSchema is the JSON Schema of an operation's result as
// encoding/json writes it, generated from the Go type so that it cannot
// drift: every field is a property, fields without omitempty are
// required, nil-able fields without omitempty (slices, maps, pointers) may
// be null, and objects admit no other properties. A tool's
// structuredContent validates against it (TestMCP_OutputSchemas, and the
// TypeScript SDK in e2e/).
func outputSchema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return valueSchema(t, false)
}

// ownSchemas are the schemas of the result types that encode themselves
// (json.Marshaler); a test fails when a result holds one not listed here.
var ownSchemas = map[reflect.Type]func() map[string]any{
	reflect.TypeFor[markdown.Frontmatter](): func() map[string]any {
		return map[string]any{"type": "object", "description": "The frontmatter keys and values, in file order"}
	},
	reflect.TypeFor[time.Time](): func() map[string]any {
		return map[string]any{"type": "string", "format": "date-time"}
	},
	reflect.TypeFor[json.RawMessage](): func() map[string]any { return map[string]any{} },
}

// valueSchema is the schema of a value of type t; nullable adds null to
// the types (a nil pointer, slice or map encodes as null).
func valueSchema(t reflect.Type, nullable bool) map[string]any {
	if t.Kind() == reflect.Pointer {
		return valueSchema(t.Elem(), true)
	}
	var s map[string]any
	if own, ok := ownSchemas[t]; ok {
		s = own()
	} else {
		switch t.Kind() {
		case reflect.String:
			s = map[string]any{"type": "string"}
		case reflect.Bool:
			s = map[string]any{"type": "boolean"}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			s = map[string]any{"type": "integer"}
		case reflect.Float32, reflect.Float64:
			s = map[string]any{"type": "number"}
		case reflect.Slice, reflect.Array:
			s = map[string]any{"type": "array", "items": valueSchema(t.Elem(), false)}
			nullable = nullable || t.Kind() == reflect.Slice
		case reflect.Map:
			s = map[string]any{"type": "object"}
			if t.Elem().Kind() != reflect.Interface {
				s["additionalProperties"] = valueSchema(t.Elem(), false)
			}
			nullable = true
		case reflect.Struct:
			s = structOutSchema(t)
		default: // interfaces: any JSON value
			return map[string]any{}
		}
	}
	if nullable {
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		}
	}
	return s
}

// structOutSchema is the schema of a struct: its fields as encoding/json
// names them, embedded structs flattened.
func structOutSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" && opts == "" {
				continue
			}
			if sf.Anonymous && name == "" {
				ft := sf.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			ps := valueSchema(sf.Type, false)
			if omit {
				// an omitted nil is never written as null
				if typ, ok := ps["type"].([]string); ok && len(typ) == 2 {
					ps["type"] = typ[0]
				}
			} else {
				required = append(required, name)
			}
			if d := sf.Tag.Get("desc"); d != "" {
				ps["description"] = d
			}
			props[name] = ps
		}
	}
	walk(t)
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}
