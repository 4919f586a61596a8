package desk

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/synapse-wiki/synapse/ops"
)

// target is an item a decision acts on; item and show are known for the
// item under the cursor (nil for the others of a selection).
type target struct {
	id   string
	item *ops.ReviewItem
	show *ops.ShowReviewOut
}

// decidedMsg reports decisions made.
type decidedMsg struct {
	done []string // ids decided now
	text string
	err  error
}

// actionOf is the review action a key asks for, or "".
func actionOf(k keyMap, msg tea.KeyMsg) string {
	switch {
	case key.Matches(msg, k.Create):
		return ops.ActionCreate
	case key.Matches(msg, k.Resolve):
		return ops.ActionResolve
	case key.Matches(msg, k.Skip):
		return ops.ActionSkip
	case key.Matches(msg, k.Dismiss):
		return ops.ActionDismiss
	case key.Matches(msg, k.Deep):
		return ops.ActionDeepResearch
	}
	return ""
}

// pastTense names what an action did.
var pastTense = map[string]string{ops.ActionCreate: "created", ops.ActionResolve: "resolved",
	ops.ActionSkip: "skipped", ops.ActionDismiss: "dismissed", ops.ActionDeepResearch: "deep-researched"}

// decideKey asks to decide the targets with the action of the key: a
// final decision is put to the person (y/n) before it is made.
func (m *Model) decideKey(msg tea.KeyMsg, ts []target) tea.Cmd {
	act := actionOf(m.keys, msg)
	if act == "" {
		return nil
	}
	if len(ts) == 0 {
		m.setStatus("no item here to decide", nil)
		return nil
	}
	if len(ts) == 1 && ts[0].show != nil && !slices.Contains(ts[0].show.Actions, act) {
		m.setStatus(notApplicable(act, ts[0].show), nil)
		return nil
	}
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.id
	}
	m.ask(prompt(act, ts), m.decide(act, ids))
	return nil
}

// notApplicable says why an item does not take an action.
func notApplicable(act string, s *ops.ShowReviewOut) string {
	switch {
	case s.Item.Status != ops.StatusPending:
		return fmt.Sprintf("%s is already %s: a decided item is never changed", s.Item.ID, s.Item.Status)
	case act == ops.ActionDeepResearch:
		return "deep-research needs a research command: set " + ops.ResearchCmdEnv + " and start the desk again"
	case act == ops.ActionCreate && s.Stub == nil && s.Item.Type == ops.TypeMissingPage:
		return "a page with this name exists now: resolve (r) the item instead"
	case act == ops.ActionCreate:
		return "c writes pages for missing pages and page proposals; use r, s or d here"
	}
	return act + " does not apply to " + s.Item.ID
}

// prompt is the question before a decision.
func prompt(act string, ts []target) string {
	verb := strings.ToUpper(act[:1]) + act[1:]
	if len(ts) > 1 {
		return fmt.Sprintf("%s %d selected items? This is final.", verb, len(ts))
	}
	t := ts[0]
	what := t.id
	if t.item != nil {
		what += fmt.Sprintf(" %q", ellipsis(t.item.Title, 40))
	}
	if act == ops.ActionCreate && t.show != nil && t.show.Stub != nil {
		if t.show.Stub.Append {
			return fmt.Sprintf("Append %s to %s? This is final.", what, t.show.Stub.Path)
		}
		return fmt.Sprintf("Create %s for %s? This is final.", t.show.Stub.Path, what)
	}
	return fmt.Sprintf("%s %s? This is final.", verb, what)
}

func ellipsis(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// decide runs the decision through the operations a CLI verb runs:
// bulk-resolve for several items and a status-only action (200 ids a
// request), resolve one by one otherwise.
func (m *Model) decide(act string, ids []string) tea.Cmd {
	ctx, caller := m.ctx, m.o.Caller
	return func() tea.Msg {
		bulk := len(ids) > 1 && act != ops.ActionCreate && act != ops.ActionDeepResearch
		if bulk {
			return bulkDecide(ctx, caller, act, ids)
		}
		var done, notes []string
		var firstErr error
		for _, id := range ids {
			// the desk is a person's: its decisions say so (decided_by)
			out, err := call[ops.ResolveReviewOut](ctx, caller, "review.resolve", map[string]string{"id": id, "action": act, "decided_by": ops.OriginUser})
			if err != nil {
				firstErr = cmpErr(firstErr, fmt.Errorf("%s: %w", id, err))
				continue
			}
			done = append(done, id)
			if len(out.Pages) > 0 {
				notes = append(notes, out.Pages[0].Path)
			}
		}
		text := fmt.Sprintf("%s %s", pastTense[act], countOrID(done))
		if len(notes) > 0 {
			text += " → " + strings.Join(notes, ", ")
		}
		if len(done) == 0 {
			text = ""
		}
		return decidedMsg{done: done, text: text, err: firstErr}
	}
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// countOrID names decided items: the id of one, the number of several.
func countOrID(ids []string) string {
	if len(ids) == 1 {
		return ids[0]
	}
	return fmt.Sprintf("%d items", len(ids))
}

func bulkDecide(ctx context.Context, caller Caller, act string, ids []string) decidedMsg {
	var done []string
	var already []string
	var missing int
	for start := 0; start < len(ids); start += ops.MaxBulkIDs {
		part := ids[start:min(start+ops.MaxBulkIDs, len(ids))]
		out, err := call[ops.BulkResolveOut](ctx, caller, "review.bulk_resolve", map[string]any{"ids": part, "action": act, "decided_by": ops.OriginUser})
		if err != nil {
			return decidedMsg{done: done, err: err, text: fmt.Sprintf("%s %d of %d", pastTense[act], len(done), len(ids))}
		}
		done = append(done, out.Resolved...)
		for _, t := range out.AlreadyTerminal {
			already = append(already, t.ID+" "+t.Status)
		}
		missing += len(out.NotFound)
	}
	text := fmt.Sprintf("%s %s", pastTense[act], countOrID(done))
	if len(already) > 0 {
		text += fmt.Sprintf("; already decided: %s", strings.Join(already, ", "))
	}
	if missing > 0 {
		text += fmt.Sprintf("; %d not found", missing)
	}
	return decidedMsg{done: done, text: text}
}

// onDecided reports a decision and reads the queue again.
func (m *Model) onDecided(msg decidedMsg) tea.Cmd {
	m.setStatus(msg.text, msg.err)
	for _, id := range msg.done {
		delete(m.q.sel, id)
		delete(m.q.shows, id)
		delete(m.q.showGen, id)
	}
	m.q.selOrder = slices.DeleteFunc(m.q.selOrder, func(id string) bool { return !m.q.sel[id] })
	if m.view == viewItem && slices.Contains(msg.done, m.item.id) {
		m.view = viewQueue
	}
	return m.q.refresh(m)
}
