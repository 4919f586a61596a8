// Package monitor is synapse's on-demand file monitor: a small process,
// started by the first CLI verb that needs it and gone after ten idle
// minutes, that watches a vault's files and answers one question on a
// socket in .synapse/: "which files changed since token T?" (git's
// fsmonitor daemon and watchman answer the same one).
//
// The monitor never holds the store: bbolt lets one process write it,
// and the verbs that ask keep doing their own indexing, as before. Only
// the answer changes: the paths the monitor saw change, instead of a stat
// of every tracked file. A verb that gets no answer (no monitor yet, one
// that cannot run here, a timeout) falls back to the stat check, and the
// monitor is started for the next verb.
//
// A CLI may also hand the monitor a read-only verb (AskOp): the monitor
// passes it to Options.Serve after its flush, and the synapse binary's
// handler opens the store read-only for that request alone and runs the
// verb when nothing changed that is not indexed, else declines (the CLI
// then runs it itself).
//
// No answer is stale: before answering, the monitor creates a cookie file
// in .synapse/ and waits for its event. The kernel queues the events of
// all its watches in one queue, in order, so every change finished before
// the question — an edit saved 10 ms before a search — has been recorded
// when the cookie's event is read (watchman's cookies).
//
// The design note is docs/search.md ("Freshness").
//
// Files in .synapse/: monitor.sock (the socket, 0600, only the owner's
// connections are served), monitor.lock (held while a monitor runs: one
// per vault), monitor.off (why the last monitor could not run, which
// keeps the CLI from starting another for an hour) and the short-lived
// cookies.
package monitor
