// Command synapse keeps an LLM-maintained markdown wiki fast, searchable and
// safe: a vault of plain files, an embedded bbolt index, a review queue, a
// link graph and a source tracker, exposed as CLI verbs, MCP tools and REST
// routes generated from one operation table (package ops).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/cliargs"
	"github.com/synapse-wiki/synapse/internal/gcmode"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

const exitCodesHelp = `EXIT CODES:
   0  ok
   1  internal error
   2  invalid input or usage
   3  not found
   4  conflict (stale --if-match, a decided review item)
   5  forbidden or unavailable (read-only server, store held elsewhere)
   6  lint --fail-on-findings found something (the report is printed first)
`

// exitFindings is the exit code of a command whose result reports a
// failure: lint --fail-on-findings with findings.
const exitFindings = 6

func main() {
	// the memory limit, and no garbage collection below it until a
	// command that runs long says so (package gcmode): package
	// initialization allocates less than the first collection's 4 MB
	// goal (GODEBUG=gctrace=1 synapse version shows none), so this is
	// early enough
	gcmode.Short()
	stop := cpuProfile(os.Getenv("SYNAPSE_CPUPROFILE"), os.Stderr)
	code := runProcess(os.Args, os.Stdin, os.Stdout, os.Stderr, os.Exit)
	stop()
	os.Exit(code)
}

// cpuProfile starts a CPU profile of this command into path when path is
// set (SYNAPSE_CPUPROFILE=FILE, for `go tool pprof`; scripts/bench uses
// it to show what bounds a command) and returns the function that ends it.
func cpuProfile(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "synapse: SYNAPSE_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// run runs the CLI and returns the exit code; only main calls os.Exit.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(sock.DefaultTiming(), args, stdin, stdout, stderr)
}

// runProcess is run for the process itself: exit (os.Exit) ends a verb
// that is still running shortly after SIGINT or SIGTERM (sigGuard).
func runProcess(args []string, stdin io.Reader, stdout, stderr io.Writer, exit func(int)) int {
	return runMain(sock.DefaultTiming(), exit, args, stdin, stdout, stderr)
}

// runWith is run with the timing of the hand-off to a server's socket
// (tests shorten it).
func runWith(timing sock.Timing, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runMain(timing, nil, args, stdin, stdout, stderr)
}

// runMain runs the CLI; exit, when set, ends the process (see runProcess).
func runMain(timing sock.Timing, exit func(int), args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer exitOnPanic(stderr, &code)
	// a fault on memory mapped from a file (the store) is a panic, which
	// the store turns into a damage error, not a crash
	debug.SetPanicOnFault(true)
	ops.Version = version
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newAppFor(stdin, stdout, stderr, verbOf(args))
	app.Metadata = map[string]any{typedArgsKey: args, sockTimingKey: timing, exitKey: exit}
	err := app.RunContext(ctx, cliargs.Permute(app, args))
	if err == nil {
		return 0
	}
	return reportError(stderr, err, cliargs.WantsJSON(args))
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return newAppFor(stdin, stdout, stderr, "")
}

// verbOf is the top-level command a command line names ("": none, or
// help, which looks at every command), after the global flags.
func verbOf(args []string) string {
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return ""
		case a == "--vault" || a == "-vault":
			i++ // its value
		case strings.HasPrefix(a, "-"):
		case a == "help":
			return ""
		default:
			return a
		}
	}
	return ""
}

// newAppFor is newApp with the commands that a command line naming the
// top-level command verb needs (buildCommandsFor).
func newAppFor(stdin io.Reader, stdout, stderr io.Writer, verb string) *cli.App {
	app := &cli.App{
		Name:    "synapse",
		Usage:   "a fast, safe substrate for LLM-maintained markdown wikis",
		Version: version,
		Description: "synapse keeps a vault of markdown pages (wiki/) compiled from raw sources (raw/sources/)\n" +
			"indexed in an embedded store: ranked search, a link graph, a review queue and a source tracker.\n" +
			"Every verb takes --json for machine output identical to the MCP tools and REST routes.",
		Reader:               stdin,
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		// a repeatable flag's value is one value: a citation, alias or
		// query with a comma in it is never split (urfave splits at
		// commas by default)
		DisableSliceFlagSeparator: true,
		Flags:                     globalFlags(),
		ExitErrHandler:            func(*cli.Context, error) {}, // errors are reported by run
		CustomAppHelpTemplate: cli.AppHelpTemplate + "\n" + exitCodesHelp + `
VAULT:
   Found from --vault DIR, then $SYNAPSE_VAULT, then the nearest folder at or above
   the working directory that holds .synapse/. Create one with 'synapse init DIR'.
`,
	}
	app.Commands = append(buildCommandsFor(verb), helpCommand())
	// urfave adds --help only when no command is named help
	app.Flags = append(app.Flags, cli.HelpFlag)
	applyVerbHelp("", app.Commands)
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return cliargs.UnknownCommand(c.Args().First(), nil, c.App.Commands)
		}
		if c.IsSet("vault") && os.Getenv(vault.EnvVar) != c.String("vault") {
			// `synapse --vault status`: the flag took the command as its path
			return vaultWithoutCommand(c.String("vault"), c.App.Commands)
		}
		return cli.ShowAppHelp(c)
	}
	app.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		return cliargs.FlagError(err, "synapse", c.App.Flags, typedArgs(c))
	}
	return app
}

// vaultWithoutCommand is the usage error of --vault given with no command
// after it: when its value names a command, the flag took the command as
// its path (`synapse --vault status`).
func vaultWithoutCommand(val string, cmds []*cli.Command) error {
	if cliargs.FindCommand(cmds, val) != nil {
		return errs.E(errs.Invalid, "--vault took %q as its path, and no command followed: give the vault's folder first (synapse --vault DIR %s)", val, val)
	}
	return errs.E(errs.Invalid, "--vault %s names a vault but no command (see `synapse --help`)", val)
}

// typedArgsKey holds the command line as typed in the app's Metadata, so
// that errors name flags the way the user wrote them.
const typedArgsKey = "typed-args"

// sockTimingKey holds the socket's timing (sock.Timing) in the app's
// Metadata.
const sockTimingKey = "sock-timing"

// exitKey holds the function that ends the process (os.Exit; nil in
// tests that run the CLI in their own process) in the app's Metadata.
const exitKey = "exit"

// processExit is the function that ends the process, or nil.
func processExit(c *cli.Context) func(int) {
	if c == nil || c.App == nil {
		return nil
	}
	f, _ := c.App.Metadata[exitKey].(func(int))
	return f
}

// sockTiming is the timing of the hand-off to a server (runWith's).
func sockTiming(c *cli.Context) sock.Timing {
	if c == nil || c.App == nil {
		return sock.DefaultTiming()
	}
	t, _ := c.App.Metadata[sockTimingKey].(sock.Timing)
	return t.OrDefault()
}

func typedArgs(c *cli.Context) []string {
	if c == nil || c.App == nil {
		return nil
	}
	a, _ := c.App.Metadata[typedArgsKey].([]string)
	return a
}

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "vault", Usage: "vault folder (default: $SYNAPSE_VAULT, else the nearest folder holding .synapse/)", EnvVars: []string{"SYNAPSE_VAULT"}},
		&cli.BoolFlag{Name: "json", Usage: "machine-readable JSON output (the same JSON as MCP and REST)"},
	}
}

// exitOnPanic, deferred, turns a panic of the command into exit 1 with a
// short message (Go's own crash exits 2, the code of a usage error, with a
// trace no user needs); SYNAPSE_TRACEBACK=1 prints the trace as well.
func exitOnPanic(stderr io.Writer, code *int) {
	v := recover()
	if v == nil {
		return
	}
	fmt.Fprintf(stderr, "synapse: internal error: %v (a bug in synapse; please report it with the command that failed)\n", v)
	if os.Getenv("SYNAPSE_TRACEBACK") == "1" {
		stderr.Write(debug.Stack())
	}
	*code = errs.ExitCode(errs.Internal)
}

// reportError prints err on stderr (as the JSON envelope with --json) and
// returns its exit code.
func reportError(w io.Writer, err error, asJSON bool) int {
	code := errs.CodeOf(err)
	if ec, ok := err.(cli.ExitCoder); ok && code == errs.Internal {
		// urfave usage errors (unknown flag, missing argument)
		if ec.ExitCode() != 0 && ec.ExitCode() != 1 {
			fmt.Fprintf(w, "synapse: %v\n", err)
			return ec.ExitCode()
		}
	}
	if cliargs.IsUsageError(err) {
		code = errs.Invalid
		err = errs.E(errs.Invalid, "%v", err)
	}
	if asJSON {
		data, _ := ops.MarshalJSON(ops.ErrorEnvelope(err, errs.CLI))
		w.Write(data)
	} else {
		fmt.Fprintf(w, "synapse: %s\n", errs.MessageFor(err, errs.CLI))
	}
	return errs.ExitCode(code)
}
