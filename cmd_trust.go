package main

import (
	"io"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/render"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

// `synapse trust` is the user's word that a vault's own config may use the
// settings that reach the network or name a secret (docs/security.md). It
// is a CLI verb only, never a tool or a route: an agent cannot trust a
// vault on the user's behalf.
func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "trust",
		Usage:     "Let this vault's .synapse/config.yaml use its network, program and secret settings",
		UsageText: "synapse trust [--show | --revoke] [--json] [--vault DIR]",
		Description: "A vault arrives from anywhere, so the settings of its .synapse/config.yaml that reach the\n" +
			"network, run a program or name a secret (embeddings.url, embeddings.api_key_env,\n" +
			"history.git) are ignored until you trust the file as it is: its sha256 is recorded\n" +
			"outside the vault, in\n" +
			"$XDG_CONFIG_HOME/synapse/ (~/.config/synapse/), and a changed file is untrusted again.\n" +
			"Settings in ~/.config/synapse/config.yaml and the environment are always yours.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "show", Usage: "say whether the config is trusted and what in it needs trust; change nothing"},
			&cli.BoolFlag{Name: "revoke", Usage: "forget this vault's trust"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.StringFlag{Name: "vault", Usage: "vault folder"},
		},
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return errs.E(errs.Invalid, "unexpected argument %q (usage: synapse trust [--show | --revoke]; --vault DIR names the vault)", c.Args().First())
			}
			if c.Bool("show") && c.Bool("revoke") {
				return errs.E(errs.Invalid, "--show and --revoke exclude each other")
			}
			v, err := findVault(globalsOf(c))
			if err != nil {
				return err
			}
			var st *vault.TrustState
			switch {
			case c.Bool("show"):
				st, err = v.TrustState()
			case c.Bool("revoke"):
				st, err = v.Revoke()
			default:
				st, err = v.Trust(time.Now())
			}
			if err != nil {
				return err
			}
			o := render.New(c.App.Writer, c.App.ErrWriter)
			if globalsOf(c).json {
				return o.JSON(st)
			}
			render.Trust(o, st)
			return nil
		},
	})
}

// configNote prints on w the one line that says which settings of the
// vault's config were ignored, untrusted (nothing when none was, or when
// the config cannot be read: the verb says so itself).
func configNote(v *vault.Vault, w io.Writer, prefix string) {
	if cfg, err := v.LoadConfig(); err == nil {
		if n := cfg.UntrustedNote(); n != "" {
			io.WriteString(w, prefix+n+"\n")
		}
	}
}
