package scimsvc

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/visid/visid/store"
)

const searchRequestURN = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"

// listSlot takes one of the request's API key's list slots (Config.MaxConcurrentLists). When
// none is free it has answered 429 and returns false; otherwise the caller calls release.
func (h *handler) listSlot(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	if h.lists == nil {
		return func() {}, true
	}
	key := requestKeyID(r.Context())
	if !h.lists.acquire(key) {
		h.tel.count(r.Context(), h.tel.rateLimited, attrLimit, limitLists, r.PathValue("tenant"))
		w.Header().Set("Retry-After", "1")
		h.writeError(w, r, &Error{Status: http.StatusTooManyRequests,
			Detail: "too many list requests of this API key are in progress; retry later"})
		return nil, false
	}
	return func() { h.lists.release(key) }, true
}

// search is POST /{type}/.search (RFC 7644 §3.4.3): the SearchRequest body's parameters,
// answered as a GET of the list with the same parameters is.
func (k *resources[T, P]) search(w http.ResponseWriter, r *http.Request) {
	release, ok := k.h.listSlot(w, r)
	if !ok {
		return
	}
	defer release()
	p, err := k.h.readSearch(w, r)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	tenant := r.PathValue("tenant")
	req, err := k.parseList(tenant, p)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	k.serveList(w, r, tenant, req)
}

// readSearch reads a SearchRequest body (RFC 7644 §3.4.3) as strictly as any other body (see
// readJSON). Its "schemas" must hold the SearchRequest URN and nothing else (400
// invalidSyntax); its other members are filter, sortBy, sortOrder and cursor (strings),
// attributes and excludedAttributes (arrays of strings; an element may hold several
// comma-separated paths), startIndex and count (integers), named in any case. A member of
// another name is 400 invalidSyntax; a member of the wrong type is 400 invalidValue; a null
// member is absent.
func (h *handler) readSearch(w http.ResponseWriter, r *http.Request) (listParams, error) {
	var p listParams
	body, err := h.readJSON(w, r)
	if err != nil {
		return p, err
	}
	schemaSeen := false
	for name, v := range body {
		if strings.EqualFold(name, "schemas") {
			l, ok := v.([]any)
			var urn string
			if ok && len(l) == 1 {
				urn, _ = l[0].(string)
			}
			if !strings.EqualFold(urn, searchRequestURN) {
				return p, badRequest(typeInvalidSyntax, `schemas must be ["%s"]`, searchRequestURN)
			}
			schemaSeen = true
			continue
		}
		if v == nil {
			continue
		}
		var field *string
		var list *[]string
		var number **int
		switch strings.ToLower(name) {
		case "filter":
			field = &p.Filter
		case "sortby":
			field = &p.SortBy
		case "sortorder":
			field = &p.SortOrder
		case "cursor":
			s, ok := v.(string)
			if !ok {
				return p, badRequest(typeInvalidValue, "cursor must be a string")
			}
			p.Cursor = &s
			continue
		case "attributes":
			list = &p.Attributes
		case "excludedattributes":
			list = &p.ExcludedAttributes
		case "startindex":
			number = &p.StartIndex
		case "count":
			number = &p.Count
		default:
			return p, badRequest(typeInvalidSyntax, "a SearchRequest has no member %q", clip(name))
		}
		switch {
		case field != nil:
			s, ok := v.(string)
			if !ok {
				return p, badRequest(typeInvalidValue, "%s must be a string", name)
			}
			*field = s
		case list != nil:
			l, ok := v.([]any)
			if !ok {
				return p, badRequest(typeInvalidValue, "%s must be an array of strings", name)
			}
			*list = make([]string, 0, len(l))
			for _, e := range l {
				s, ok := e.(string)
				if !ok {
					return p, badRequest(typeInvalidValue, "%s must be an array of strings", name)
				}
				*list = append(*list, s)
			}
		default:
			n, ok := v.(json.Number)
			if !ok {
				return p, badRequest(typeInvalidValue, "%s must be an integer", name)
			}
			i, err := strconv.Atoi(n.String())
			if err != nil {
				return p, badRequest(typeInvalidValue, "%s must be an integer", name)
			}
			*number = &i
		}
	}
	if !schemaSeen {
		return p, badRequest(typeInvalidSyntax, `schemas must be ["%s"]`, searchRequestURN)
	}
	return p, nil
}

// searchAll is POST /.search: a search of Users and Groups together (RFC 7644 §3.4.3). The
// filter is parsed for each type; a type for which it does not parse (it names an attribute the
// type lacks) contributes no resource, and when it parses for neither the Users error is the
// answer (400 invalidFilter). The Resources are the users then the groups, in each type's
// default order, each with its own schemas and meta.resourceType; startIndex and count page
// across that sequence and totalResults is the sum of both types' totals. attributes and
// excludedAttributes apply to each type as far as they name its attributes. sortBy and cursor
// are refused (400 invalidValue): the two types share no order to sort or resume by.
func (h *handler) searchAll(w http.ResponseWriter, r *http.Request) {
	release, ok := h.listSlot(w, r)
	if !ok {
		return
	}
	defer release()
	p, err := h.readSearch(w, r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if strings.TrimSpace(p.SortBy) != "" {
		h.writeError(w, r, badRequest(typeInvalidValue, "sortBy is not supported when searching every resource type; search /Users/.search or /Groups/.search"))
		return
	}
	if p.Cursor != nil {
		h.writeError(w, r, badRequest(typeInvalidValue, "cursor paging is not supported when searching every resource type; search /Users/.search or /Groups/.search"))
		return
	}
	tenant := r.PathValue("tenant")
	// Each type is parsed without paging: the pages are computed below across both.
	typed := p
	typed.StartIndex, typed.Count = nil, nil
	ureq, uerr := h.users.parseList(tenant, typed)
	greq, gerr := h.groups.parseList(tenant, typed)
	if uerr != nil && gerr != nil {
		h.writeError(w, r, uerr)
		return
	}
	start, count := 1, MaxResults
	if p.StartIndex != nil {
		start = max(*p.StartIndex, 1)
	}
	if p.Count != nil {
		count = min(max(*p.Count, 0), MaxResults)
	}
	ctx := r.Context()
	// Users: the page from start, as much of count as they fill.
	var users store.Page[store.User]
	if uerr == nil {
		ureq.query.StartIndex, ureq.query.Count = start, count
		if users, err = h.users.store.List(ctx, tenant, ureq.query); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	// Groups: what remains of count, from the position start reaches past the users.
	var groups store.Page[store.Group]
	if gerr == nil {
		greq.query.StartIndex = max(start-users.TotalResults, 1)
		greq.query.Count = count - len(users.Resources)
		if groups, err = h.groups.store.List(ctx, tenant, greq.query); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	n := len(users.Resources) + len(groups.Resources)
	buf := getBuf(256 + n*512)
	defer putBuf(buf)
	e := encoder{buf: *buf}
	defer func() { *buf = e.buf }()
	e.buf = append(e.buf, `{"schemas":["`+listResponseURN+`"],"totalResults":`...)
	e.buf = strconv.AppendInt(e.buf, int64(users.TotalResults+groups.TotalResults), 10)
	e.buf = append(e.buf, `,"startIndex":`...)
	e.buf = strconv.AppendInt(e.buf, int64(start), 10)
	e.buf = append(e.buf, `,"itemsPerPage":`...)
	e.buf = strconv.AppendInt(e.buf, int64(n), 10)
	e.buf = append(e.buf, `,"Resources":[`...)
	for i := range users.Resources {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		h.users.write(&e, tenant, &users.Resources[i], &ureq.proj)
	}
	for i := range groups.Resources {
		if i > 0 || len(users.Resources) > 0 {
			e.buf = append(e.buf, ',')
		}
		h.groups.write(&e, tenant, &groups.Resources[i], &greq.proj)
	}
	e.buf = append(e.buf, "]}"...)
	writeJSON(w, http.StatusOK, e.buf)
}
