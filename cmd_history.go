package main

import "github.com/synapse-wiki/synapse/internal/render"

// historyRenderers print a page's revisions, a diff between two of them,
// a restore, and the vault's recent activity.
var historyRenderers = []render.Binding{
	render.Of(render.PageHistory), render.Of(render.PageDiff), render.Of(render.PageRestore), render.Of(render.Recent),
}
