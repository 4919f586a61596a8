package main

import "github.com/synapse-wiki/synapse/internal/render"

// pageRenderers print the results of the page verbs and context: a page
// as a file in a pipe (page write takes it back unchanged), styled on a
// terminal; the list as a table.
var pageRenderers = []render.Binding{
	render.Of(render.PageGet), render.Of(render.PageList), render.Of(render.PageWrite),
	render.Of(render.PageMove), render.Of(render.Context),
}
