package main

import (
	"github.com/synapse-wiki/synapse/internal/render"
	"github.com/synapse-wiki/synapse/ops"
)

// renderers print the results of the CLI's verbs, by result type: the
// file of each verb group binds its verbs' results to their renderers in
// internal/render (a test fails naming the row of a verb without one;
// without one a result is printed as indented JSON).
var renderers = render.ByResult(searchRenderers, pageRenderers, historyRenderers, graphRenderers,
	sourceRenderers, reviewRenderers, lintRenderers, statusRenderers, embedRenderers)

// rendererFor is how the CLI prints op's result; nil: as indented JSON.
func rendererFor(op *ops.Op) render.Func { return renderers[op.Out] }

// printResult prints a verb's result: as JSON (the same bytes as MCP and
// REST), else with its renderer, else as indented JSON.
func printResult(o *render.Output, op *ops.Op, out any, asJSON bool) error {
	if asJSON {
		return o.JSON(out)
	}
	if r := rendererFor(op); r != nil {
		return r(o, out)
	}
	return o.IndentedJSON(out)
}
