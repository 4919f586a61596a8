package main

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/urfave/cli/v2"
)

// skillMD is the agent skill. The folder skill/ holds nothing but
// SKILL.md, because skill installers copy the whole folder of a skill.
// Its command reference, caps and tool lists are generated from the
// operation table:
//
//go:generate go test -run TestDocs_Generated -update .
//go:embed skill/SKILL.md
var skillMD []byte

// skillAgents are the skill folders that `skill install --agent` knows:
// where each agent looks for user-level skills.
var skillAgents = map[string]func(home string) string{
	// Claude Code: ~/.claude/skills (CLAUDE_CONFIG_DIR moves ~/.claude)
	"claude-code": func(home string) string {
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "skills", "synapse")
		}
		return filepath.Join(home, ".claude", "skills", "synapse")
	},
	// Codex CLI: $CODEX_HOME/skills, ~/.codex by default
	"codex": func(home string) string {
		if d := os.Getenv("CODEX_HOME"); d != "" {
			return filepath.Join(d, "skills", "synapse")
		}
		return filepath.Join(home, ".codex", "skills", "synapse")
	},
	// the shared user-level Agent Skills folder (recent Codex, Cline, Warp, Zed…)
	"agents": func(home string) string { return filepath.Join(home, ".agents", "skills", "synapse") },
}

func skillAgentNames() string {
	var names []string
	for n := range skillAgents {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// SkillPrintOut is the result of `skill print --json`.
type SkillPrintOut struct {
	Name    string `json:"name"`
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
	Content string `json:"content"` // SKILL.md, byte for byte
}

// SkillInstallOut is the result of `skill install --json`.
type SkillInstallOut struct {
	Path   string `json:"path"`   // the SKILL.md written (or already there)
	Status string `json:"status"` // installed, updated or unchanged
	Bytes  int    `json:"bytes"`
}

func init() {
	// a group like those built from the table: an unknown subcommand is a
	// usage error (exit 2)
	group := groupCommand("skill", "The agent skill: install or print it")
	group.Subcommands = []*cli.Command{
		{
			Name:         "print",
			Usage:        "Print the agent skill (SKILL.md)",
			UsageText:    "synapse skill print [--json]",
			Description:  "Prints the SKILL.md embedded in this binary, byte for byte (--json: with its name, size and sha256).",
			Flags:        []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the skill as JSON: name, bytes, sha256 and content"}},
			OnUsageError: usageError,
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return errs.E(errs.Invalid, "unexpected argument %q (usage: synapse skill print [--json])", c.Args().First())
				}
				if globalsOf(c).json {
					sum := sha256.Sum256(skillMD)
					data, err := ops.MarshalJSON(SkillPrintOut{Name: "synapse", Bytes: len(skillMD), SHA256: hex.EncodeToString(sum[:]), Content: string(skillMD)})
					if err != nil {
						return err
					}
					_, err = c.App.Writer.Write(data)
					return err
				}
				_, err := c.App.Writer.Write(skillMD)
				return err
			},
		},
		{
			Name:      "install",
			Usage:     "Write the agent skill to an agent's skill folder",
			UsageText: "synapse skill install [--agent claude-code|codex|agents | --dir DIR] [--force]",
			Description: "Writes SKILL.md into the skill folder DIR (created if needed). The default is\n" +
				"Claude Code's ~/.claude/skills/synapse/ ($CLAUDE_CONFIG_DIR/skills/synapse/ when set).\n" +
				"--agent codex writes $CODEX_HOME/skills/synapse/ (~/.codex/skills/synapse/); --agent agents\n" +
				"writes the shared ~/.agents/skills/synapse/ that recent Codex releases, Cline, Warp, Zed and\n" +
				"other Agent Skills clients read. Running it again is harmless. A SKILL.md that differs (an\n" +
				"older version or local edits) is replaced only with --force.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "dir", Usage: "the skill folder to write SKILL.md into"},
				&cli.StringFlag{Name: "agent", Usage: "install where this agent looks: " + skillAgentNames(), DefaultText: "claude-code"},
				&cli.BoolFlag{Name: "force", Usage: "replace a SKILL.md that differs from this synapse's skill"},
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
	dir, err := skillDir(c.String("dir"), c.String("agent"))
	if err != nil {
		return err
	}
	out, err := installSkill(dir, c.Bool("force"))
	if err != nil {
		return err
	}
	o := newOutput(c.App.Writer, c.App.ErrWriter)
	if globalsOf(c).json {
		data, err := ops.MarshalJSON(out)
		if err != nil {
			return err
		}
		_, err = o.w.Write(data)
		return err
	}
	switch out.Status {
	case "unchanged":
		o.printf("%s is up to date\n", out.Path)
	default:
		o.printf("%s %s\n", out.Status, out.Path)
	}
	return nil
}

// skillDir is the folder to install into: --dir, else the --agent's folder,
// else Claude Code's.
func skillDir(dir, agent string) (string, error) {
	if dir != "" && agent != "" {
		return "", errs.E(errs.Invalid, "give --dir or --agent, not both")
	}
	home, herr := os.UserHomeDir()
	if dir != "" {
		if dir == "~" || strings.HasPrefix(dir, "~/") {
			if herr != nil {
				return "", errs.E(errs.Invalid, "--dir %s: no home folder to expand ~ (%v)", dir, herr)
			}
			dir = filepath.Join(home, dir[1:])
		}
		return filepath.Abs(dir)
	}
	if agent == "" {
		agent = "claude-code"
	}
	f := skillAgents[strings.ToLower(agent)]
	if f == nil {
		return "", errs.E(errs.Invalid, "unknown agent %q; --agent takes %s (or give the folder with --dir)", agent, skillAgentNames())
	}
	if herr != nil {
		return "", errs.E(errs.Invalid, "no home folder to install into (%v); give the folder with --dir", herr)
	}
	return f(home), nil
}

// installSkill writes SKILL.md into dir atomically (a temporary file in the
// same folder, then a rename). A SKILL.md with other bytes is kept unless
// force: it may hold the user's edits (conflict otherwise).
func installSkill(dir string, force bool) (*SkillInstallOut, error) {
	path := filepath.Join(dir, "SKILL.md")
	out := &SkillInstallOut{Path: path, Status: "installed", Bytes: len(skillMD)}
	old, err := readRegular(path)
	var nr *notRegularError
	switch {
	case errors.As(err, &nr):
		return nil, errs.Wrap(errs.Forbidden, err, "%s is %s, not a file; synapse replaces only a SKILL.md file: remove it first", path, nr.kind)
	case err == nil && bytes.Equal(old, skillMD):
		out.Status = "unchanged"
		return out, nil
	case err == nil && !force:
		return nil, errs.E(errs.Conflict, "%s already exists and differs from this synapse's skill (an older version or local edits); rerun with --force to replace it", path)
	case err == nil:
		out.Status = "updated"
	case !os.IsNotExist(err):
		return nil, fileErr(err, "read %s: %v", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fileErr(err, "create %s: %v", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".SKILL.md.*")
	if err != nil {
		return nil, fileErr(err, "write in %s: %v", dir, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(skillMD); err != nil {
		tmp.Close()
		return nil, errs.Wrap(errs.Internal, err, "write %s: %v", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, errs.Wrap(errs.Internal, err, "write %s: %v", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "write %s: %v", tmp.Name(), err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "chmod %s: %v", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "install %s: %v", path, err)
	}
	return out, nil
}

// fileErr codes a file system error of the install: permission denied is
// forbidden (exit 5); a folder that cannot be one (a file in the way) is
// invalid input (exit 2).
func fileErr(err error, format string, args ...any) error {
	if os.IsPermission(err) {
		return errs.Wrap(errs.Forbidden, err, format, args...)
	}
	return errs.Wrap(errs.Invalid, err, format, args...)
}

// notRegularError: a named pipe, socket, device or folder where a file
// was expected.
type notRegularError struct{ kind string }

func (e *notRegularError) Error() string { return "not a regular file: " + e.kind }

// readRegular reads a regular file (a symlink to one included) without
// ever waiting on a named pipe: the open does not block and what it
// opened is checked before a byte is read.
func readRegular(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(st); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(st); err != nil {
		return nil, err // swapped in since the first look
	}
	return io.ReadAll(f)
}

func checkRegular(st fs.FileInfo) error {
	t := st.Mode().Type()
	switch {
	case st.Mode().IsRegular():
		return nil
	case t&fs.ModeNamedPipe != 0:
		return &notRegularError{"a named pipe (FIFO)"}
	case t&fs.ModeSocket != 0:
		return &notRegularError{"a socket"}
	case t&fs.ModeDevice != 0:
		return &notRegularError{"a device"}
	case t&fs.ModeDir != 0:
		return &notRegularError{"a folder"}
	}
	return &notRegularError{"a special file"}
}
