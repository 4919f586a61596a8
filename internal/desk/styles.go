package desk

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles are every style the desk draws with, built from one renderer
// bound to the desk's output, so that NO_COLOR (or a test) gets plain
// text with the same layout.
type Styles struct {
	Plain    bool // no colour: markers carry what colour would
	Title    lipgloss.Style
	Tab      lipgloss.Style
	TabOn    lipgloss.Style
	Cursor   lipgloss.Style
	Selected lipgloss.Style
	Dim      lipgloss.Style
	Heading  lipgloss.Style
	Key      lipgloss.Style
	Error    lipgloss.Style
	OK       lipgloss.Style
	Prompt   lipgloss.Style
	Added    lipgloss.Style
	Removed  lipgloss.Style
	Border   lipgloss.Style
	// page text
	Code   lipgloss.Style
	Link   lipgloss.Style
	Strong lipgloss.Style
	Em     lipgloss.Style
}

// NewStyles builds the styles for w; plain turns colour off (NO_COLOR).
func NewStyles(w io.Writer, plain bool) Styles {
	r := lipgloss.NewRenderer(w)
	if plain {
		r.SetColorProfile(termenv.Ascii)
	}
	s := Styles{Plain: plain}
	s.Title = r.NewStyle().Bold(true)
	s.Tab = r.NewStyle().Padding(0, 1)
	s.TabOn = r.NewStyle().Padding(0, 1).Bold(true).Reverse(true)
	s.Cursor = r.NewStyle().Reverse(true)
	s.Selected = r.NewStyle().Foreground(lipgloss.Color("5")).Bold(true)
	s.Dim = r.NewStyle().Foreground(lipgloss.Color("8"))
	s.Heading = r.NewStyle().Bold(true).Underline(true)
	s.Key = r.NewStyle().Bold(true)
	s.Error = r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
	s.OK = r.NewStyle().Foreground(lipgloss.Color("2"))
	s.Prompt = r.NewStyle().Foreground(lipgloss.Color("3")).Bold(true)
	s.Added = r.NewStyle().Foreground(lipgloss.Color("2"))
	s.Removed = r.NewStyle().Foreground(lipgloss.Color("1"))
	s.Border = r.NewStyle().Foreground(lipgloss.Color("8"))
	s.Code = r.NewStyle().Foreground(lipgloss.Color("6"))
	s.Link = r.NewStyle().Foreground(lipgloss.Color("4")).Bold(true)
	s.Strong = r.NewStyle().Bold(true)
	s.Em = r.NewStyle().Italic(true)
	if plain {
		// reverse video is no colour: the cursor stays visible
		s.Selected = r.NewStyle()
		s.Dim = r.NewStyle()
	}
	return s
}
