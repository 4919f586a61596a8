package main

import (
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADME_ClientConfigs: the client configurations in the README parse,
// run synapse by an absolute path (a GUI client does not see the shell's
// PATH), and give it a command line synapse takes; the HTTP entries point
// at /mcp with a bearer token from the environment.
func TestREADME_ClientConfigs(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(readme, -1)
	stdio, remote := 0, 0
	for _, b := range blocks {
		var cfg struct {
			MCPServers map[string]struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
				URL     string            `json:"url"`
				Headers map[string]string `json:"headers"`
			} `json:"mcpServers"`
		}
		if !strings.Contains(b[1], "mcpServers") {
			continue
		}
		if err := json.Unmarshal([]byte(b[1]), &cfg); err != nil {
			t.Errorf("a client configuration is not valid JSON: %v\n%s", err, b[1])
			continue
		}
		for name, s := range cfg.MCPServers {
			switch {
			case strings.HasSuffix(s.Command, "/synapse"):
				stdio++
				if !strings.HasPrefix(s.Command, "/") {
					t.Errorf("%s: command %q is not an absolute path", name, s.Command)
				}
				if err := checkCommandLine(app, strings.Join(append([]string{"synapse"}, s.Args...), " ")); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if !strings.Contains(strings.Join(s.Args, " "), "serve --mcp-stdio") {
					t.Errorf("%s: args %v do not serve MCP on stdio", name, s.Args)
				}
			case s.URL != "":
				remote++
				if s.URL != "http://127.0.0.1:7411/mcp" || !strings.Contains(s.Headers["Authorization"], "Bearer ${") {
					t.Errorf("%s: url %q, headers %v", name, s.URL, s.Headers)
				}
			case s.Command == "npx":
				remote++
				if !strings.Contains(strings.Join(s.Args, " "), "mcp-remote http://127.0.0.1:7411/mcp --header") {
					t.Errorf("%s: args %v", name, s.Args)
				}
			default:
				t.Errorf("%s: neither synapse on stdio nor the HTTP endpoint: %+v", name, s)
			}
		}
	}
	if stdio < 3 || remote < 3 {
		t.Errorf("found %d stdio and %d HTTP client entries; want Claude Code, Claude Desktop and Cursor each", stdio, remote)
	}
	for _, want := range []string{
		"claude mcp add --scope user synapse -- \"$(go env GOPATH)/bin/synapse\" --vault ~/synapse-demo serve --mcp-stdio",
		"[mcp_servers.synapse]\ncommand = \"/home/me/go/bin/synapse\"",
		"bearer_token_env_var = \"SYNAPSE_TOKEN\"",
		"export SYNAPSE_TOKEN=",
		"serve --http --write --addr 127.0.0.1:7411 >>",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}
	// one demo vault throughout: the one the set-up command creates
	for _, other := range []string{"~/wiki", "/me/wiki"} {
		if strings.Contains(readme, other) {
			t.Errorf("README uses %s; the demo vault is ~/synapse-demo (the set-up command creates it)", other)
		}
	}
	if strings.Contains(readme, "serve --mcp-stdio &") && !strings.Contains(readme, "`synapse serve --mcp-stdio &` in a shell stops at once") {
		t.Error("README starts a background server with serve --mcp-stdio &, which stops at once")
	}
}
