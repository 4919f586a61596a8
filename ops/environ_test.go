package ops

import (
	"slices"
	"testing"
)

// TestForwardEnviron: a verb handed to a server sends synapse's own
// settings and the API key variable it names, never the rest of the
// environment (cloud keys, tokens) nor the HTTP token; an operation that
// runs the user's research command sends it all.
func TestForwardEnviron(t *testing.T) {
	env := []string{"HOME=/home/u", "AWS_SECRET_ACCESS_KEY=aws", "GITHUB_TOKEN=gh", "SYNAPSE_EMBED_URL=http://x",
		"SYNAPSE_TOKEN=tok", "SYNAPSE_RESEARCH_CMD=r", "OPENAI_API_KEY=sk", "MY_KEY=k", "BROKEN"}
	cases := []struct {
		name, op, keyVar string
		extra            []string
		want             []string
	}{
		{"read", "search", "", nil, []string{"SYNAPSE_EMBED_URL=http://x", "SYNAPSE_RESEARCH_CMD=r"}},
		{"key from the config", "search", "OPENAI_API_KEY", nil, []string{"SYNAPSE_EMBED_URL=http://x", "SYNAPSE_RESEARCH_CMD=r", "OPENAI_API_KEY=sk"}},
		{"key from the environment wins", "embed", "OPENAI_API_KEY", []string{"SYNAPSE_EMBED_API_KEY_ENV=MY_KEY"},
			[]string{"SYNAPSE_EMBED_URL=http://x", "SYNAPSE_RESEARCH_CMD=r", "MY_KEY=k", "SYNAPSE_EMBED_API_KEY_ENV=MY_KEY"}},
		{"research command", "review.resolve", "", nil, env},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := append(slices.Clone(env), tc.extra...)
			got := ForwardEnviron(Lookup(tc.op), in, tc.keyVar)
			want := tc.want
			if tc.op == "review.resolve" {
				want = in
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %q\nwant %q", got, want)
			}
		})
	}
}
