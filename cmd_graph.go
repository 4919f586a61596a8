package main

import "github.com/synapse-wiki/synapse/internal/render"

// graphRenderers print the link graph's answers as tables: neighbours,
// backlinks, orphans and missing pages.
var graphRenderers = []render.Binding{
	render.Of(render.GraphNeighbors), render.Of(render.GraphBacklinks), render.Of(render.GraphOrphans), render.Of(render.GraphMissing),
}
