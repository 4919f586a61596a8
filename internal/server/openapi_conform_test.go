package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"net/http"
	"net/http/httptest"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/synapse-wiki/synapse/embed"
	"github.com/synapse-wiki/synapse/embed/openai"
	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
)

// openAPIValues are the values this test sends for the parameters of the
// routes, by name: a route whose required parameter is not here fails the
// test, naming it (add a value that makes the route answer).
var openAPIValues = map[string]any{
	"title": "Home", "q": "create a vault", "path": "notes/meeting.md", "action": "skip",
	"content": "A page written by the OpenAPI test, linking [[Home]].\n", "type": "suggestion",
	"rationale": "checked by the OpenAPI test", "rev": 1,
}

// openAPIChosen are the optional parameters a route needs one of (the
// document cannot mark "one of these" required): this test gives the one
// named, by "method path".
var openAPIChosen = map[string]string{
	"get /context":             "title",
	"post /pages/{title}/move": "to",
	"put /pages/{title}":       "content", // (or frontmatter keys alone)
}

// openAPIDoc is the server's document and a compiler holding it.
type openAPIDoc struct {
	doc  map[string]any
	comp *jsonschema.Compiler
}

func loadOpenAPI(t *testing.T, base string) *openAPIDoc {
	t.Helper()
	r := servertest.REST(t, base, "GET", "/openapi.json", "")
	if r.Status != 200 {
		t.Fatalf("GET /openapi.json: %d", r.Status)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.Raw), &doc); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Raw))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource("openapi.json", inst); err != nil {
		t.Fatal(err)
	}
	return &openAPIDoc{doc: doc, comp: comp}
}

// at follows a JSON pointer (slash-separated keys) in the document.
func (d *openAPIDoc) at(keys ...string) map[string]any {
	var cur any = d.doc
	for _, k := range keys {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	m, _ := cur.(map[string]any)
	return m
}

func pointer(keys ...string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("/" + esc.Replace(k))
	}
	return b.String()
}

// validate checks body against the schema the document gives for status
// on path/method (the "default" answer for an undeclared error status; a
// success must be declared).
func (d *openAPIDoc) validate(path, method string, status int, body string) error {
	code := fmt.Sprint(status)
	keys := []string{"paths", path, method, "responses", code}
	resp := d.at(keys...)
	if resp == nil {
		if status < 400 {
			return fmt.Errorf("answered %d, which the document does not list", status)
		}
		keys = []string{"paths", path, method, "responses", "default"}
		resp = d.at(keys...)
	}
	if ref, ok := resp["$ref"].(string); ok {
		keys = strings.Split(strings.TrimPrefix(ref, "#/"), "/")
		resp = d.at(keys...)
	}
	if resp == nil {
		return fmt.Errorf("no answer documented for %d", status)
	}
	sch, err := d.comp.Compile("openapi.json#" + pointer(append(keys, "content", "application/json", "schema")...))
	if err != nil {
		return fmt.Errorf("schema of %d does not compile: %v", status, err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("the body is not JSON: %v: %.200s", err, body)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("the body does not match the schema of %d: %v\n%.600s", status, err, body)
	}
	return nil
}

// request builds a call of path/method from the document: path and
// required query parameters, and a body of the required fields.
func (d *openAPIDoc) request(t *testing.T, path, method string) (string, string) {
	t.Helper()
	op := d.at("paths", path, method)
	target := path
	q := url.Values{}
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		pm := p.(map[string]any)
		name, in := pm["name"].(string), pm["in"].(string)
		req, _ := pm["required"].(bool)
		if in != "path" && !req && openAPIChosen[method+" "+path] != name {
			continue
		}
		v, ok := openAPIValues[name]
		if !ok {
			t.Fatalf("%s %s: no value for the %s parameter %q: add one to openAPIValues", method, path, in, name)
		}
		if in == "path" {
			target = strings.ReplaceAll(target, "{"+name+"}", url.PathEscape(fmt.Sprint(v)))
		} else {
			q.Set(name, fmt.Sprint(v))
		}
	}
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	body := ""
	if rb := d.at("paths", path, method, "requestBody", "content", "application/json", "schema"); rb != nil {
		fields := map[string]any{}
		req, _ := rb["required"].([]any)
		props, _ := rb["properties"].(map[string]any)
		for _, n := range []string{"ids", "action", openAPIChosen[method+" "+path]} {
			if props[n] != nil {
				req = append(req, n) // what a decision or a move needs (one of several fields)
			}
		}
		for _, n := range req {
			v, ok := openAPIValues[n.(string)]
			if !ok {
				t.Fatalf("%s %s: no value for the body field %q: add one to openAPIValues", method, path, n)
			}
			fields[n.(string)] = v
		}
		data, _ := json.Marshal(fields)
		body = string(data)
	}
	return target, body
}

// TestOpenAPI_MatchesAnswers calls every route of the OpenAPI document on
// a running server (with --write) and validates each answer against the
// schema the document gives for its status: a success the document does
// not list (a 201), a field typed string that is null, a field marked
// required that is absent all fail. Error answers are checked against the
// error envelope.
func TestOpenAPI_MatchesAnswers(t *testing.T) {
	// an embedding provider, so that POST /embed answers
	prov := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		var data []map[string]any
		for i := range req.Input {
			data = append(data, map[string]any{"index": i, "embedding": []float32{1, float32(i), 0.5, 0.25}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer prov.Close()
	if ops.NewEmbedProvider == nil {
		ops.NewEmbedProvider = func(url, model, key string, timeout time.Duration) embed.Provider {
			return openai.New(url, model, key, timeout)
		}
		defer func() { ops.NewEmbedProvider = nil }()
	}
	t.Setenv(ops.EnvEmbedURL, prov.URL+"/v1/embeddings")
	t.Setenv(ops.EnvEmbedModel, "openapi-4")
	s, _ := newTestService(t, ops.Table())
	testvault.Write(t, s.vault, "raw/sources/notes/meeting.md", "# A source\n\ntext\n")
	ts := newTestHTTP(t, s, true)
	d := loadOpenAPI(t, ts.URL)

	// a fresh review item for each call of a route that decides one
	// (through its route, checked as well)
	newItem := func(n int) {
		add := servertest.REST(t, ts.URL, "POST", "/review/queue", fmt.Sprintf(`{"type":"suggestion","title":"OpenAPI item %d"}`, n))
		if err := d.validate("/review/queue", "post", add.Status, add.Raw); add.Status != 201 || err != nil {
			t.Fatalf("POST /review/queue: %d %v %s", add.Status, err, add.Raw)
		}
		var added struct{ Item struct{ ID string } }
		json.Unmarshal([]byte(add.Raw), &added)
		openAPIValues["id"] = added.Item.ID
		openAPIValues["ids"] = []string{added.Item.ID}
	}
	paths := d.at("paths")
	var names []string
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	calls := 0
	for _, path := range names {
		var methods []string
		for m := range paths[path].(map[string]any) {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, method := range methods {
			// twice: a write that created answers 201, then 200
			for i := range 2 {
				decides := strings.Contains(path, "{id}") || strings.Contains(path, "/bulk")
				if decides {
					newItem(calls)
				}
				if strings.HasSuffix(path, "/move") {
					// away and back, so that the routes after it find the page
					openAPIValues["to"] = "Moved home"
					if i == 1 {
						openAPIValues["title"], openAPIValues["to"] = "Moved home", "Home"
					}
				}
				target, body := d.request(t, path, method)
				r := servertest.REST(t, ts.URL, strings.ToUpper(method), target, body)
				calls++
				if r.Status >= 400 {
					t.Errorf("%s %s: %d %s", strings.ToUpper(method), target, r.Status, r.Raw)
				}
				if err := d.validate(path, method, r.Status, r.Raw); err != nil {
					t.Errorf("%s %s: %v", strings.ToUpper(method), target, err)
				}
				openAPIValues["title"] = "Home"
			}
		}
	}
	// errors carry the envelope the document gives
	for _, c := range []struct{ method, path, target string }{
		{"get", "/pages/{title}", "/pages/No%20such%20page"},
		{"get", "/search", "/search"},
		{"put", "/pages/{title}", "/pages/Bad"},
	} {
		r := servertest.REST(t, ts.URL, strings.ToUpper(c.method), c.target, "")
		if r.Status < 400 {
			t.Errorf("%s %s: %d, want an error", c.method, c.target, r.Status)
		}
		if err := d.validate(c.path, c.method, r.Status, r.Raw); err != nil {
			t.Errorf("%s %s: %v", c.method, c.target, err)
		}
	}
	r := servertest.REST(t, ts.URL, "GET", "/status", "", "Authorization", "Bearer wrong")
	if err := d.validate("/status", "get", r.Status, r.Raw); r.Status != 401 || err != nil {
		t.Errorf("wrong token: %d %v", r.Status, err)
	}
	t.Logf("%d routes, %d calls, every answer valid against the document", len(names), calls)
	if !bytes.Contains([]byte(fmt.Sprint(d.at("paths", "/pages/{title}", "put", "responses"))), []byte("201")) {
		t.Error("PUT /pages/{title} does not list 201")
	}
}
