package main

import "github.com/synapse-wiki/synapse/internal/render"

// lintRenderers print lint's counts by category, then a section for each
// category with findings listed.
var lintRenderers = []render.Binding{render.Of(render.Lint)}
