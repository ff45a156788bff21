package main

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testExtURN = "urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User"

// TestSCIMExtensionFlag starts the program with -scim-extension and provisions a user with the
// extension through its SCIM API; a bad file stops the start with an error naming the attribute
// at fault.
func TestSCIMExtensionFlag(t *testing.T) {
	bin := buildIDP(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "ext.json")
	require.NoError(t, os.WriteFile(good, []byte(`[{"resourceType": "User", "required": false, "schema": {
		"id": "`+testExtURN+`", "name": "CustomExtension", "description": "ours",
		"attributes": [{"name": "costCode", "type": "string", "multiValued": false, "required": false,
			"caseExact": false, "mutability": "readWrite", "returned": "default", "uniqueness": "none"},
			{"name": "tags", "type": "string", "multiValued": true},
			{"name": "badge", "type": "integer", "uniqueness": "server"},
			{"name": "desks", "type": "complex", "multiValued": true, "subAttributes": [
				{"name": "building", "type": "string"}, {"name": "type", "type": "string", "canonicalValues": ["work", "home"]}]}]}}]`), 0o600))
	p := startProcess(t, bin, dir, nil, "-addr", "127.0.0.1:0", "-db", "sqlite:"+filepath.Join(dir, "idp.db"), "-scim-extension", good)
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, p.vars["scim_base_url"]+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+p.vars["scim_api_key"])
		req.Header.Set("Content-Type", "application/scim+json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	status, body := do("POST", "/Users", `{"userName": "bea@example.com", "`+testExtURN+`": {"costCode": "CC-1", "tags": ["a", "b"], "badge": 7, "desks": [{"building": "N", "type": "work"}]}}`)
	require.Equal(t, http.StatusCreated, status, body)
	assert.Contains(t, body, `"`+testExtURN+`":{"costCode":"CC-1","tags":["a","b"],"badge":7,"desks":[{"building":"N","type":"work"}]}`)
	status, body = do("GET", "/Users?filter="+url.QueryEscape(testExtURN+`:costCode eq "cc-1" and `+testExtURN+`:tags eq "b" and `+testExtURN+`:desks[type eq "work"].building eq "n"`), "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"totalResults":1`)
	status, body = do("POST", "/Users", `{"userName": "cy@example.com", "`+testExtURN+`": {"badge": 7}}`)
	assert.Equal(t, http.StatusConflict, status, body)
	assert.Contains(t, body, `"scimType":"uniqueness"`)
	status, body = do("GET", "/Schemas/"+testExtURN, "")
	assert.Equal(t, http.StatusOK, status, body)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`[{"resourceType": "User", "schema": {"id": "urn:example:Bad",
		"attributes": [{"name": "site", "type": "complex", "subAttributes": [{"name": "floor", "type": "number"}]}]}}]`), 0o600))
	cmd := exec.CommandContext(t.Context(), bin, "-addr", "127.0.0.1:0", "-admin-addr", "", "-db", "sqlite:"+filepath.Join(dir, "other.db"), "-scim-extension", bad)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), `bad.json: entry 1: schema: attribute "urn:example:Bad:site.floor": unknown type "number"`)
}
