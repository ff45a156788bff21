package scimsvc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/visid/visid/internal/scimbench"
	"github.com/visid/visid/store"
)

// baselineUsers is how many users each server holds before BenchmarkVsHandWritten runs.
const baselineUsers = 10_000

// BenchmarkVsHandWritten runs the four operations of SCIM provisioning — GET /Users/{id},
// GET /Users?filter=userName eq "…", PATCH replacing active, POST /Users — against visid's
// handler (scimsvc over memstore, mounted with http.StripPrefix as docs/scim.md shows) and against
// a hand-written net/http server over a map with a userName index and encoding/json, which does
// no SCIM validation. Both hold 10,000 users and are served over loopback HTTP with keep-alive
// in the same run. The figures to quote are, per operation, bare's time per op divided by
// visid's. cpu-ns/op is the CPU time the process (server and client) spent per request, which
// other load on the machine changes less than the time per op. Run it a few times rather than
// with -count, which runs each sub-benchmark's rounds back to back, so that the two servers take
// turns:
//
//	for i in 1 2 3 4 5 6; do go test ./scimsvc -run '^$' -bench VsHandWritten; done > out.txt
//	benchstat -col /impl out.txt
func BenchmarkVsHandWritten(b *testing.B) {
	h, mem, key := benchEnv(b)
	ctx := context.Background()
	ids := make([]string, baselineUsers)
	bare := newHandWritten()
	for i := range baselineUsers {
		u, err := mem.Users().Create(ctx, "acme", benchUser(i))
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = u.ID
		bare.add(benchUser(i), u.ID)
	}
	mux := http.NewServeMux()
	mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", h))
	var created atomic.Int64
	created.Store(baselineUsers)
	ops := scimbench.Ops(&created)
	for _, op := range ops {
		for _, c := range []struct {
			name string
			h    http.Handler
			base string
		}{{"visid", mux, "/scim/v2/acme"}, {"bare", bare, "/acme"}} {
			b.Run("op="+op.Name+"/impl="+c.name, func(b *testing.B) {
				srv := httptest.NewServer(c.h)
				defer srv.Close()
				client := srv.Client()
				client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
				var next atomic.Int64
				b.ReportAllocs()
				b.ResetTimer()
				cpu := scimbench.ProcessCPU()
				defer func() { b.ReportMetric(float64(scimbench.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op") }()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						p, body := op.Req(ids, int(next.Add(1)))
						var rd io.Reader
						if body != "" {
							rd = strings.NewReader(body)
						}
						req, _ := http.NewRequest(op.Method, srv.URL+c.base+p, rd)
						req.Header.Set("Authorization", "Bearer "+key)
						if body != "" {
							req.Header.Set("Content-Type", "application/scim+json")
						}
						resp, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != op.Status {
							b.Errorf("%s %s: status %d", op.Method, p, resp.StatusCode)
							return
						}
					}
				})
			})
		}
	}
}

// handWritten is the floor BenchmarkVsHandWritten compares with: users in a map by id with a
// userName index, read and written with encoding/json, no validation beyond decoding.
type handWritten struct {
	mu     sync.RWMutex
	byID   map[string]*hwUser
	byName map[string]string
	n      int
}

type hwName struct {
	Formatted  string `json:"formatted,omitempty"`
	FamilyName string `json:"familyName,omitempty"`
	GivenName  string `json:"givenName,omitempty"`
}

type hwEmail struct {
	Value   string `json:"value"`
	Type    string `json:"type,omitempty"`
	Primary bool   `json:"primary,omitempty"`
}

type hwEnterprise struct {
	EmployeeNumber string `json:"employeeNumber,omitempty"`
	Department     string `json:"department,omitempty"`
}

type hwMeta struct {
	ResourceType string    `json:"resourceType"`
	Created      time.Time `json:"created"`
	LastModified time.Time `json:"lastModified"`
	Location     string    `json:"location"`
}

type hwUser struct {
	Schemas     []string      `json:"schemas"`
	ID          string        `json:"id"`
	ExternalID  string        `json:"externalId,omitempty"`
	UserName    string        `json:"userName"`
	Name        *hwName       `json:"name,omitempty"`
	DisplayName string        `json:"displayName,omitempty"`
	Active      bool          `json:"active"`
	Emails      []hwEmail     `json:"emails,omitempty"`
	Enterprise  *hwEnterprise `json:"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User,omitempty"`
	Meta        hwMeta        `json:"meta"`
}

func newHandWritten() *handWritten {
	return &handWritten{byID: map[string]*hwUser{}, byName: map[string]string{}}
}

// add stores u under id.
func (s *handWritten) add(u store.User, id string) {
	hu := &hwUser{
		Schemas: []string{"urn:ietf:params:scim:schemas:core:2.0:User"},
		ID:      id, ExternalID: u.ExternalID, UserName: u.UserName, DisplayName: u.DisplayName, Active: u.Active,
		Name:       &hwName{u.Name.Formatted, u.Name.FamilyName, u.Name.GivenName},
		Enterprise: &hwEnterprise{u.Enterprise.EmployeeNumber, u.Enterprise.Department},
		Meta:       hwMeta{ResourceType: "User", Created: time.Now(), LastModified: time.Now(), Location: "https://id.example.com/scim/v2/acme/Users/" + id},
	}
	for _, e := range u.Emails {
		hu.Emails = append(hu.Emails, hwEmail{e.Value, e.Type, e.Primary})
	}
	s.byID[id] = hu
	s.byName[strings.ToLower(u.UserName)] = id
}

func (s *handWritten) write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/scim+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *handWritten) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/acme/Users")
	switch {
	case r.Method == "GET" && rest == "":
		var name string
		if _, err := fmt.Sscanf(r.URL.Query().Get("filter"), "userName eq %q", &name); err != nil {
			http.Error(w, "bad filter", http.StatusBadRequest)
			return
		}
		s.mu.RLock()
		var found []hwUser
		if id, ok := s.byName[strings.ToLower(name)]; ok {
			found = append(found, *s.byID[id])
		}
		s.mu.RUnlock()
		s.write(w, http.StatusOK, map[string]any{
			"schemas":      []string{"urn:ietf:params:scim:api:messages:2.0:ListResponse"},
			"totalResults": len(found), "itemsPerPage": len(found), "startIndex": 1, "Resources": found,
		})
	case r.Method == "GET":
		s.mu.RLock()
		u, ok := s.byID[rest[1:]]
		var c hwUser
		if ok {
			c = *u
		}
		s.mu.RUnlock()
		if !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		s.write(w, http.StatusOK, &c)
	case r.Method == "PATCH":
		var p struct {
			Operations []struct {
				Op    string          `json:"op"`
				Path  string          `json:"path"`
				Value json.RawMessage `json:"value"`
			} `json:"Operations"`
		}
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		u, ok := s.byID[rest[1:]]
		if !ok {
			s.mu.Unlock()
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		for _, op := range p.Operations {
			if op.Path == "active" {
				_ = json.Unmarshal(op.Value, &u.Active)
			}
		}
		u.Meta.LastModified = time.Now()
		c := *u
		s.mu.Unlock()
		s.write(w, http.StatusOK, &c)
	case r.Method == "POST":
		var u hwUser
		if err := json.NewDecoder(r.Body).Decode(&u); err != nil || u.UserName == "" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		if _, ok := s.byName[strings.ToLower(u.UserName)]; ok {
			s.mu.Unlock()
			http.Error(w, "conflict", http.StatusConflict)
			return
		}
		s.n++
		u.ID = "u" + strconv.Itoa(s.n)
		u.Meta = hwMeta{ResourceType: "User", Created: time.Now(), LastModified: time.Now(), Location: "https://id.example.com/scim/v2/acme/Users/" + u.ID}
		s.byID[u.ID] = &u
		s.byName[strings.ToLower(u.UserName)] = u.ID
		c := u
		s.mu.Unlock()
		s.write(w, http.StatusCreated, &c)
	default:
		http.Error(w, "not found", http.StatusNotFound)
	}
}
