package main

import "github.com/synapse-wiki/synapse/internal/render"

// sourceRenderers print a source's text (as it is in the file, in a
// pipe), the sources by state, and a rescan's report.
var sourceRenderers = []render.Binding{
	render.Of(render.SourceRead), render.Of(render.SourceList), render.Of(render.SourceRescan),
}
