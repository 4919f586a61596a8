// Package agentskill installs synapse's agent skill (SKILL.md and its
// reference.md) into an agent's skill folder, and describes it for
// `synapse skill print --json`. The files themselves are embedded by
// package main from skill/, a folder that holds them only, because skill
// installers copy the whole folder of a skill.
package agentskill

import (
	"bytes"
	"crypto/sha256"
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
)

// File is one file of the skill, as installed.
type File struct {
	Name string
	Data []byte
}

// agents are the skill folders that `skill install --agent` knows:
// where each agent looks for user-level skills.
var agents = map[string]func(home string) string{
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

// AgentNames lists the agents --agent takes, in order, comma-separated.
func AgentNames() string {
	var names []string
	for n := range agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// PrintOut is the result of `skill print --json`.
type PrintOut struct {
	Name    string `json:"name"`
	File    string `json:"file"` // SKILL.md, or reference.md with --reference
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
	Content string `json:"content"` // the file, byte for byte
}

// Describe is f as `skill print --json` prints it.
func Describe(f File) PrintOut {
	sum := sha256.Sum256(f.Data)
	return PrintOut{Name: "synapse", File: f.Name, Bytes: len(f.Data), SHA256: hex.EncodeToString(sum[:]), Content: string(f.Data)}
}

// InstallOut is the result of `skill install --json`.
type InstallOut struct {
	Path   string `json:"path"`   // the SKILL.md written (or already there)
	Status string `json:"status"` // installed, updated or unchanged
	Bytes  int    `json:"bytes"`
}

// Dir is the folder to install into: --dir, else the --agent's folder,
// else Claude Code's.
func Dir(dir, agent string) (string, error) {
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
	f := agents[strings.ToLower(agent)]
	if f == nil {
		return "", errs.E(errs.Invalid, "unknown agent %q; --agent takes %s (or give the folder with --dir)", agent, AgentNames())
	}
	if herr != nil {
		return "", errs.E(errs.Invalid, "no home folder to install into (%v); give the folder with --dir", herr)
	}
	return f(home), nil
}

// Install writes files, SKILL.md first, into dir, each atomically (a
// temporary file in the same folder, then a rename). A file with other
// bytes is kept unless force: it may hold the user's edits (conflict
// otherwise, before anything is written). The status is that of the
// whole: installed, updated or unchanged.
func Install(dir string, files []File, force bool) (*InstallOut, error) {
	out := &InstallOut{Path: filepath.Join(dir, files[0].Name), Status: "unchanged", Bytes: len(files[0].Data)}
	var todo []int
	for i, f := range files {
		path := filepath.Join(dir, f.Name)
		old, err := readRegular(path)
		var nr *notRegularError
		switch {
		case errors.As(err, &nr):
			return nil, errs.Wrap(errs.Forbidden, err, "%s is %s, not a file; synapse replaces only a %s file: remove it first", path, nr.kind, f.Name)
		case err == nil && bytes.Equal(old, f.Data):
			continue
		case err == nil && !force:
			return nil, errs.E(errs.Conflict, "%s already exists and differs from this synapse's skill (an older version or local edits); rerun with --force to replace it", path)
		case err == nil:
			out.Status = "updated"
		case !os.IsNotExist(err):
			return nil, fileErr(err, "read %s: %v", path, err)
		case out.Status == "unchanged":
			out.Status = "installed"
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fileErr(err, "create %s: %v", dir, err)
	}
	for _, i := range todo {
		if err := writeFile(dir, files[i].Name, files[i].Data); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeFile writes one file of the skill atomically.
func writeFile(dir, name string, data []byte) error {
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fileErr(err, "write in %s: %v", dir, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return errs.Wrap(errs.Internal, err, "write %s: %v", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return errs.Wrap(errs.Internal, err, "write %s: %v", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return errs.Wrap(errs.Internal, err, "write %s: %v", tmp.Name(), err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return errs.Wrap(errs.Internal, err, "chmod %s: %v", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return errs.Wrap(errs.Internal, err, "install %s: %v", path, err)
	}
	return nil
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
