package main

import "github.com/synapse-wiki/synapse/internal/render"

// statusRenderers print status as aligned key: value lines, and what a
// reindex rebuilt.
var statusRenderers = []render.Binding{render.Of(render.Status), render.Of(render.Reindex)}
