package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/webhooks"
)

// hookReceiver keeps the bodies of the webhook requests whose signature holds.
type hookReceiver struct {
	mu     sync.Mutex
	secret string
	bodies []map[string]any
	bad    int
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := webhooks.Verify(h.secret, r.Header, body, time.Now()); err != nil {
		h.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m map[string]any
	if json.Unmarshal(body, &m) == nil {
		h.bodies = append(h.bodies, m)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) types() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.bodies {
		out = append(out, b["type"].(string))
	}
	return out
}

// runCmd runs an admin command and returns its key=value lines.
func runCmd(t *testing.T, args ...string) map[string]string {
	t.Helper()
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), args, &out, &errOut), "%v: %s", args, errOut.String())
	vars := map[string]string{}
	for line := range strings.Lines(out.String()) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			vars[k] = v
		}
	}
	return vars
}

// TestEventsAndWebhooks is the README's step: a user deactivated over SCIM is a
// user.deactivated event that "idp events" prints and a webhook endpoint receives, signed.
func TestEventsAndWebhooks(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	s := startService(t, "-db", db, "-webhook-allow-private-targets")
	rc := &hookReceiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)

	hook := runCmd(t, "webhook", "add", "--tenant", "demo", "--url", srv.URL+"/visid", "--allow-http-loopback", "--allow-private-targets", "-db", db)
	require.Regexp(t, `^webhook_`, hook["webhook_id"])
	require.NoError(t, webhooks.CheckSecret(hook["webhook_secret"]))
	assert.Equal(t, "all", hook["types"])
	rc.mu.Lock()
	rc.secret = hook["webhook_secret"]
	rc.mu.Unlock()

	base, key := s.vars["scim_base_url"], s.vars["scim_api_key"]
	resp, user := scimRequest(t, "POST", base+"/Users", key, `{"userName":"ann@example.com"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	id := user["id"].(string)
	resp, _ = scimRequest(t, "PATCH", base+"/Users/"+id, key,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"events", "--tenant", "demo", "-db", db}, &out, io.Discard))
	var printed []map[string]any
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "one JSON object a line: %q", line)
		printed = append(printed, m)
	}
	require.Len(t, printed, 2)
	assert.Equal(t, "user.created", printed[0]["type"])
	assert.Equal(t, "user.deactivated", printed[1]["type"])
	assert.Equal(t, map[string]any{"kind": "user", "id": id}, printed[1]["subject"])
	assert.Equal(t, false, printed[1]["data"].(map[string]any)["active"])
	assert.Regexp(t, `^key_`, printed[1]["actor"])

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"events", "--tenant", "demo", "--after", printed[0]["cursor"].(string), "-db", db}, &out, io.Discard))
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), "only the events after the cursor")

	require.Eventually(t, func() bool { return len(rc.types()) == 2 }, 10*time.Second, 50*time.Millisecond,
		"the service delivers the events to the endpoint")
	assert.Equal(t, []string{"user.created", "user.deactivated"}, rc.types())
	assert.Zero(t, rc.bad, "every request was signed with the endpoint's secret")

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"webhook", "list", "--tenant", "demo", "-db", db}, &out, io.Discard))
	assert.Contains(t, out.String(), "webhook_id="+hook["webhook_id"]+" url="+srv.URL+"/visid types=all status=delivering cursor="+printed[1]["cursor"].(string))

	// --follow prints what comes next, until interrupted.
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"events", "--tenant", "demo", "--follow", "--after", printed[1]["cursor"].(string), "-db", db}, pw, io.Discard)
		pw.Close()
	}()
	resp, _ = scimRequest(t, "DELETE", base+"/Users/"+id, key, "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, `"type":"user.deleted"`)
	cancel()
	go io.Copy(io.Discard, pr)
	require.NoError(t, <-done, "Ctrl-C ends --follow without an error")

	runCmd(t, "webhook", "delete", "--tenant", "demo", hook["webhook_id"], "-db", db)
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"webhook", "list", "--tenant", "demo", "-db", db}, &out, io.Discard))
	assert.Empty(t, out.String())
}

// TestAdminCommandsAreEvents: what the admin commands change in clients and API keys is
// recorded as the administrator's events.
func TestAdminCommandsAreEvents(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	c := runCmd(t, "client", "create", "--tenant", "acme", "--name", "App", "--redirect-uri", "https://app.example.com/cb", "-db", db)
	runCmd(t, "client", "rotate-secret", "--tenant", "acme", c["client_id"], "-db", db)
	runCmd(t, "client", "set-require-par", "--tenant", "acme", c["client_id"], "-db", db)
	runCmd(t, "client", "delete", "--tenant", "acme", c["client_id"], "-db", db)
	k := runCmd(t, "apikey", "create", "--tenant", "acme", "--name", "Okta", "-db", db)
	runCmd(t, "apikey", "revoke", k["api_key_id"], "-db", db)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"events", "--tenant", "acme", "-db", db}, &out, io.Discard))
	var types []string
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		assert.Equal(t, "admin", m["actor"])
		types = append(types, m["type"].(string)+" "+m["subject"].(map[string]any)["id"].(string))
	}
	id := c["client_id"]
	assert.Equal(t, []string{"client.created " + id, "client.secret_rotated " + id, "client.updated " + id, "client.deleted " + id,
		"apikey.created " + k["api_key_id"], "apikey.revoked " + k["api_key_id"]}, types)
	assert.NotContains(t, out.String(), c["client_secret"])
	assert.NotContains(t, out.String(), k["scim_api_key"])
}

func TestWebhookCommandErrors(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"webhook", "add", "--tenant", "acme"}, "needs --url"},
		{[]string{"webhook", "add", "--url", "https://h.example.com/"}, "needs --tenant"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "http://127.0.0.1:9/h"}, "uses http"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "https://127.0.0.1:9/h"}, "--allow-private-targets"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "http://127.0.0.1:9/h", "--allow-http-loopback"}, "--allow-private-targets"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "https://169.254.169.254/latest/meta-data/"}, "--allow-private-targets"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "https://[::ffff:127.0.0.1]:8443/"}, "--allow-private-targets"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "https://10.1.2.3/"}, "--allow-private-targets"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "https://localhost:8443/"}, "--allow-private-targets"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "http://hooks.example.com/h", "--allow-http-loopback"}, "must use https"},
		{[]string{"webhook", "add", "--tenant", "acme", "--url", "https://h.example.com/", "--types", "user.exploded"}, `"user.exploded" is not an event type`},
		{[]string{"webhook", "add", "--tenant", "nosuch", "--url", "https://h.example.com/"}, `there is no tenant "nosuch"`},
		{[]string{"webhook", "list", "--tenant", "nosuch"}, `there is no tenant "nosuch"`},
		{[]string{"webhook", "delete", "--tenant", "acme", "webhook_nosuch"}, `there is no webhook endpoint "webhook_nosuch"`},
		{[]string{"webhook", "resume", "--tenant", "acme", "client_1"}, "takes one webhook id"},
		{[]string{"events", "--tenant", "nosuch"}, `there is no tenant "nosuch"`},
		{[]string{"events", "--tenant", "acme", "--after", "nonsense"}, "is not an event cursor"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), append(tc.args, "-db", db), &out, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, out.String(), "nothing printed")
		})
	}
	vars := runCmd(t, "webhook", "add", "--tenant", "acme", "--url", "https://h.example.com/visid", "--types", "user.deleted, user.deactivated", "-db", db)
	assert.Equal(t, "user.deleted,user.deactivated", vars["types"])
}
