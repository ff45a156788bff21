package scimsvc

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/visid/visid/store"
)

const listResponseURN = "urn:ietf:params:scim:api:messages:2.0:ListResponse"

// list is GET on a resource type: filter, startIndex (1-based; below 1 means 1), count (default
// and cap MaxResults; 0 returns only totalResults) and projection.
func (k *resources[T, P]) list(w http.ResponseWriter, r *http.Request) {
	if k.h.lists != nil {
		key := requestKeyID(r.Context())
		if !k.h.lists.acquire(key) {
			k.h.tel.count(r.Context(), k.h.tel.rateLimited, attrLimit, limitLists, r.PathValue("tenant"))
			w.Header().Set("Retry-After", "1")
			k.h.writeError(w, r, &Error{Status: http.StatusTooManyRequests,
				Detail: "too many list requests of this API key are in progress; retry later"})
			return
		}
		defer k.h.lists.release(key)
	}
	q := r.URL.Query()
	query, err := k.query(q)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	query.WithoutMembers = k.getWithoutMembers != nil && !wantsMembers(q)
	tenant := r.PathValue("tenant")
	page, err := k.store.List(r.Context(), tenant, query)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	p := parseProjection(q, k.rt)
	e := encoder{buf: make([]byte, 0, 256+len(page.Resources)*512)}
	e.buf = append(e.buf, `{"schemas":["`+listResponseURN+`"],"totalResults":`...)
	e.buf = strconv.AppendInt(e.buf, int64(page.TotalResults), 10)
	e.buf = append(e.buf, `,"startIndex":`...)
	e.buf = strconv.AppendInt(e.buf, int64(query.StartIndex), 10)
	e.buf = append(e.buf, `,"itemsPerPage":`...)
	e.buf = strconv.AppendInt(e.buf, int64(len(page.Resources)), 10)
	e.buf = append(e.buf, `,"Resources":[`...)
	for i := range page.Resources {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		k.write(&e, tenant, &page.Resources[i], &p)
	}
	e.buf = append(e.buf, "]}"...)
	writeJSON(w, http.StatusOK, e.buf)
}

// query reads filter, startIndex and count.
func (k *resources[T, P]) query(q url.Values) (store.Query, error) {
	query := store.Query{StartIndex: 1, Count: MaxResults}
	if s := q.Get("filter"); strings.TrimSpace(s) != "" {
		f, err := k.h.cfg.FilterLimits.Parse(s, k.rt)
		if err != nil {
			return query, err
		}
		query.Filter = f
	}
	if s := q.Get("startIndex"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return query, badRequest(typeInvalidValue, "startIndex must be an integer")
		}
		query.StartIndex = max(n, 1)
	}
	if s := q.Get("count"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return query, badRequest(typeInvalidValue, "count must be an integer")
		}
		query.Count = min(max(n, 0), MaxResults)
	}
	return query, nil
}

// slots counts the requests in progress per API key, up to a limit. A key's count is forgotten
// when it falls to zero, so memory grows only with the keys that have requests in progress.
type slots struct {
	mu    sync.Mutex
	limit int
	used  map[string]int
}

func newSlots(limit int) *slots { return &slots{limit: limit, used: map[string]int{}} }

// acquire takes one of key's slots, or reports false when all are taken.
func (s *slots) acquire(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used[key] >= s.limit {
		return false
	}
	s.used[key]++
	return true
}

// release gives back a slot acquire took.
func (s *slots) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used[key] <= 1 {
		delete(s.used, key)
		return
	}
	s.used[key]--
}
