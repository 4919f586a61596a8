package desk

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// lockedBuffer is a terminal's output, written by the program's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// panicStamp panics on its second call, inside the desk's event loop.
func panicStamp() func() string {
	n := 0
	return func() string {
		if n++; n > 1 {
			panic("boom")
		}
		return "a"
	}
}

// The desk leaves the alternate screen and shows the cursor again however
// it ends: q, a panic, a cancelled context (SIGINT).
func TestRun_RestoresTerminal(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name    string
		stamp   func() string
		input   string
		cancel  bool
		wantErr bool
	}{
		{name: "quit", input: "q"},
		{name: "panic", stamp: panicStamp(), wantErr: true},
		{name: "signal", cancel: true, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				time.AfterFunc(200*time.Millisecond, cancel)
			}
			out := &lockedBuffer{}
			in := strings.NewReader(c.input)
			if c.input == "" {
				in = nil
			}
			o := Options{Caller: f.c, Output: out, Plain: true, Stamp: c.stamp, Poll: 10 * time.Millisecond}
			if in != nil {
				o.Input = in
			} else {
				o.Input = blockingReader{ctx}
			}
			err := Run(ctx, o)
			if (err != nil) != c.wantErr {
				t.Fatalf("Run: %v", err)
			}
			s := out.String()
			enter, leave := strings.Index(s, "\x1b[?1049h"), strings.LastIndex(s, "\x1b[?1049l")
			if enter < 0 || leave < enter || !strings.Contains(s[leave:], "\x1b[?25h") {
				t.Errorf("the terminal is not restored (alt screen at %d, left at %d): %q", enter, leave, s[max(0, len(s)-200):])
			}
		})
	}
}

// blockingReader is a terminal nobody types on.
type blockingReader struct{ ctx context.Context }

func (b blockingReader) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

type panicCaller struct{}

func (panicCaller) Call(context.Context, string, []byte) ([]byte, error) { panic("boom") }

// A panic in an operation is an error on the status line; the desk goes on.
func TestDesk_OperationPanics(t *testing.T) {
	s := &screen{}
	m := New(context.Background(), Options{Caller: panicCaller{}, Plain: true, Output: io.Discard})
	s.TestModel = teatest.NewTestModel(t, probe{m: m, s: s}, teatest.WithInitialTermSize(80, 24))
	waitFor(t, s, "internal error in review.list: boom")
	final(t, s)
}
