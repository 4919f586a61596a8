package main

import "github.com/synapse-wiki/synapse/internal/render"

// searchRenderers print search's hits: on a terminal a numbered list with
// the snippets and the matched words marked, in a pipe one line a hit.
var searchRenderers = []render.Binding{render.Of(render.Search)}
