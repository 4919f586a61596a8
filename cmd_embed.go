package main

import (
	"time"

	"github.com/synapse-wiki/synapse/embed"
	"github.com/synapse-wiki/synapse/embed/openai"
	"github.com/synapse-wiki/synapse/internal/render"
	"github.com/synapse-wiki/synapse/ops"
)

func init() {
	ops.NewEmbedProvider = func(url, model, apiKey string, timeout time.Duration) embed.Provider {
		return openai.New(url, model, apiKey, timeout)
	}
}

// embedRenderers print what an embed run sent and stored.
var embedRenderers = []render.Binding{render.Of(render.Embed)}
