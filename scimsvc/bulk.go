package scimsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/visid/visid/ratelimit"
)

// bulkResponseURN is the schema of a bulk response (RFC 7644 §3.7.3).
const bulkResponseURN = "urn:ietf:params:scim:api:messages:2.0:BulkResponse"

// bulkIDPrefix starts a string that stands for the id of the resource a POST of the same bulk
// request creates (RFC 7644 §3.7.2).
const bulkIDPrefix = "bulkId:"

// bulkOp is one operation of a bulk request as the client sent it.
type bulkOp struct {
	Method string          `json:"method"`
	BulkID string          `json:"bulkId"`
	Path   string          `json:"path"`
	Data   json.RawMessage `json:"data"`
	// Version is the resource version the operation requires (RFC 7644 §3.7): the If-Match of
	// its request.
	Version string `json:"version"`
}

// bulkResult is one operation of a bulk response. version is the resource's version after a
// successful POST, PUT or PATCH (the ETag of the operation's response).
type bulkResult struct {
	Location string          `json:"location,omitempty"`
	Method   string          `json:"method"`
	BulkID   string          `json:"bulkId,omitempty"`
	Version  string          `json:"version,omitempty"`
	Status   string          `json:"status"`
	Response json.RawMessage `json:"response,omitempty"`
}

// bulkJob is one bulk request being run.
type bulkJob struct {
	h        *handler
	ctx      context.Context
	tenant   string
	ops      []bulkOp
	decodeOK []bool            // the operation decoded
	refs     [][]int           // the POSTs whose bulkId each operation references, in order
	cyclic   []bool            // the operation is on a circle of bulkId references
	declared map[string]int    // bulkId -> the POST that declares it
	created  map[string]string // bulkId -> id of the resource its POST created
	results  []*bulkResult     // nil: not run (yet)
	failed   []bool            // the operation ran and failed
	running  []bool            // the operation waits for what it references
	errors   int
	limit    int // failOnErrors; 0: no limit
}

// bulk is POST /{tenant}/Bulk (RFC 7644 §3.7). The request is refused as a whole, with nothing
// done, when its body is larger than Config.BulkMaxPayloadBytes (413), holds more than
// Config.BulkMaxOperations operations (413), is not a bulk request (400), or when the key's rate
// limit has fewer requests left than the request has operations (429). Otherwise each operation
// runs as the request of its own that it describes would, through the same handler code, as its
// own atomic write with its own events; the answer is 200 with each operation's outcome, in the
// order of the request.
func (h *handler) bulk(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tenant := r.PathValue("tenant")
	body, err := h.readBulk(w, r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var envelope struct {
		FailOnErrors *json.Number       `json:"failOnErrors"`
		Operations   *[]json.RawMessage `json:"Operations"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		h.writeError(w, r, badRequest(typeInvalidSyntax, "a bulk request holds Operations, an array of operations, and may hold failOnErrors, a number"))
		return
	}
	if envelope.Operations == nil {
		h.writeError(w, r, badRequest(typeInvalidSyntax, "a bulk request needs Operations"))
		return
	}
	raw := *envelope.Operations
	if len(raw) > h.bulkMaxOps {
		h.writeError(w, r, &Error{Status: http.StatusRequestEntityTooLarge,
			Detail: fmt.Sprintf("the bulk request has %d operations; maxOperations is %d", len(raw), h.bulkMaxOps)})
		return
	}
	job := &bulkJob{h: h, ctx: ctx, tenant: tenant, ops: make([]bulkOp, len(raw)), decodeOK: make([]bool, len(raw))}
	if f := envelope.FailOnErrors; f != nil {
		n, err := strconv.Atoi(f.String())
		if err != nil || n < 1 {
			h.writeError(w, r, badRequest(typeInvalidValue, "failOnErrors must be a positive integer"))
			return
		}
		job.limit = n
	}
	for i, op := range raw {
		// A wrong type fails this operation only; its fields read so far still name it.
		job.decodeOK[i] = json.Unmarshal(op, &job.ops[i]) == nil && !bytes.Equal(op, []byte("null"))
	}
	if err := job.plan(); err != nil {
		h.writeError(w, r, err)
		return
	}
	if !h.takeOperations(w, r, tenant, len(raw)) {
		return
	}
	job.run()
	out := struct {
		Schemas    []string      `json:"schemas"`
		Operations []*bulkResult `json:"Operations"`
	}{Schemas: []string{bulkResponseURN}, Operations: make([]*bulkResult, 0, len(raw))}
	for _, res := range job.results {
		if res != nil {
			out.Operations = append(out.Operations, res)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// readBulk reads the body of a bulk request, at most Config.BulkMaxPayloadBytes of it, as
// readJSON reads any request: JSON content type, one object, no duplicate member names, text.
func (h *handler) readBulk(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !jsonContentType(ct) {
		return nil, &Error{Status: http.StatusUnsupportedMediaType,
			Detail: "the request body must be application/scim+json or application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.bulkMaxPayload))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &Error{Status: http.StatusRequestEntityTooLarge,
				Detail: fmt.Sprintf("the bulk request is larger than maxPayloadSize (%d bytes)", h.bulkMaxPayload)}
		}
		return nil, syntaxError(err)
	}
	if _, err := parseBody(body); err != nil {
		return nil, err
	}
	return body, nil
}

// takeOperations takes n requests from the rate limit of the request's key and tenant, one for
// each operation, of which the request itself has taken one already. When fewer are left it
// takes none and answers 429 with Retry-After the time until the quota is whole again, and
// returns false. A limiter that fails lets the request through, as for any request.
func (h *handler) takeOperations(w http.ResponseWriter, r *http.Request, tenant string, n int) bool {
	if n <= 1 {
		return true
	}
	ctx := r.Context()
	key := requestKeyID(ctx) + "/" + tenant
	d, err := h.keys.Peek(ctx, key)
	if err != nil {
		ratelimit.LogFailure(ctx, h.log, "scim key (bulk)", err)
		return true
	}
	if d.Remaining < n-1 {
		d.Allowed, d.RetryAfter = false, d.Reset
		h.tooMany(w, r, d, limitKey, tenant)
		return false
	}
	for range n - 1 {
		if d, err = h.keys.Allow(ctx, key); err != nil {
			ratelimit.LogFailure(ctx, h.log, "scim key (bulk)", err)
			return true
		}
		if !d.Allowed { // concurrent requests of the key took the quota since the Peek
			h.tooMany(w, r, d, limitKey, tenant)
			return false
		}
	}
	ratelimit.SetHeaders(w.Header(), d)
	return true
}

// plan finds the bulkIds the POSTs declare, what each operation references, and the circles of
// references. Two POSTs declaring one bulkId are an error of the whole request.
func (j *bulkJob) plan() error {
	n := len(j.ops)
	j.declared = map[string]int{}
	j.created = map[string]string{}
	for i, op := range j.ops {
		if !j.decodeOK[i] || op.BulkID == "" || !strings.EqualFold(op.Method, http.MethodPost) {
			continue
		}
		if prev, dup := j.declared[op.BulkID]; dup {
			return badRequest(typeInvalidValue, "operations %d and %d both declare bulkId %q; a bulkId names one POST of a bulk request", prev+1, i+1, clip(op.BulkID))
		}
		j.declared[op.BulkID] = i
	}
	j.refs = make([][]int, n)
	for i, op := range j.ops {
		if !j.decodeOK[i] {
			continue
		}
		seen := map[int]bool{}
		add := func(s string) {
			if x, ok := strings.CutPrefix(s, bulkIDPrefix); ok {
				if d, ok := j.declared[x]; ok && !seen[d] {
					seen[d] = true
					j.refs[i] = append(j.refs[i], d)
				}
			}
		}
		_, id, _ := strings.Cut(strings.TrimPrefix(op.Path, "/"), "/")
		add(id)
		if !strings.EqualFold(op.Method, http.MethodDelete) && len(op.Data) > 0 &&
			(bytes.Contains(op.Data, []byte("bulkId")) || bytes.Contains(op.Data, []byte(`\u`))) {
			if t, err := decodeAny(op.Data); err == nil {
				walkStrings(t, add)
			}
		}
		slices.Sort(j.refs[i]) // referenced POSTs run in the order of the request
	}
	j.cyclic = onCircles(j.refs)
	j.results = make([]*bulkResult, n)
	j.failed = make([]bool, n)
	j.running = make([]bool, n)
	return nil
}

// decodeAny decodes JSON with numbers kept as json.Number.
func decodeAny(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// walkStrings calls f with every string value (not member name) of v.
func walkStrings(v any, f func(string)) {
	switch v := v.(type) {
	case string:
		f(v)
	case []any:
		for _, x := range v {
			walkStrings(x, f)
		}
	case map[string]any:
		for _, x := range v {
			walkStrings(x, f)
		}
	}
}

// replaceStrings returns v with every string value replaced by what f makes of it.
func replaceStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case []any:
		for i, x := range v {
			v[i] = replaceStrings(x, f)
		}
	case map[string]any:
		for k, x := range v {
			v[k] = replaceStrings(x, f)
		}
	}
	return v
}

// onCircles reports which nodes of the graph refs (node -> the nodes it references) lie on a
// circle, a node that references itself included (Tarjan's strongly connected components).
func onCircles(refs [][]int) []bool {
	n := len(refs)
	index, low := make([]int, n), make([]int, n)
	onStack, out := make([]bool, n), make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range refs[v] {
			if w == v {
				out[v] = true
			}
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var component []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			component = append(component, w)
			if w == v {
				break
			}
		}
		if len(component) > 1 {
			for _, w := range component {
				out[w] = true
			}
		}
	}
	for v := range n {
		if index[v] < 0 {
			visit(v)
		}
	}
	return out
}

// stopped reports whether failOnErrors errors have happened.
func (j *bulkJob) stopped() bool { return j.limit > 0 && j.errors >= j.limit }

// run runs the operations in the order of the request; an operation that references the bulkId
// of a later POST runs that POST first.
func (j *bulkJob) run() {
	for i := range j.ops {
		if j.stopped() {
			return
		}
		j.runOne(i)
	}
}

// runOne runs operation i, after the POSTs it references, unless it has run.
func (j *bulkJob) runOne(i int) {
	if j.results[i] != nil || j.running[i] {
		return
	}
	op := &j.ops[i]
	res := &bulkResult{Method: op.Method, BulkID: op.BulkID}
	if j.cyclic[i] {
		j.finish(i, res, &Error{Status: http.StatusConflict,
			Detail: "the operation is on a circle of bulkId references, which cannot be resolved"})
		return
	}
	j.running[i] = true
	for _, d := range j.refs[i] {
		j.runOne(d)
		if j.stopped() {
			j.running[i] = false
			return
		}
	}
	j.running[i] = false
	for _, d := range j.refs[i] {
		if j.failed[d] {
			j.finish(i, res, &Error{Status: http.StatusConflict,
				Detail: fmt.Sprintf("bulkId:%s cannot be resolved: its operation failed", clip(j.ops[d].BulkID))})
			return
		}
	}
	j.dispatch(i, res)
}

// finish records that operation i failed with err before it reached the handler's routes.
func (j *bulkJob) finish(i int, res *bulkResult, err error) {
	e, internal := asError(err)
	if internal {
		j.h.log.ErrorContext(j.ctx, "scim bulk operation failed", "operation", i+1, "err", err)
	}
	res.Status = strconv.Itoa(e.Status)
	rec := newRecorder()
	writeErrorBody(rec, e)
	res.Response = rec.body.Bytes()
	j.failed[i] = true
	j.errors++
	j.results[i] = res
}

// bulkPath splits the path of a bulk operation of method into its endpoint (Users or Groups,
// in any case) and the id it names: none for a POST, one for the others.
func bulkPath(method, p string) (endpoint, id string, err error) {
	endpoint, id, hasID := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	endpoint = canonicalEndpoint(endpoint)
	ok := endpoint == "Users" || endpoint == "Groups"
	if method == http.MethodPost {
		if !ok || hasID {
			return "", "", badRequest(typeInvalidValue, "the path of a bulk POST is /Users or /Groups")
		}
		return endpoint, "", nil
	}
	if !ok || id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/?#") || badText(id) != "" {
		return "", "", badRequest(typeInvalidValue, "the path of a bulk %s is /Users/{id} or /Groups/{id}", method)
	}
	return endpoint, id, nil
}

// dispatch runs operation i as the request it describes, through the handler's own routes,
// with its bulkId references replaced by the ids their POSTs created.
func (j *bulkJob) dispatch(i int, res *bulkResult) {
	op := &j.ops[i]
	if !j.decodeOK[i] {
		j.finish(i, res, badRequest(typeInvalidSyntax, "operation %d is not an object whose method, bulkId, path are strings and data an object", i+1))
		return
	}
	method := strings.ToUpper(op.Method)
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		res.Method = method
	default:
		j.finish(i, res, badRequest(typeInvalidValue, "the method of a bulk operation is POST, PUT, PATCH or DELETE"))
		return
	}
	if method == http.MethodPost && op.BulkID == "" {
		// RFC 7644 §3.7: a POST's bulkId is required; without it the response cannot tell the
		// client which of its POSTs created which resource.
		j.finish(i, res, badRequest(typeInvalidValue, "a bulk POST needs a bulkId, which names it in the response"))
		return
	}
	if err := checkConditionTags("version", op.Version); err != nil {
		j.finish(i, res, err)
		return
	}
	endpoint, id, err := bulkPath(method, op.Path)
	if err != nil {
		j.finish(i, res, err)
		return
	}
	target := "/" + j.tenant + "/" + endpoint
	if id != "" {
		id = j.resolve(id)
		target += "/" + id
		res.Location = j.h.base + target
	}
	data := j.data(i)
	req, err := http.NewRequestWithContext(j.ctx, method, (&url.URL{Path: target}).EscapedPath(), bytes.NewReader(data))
	if err != nil {
		j.finish(i, res, err)
		return
	}
	req.RequestURI = "" // logPath reports the operation's path
	if data != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if op.Version != "" {
		req.Header.Set("If-Match", op.Version)
	}
	rec := j.serve(req)
	res.Status = strconv.Itoa(rec.status)
	if rec.status >= 400 {
		res.Response = rec.body.Bytes()
		j.failed[i] = true
		j.errors++
	} else if res.Version = rec.header.Get("ETag"); method == http.MethodPost {
		res.Location = rec.header.Get("Location")
		if op.BulkID != "" {
			j.created[op.BulkID] = strings.TrimPrefix(res.Location, j.h.base+target+"/")
		}
	}
	j.results[i] = res
}

// resolve returns the id of the resource created by the POST whose bulkId s names as
// "bulkId:…", or s.
func (j *bulkJob) resolve(s string) string {
	if x, ok := strings.CutPrefix(s, bulkIDPrefix); ok {
		if id, ok := j.created[x]; ok {
			return id
		}
	}
	return s
}

// data is the body of operation i's request: none for a DELETE, otherwise its data with every
// string that references a bulkId replaced by the id.
func (j *bulkJob) data(i int) []byte {
	op := &j.ops[i]
	if strings.EqualFold(op.Method, http.MethodDelete) || len(op.Data) == 0 || bytes.Equal(op.Data, []byte("null")) {
		return nil
	}
	if len(j.refs[i]) == 0 {
		return op.Data
	}
	t, err := decodeAny(op.Data)
	if err != nil {
		return op.Data // the handler reports what is wrong with it
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(replaceStrings(t, j.resolve)); err != nil {
		return op.Data
	}
	return buf.Bytes()
}

// serve runs req on the handler's routes; a panic fails the operation, logged, with a 500.
func (j *bulkJob) serve(req *http.Request) (rec *recorder) {
	rec = newRecorder()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			j.h.log.ErrorContext(j.ctx, "scim bulk operation panicked", "method", req.Method,
				"path", req.URL.Path, "panic", fmt.Sprint(p))
			rec = newRecorder()
			writeErrorBody(rec, &Error{Status: http.StatusInternalServerError, Detail: "internal server error"})
		}
	}()
	j.h.mux.ServeHTTP(rec, req)
	return rec
}

// recorder is the http.ResponseWriter of one bulk operation.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
