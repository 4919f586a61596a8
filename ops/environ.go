package ops

import "strings"

// envPrefix marks the variables synapse reads itself (SYNAPSE_EMBED_URL,
// SYNAPSE_RESEARCH_CMD…).
const envPrefix = "SYNAPSE_"

// notForwarded are variables of synapse's own that no operation reads
// from its caller: the server's HTTP token is its own.
var notForwarded = map[string]bool{"SYNAPSE_TOKEN": true}

// ForwardEnviron is the part of a caller's environment (KEY=value
// entries) that an operation handed to a running server needs, for
// WithEnviron: synapse's own settings (SYNAPSE_*, but not the token) and
// the variable holding the embeddings API key (keyVar, the name the
// caller's configuration gives; $SYNAPSE_EMBED_API_KEY_ENV wins). An
// operation that runs a program the user configured (OpenWorld: the
// research command) gets the whole environment, as it would without a
// server. Nothing else leaves the caller.
func ForwardEnviron(op *Op, environ []string, keyVar string) []string {
	if op.OpenWorld {
		return environ
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == EnvEmbedAPIKeyEnv && v != "" {
			keyVar = v
		}
	}
	out := []string{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if (strings.HasPrefix(k, envPrefix) && !notForwarded[k]) || (keyVar != "" && k == keyVar) {
			out = append(out, kv)
		}
	}
	return out
}
