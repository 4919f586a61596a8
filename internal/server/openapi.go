package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
)

// openAPIJSON renders the OpenAPI document, indented, with a final newline.
func openAPIJSON(list []*ops.Op, version string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(openAPI(list, version)); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "encode the OpenAPI document: %v", err)
	}
	return buf.Bytes(), nil
}

// openAPI describes the REST routes of the operation table.
func openAPI(list []*ops.Op, version string) map[string]any {
	defs := newSchemaDefs()
	defs.defs["ErrorBody"] = map[string]any{
		"type":     "object",
		"required": []string{"error"},
		"properties": map[string]any{"error": map[string]any{
			"type":     "object",
			"required": []string{"code", "message"},
			"properties": map[string]any{
				"code":    map[string]any{"type": "string", "enum": []string{"invalid", "not_found", "conflict", "forbidden", "unauthorized", "unavailable", "too_large", "internal"}},
				"message": map[string]any{"type": "string"},
			},
		}},
	}
	paths := map[string]map[string]any{}
	for _, route := range restRoutes(list) {
		p := paths[route.route.Path]
		if p == nil {
			p = map[string]any{}
			paths[route.route.Path] = p
		}
		p[strings.ToLower(route.method)] = openAPIOperation(route, defs)
	}
	paths["/healthz"] = map[string]any{"get": map[string]any{
		"operationId": "healthz",
		"summary":     "Liveness check; needs no token",
		"tags":        []string{"server"},
		"security":    []any{},
		"responses": map[string]any{"200": map[string]any{
			"description": "The server is up",
			"content": jsonContent(map[string]any{"type": "object", "properties": map[string]any{
				"status": map[string]any{"type": "string"}, "version": map[string]any{"type": "string"},
			}}),
		}},
	}}
	paths["/openapi.json"] = map[string]any{"get": map[string]any{
		"operationId": "openapi",
		"summary":     "This document (also printed by `synapse openapi`)",
		"tags":        []string{"server"},
		"responses": map[string]any{
			"200": map[string]any{"description": "The OpenAPI document", "content": jsonContent(map[string]any{"type": "object"})},
			"401": map[string]any{"$ref": "#/components/responses/Unauthorized"},
		},
	}}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "synapse",
			"version": version,
			"description": "REST routes of synapse, generated from its operation table; the same operations are CLI verbs " +
				"and MCP tools (MCP streamable HTTP at /mcp). Every route but /healthz needs 'Authorization: Bearer <token>' " +
				"($SYNAPSE_TOKEN or .synapse/token). Routes marked x-synapse-access: write answer 403 unless the server " +
				"runs with --write. Out-of-range limits are clamped, not refused.",
		},
		"servers":  []any{map[string]any{"url": "http://" + DefaultAddr}},
		"security": []any{map[string]any{"bearer": []string{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": defs.defs,
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "$SYNAPSE_TOKEN or the contents of .synapse/token"},
			},
			"responses": map[string]any{
				"Error":        map[string]any{"description": "Error", "content": jsonContent(ref("ErrorBody"))},
				"Unauthorized": map[string]any{"description": "Missing or wrong bearer token", "content": jsonContent(ref("ErrorBody"))},
			},
		},
	}
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func jsonContent(schema any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

func openAPIOperation(route *restRoute, defs *schemaDefs) map[string]any {
	op := route.op
	desc := op.Summary + "."
	if op.Limits != "" {
		desc += " Limits: " + op.Limits + "."
	}
	if op.MCP != "" {
		desc += " MCP tool: " + op.MCP + "."
	}
	if op.CLI != "" {
		desc += " CLI: synapse " + op.CLI + "."
	}
	var params []any
	inPath := map[string]bool{}
	for _, s := range route.segs {
		if isParam(s) {
			name := s[1 : len(s)-1]
			inPath[name] = true
			f := route.fields[name]
			params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": fieldSchema(f)})
		}
	}
	var names []string
	for n := range route.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	bodyProps := map[string]any{}
	var bodyReq []string
	for _, n := range names {
		f := route.fields[n]
		if inPath[n] {
			continue
		}
		if route.body[n] {
			bodyProps[n] = fieldSchema(f)
			if f.Required {
				bodyReq = append(bodyReq, n)
			}
			continue
		}
		p := map[string]any{"name": f.Query, "in": "query", "schema": fieldSchema(f)}
		if f.Required {
			p["required"] = true
		}
		if f.Type.Kind() == reflect.Slice {
			p["explode"] = true
		}
		params = append(params, p)
	}
	o := map[string]any{
		"operationId":       operationID(route),
		"summary":           op.Summary,
		"description":       desc,
		"tags":              []string{tagOf(route.route.Path)},
		"x-synapse-op":      op.Name,
		"x-synapse-access":  string(op.Access),
		"x-synapse-mcp":     op.MCP,
		"x-synapse-cli":     op.CLI,
		"x-synapse-clamped": "out-of-range integers are clamped into their range",
	}
	if op.WriteWith != "" && hasBody(route.method) {
		// a read that this input turns into a write (lint's to_review)
		o["x-synapse-write-with"] = op.WriteWith
	}
	if op.MCP == "" {
		delete(o, "x-synapse-mcp")
	}
	if op.CLI == "" {
		delete(o, "x-synapse-cli")
	}
	if !hasClamp(route) {
		delete(o, "x-synapse-clamped")
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if hasBody(route.method) && len(bodyProps) > 0 {
		schema := map[string]any{"type": "object", "properties": bodyProps, "additionalProperties": false}
		if len(bodyReq) > 0 {
			schema["required"] = bodyReq
		}
		o["requestBody"] = map[string]any{"required": len(bodyReq) > 0, "content": jsonContent(schema)}
	}
	out := defs.schema(op.Out)
	responses := map[string]any{
		"200":     map[string]any{"description": "OK", "content": jsonContent(out)},
		"401":     map[string]any{"$ref": "#/components/responses/Unauthorized"},
		"default": map[string]any{"$ref": "#/components/responses/Error"},
	}
	if op.Out != nil && reflect.PointerTo(op.Out).Implements(creatorType) {
		// the same result, 201 when the call created what it names
		responses["200"] = map[string]any{"description": "OK: it existed already (updated, unchanged or refreshed)", "content": jsonContent(out)}
		responses["201"] = map[string]any{"description": "Created", "content": jsonContent(out)}
	}
	if op.Access == ops.Write || op.WriteWith != "" && hasBody(route.method) {
		responses["403"] = map[string]any{"description": "The server is read-only (start it with --write)", "content": jsonContent(ref("ErrorBody"))}
	}
	for code, st := range op.RESTStatus {
		responses[strconv.Itoa(st)] = map[string]any{"description": "Error " + string(code), "content": jsonContent(ref("ErrorBody"))}
	}
	o["responses"] = responses
	return o
}

func hasClamp(route *restRoute) bool {
	for _, f := range route.fields {
		if f.Min != nil || f.Max != nil {
			return true
		}
	}
	return false
}

// operationID is the op name in camel case, plus the route's position when
// the op has several routes.
func operationID(route *restRoute) string {
	id := camel(route.op.Name)
	for i, r := range route.op.REST {
		if r.Method == route.route.Method && r.Path == route.route.Path && i > 0 {
			id += strconv.Itoa(i + 1)
		}
	}
	return id
}

func camel(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		if r == '.' || r == '_' || r == '-' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func tagOf(path string) string {
	segs := splitPath(path)
	if len(segs) == 0 {
		return "server"
	}
	return segs[0]
}

// schemaDefs collects named struct schemas for components/schemas.
type schemaDefs struct {
	defs   map[string]any
	owners map[string]reflect.Type
	names  map[reflect.Type]string
}

func newSchemaDefs() *schemaDefs {
	return &schemaDefs{defs: map[string]any{}, owners: map[string]reflect.Type{}, names: map[reflect.Type]string{}}
}

func (d *schemaDefs) schema(t reflect.Type) map[string]any { return typeSchema(t, d) }

// name gives each named struct type a unique component name (its Go name,
// prefixed with its package when two packages share a name).
func (d *schemaDefs) name(t reflect.Type) (string, bool) {
	if n, ok := d.names[t]; ok {
		return n, true
	}
	n := t.Name()
	if _, taken := d.owners[n]; taken {
		pkg := t.PkgPath()
		pkg = pkg[strings.LastIndex(pkg, "/")+1:]
		n = camel("_"+pkg) + n
	}
	d.owners[n], d.names[t] = t, n
	return n, false
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	creatorType   = reflect.TypeFor[ops.Creator]()
)

// typeSchema maps a Go type to JSON Schema following encoding/json. Named
// structs go into defs (when given) and are referenced; without defs they
// are inlined. Types with their own JSON encoding are left open.
func typeSchema(t reflect.Type, defs *schemaDefs) map[string]any {
	if t.Implements(jsonMarshaler) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(jsonMarshaler)) {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeSchema(t.Elem(), defs)
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem(), defs)}
	case reflect.Map:
		s := map[string]any{"type": "object"}
		if t.Elem().Kind() != reflect.Interface {
			s["additionalProperties"] = typeSchema(t.Elem(), defs)
		}
		return s
	case reflect.Struct:
		if defs == nil || t.Name() == "" {
			return structSchema(t, defs)
		}
		name, seen := defs.name(t)
		if !seen {
			defs.defs[name] = map[string]any{} // placeholder against recursion
			defs.defs[name] = structSchema(t, defs)
		}
		return ref(name)
	}
	return map[string]any{}
}

// structSchema describes a struct as encoding/json writes it: a field
// without omitempty is always present (required), and one that can hold
// nil (a pointer, a slice, a map) may be null; a field with omitempty is
// absent rather than null. Embedded structs add their fields (not
// required when embedded through a pointer, which may be nil).
func structSchema(t reflect.Type, defs *schemaDefs) map[string]any {
	props := map[string]any{}
	required := []string{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		omit := hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
		if sf.Anonymous && name == "" {
			ft := sf.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			inner := structSchema(ft, defs)
			for k, v := range inner["properties"].(map[string]any) {
				props[k] = v
			}
			if sf.Type.Kind() != reflect.Pointer {
				required = append(required, inner["required"].([]string)...)
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		ps := typeSchema(sf.Type, defs)
		if !omit && nullable(sf.Type) {
			ps = orNull(ps)
		}
		if d := sf.Tag.Get("desc"); d != "" && ps["$ref"] == nil {
			ps["description"] = d
		}
		props[name] = ps
		if !omit {
			required = append(required, name)
		}
	}
	sort.Strings(required)
	return map[string]any{"type": "object", "properties": props, "required": required}
}

func hasOpt(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// nullable reports whether encoding/json can write null for a value of t
// (nil pointers; nil slices and maps are checked by the conformance test
// to be written as [] and {} by the operations, so they are not).
func nullable(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer
}

// orNull is schema s, or null.
func orNull(s map[string]any) map[string]any {
	switch typ := s["type"].(type) {
	case string:
		out := map[string]any{}
		for k, v := range s {
			out[k] = v
		}
		out["type"] = []string{typ, "null"}
		return out
	case nil:
		if len(s) == 0 {
			return s // anything, null included
		}
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}
