package main

import "github.com/synapse-wiki/synapse/internal/render"

// reviewRenderers print the review queue's verbs: the list as a table, an
// item with its context, decisions, and the journal's export, import and
// compaction.
var reviewRenderers = []render.Binding{
	render.Of(render.ReviewList), render.Of(render.ReviewResolve), render.Of(render.ReviewBulkResolve),
	render.Of(render.ReviewAdd), render.Of(render.ReviewShow),
	render.Of(render.ReviewExport), render.Of(render.ReviewImport), render.Of(render.ReviewCompact),
}
