package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
)

// mcpInstructions tell an agent how the tools fit together.
const mcpInstructions = "synapse serves a markdown wiki (wiki/) compiled from raw sources (raw/sources/). " +
	"Find pages with search_wiki or list_pages, read them with get_page, explore links with " +
	"get_graph_neighborhood. write_page is the one validated write path (pass if_match from get_page " +
	"to avoid overwriting a concurrent edit). list_reviews and resolve_review work the review queue; " +
	"read_source_file reads raw sources; trigger_source_rescan picks up edited files. " +
	"Errors come back as {\"error\": \"<code>: <message>\", \"code\": \"<code>\"}."

// newMCPServer registers one tool per operation row with an MCP name. With
// readOnly, write tools are left out of tools/list and the environment
// refuses them when called anyway (a client may call a tool it was never
// shown): the read-only filter applies at listing and at dispatch.
func (s *service) newMCPServer(readOnly bool) *mcpserver.MCPServer {
	hooks := &mcpserver.Hooks{}
	if readOnly {
		hooks.AddAfterListTools(func(_ context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
			res.Tools = readOnlyTools(s.ops, res.Tools)
		})
	}
	srv := mcpserver.NewMCPServer("synapse", version,
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithInstructions(mcpInstructions),
		mcpserver.WithRecovery(),
		mcpserver.WithHooks(hooks),
	)
	env := s.envFor(readOnly)
	for _, op := range s.ops {
		if op.MCP == "" {
			continue
		}
		srv.AddTool(mcpTool(op), s.toolHandler(op, env))
	}
	return srv
}

// readOnlyTools keeps the tools of read operations.
func readOnlyTools(list []*ops.Op, tools []mcp.Tool) []mcp.Tool {
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if op := toolOp(list, t.Name); op != nil && op.Access == ops.Read {
			out = append(out, t)
		}
	}
	return out
}

func toolOp(list []*ops.Op, name string) *ops.Op {
	for _, op := range list {
		if op.MCP == name && name != "" {
			return op
		}
	}
	return nil
}

// mcpTool describes an operation as an MCP tool: its summary and caps,
// a strict input schema and annotations from its access.
func mcpTool(op *ops.Op) mcp.Tool {
	schema, _ := json.Marshal(inputSchema(op, false))
	t := mcp.NewToolWithRawSchema(op.MCP, toolDescription(op), schema)
	t.Annotations = toolAnnotations(op)
	return t
}

func toolDescription(op *ops.Op) string {
	d := op.Summary + "."
	if op.Limits != "" {
		d += " Limits: " + op.Limits + "."
	}
	if op.Access == ops.Write {
		d += " Changes the vault (over HTTP only when the server runs with --write)."
	}
	return d
}

func toolAnnotations(op *ops.Op) mcp.ToolAnnotation {
	b := func(v bool) *bool { return &v }
	if op.Access == ops.Read {
		return mcp.ToolAnnotation{ReadOnlyHint: b(true), DestructiveHint: b(false), IdempotentHint: b(true), OpenWorldHint: b(false)}
	}
	return mcp.ToolAnnotation{ReadOnlyHint: b(false), DestructiveHint: b(!op.Additive), IdempotentHint: b(op.Idempotent), OpenWorldHint: b(false)}
}

// inputSchema is the JSON Schema of an operation's input: an object that
// admits only the known parameters. Ranges are documented in descriptions
// but not declared as minimum/maximum: out-of-range values are clamped by
// the server, and a client that enforced a maximum would refuse them.
// rest includes the fields hidden from MCP (mcp:"-").
func inputSchema(op *ops.Op, rest bool) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range ops.Fields(op.In) {
		if f.NoMCP && !rest {
			continue
		}
		props[f.Name] = fieldSchema(f)
		if f.Required {
			required = append(required, f.Name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fieldSchema is the JSON Schema of one input field.
func fieldSchema(f ops.Field) map[string]any {
	s := typeSchema(f.Type, nil)
	if d := fieldDesc(f); d != "" {
		s["description"] = d
	}
	if f.Default != "" {
		s["default"] = typedDefault(f)
	}
	if len(f.Enum) > 0 {
		s["enum"] = f.Enum
	}
	return s
}

// fieldDesc is the field's description, with its range when the
// description does not already state it.
func fieldDesc(f ops.Field) string {
	d := f.Desc
	if f.Min == nil && f.Max == nil {
		return d
	}
	var rng string
	switch {
	case f.Min != nil && f.Max != nil:
		rng = fmt.Sprintf("%d..%d", *f.Min, *f.Max)
	case f.Max != nil:
		rng = fmt.Sprintf("at most %d", *f.Max)
	default:
		rng = fmt.Sprintf("at least %d", *f.Min)
	}
	if strings.Contains(d, rng) {
		return d
	}
	if d != "" {
		d += "; "
	}
	return d + rng + ", values outside are clamped"
}

func typedDefault(f ops.Field) any {
	switch f.Type.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n, err := strconv.Atoi(f.Default); err == nil {
			return n
		}
	case reflect.Bool:
		if b, err := strconv.ParseBool(f.Default); err == nil {
			return b
		}
	}
	return f.Default
}

// toolHandler adapts an operation to an MCP tool call. The raw arguments
// go to op.Call unchanged, so unknown parameters are rejected by the strict
// decoder, naming them.
func (s *service) toolHandler(op *ops.Op, env *ops.Env) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw, err := rawArguments(req)
		if err != nil {
			return toolError(err), nil
		}
		out, err := s.call(ctx, env, op, raw)
		if err != nil {
			return toolError(err), nil
		}
		data, err := ops.MarshalJSON(out)
		if err != nil {
			s.log.Printf("%s: encode result: %v", op.Name, err)
			return toolError(errs.E(errs.Internal, "internal error: could not encode the result")), nil
		}
		data = data[:len(data)-1] // MarshalJSON ends with a newline
		return &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(string(data))},
			StructuredContent: json.RawMessage(data),
		}, nil
	}
}

func rawArguments(req mcp.CallToolRequest) ([]byte, error) {
	switch a := req.GetRawArguments().(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return a, nil
	case []byte:
		return a, nil
	default:
		data, err := json.Marshal(a)
		if err != nil {
			return nil, errs.E(errs.Invalid, "arguments: %v", err)
		}
		return data, nil
	}
}

// toolErrorBody is the MCP error result of SPEC §7: the message with its
// code, and the code alone for programs.
type toolErrorBody struct {
	Error string    `json:"error"`
	Code  errs.Code `json:"code"`
}

func toolError(err error) *mcp.CallToolResult {
	code := errs.CodeOf(err)
	body := toolErrorBody{Error: string(code) + ": " + errs.Message(err), Code: code}
	data, _ := ops.MarshalJSON(body)
	data = data[:len(data)-1]
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(data))},
		StructuredContent: json.RawMessage(data),
		IsError:           true,
	}
}

// serveStdio serves every tool (read and write) over stdin and stdout until
// the client closes stdin or ctx ends. Only JSON-RPC goes to stdout.
func (s *service) serveStdio(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	srv := mcpserver.NewStdioServer(s.newMCPServer(false))
	srv.SetErrorLogger(log.New(s.log.Writer(), "synapse: mcp stdio: ", 0))
	d := &stdioDrain{ctx: ctx, in: stdin, out: stdout, answered: make(chan struct{}, 1)}
	return srv.Listen(ctx, d, writerFunc(d.write))
}

// stdioDrain holds back the end of stdin until every request read so far
// has been answered. mcp-go stops its workers when input ends, which would
// drop the answers to calls still queued: a script that pipes requests in
// and closes stdin (`printf … | synapse serve --mcp-stdio`) gets them all.
// A shutdown (ctx) ends the wait.
type stdioDrain struct {
	ctx      context.Context
	in       io.Reader
	out      io.Writer
	mu       sync.Mutex
	pending  int // requests read and not yet answered
	inBuf    []byte
	outBuf   []byte
	answered chan struct{}
}

type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// lines splits complete lines off buf and returns the rest.
func lines(buf []byte, each func([]byte)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return buf
		}
		each(buf[:i])
		buf = buf[i+1:]
	}
}

func (d *stdioDrain) Read(p []byte) (int, error) {
	n, err := d.in.Read(p)
	if n > 0 {
		d.mu.Lock()
		d.inBuf = lines(append(d.inBuf, p[:n]...), func(l []byte) {
			var h rpcHead
			if json.Unmarshal(l, &h) == nil && h.Method != "" && len(h.ID) > 0 && string(h.ID) != "null" {
				d.pending++
			}
		})
		d.mu.Unlock()
	}
	if err == io.EOF {
		for {
			d.mu.Lock()
			left := d.pending
			d.mu.Unlock()
			if left <= 0 {
				break
			}
			select {
			case <-d.answered:
			case <-d.ctx.Done():
				return n, err
			}
		}
	}
	return n, err
}

func (d *stdioDrain) write(p []byte) (int, error) {
	n, err := d.out.Write(p)
	d.mu.Lock()
	d.outBuf = lines(append(d.outBuf, p[:n]...), func(l []byte) {
		var h rpcHead
		if json.Unmarshal(l, &h) == nil && h.Method == "" && len(h.ID) > 0 && string(h.ID) != "null" {
			d.pending--
		}
	})
	d.mu.Unlock()
	select {
	case d.answered <- struct{}{}:
	default:
	}
	return n, err
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
