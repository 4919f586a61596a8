// Package desk is `synapse desk`: a full-screen terminal UI in which a
// person decides what the agent proposed (the review queue) and checks
// what it did (recent writes, their diffs, restore), and reads pages.
//
// The desk holds no store of its own. Every read and every decision is an
// operation of the table in package ops, run through a Caller the way a
// CLI verb runs it: handed to the server that holds the vault when one
// runs, else in a short-lived open of the store. So the desk is never a
// second writer and never waits on the store's lock; it notices writes by
// others by polling a cheap stamp of the store file (docs/desk.md).
package desk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// Caller runs one operation of the table by name (ops.Op.Name) with its
// JSON input and returns its JSON result, as a CLI verb would: handed to
// a running server, or in this process. Errors are *errs.Error values.
type Caller interface {
	Call(ctx context.Context, op string, in []byte) ([]byte, error)
}

// safeCaller turns a panic in an operation into an internal error: the
// desk reports it and goes on.
type safeCaller struct{ c Caller }

func (s safeCaller) Call(ctx context.Context, op string, in []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errs.E(errs.Internal, "internal error in %s: %v", op, r)
		}
	}()
	return s.c.Call(ctx, op, in)
}

// call runs op with in (marshalled to JSON) and decodes its result.
func call[Out any](ctx context.Context, c Caller, op string, in any) (*Out, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	data, err := c.Call(ctx, op, raw)
	if err != nil {
		return nil, err
	}
	out := new(Out)
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("decode the result of %s: %w", op, err)
	}
	return out, nil
}

// Options configure a desk.
type Options struct {
	Caller Caller
	// Stamp returns a value that changes whenever the vault's store or
	// journal changes; the desk polls it every Poll and reloads what it
	// shows when it changes. Nil: no polling.
	Stamp func() string
	Poll  time.Duration // default 1s
	// Input and Output are the terminal (nil: standard input, or the
	// controlling terminal when standard input is not one; standard
	// output).
	Input  io.Reader
	Output io.Writer
	// Plain draws without colour (NO_COLOR).
	Plain bool
	// Mouse turns on mouse reporting: the wheel scrolls, a click moves
	// the cursor.
	Mouse bool
	// Now is the clock (tests fix it).
	Now func() time.Time
}

// ErrInterrupted is returned when SIGINT ended the desk.
var ErrInterrupted = errors.New("interrupted")

// Run opens the desk on the terminal and returns when the person quits.
// The terminal is restored on every way out: quit, SIGINT or SIGTERM,
// and a panic (reported as an error).
func Run(ctx context.Context, o Options) error {
	if o.Output == nil {
		o.Output = os.Stdout
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithAltScreen(), tea.WithOutput(o.Output)}
	switch {
	case o.Input != nil:
		opts = append(opts, tea.WithInput(o.Input))
	case !isTerminal(os.Stdin):
		opts = append(opts, tea.WithInputTTY())
	}
	if o.Mouse {
		opts = append(opts, tea.WithMouseCellMotion())
	}
	p := tea.NewProgram(New(ctx, o), opts...)
	_, err := p.Run()
	switch {
	case errors.Is(err, tea.ErrInterrupted):
		return ErrInterrupted
	case errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		return ErrInterrupted
	}
	return err
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// VaultStamp is the Stamp of a vault: the size and modification time of
// its store file, which every committed write changes (whoever writes),
// and of its review journal, which a git pull or a sync tool changes
// without the store (the queue's next read replays it).
func VaultStamp(v *vault.Vault) func() string {
	paths := []string{v.Abs(vault.DBFile), v.Abs(vault.ReviewJournal)}
	return func() string {
		s := ""
		for _, p := range paths {
			if st, err := os.Stat(p); err == nil {
				s += fmt.Sprintf("%d.%d;", st.Size(), st.ModTime().UnixNano())
			} else {
				s += "-;"
			}
		}
		return s
	}
}
