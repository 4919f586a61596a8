package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// synapse authenticates HTTP clients with one static bearer token, not
// OAuth. An MCP client that gets a 401 (the MCP TypeScript SDK, and so the
// Inspector and mcp-remote) starts OAuth discovery: the protected-resource
// metadata of RFC 9728, then the authorization server's metadata, then
// dynamic client registration at /register, then a login in a browser.
// MCP makes authorization optional and synapse implements none of it, so
// these answers end that discovery with the real reason instead:
//
//   - 401 says which (missing or wrong token) in its JSON body and in
//     WWW-Authenticate (error, error_description), and names the metadata
//     document (resource_metadata), which a client fetches without a
//     token;
//   - the metadata names the resource and the header as the way to send
//     the token, and no authorization server;
//   - /register (where a client that finds no authorization server
//     registers) answers an OAuth error whose description says to send the
//     token, which the client reports;
//   - every other /.well-known/ document is 404, without a token.
//
// docs/security.md tells the model.

// metadataPath is where the protected-resource metadata of the MCP
// endpoint is; the one of the whole server (REST) is at its root form.
const metadataPath = "/.well-known/oauth-protected-resource"

// tokenHint says where the token is.
var tokenHint = fmt.Sprintf("the token is in $%s or the vault's %s", TokenEnv, vault.TokenFile)

// noOAuth is the description of every discovery answer.
var noOAuth = "synapse uses a static bearer token, not OAuth: send 'Authorization: Bearer <token>'; " + tokenHint

// origin is the base URL the client used (Host was checked by hostGuard).
func origin(r *http.Request) string { return "http://" + r.Host }

// challenge is the WWW-Authenticate header of a 401.
func challenge(r *http.Request, wrong bool) string {
	meta := origin(r) + metadataPath
	if r.URL.Path == "/mcp" {
		meta += "/mcp"
	}
	if wrong {
		return fmt.Sprintf(`Bearer realm="synapse", error="invalid_token", error_description="wrong bearer token; %s", resource_metadata="%s"`, tokenHint, meta)
	}
	return fmt.Sprintf(`Bearer realm="synapse", error_description="no bearer token; %s", resource_metadata="%s"`, tokenHint, meta)
}

// discovery answers the OAuth discovery requests a client makes without
// a token; ok is false for every other request.
func discovery(w http.ResponseWriter, r *http.Request) (ok bool) {
	p := r.URL.Path
	switch {
	case p == metadataPath || p == metadataPath+"/" || p == metadataPath+"/mcp":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, r.Method, p, []string{"GET"})
			return true
		}
		resource := origin(r) + strings.TrimPrefix(strings.TrimSuffix(p, "/"), metadataPath)
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, map[string]any{
			"resource":                 resource,
			"resource_name":            "synapse (" + noOAuth + ")",
			"bearer_methods_supported": []string{"header"},
		})
		return true
	case p == "/register":
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": noOAuth})
		return true
	case strings.HasPrefix(p, "/.well-known/"):
		writeError(w, http.StatusNotFound, errs.E(errs.NotFound, "%s: no such document; %s", p, noOAuth))
		return true
	}
	return false
}
