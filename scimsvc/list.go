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

// list is GET on a resource type: its query parameters (listParamsOf) parsed by parseList and
// answered by serveList.
func (k *resources[T, P]) list(w http.ResponseWriter, r *http.Request) {
	release, ok := k.h.listSlot(w, r)
	if !ok {
		return
	}
	defer release()
	tenant := r.PathValue("tenant")
	p, err := listParamsOf(r.URL.Query())
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	req, err := k.parseList(tenant, p)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	k.serveList(w, r, tenant, req)
}

// listParams are the parameters of a list request (RFC 7644 §3.4.2, RFC 9865 §2), whether a
// GET's query string (listParamsOf) or a POST /.search body carries them. A nil pointer or
// slice is a parameter that is absent.
type listParams struct {
	Filter             string
	Attributes         []string // attribute paths; an element may hold several, comma-separated
	ExcludedAttributes []string
	SortBy, SortOrder  string
	StartIndex, Count  *int
	// Cursor asks for cursor paging: "" for the first page, then a nextCursor or
	// previousCursor the service returned.
	Cursor *string
}

// listParamsOf reads a GET's query string. startIndex and count must be integers (400
// invalidValue).
func listParamsOf(q url.Values) (listParams, error) {
	p := listParams{
		Filter:             q.Get("filter"),
		Attributes:         q["attributes"],
		ExcludedAttributes: q["excludedAttributes"],
		SortBy:             q.Get("sortBy"),
		SortOrder:          q.Get("sortOrder"),
	}
	for _, n := range []struct {
		name string
		dst  **int
	}{{"startIndex", &p.StartIndex}, {"count", &p.Count}} {
		s := q.Get(n.name)
		if s == "" {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return p, badRequest(typeInvalidValue, "%s must be an integer", n.name)
		}
		*n.dst = &v
	}
	if c, ok := q["cursor"]; ok {
		s := ""
		if len(c) > 0 {
			s = c[0]
		}
		p.Cursor = &s
	}
	return p, nil
}

// listRequest is a parsed list request: the store query, the projection of each resource, and
// for cursor paging the query's binding (see cursors).
type listRequest struct {
	query  store.Query
	proj   projection
	cursor bool
	bind   []byte
}

// parseList checks and resolves the parameters of a list request of tenant:
//
//   - filter: parsed for the resource type within FilterLimits (400 invalidFilter).
//   - sortBy, sortOrder (RFC 7644 §3.4.2.3): an attribute path of the resource type that
//     store.Sortable accepts, and "ascending" (the default) or "descending", in any case (400
//     invalidValue otherwise). sortOrder without sortBy is ignored.
//   - startIndex (1-based; below 1 means 1) and count (default and cap MaxResults; below 0
//     means 0, which returns only totalResults).
//   - cursor (RFC 9865): present, even empty, it selects cursor paging: "" is the first page,
//     a nextCursor or previousCursor given for the same tenant, filter and sort is the page
//     after or before its position (400 invalidCursor for any other, 400 expiredCursor once
//     older than the cursor timeout). It excludes startIndex (400 invalidValue).
//   - attributes, excludedAttributes: the projection of each resource (parseProjection).
func (k *resources[T, P]) parseList(tenant string, p listParams) (listRequest, error) {
	req := listRequest{query: store.Query{StartIndex: 1, Count: MaxResults}}
	if strings.TrimSpace(p.Filter) != "" {
		f, err := k.h.cfg.FilterLimits.Parse(p.Filter, k.rt)
		if err != nil {
			return req, err
		}
		req.query.Filter = f
	}
	if path := strings.TrimSpace(p.SortBy); path != "" {
		attr, sub, err := k.rt.Lookup(path)
		if err != nil {
			return req, badRequest(typeInvalidValue, "sortBy: %s", err.Error())
		}
		if !store.Sortable(attr, sub) {
			return req, badRequest(typeInvalidValue, "sortBy: %s cannot be sorted by; name a sub-attribute of a complex attribute", path)
		}
		req.query.Sort = store.Sort{Attr: attr, Sub: sub}
		switch order := strings.TrimSpace(p.SortOrder); {
		case order == "" || strings.EqualFold(order, "ascending"):
		case strings.EqualFold(order, "descending"):
			req.query.Sort.Descending = true
		default:
			return req, badRequest(typeInvalidValue, `sortOrder must be "ascending" or "descending"`)
		}
	}
	if p.StartIndex != nil {
		req.query.StartIndex = max(*p.StartIndex, 1)
	}
	if p.Count != nil {
		req.query.Count = min(max(*p.Count, 0), MaxResults)
	}
	if p.Cursor != nil {
		if p.StartIndex != nil {
			return req, badRequest(typeInvalidValue, "startIndex and cursor ask for different paging; send one of them")
		}
		req.cursor = true
		filterText := ""
		if req.query.Filter != nil {
			filterText = req.query.Filter.String()
		}
		req.bind = binding(tenant, k.rt.Name, filterText, req.query.Sort.Path(), req.query.Sort.Descending)
		if *p.Cursor != "" {
			at, previous, err := k.h.cursors.read(req.bind, *p.Cursor)
			if err != nil {
				return req, err
			}
			if previous {
				req.query.Before = at
			} else {
				req.query.After = at
			}
		}
	}
	req.proj = projectionOf(p.Attributes, p.ExcludedAttributes, k.rt)
	// A page whose projection leaves out members reads none (groups only).
	req.query.WithoutMembers = k.getWithoutMembers != nil && !req.proj.attr(membersAttr())
	return req, nil
}

// serveList runs req and writes the ListResponse: totalResults, itemsPerPage and Resources,
// with startIndex under index paging, and nextCursor (unless the page is the last) and
// previousCursor (unless it is the first) under cursor paging.
func (k *resources[T, P]) serveList(w http.ResponseWriter, r *http.Request, tenant string, req listRequest) {
	page, err := k.store.List(r.Context(), tenant, req.query)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	buf := getBuf(256 + len(page.Resources)*512)
	defer putBuf(buf)
	e := encoder{buf: *buf}
	defer func() { *buf = e.buf }()
	e.buf = append(e.buf, `{"schemas":["`+listResponseURN+`"],"totalResults":`...)
	e.buf = strconv.AppendInt(e.buf, int64(page.TotalResults), 10)
	if !req.cursor {
		e.buf = append(e.buf, `,"startIndex":`...)
		e.buf = strconv.AppendInt(e.buf, int64(req.query.StartIndex), 10)
	}
	e.buf = append(e.buf, `,"itemsPerPage":`...)
	e.buf = strconv.AppendInt(e.buf, int64(len(page.Resources)), 10)
	if req.cursor {
		// Cursors are base64url: nothing to escape.
		if page.Next != nil {
			e.buf = append(e.buf, `,"nextCursor":"`...)
			e.buf = append(e.buf, k.h.cursors.make(req.bind, page.Next, false)...)
			e.buf = append(e.buf, '"')
		}
		if page.Prev != nil {
			e.buf = append(e.buf, `,"previousCursor":"`...)
			e.buf = append(e.buf, k.h.cursors.make(req.bind, page.Prev, true)...)
			e.buf = append(e.buf, '"')
		}
	}
	e.buf = append(e.buf, `,"Resources":[`...)
	for i := range page.Resources {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		k.write(&e, tenant, &page.Resources[i], &req.proj)
	}
	e.buf = append(e.buf, "]}"...)
	writeJSON(w, http.StatusOK, e.buf)
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
