package server

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

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
func (s *Service) newMCPServer(readOnly bool) *mcpserver.MCPServer {
	hooks := &mcpserver.Hooks{}
	if readOnly {
		hooks.AddAfterListTools(func(_ context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
			res.Tools = readOnlyTools(s.ops, res.Tools)
		})
	}
	srv := mcpserver.NewMCPServer("synapse", s.version,
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

// mcpTool describes an operation as an MCP tool: its title, summary and
// caps, a strict input schema, an output schema generated from its result
// type and annotations from what it does.
func mcpTool(op *ops.Op) mcp.Tool {
	schema, _ := json.Marshal(inputSchema(op, false))
	t := mcp.NewToolWithRawSchema(op.MCP, toolDescription(op), schema)
	t.Title = op.Title
	t.RawOutputSchema, _ = json.Marshal(outputSchema(op.Out))
	t.Annotations = toolAnnotations(op)
	t.Annotations.Title = t.Title // where 2025-03-26 clients look for it
	return t
}

func toolDescription(op *ops.Op) string {
	d := op.Summary + "."
	if op.Limits != "" {
		d += " Limits: " + op.Limits + "."
	}
	if more := op.ToolHelp; more != "" {
		d += "\n\n" + more
	}
	if op.Access == ops.Write {
		d += " Changes the vault (over HTTP only when the server runs with --write)."
	}
	return d
}

// toolAnnotations say what a tool does: reads are read-only, idempotent
// and closed-world; a write is destructive unless the row says it only
// adds (Additive), idempotent when the row says so, and open-world when
// it may run an outside command (OpenWorld: deep-research).
func toolAnnotations(op *ops.Op) mcp.ToolAnnotation {
	b := func(v bool) *bool { return &v }
	if op.Access == ops.Read {
		return mcp.ToolAnnotation{ReadOnlyHint: b(true), DestructiveHint: b(false), IdempotentHint: b(true), OpenWorldHint: b(op.OpenWorld)}
	}
	return mcp.ToolAnnotation{ReadOnlyHint: b(false), DestructiveHint: b(!op.Additive), IdempotentHint: b(op.Idempotent), OpenWorldHint: b(op.OpenWorld)}
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
// decoder, naming them; so are fields that are not MCP parameters
// (mcp:"-"), which the strict decoder would take.
func (s *Service) toolHandler(op *ops.Op, env *ops.Env) mcpserver.ToolHandlerFunc {
	hidden := map[string]bool{}
	for _, f := range ops.Fields(op.In) {
		if f.NoMCP {
			hidden[f.Name] = true
		}
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw, err := rawArguments(req)
		if err != nil {
			return toolError(err), nil
		}
		if err := refuseHidden(op, hidden, raw); err != nil {
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

// refuseHidden refuses arguments that name a field of the input that is
// not an MCP parameter, as the tool's schema (additionalProperties: false)
// says.
func refuseHidden(op *ops.Op, hidden map[string]bool, raw []byte) error {
	if len(hidden) == 0 {
		return nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return nil // not an object: the decoder says what is wrong
	}
	var names []string
	for k := range args {
		if hidden[k] {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	msg := fmt.Sprintf("unknown parameter %q", names[0])
	if _, ok := inputSchema(op, false)["properties"].(map[string]any)["frontmatter"]; ok {
		msg += fmt.Sprintf(" (give it inside frontmatter: {\"frontmatter\": {%q: …}})", names[0])
	}
	return errs.E(errs.Invalid, "%s", msg)
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

// toolErrorBody is the MCP error result: the message with its
// code, and the code alone for programs.
type toolErrorBody struct {
	Error string    `json:"error"`
	Code  errs.Code `json:"code"`
}

// toolError is a tool error result: the JSON body as text content. It
// carries no structuredContent, which would have to match the tool's
// output schema (the schema of a success).
func toolError(err error) *mcp.CallToolResult {
	code := errs.CodeOf(err)
	body := toolErrorBody{Error: string(code) + ": " + errs.MessageFor(err, errs.MCP), Code: code}
	data, _ := ops.MarshalJSON(body)
	data = data[:len(data)-1]
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(string(data))},
		IsError: true,
	}
}
