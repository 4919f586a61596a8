package desk

import "github.com/charmbracelet/bubbles/key"

// keyMap holds every key binding; the help screen is drawn from it.
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open, Select, SelectAll, Back, Filter   key.Binding
	Create, Resolve, Skip, Dismiss, Deep    key.Binding
	Queue, Activity, Page, NextView         key.Binding
	NextLink, PrevLink, Undo, Refresh       key.Binding
	Help, Quit                              key.Binding
}

func newKeyMap() keyMap {
	b := func(keys []string, k, help string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, help))
	}
	return keyMap{
		Up:        b([]string{"up", "k"}, "↑/k", "move up"),
		Down:      b([]string{"down", "j"}, "↓/j", "move down"),
		PageUp:    b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown:  b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Top:       b([]string{"home", "g"}, "g", "first"),
		Bottom:    b([]string{"end", "G"}, "G", "last"),
		Open:      b([]string{"enter"}, "enter", "open"),
		Select:    b([]string{" "}, "space", "select (bulk)"),
		SelectAll: b([]string{"a"}, "a", "select all on screen / none"),
		Back:      b([]string{"esc", "backspace"}, "esc", "back"),
		Filter:    b([]string{"/"}, "/", "filter"),
		Create:    b([]string{"c"}, "c", "create"),
		Resolve:   b([]string{"r"}, "r", "resolve"),
		Skip:      b([]string{"s"}, "s", "skip"),
		Dismiss:   b([]string{"d"}, "d", "dismiss"),
		Deep:      b([]string{"R"}, "R", "deep-research"),
		Queue:     b([]string{"1"}, "1", "queue"),
		Activity:  b([]string{"2"}, "2", "activity"),
		Page:      b([]string{"3"}, "3", "page"),
		NextView:  b([]string{"tab"}, "tab", "next link / view"),
		NextLink:  b([]string{"tab", "n"}, "tab/n", "next link"),
		PrevLink:  b([]string{"shift+tab", "N"}, "shift+tab/N", "previous link"),
		Undo:      b([]string{"u"}, "u", "restore previous revision"),
		Refresh:   b([]string{"ctrl+r"}, "ctrl+r", "refresh"),
		Help:      b([]string{"?"}, "?", "help"),
		Quit:      b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}
