package main

import (
	_ "embed"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/agentskill"
	"github.com/synapse-wiki/synapse/internal/render"
	"github.com/urfave/cli/v2"
)

// skillMD is the agent skill: when and how to use synapse, small enough
// to load whole when the skill triggers. skillReference, beside it, is
// the reference an agent reads when a flag or a cap matters: every verb,
// the caps, the search syntax and the MCP tools, generated from the
// operation table. The folder skill/ holds these two files only, because
// skill installers copy the whole folder of a skill.
//
//go:generate go test -run TestDocs_Generated -update .
//go:embed skill/SKILL.md
var skillMD []byte

//go:embed skill/reference.md
var skillReference []byte

// skillFiles are the skill's files as installed, SKILL.md first.
var skillFiles = []agentskill.File{{Name: "SKILL.md", Data: skillMD}, {Name: "reference.md", Data: skillReference}}

func init() {
	// a group like those built from the table: an unknown subcommand is a
	// usage error (exit 2)
	group := groupCommand("skill", "The agent skill: install or print it")
	group.Subcommands = []*cli.Command{
		{
			Name:        "print",
			Usage:       "Print the agent skill (SKILL.md), or its reference",
			UsageText:   "synapse skill print [--reference [VERB...]] [--json]",
			Description: "Prints the SKILL.md embedded in this binary, byte for byte (--json: with its name, size and sha256).\n--reference prints reference.md instead: every verb, the caps, the search syntax and the MCP tools.\n--reference VERB prints only that verb's section (synapse skill print --reference page write); a group (page) all its verbs; an MCP tool's name (write_page) its verb.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "reference", Usage: "print the skill's reference.md: every verb, the caps, the search syntax and the MCP tools; with VERB (page write; a group: page; an MCP tool: write_page) only its section"},
				&cli.BoolFlag{Name: "json", Usage: "print the skill as JSON: name, file, bytes, sha256 and content"},
			},
			OnUsageError: usageError,
			Action: func(c *cli.Context) error {
				f := skillFiles[0]
				if c.Bool("reference") {
					f = skillFiles[1]
				}
				if c.NArg() > 0 {
					if !c.Bool("reference") {
						return errs.E(errs.Invalid, "unexpected argument %q (usage: synapse skill print [--reference [VERB...]] [--json])", c.Args().First())
					}
					verb := strings.Join(c.Args().Slice(), " ")
					section, ok, verbs := referenceSection(f.Data, verb)
					if !ok {
						return errs.E(errs.Invalid, "no verb %q in the reference; the verbs: %s", verb, strings.Join(verbs, ", "))
					}
					f = agentskill.File{Name: f.Name + "#" + verb, Data: section}
				}
				if globalsOf(c).json {
					return render.New(c.App.Writer, c.App.ErrWriter).JSON(agentskill.Describe(f))
				}
				_, err := c.App.Writer.Write(f.Data)
				return err
			},
		},
		{
			Name:      "install",
			Usage:     "Write the agent skill (SKILL.md and reference.md) to an agent's skill folder",
			UsageText: "synapse skill install [--agent claude-code|codex|agents | --dir DIR] [--force]",
			Description: "Writes SKILL.md and reference.md into the skill folder DIR (created if needed). The default is\n" +
				"Claude Code's ~/.claude/skills/synapse/ ($CLAUDE_CONFIG_DIR/skills/synapse/ when set).\n" +
				"--agent codex writes $CODEX_HOME/skills/synapse/ (~/.codex/skills/synapse/); --agent agents\n" +
				"writes the shared ~/.agents/skills/synapse/ that recent Codex releases, Cline, Warp, Zed and\n" +
				"other Agent Skills clients read. Running it again is harmless. A file that differs (an\n" +
				"older version or local edits) is replaced only with --force.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "dir", Usage: "the skill folder to write SKILL.md into"},
				&cli.StringFlag{Name: "agent", Usage: "install where this agent looks: " + agentskill.AgentNames(), DefaultText: "claude-code"},
				&cli.BoolFlag{Name: "force", Usage: "replace skill files that differ from this synapse's skill"},
				&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			},
			OnUsageError: usageError,
			Action:       skillInstall,
		},
	}
	extraCommands = append(extraCommands, group)
}

func skillInstall(c *cli.Context) error {
	if c.NArg() > 0 {
		return errs.E(errs.Invalid, "unexpected argument %q; the folder is given with --dir DIR", c.Args().First())
	}
	dir, err := agentskill.Dir(c.String("dir"), c.String("agent"))
	if err != nil {
		return err
	}
	out, err := agentskill.Install(dir, skillFiles, c.Bool("force"))
	if err != nil {
		return err
	}
	o := render.New(c.App.Writer, c.App.ErrWriter)
	if globalsOf(c).json {
		return o.JSON(out)
	}
	switch out.Status {
	case "unchanged":
		o.Printf("%s is up to date\n", out.Path)
	default:
		o.Printf("%s %s\n", out.Status, out.Path)
	}
	return nil
}
