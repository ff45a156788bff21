package scimsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
)

// The scimType values of RFC 7644 §3.12 that visid uses.
const (
	typeInvalidFilter = "invalidFilter"
	typeInvalidSyntax = "invalidSyntax"
	typeInvalidPath   = "invalidPath"
	typeInvalidValue  = "invalidValue"
	typeMutability    = "mutability"
	typeNoTarget      = "noTarget"
	typeUniqueness    = "uniqueness"
)

const errorURN = "urn:ietf:params:scim:api:messages:2.0:Error"

// Error is a SCIM error (RFC 7644 §3.12): the HTTP status, the scimType (empty for none) and a
// detail for people. Handlers return it; writeError turns it into the response body.
type Error struct {
	Status   int
	ScimType string
	Detail   string
}

func (e *Error) Error() string {
	if e.ScimType == "" {
		return fmt.Sprintf("scim %d: %s", e.Status, e.Detail)
	}
	return fmt.Sprintf("scim %d %s: %s", e.Status, e.ScimType, e.Detail)
}

// badRequest is a 400 with scimType t.
func badRequest(t, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, ScimType: t, Detail: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON form of an Error.
type errorBody struct {
	Schemas  []string `json:"schemas"`
	ScimType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail,omitempty"`
	Status   string   `json:"status"`
}

// asError maps any error a handler returns to the SCIM error a client sees. Store sentinels,
// oversized bodies and filter errors have fixed mappings; a store that is unavailable
// (store.ErrUnavailable) is a 503; anything else is a 500 whose detail says nothing internal. internal reports whether err was unexpected, so the caller logs it.
func asError(err error) (e *Error, internal bool) {
	var se *Error
	var tooBig *http.MaxBytesError
	var fe *filter.Error
	switch {
	case errors.As(err, &se):
		return se, false
	case errors.Is(err, store.ErrUnavailable):
		return &Error{Status: http.StatusServiceUnavailable, Detail: "the service is temporarily unavailable; retry later"}, true
	case errors.As(err, &tooBig):
		return &Error{Status: http.StatusRequestEntityTooLarge,
			Detail: "the request body is larger than " + strconv.FormatInt(tooBig.Limit, 10) + " bytes"}, false
	case errors.As(err, &fe):
		return badRequest(typeInvalidFilter, "%s", fe.Error()), false
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Detail: "resource not found"}, false
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, ScimType: typeUniqueness,
			Detail: "a resource with this userName, id or unique value already exists in the tenant"}, false
	case errors.Is(err, store.ErrMemberNotFound):
		return badRequest(typeInvalidValue, "a member is not a user of this tenant"), false
	case errors.Is(err, store.ErrTooManyMembers):
		return badRequest(typeInvalidValue, "the group would have more members than allowed"), false
	case errors.Is(err, store.ErrVersionMismatch):
		return errPreconditionFailed, false
	case errors.Is(err, store.ErrInvalid):
		return badRequest(typeInvalidValue, "the resource is not valid: a required attribute is missing"), false
	}
	return &Error{Status: http.StatusInternalServerError, Detail: "internal server error"}, true
}

// writeError is the one place where an error becomes a response. Unexpected errors are logged
// with their cause and answered with a 500 that carries no internal text; client errors are
// logged at Debug.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, internal := asError(err)
	if errors.Is(err, store.ErrUnavailable) {
		// The store cannot answer now (its database stopped, full, out of connections): the
		// request was fine and may be sent again in a moment.
		h.log.ErrorContext(r.Context(), "scim request failed: the store is unavailable", "method", r.Method,
			"path", logPath(r), "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
		writeErrorBody(w, e)
		return
	}
	if internal && (errors.Is(err, context.DeadlineExceeded) || errors.Is(r.Context().Err(), context.DeadlineExceeded)) {
		// The request's deadline (Config.RequestTimeout) passed in a store call: the store
		// is slow or busy rather than the request wrong, so the client may try again.
		h.log.ErrorContext(r.Context(), "scim request timed out", "method", r.Method, "path", logPath(r),
			"timeout", h.timeout, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(h.retryAfterTimeout()))
		writeErrorBody(w, &Error{Status: http.StatusServiceUnavailable, Detail: "the request took too long; retry later"})
		return
	}
	if internal {
		h.log.ErrorContext(r.Context(), "scim request failed", "method", r.Method, "path", logPath(r), "err", err)
	} else if ref := (*refusal)(nil); errors.As(err, &ref) {
		h.log.DebugContext(r.Context(), "scim request refused", "method", r.Method, "path", logPath(r),
			"status", e.Status, "detail", e.Detail, "reason", ref.reason, "key", ref.key)
	} else {
		if e.ScimType == typeInvalidFilter {
			tenant, _ := pathLabels(r.URL.Path)
			h.tel.count(r.Context(), h.tel.filterErrs, "", "", tenant)
		}
		h.log.DebugContext(r.Context(), "scim request refused", "method", r.Method, "path", logPath(r),
			"status", e.Status, "scimType", e.ScimType, "detail", e.Detail)
	}
	writeErrorBody(w, e)
}

// retryAfterUnavailable is the Retry-After of a 503 for store.ErrUnavailable, in seconds.
const retryAfterUnavailable = int(store.UnavailableRetryAfter / time.Second)

// retryAfterTimeout is the Retry-After of a request that timed out, in seconds: the request
// timeout, at least a second, so a busy store gets as long again before the retry.
func (h *handler) retryAfterTimeout() int {
	return max(1, int((h.timeout+time.Second-1)/time.Second))
}

func writeErrorBody(w http.ResponseWriter, e *Error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // details quote what a client sent; keep them readable
	_ = enc.Encode(errorBody{
		Schemas:  []string{errorURN},
		ScimType: e.ScimType,
		Detail:   e.Detail,
		Status:   strconv.Itoa(e.Status),
	})
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// recoverer turns a panic in next into a logged 500, so no panic escapes the handler.
func (h *handler) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &trackingWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				h.log.ErrorContext(r.Context(), "scim handler panicked", "method", r.Method,
					"path", logPath(r), "panic", fmt.Sprint(p))
				if !rw.wrote {
					writeErrorBody(w, &Error{Status: http.StatusInternalServerError, Detail: "internal server error"})
				}
			}
		}()
		next.ServeHTTP(rw, r)
	})
}

// trackingWriter records whether the response has started.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// logPath is the request's path as the client sent it, before any prefix was stripped, without
// the query (filters may hold personal data).
func logPath(r *http.Request) string {
	p, _, _ := strings.Cut(r.RequestURI, "?")
	if p == "" {
		return r.URL.Path
	}
	return p
}
