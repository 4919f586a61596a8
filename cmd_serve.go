package main

// The serve and openapi commands: thin adapters over package server.

import (
	"log"
	"net"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/server"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "serve",
		Usage:     "Serve MCP (stdio, streamable HTTP) and REST over the vault",
		UsageText: "synapse serve --mcp-stdio | --http [--addr 127.0.0.1:7411] [--write]",
		Description: "--mcp-stdio serves every MCP tool, read and write, on standard input and output.\n" +
			"--http serves MCP at /mcp, the REST routes, /openapi.json and /healthz on one loopback\n" +
			"address. HTTP is read-only unless --write: the write tools are not listed and are refused,\n" +
			"and write routes answer 403. Every route but /healthz needs 'Authorization: Bearer TOKEN';\n" +
			"the token is $SYNAPSE_TOKEN, else .synapse/token (created 0600 on first serve).\n" +
			"Both transports may run at once; then the end of standard input ends only the stdio\n" +
			"session and HTTP keeps serving. Logs go to standard error, starting with the pid; an HTTP\n" +
			"server also writes it to .synapse/serve.pid (removed when it stops). SIGINT or SIGTERM\n" +
			"(kill $(cat .synapse/serve.pid)) stop the server after in-flight requests finish.\n\n" +
			"The server watches wiki/ and raw/sources/ and indexes what other programs save there. It\n" +
			"answers MCP initialize at once and brings the index up to date in the background. While it\n" +
			"runs, CLI verbs on the same vault are handed to it over .synapse/serve.sock (owner only) and\n" +
			"behave as they do without it; a second serve on the vault forwards its calls to the first,\n" +
			"and takes the vault over when the first stops.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "mcp-stdio", Usage: "serve MCP over standard input and output (all tools)"},
			&cli.BoolFlag{Name: "http", Usage: "serve MCP at /mcp, REST, /openapi.json and /healthz over HTTP"},
			&cli.StringFlag{Name: "addr", Value: server.DefaultAddr, Usage: "HTTP listen address (host:port; port 0 picks a free one)"},
			&cli.BoolFlag{Name: "write", Usage: "allow write tools and write routes over HTTP"},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "extra DNS name accepted in the Host and Origin headers (repeatable)"},
			&cli.BoolFlag{Name: "log-requests", Usage: "log one line per HTTP request on standard error"},
			&cli.StringFlag{Name: "vault", Usage: "vault folder"},
			&cli.BoolFlag{Name: "json", Usage: "report a start-up error as JSON on standard error (the logs stay text)"},
		},
		OnUsageError: usageError,
		Action:       serveAction,
	})

	extraCommands = append(extraCommands, &cli.Command{
		Name:         "openapi",
		Usage:        "Print the OpenAPI 3.1 description of the REST routes",
		UsageText:    "synapse openapi",
		Description:  "Prints the same document that `synapse serve --http` serves at /openapi.json.",
		Flags:        []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "accepted for symmetry; the output is always JSON"}},
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return errs.E(errs.Invalid, "unexpected argument %q (usage: synapse openapi)", c.Args().First())
			}
			doc, err := server.OpenAPIJSON(ops.Table(), version)
			if err != nil {
				return err
			}
			_, err = c.App.Writer.Write(doc)
			return err
		},
	})
}

func serveAction(c *cli.Context) error {
	cfg := server.Config{
		Stdio: c.Bool("mcp-stdio"), HTTP: c.Bool("http"), Write: c.Bool("write"),
		Addr: c.String("addr"), AllowHosts: c.StringSlice("allow-host"), LogRequests: c.Bool("log-requests"),
		Version: version,
	}
	if c.NArg() > 0 {
		return errs.E(errs.Invalid, "unexpected argument %q (usage: %s)", c.Args().First(), c.Command.UsageText)
	}
	if !cfg.Stdio && !cfg.HTTP {
		return errs.E(errs.Invalid, "choose a transport: --mcp-stdio, --http or both (usage: %s)", c.Command.UsageText)
	}
	if !cfg.HTTP {
		for _, f := range []string{"addr", "allow-host", "log-requests"} {
			if c.IsSet(f) {
				return errs.E(errs.Invalid, "--%s needs --http", f)
			}
		}
	}
	if cfg.HTTP {
		if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
			return errs.E(errs.Invalid, "--addr %q: want host:port, e.g. %s", cfg.Addr, server.DefaultAddr)
		}
	}
	logger := log.New(c.App.ErrWriter, "synapse: ", 0)
	if cfg.Write && !cfg.HTTP {
		logger.Printf("note: --write only concerns --http; stdio always serves the write tools")
	}
	v, err := findVault(globalsOf(c))
	if err != nil {
		return err
	}
	configNote(v, c.App.ErrWriter, "synapse: ")
	var tok string
	if cfg.HTTP {
		// resolve the token before taking the store, so a bad token file
		// fails fast without touching anything
		if tok, err = server.LoadToken(v, logger); err != nil {
			return err
		}
	}
	svc := server.New(ops.Table(), v, cfg, logger)
	defer svc.Close()
	return svc.Run(c.Context, tok, c.App.Reader, c.App.Writer)
}
