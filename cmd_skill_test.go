package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/agentskill"
	"github.com/synapse-wiki/synapse/internal/cliargs"
	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"
)

// skillFrontmatter parses SKILL.md's frontmatter.
func skillFrontmatter(t *testing.T, doc []byte) (name, desc string) {
	t.Helper()
	s := string(doc)
	if !strings.HasPrefix(s, "---\n") {
		t.Fatal("SKILL.md does not start with a --- frontmatter line")
	}
	fm, _, ok := strings.Cut(s[4:], "\n---\n")
	if !ok {
		t.Fatal("SKILL.md's frontmatter has no closing --- line")
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(fm), &m); err != nil {
		t.Fatalf("SKILL.md's frontmatter is not valid YAML: %v", err)
	}
	name, _ = m["name"].(string)
	desc, _ = m["description"].(string)
	return name, desc
}

// TestSkill_Frontmatter checks the skill's trigger contract and the limits of
// the Agent Skills format (name: lowercase, digits and hyphens, ≤ 64;
// description ≤ 1024 characters, no XML tags).
func TestSkill_Frontmatter(t *testing.T) {
	name, desc := skillFrontmatter(t, skillMD)
	if name != "synapse" {
		t.Errorf("name = %q, want synapse", name)
	}
	if !regexp.MustCompile(`^[a-z0-9-]{1,64}$`).MatchString(name) {
		t.Errorf("name %q breaks the Agent Skills naming rule", name)
	}
	if n := utf8.RuneCountInString(desc); n == 0 || n > 1024 {
		t.Errorf("description has %d characters, want 1..1024", n)
	}
	if strings.ContainsAny(desc, "<>") {
		t.Errorf("description contains < or >")
	}
	for _, phrase := range []string{`"Synapse"`, `"my wiki"`, `"search my notes"`, `"find a file"`, `"look something up"`, "ONLY", "Do NOT", "ask"} {
		if !strings.Contains(desc, phrase) {
			t.Errorf("description lacks %s", phrase)
		}
	}
}

// TestSkill_Body checks that the body carries what an agent needs
// for; the generated parts are checked by TestDocs_*.
func TestSkill_Body(t *testing.T) {
	body := string(skillMD)
	for _, want := range []string{
		"## When to use this skill",
		`"Search my notes for the meeting agenda."`, // a negative example
		`"What does my wiki say about`,              // a positive example
		"**When unsure, ask.**",
		"## Ask before every write",
		"**Always add `--json`.**",
		"## Answer a question from the wiki",
		"cite the page path",
		"## Compile new and changed sources into pages",
		"## Work the review queue",
		"synapse skill print --reference",
		"## MCP tools, the alternative",
		"| 4 | conflict |",
		// a draft may carry frontmatter (merged), and skip is as final as
		// every other decision
		"It may start with a frontmatter\n   block: its keys are merged",
		"`skip`: not acted on now, and not proposed\n     again",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("SKILL.md lacks %q", want)
		}
	}
	for _, wrong := range []string{"without frontmatter", "`skip`: not now"} {
		if strings.Contains(body, wrong) {
			t.Errorf("SKILL.md says %q", wrong)
		}
	}
}

// TestSkill_ExitCodes checks the skill's exit-code table against the one
// mapping in errs.
func TestSkill_ExitCodes(t *testing.T) {
	rows := map[int]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([0-9]) \| ([^|]*) \|`).FindAllStringSubmatch(string(skillMD), -1) {
		n, _ := strconv.Atoi(m[1])
		rows[n] = m[2]
	}
	words := map[errs.Code]string{
		errs.Invalid: "invalid", errs.TooLarge: "too large", errs.NotFound: "not found", errs.Conflict: "conflict",
		errs.Forbidden: "forbidden", errs.Unavailable: "unavailable", errs.Internal: "internal",
	}
	for code, word := range words {
		n := errs.ExitCode(code)
		if !strings.Contains(rows[n], word) {
			t.Errorf("SKILL.md's exit code %d row is %q; errs maps %s to it", n, rows[n], code)
		}
	}
	if !strings.Contains(rows[0], "ok") {
		t.Errorf("SKILL.md's exit code 0 row is %q", rows[0])
	}
}

// TestSkill_OneSourceOfTruth: the hand-written parts of the skill state no
// cap, range or size of their own: those come from the operation table in
// the generated blocks (Caps, the command reference), so the two cannot
// disagree.
func TestSkill_OneSourceOfTruth(t *testing.T) {
	var prose []string
	in := false
	for _, l := range strings.Split(string(skillMD), "\n") {
		switch {
		case strings.HasPrefix(l, "<!-- BEGIN GENERATED"):
			in = true
		case strings.HasPrefix(l, "<!-- END GENERATED"):
			in = false
		case !in:
			prose = append(prose, l)
		}
	}
	caps := regexp.MustCompile(`\b\d+ ?(MiB|KiB|GiB|ids|hits|characters|items|nodes|pages|bytes)\b|at most \d+|\b\d+\.\.\d+\b|≤ ?\d+`)
	for i, l := range prose {
		if m := caps.FindString(l); m != "" {
			t.Errorf("SKILL.md states a cap by hand (%q in %q, prose line %d): refer to the generated Caps instead", m, strings.TrimSpace(l), i+1)
		}
	}
}

// TestSkill_EmbedEqualsFile: the binary embeds skill/SKILL.md and
// skill/reference.md byte for byte (`synapse skill print` writes them;
// skill-install.txtar compares its output with the files). The CLI is not run in-process here: urfave
// adds help subcommands to the shared command structs when it runs, which
// would leak into the surface and docs walks.
func TestSkill_EmbedEqualsFile(t *testing.T) {
	for _, f := range skillFiles {
		want, err := os.ReadFile(filepath.Join("skill", f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Data, want) {
			t.Errorf("the embedded %s differs from skill/%s", f.Name, f.Name)
		}
	}
	entries, err := os.ReadDir("skill")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.ContainsFunc(skillFiles, func(f agentskill.File) bool { return f.Name == e.Name() }) {
			t.Errorf("skill/ holds %s: skill installers copy the whole folder, so it must hold only the skill's files", e.Name())
		}
	}
}

// TestSkill_Size: SKILL.md, loaded whole when the skill triggers, stays
// within 12 KiB; the generated reference is the second file, read on
// demand.
func TestSkill_Size(t *testing.T) {
	const maxSkill = 12 << 10
	if len(skillMD) > maxSkill {
		t.Errorf("SKILL.md is %d bytes, over %d: move detail to reference.md", len(skillMD), maxSkill)
	}
	if !bytes.Contains(skillReference, []byte("#### `synapse page write")) || bytes.Contains(skillMD, []byte("#### `synapse")) {
		t.Error("the command reference belongs in reference.md, not SKILL.md")
	}
}

func TestSkill_Install(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	claude := filepath.Join(home, ".claude/skills/synapse/SKILL.md")
	tests := []struct {
		name       string
		dir, agent string
		force      bool
		setup      func(t *testing.T)
		code       errs.Code // "" = success
		path       string    // SKILL.md expected afterwards
		status     string
		msg        string
	}{
		{name: "default is Claude Code", path: claude, status: "installed"},
		{name: "again is unchanged", path: claude, status: "unchanged"},
		{name: "edited file is kept", code: errs.Conflict, msg: "rerun with --force",
			setup: func(t *testing.T) { os.WriteFile(claude, []byte("my edits\n"), 0o644) }},
		{name: "force replaces it", force: true, path: claude, status: "updated"},
		{name: "codex", agent: "codex", path: filepath.Join(home, ".codex/skills/synapse/SKILL.md"), status: "installed"},
		{name: "CODEX_HOME", agent: "Codex", path: filepath.Join(home, "cx/skills/synapse/SKILL.md"), status: "installed",
			setup: func(t *testing.T) { t.Setenv("CODEX_HOME", filepath.Join(home, "cx")) }},
		{name: "CLAUDE_CONFIG_DIR", agent: "claude-code", path: filepath.Join(home, "cl/skills/synapse/SKILL.md"), status: "installed",
			setup: func(t *testing.T) { t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "cl")) }},
		{name: "shared agents folder", agent: "agents", path: filepath.Join(home, ".agents/skills/synapse/SKILL.md"), status: "installed"},
		{name: "dir with ~", dir: "~/elsewhere/synapse", path: filepath.Join(home, "elsewhere/synapse/SKILL.md"), status: "installed"},
		{name: "unknown agent", agent: "vim", code: errs.Invalid, msg: `unknown agent "vim"; --agent takes agents, claude-code, codex`},
		{name: "both", agent: "codex", dir: "x", code: errs.Invalid, msg: "give --dir or --agent, not both"},
		{name: "a file in the way", dir: filepath.Join(home, "afile"), code: errs.Invalid, msg: "afile",
			setup: func(t *testing.T) { os.WriteFile(filepath.Join(home, "afile"), nil, 0o644) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup(t)
			}
			dir, err := agentskill.Dir(tt.dir, tt.agent)
			var res *agentskill.InstallOut
			if err == nil {
				res, err = agentskill.Install(dir, skillFiles, tt.force)
			}
			if tt.code != "" {
				if errs.CodeOf(err) != tt.code || !strings.Contains(errs.Message(err), tt.msg) {
					t.Fatalf("err = %v, want %s containing %q", err, tt.code, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != tt.path || res.Status != tt.status || res.Bytes != len(skillMD) {
				t.Errorf("got %+v, want path %s status %s", res, tt.path, tt.status)
			}
			for _, f := range skillFiles {
				p := filepath.Join(filepath.Dir(tt.path), f.Name)
				if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, f.Data) {
					t.Errorf("%s does not hold the skill's %s (%v)", p, f.Name, err)
				}
			}
			leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(tt.path), ".*.md.*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
		})
	}
}

// TestSkill_InstallKeepsEdits: a refused install leaves the user's file as
// it was.
func TestSkill_InstallKeepsEdits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "SKILL.md")
	os.WriteFile(path, []byte("mine\n"), 0o600)
	if _, err := agentskill.Install(dir, skillFiles, false); !errs.Is(err, errs.Conflict) {
		t.Fatalf("err = %v, want conflict", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "mine\n" {
		t.Fatalf("the edited file became %q", got)
	}
}

// skillLines returns the `synapse …` command lines of SKILL.md's
// hand-written code blocks (generated blocks are checked by TestDocs_*).
func skillLines(doc string) []string {
	var out []string
	inCode, inGen := false, false
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "<!-- BEGIN GENERATED"):
			inGen = true
		case strings.HasPrefix(t, "<!-- END GENERATED"):
			inGen = false
		case strings.HasPrefix(t, "```"):
			inCode = !inCode
		case inCode && !inGen && strings.HasPrefix(t, "synapse "):
			out = append(out, t)
		}
	}
	return out
}

// inlineCommands returns the `synapse …` spans of the hand-written prose.
func inlineCommands(doc string) []string {
	var out []string
	inGen := false
	re := regexp.MustCompile("`(synapse [^`]+)`")
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "<!-- BEGIN GENERATED"):
			inGen = true
		case strings.HasPrefix(t, "<!-- END GENERATED"):
			inGen = false
		case !inGen:
			for _, m := range re.FindAllStringSubmatch(l, -1) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// shellWords splits a command line as a POSIX shell would for the simple
// quoting the skill uses ('…' and "…").
func shellWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errs.E(errs.Invalid, "unclosed quote in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// placeholder matches the skill's placeholders: QUESTION, TITLE, ID...
var placeholder = regexp.MustCompile(`^[A-Z][A-Z_]*(\.\.\.)?$`)

// checkCommandLine resolves a documented command line against the real
// CLI: the verb exists and every flag is one it takes.
func checkCommandLine(app *cli.App, line string) error {
	words, err := shellWords(line)
	if err != nil {
		return err
	}
	cmds, flags := app.Commands, app.Flags
	var cmd *cli.Command
	var path []string
	rest := words[1:]
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if strings.HasPrefix(w, "-") && w != "-" { // "-" is standard input, an argument
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			known := cliargs.KnownFlag(flags, w) || cliargs.KnownFlag(app.Flags, w)
			if !known {
				return errs.E(errs.Invalid, "`synapse %s` has no flag -%s", strings.Join(path, " "), name)
			}
			// a global flag's value before the verb (--vault DIR) is no command word
			if cmd == nil && cliargs.KnownFlag(app.Flags, w) && cliargs.FlagArity(app.Flags, w) == 1 {
				i++
			}
			continue
		}
		if cmd != nil && len(cmd.Subcommands) == 0 {
			continue // an argument
		}
		c := cliargs.FindCommand(cmds, w)
		if c == nil {
			return errs.E(errs.Invalid, "synapse has no command %q", strings.Join(append(path, w), " "))
		}
		cmd, cmds, flags = c, c.Subcommands, c.Flags
		path = append(path, w)
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return errs.E(errs.Invalid, "%q names no verb", line)
	}
	return nil
}

// TestSkill_DocumentedCommandsExist checks every command line and every
// inline `synapse …` of the hand-written parts of SKILL.md against the
// CLI, so a renamed verb or flag breaks the test, not the agent.
func TestSkill_DocumentedCommandsExist(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	lines := skillLines(string(skillMD))
	if len(lines) < 10 {
		t.Fatalf("found %d command lines in SKILL.md's code blocks", len(lines))
	}
	for _, l := range append(lines, inlineCommands(string(skillMD))...) {
		if err := checkCommandLine(app, l); err != nil {
			t.Errorf("SKILL.md documents %q: %v", l, errs.Message(err))
		}
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, " --json") {
			t.Errorf("SKILL.md's command %q does not end in --json", l)
		}
	}
}

// skillRun is the script command `skillrun PREFIX [NAME=VALUE...]`: it runs
// the one command line of the embedded SKILL.md's code blocks that starts
// with PREFIX, with its placeholders (TITLE, PATH, ID...) replaced by the
// values given, so that a script does what an agent reading the skill would
// do, and breaks when the skill is wrong. Every value must be used and every
// placeholder filled.
func skillRun(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: skillrun PREFIX [NAME=VALUE...]")
	}
	var match []string
	for _, l := range skillLines(string(skillMD)) {
		// a line the skill gives twice (page get, in two workflows) is one
		if strings.HasPrefix(l, args[0]) && !slices.Contains(match, l) {
			match = append(match, l)
		}
	}
	if len(match) != 1 {
		ts.Fatalf("SKILL.md has %d command lines starting with %q: %q", len(match), args[0], match)
	}
	vals := map[string]string{}
	used := map[string]bool{}
	for _, a := range args[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("skillrun: %q is not NAME=VALUE", a)
		}
		vals[k] = v
	}
	words, err := shellWords(match[0])
	ts.Check(err)
	var argv []string
	for _, w := range words[1:] {
		if v, ok := vals[w]; ok && placeholder.MatchString(w) {
			used[w] = true
			if strings.HasSuffix(w, "...") {
				argv = append(argv, strings.Fields(v)...)
			} else {
				argv = append(argv, v)
			}
			continue
		}
		if placeholder.MatchString(w) {
			ts.Fatalf("the skill's line %q needs a value for %s", match[0], w)
		}
		argv = append(argv, w)
	}
	for k := range vals {
		if !used[k] {
			ts.Fatalf("the skill's line %q has no placeholder %s", match[0], k)
		}
	}
	shown := make([]string, len(argv))
	for i, a := range argv {
		shown[i] = a
		if a == "" || strings.ContainsAny(a, " '\"$") {
			shown[i] = strconv.Quote(a)
		}
	}
	ts.Logf("> synapse %s   (SKILL.md: %s)", strings.Join(shown, " "), match[0])
	err = ts.Exec("synapse", argv...)
	if neg && err == nil {
		ts.Fatalf("unexpected success")
	}
	if !neg && err != nil {
		ts.Fatalf("%v", err)
	}
}

// jsonPathSeg matches one step of a jsonvar path: name, name[N] or
// name[key=value].
var jsonPathSeg = regexp.MustCompile(`^([A-Za-z0-9_]*)(?:\[([^\]=]+)(?:=([^\]]*))?\])?$`)

// jsonVar is the script command `jsonvar VAR PATH`: it sets VAR to the
// value at PATH in the last command's JSON stdout. PATH is a dotted path of
// names with [N] indexes or [key=value] selections: .hits[0].path,
// .items[title=Tide tables].id.
func jsonVar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonvar VAR PATH")
	}
	var v any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &v))
	for _, seg := range strings.Split(strings.TrimPrefix(args[1], "."), ".") {
		m := jsonPathSeg.FindStringSubmatch(seg)
		if m == nil {
			ts.Fatalf("jsonvar: bad path step %q", seg)
		}
		if m[1] != "" {
			obj, ok := v.(map[string]any)
			if !ok {
				ts.Fatalf("jsonvar: %s: not an object", seg)
			}
			if v, ok = obj[m[1]]; !ok {
				ts.Fatalf("jsonvar: no key %q", m[1])
			}
		}
		if m[2] == "" {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			ts.Fatalf("jsonvar: %s: not a list", seg)
		}
		if !strings.Contains(seg, "=") {
			i, err := strconv.Atoi(m[2])
			if err != nil || i < 0 || i >= len(list) {
				ts.Fatalf("jsonvar: %s: no element %s in a list of %d", seg, m[2], len(list))
			}
			v = list[i]
			continue
		}
		var found any
		for _, el := range list {
			if obj, ok := el.(map[string]any); ok && strings.TrimSpace(jsonScalar(obj[m[2]])) == m[3] {
				found = el
				break
			}
		}
		if found == nil {
			ts.Fatalf("jsonvar: %s: no element with %s=%s", seg, m[2], m[3])
		}
		v = found
	}
	ts.Setenv(args[0], jsonScalar(v))
}

func jsonScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		data, _ := json.Marshal(x)
		return string(data)
	}
}

// skillFile is the script command `skillmd FILE`: it copies the repository's
// skill/SKILL.md (the file, not the embedded copy), or the skill's file
// named by the second argument, to FILE.
func skillFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: skillmd FILE [reference.md]")
	}
	name := "SKILL.md"
	if len(args) == 2 {
		name = args[1]
	}
	data, err := os.ReadFile(filepath.Join("skill", name))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}

func init() {
	scriptCmds["skillmd"] = skillFile
	scriptCmds["skillrun"] = skillRun
	scriptCmds["jsonvar"] = jsonVar
}
