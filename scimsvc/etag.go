package scimsvc

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/visid/visid/store"
)

// Versions and conditional requests (RFC 7644 §3.14, RFC 7232).
//
// Every User and Group has a version (store.Meta.Version) that the store moves with every change.
// It is shown as meta.version and as the ETag header, the weak entity tag W/"n". If-Match on
// PUT, PATCH and DELETE makes the write conditional: the store compares the version inside its
// atomic write, so of racing writers that send the same version exactly one succeeds and the
// others get 412 with nothing changed. If-None-Match on GET answers 304 when the version is
// unchanged. Entity tags compare weakly (W/"3" matches "3"), the way RFC 7644 §3.14's examples
// use them with If-Match.

// errPreconditionFailed is the SCIM error of a write whose If-Match names no version the resource
// has (RFC 7644 §3.12 lists 412 without a scimType).
var errPreconditionFailed = &Error{
	Status: http.StatusPreconditionFailed,
	Detail: "precondition failed: the resource has changed on the server (its version is not one If-Match names)",
}

// MaxConditionTags is the most entity tags an If-Match or If-None-Match header (all its values
// together), or a Bulk operation's version, may name; more is 400 invalidValue, checked before a
// request picks a path. A request with a condition costs at most one read and one conditional
// write, however many tags it names.
const MaxConditionTags = 64

// checkConditions refuses a request whose If-Match or If-None-Match names more than
// MaxConditionTags entity tags.
func checkConditions(h http.Header) error {
	for _, name := range []string{"If-Match", "If-None-Match"} {
		if err := checkConditionTags(name, h.Values(name)...); err != nil {
			return err
		}
	}
	return nil
}

// checkConditionTags refuses values (of header name, or of a Bulk operation's version) that name
// more than MaxConditionTags entity tags, counting without splitting them.
func checkConditionTags(name string, values ...string) error {
	n := 0
	for _, v := range values {
		if n += strings.Count(v, ",") + 1; n > MaxConditionTags {
			return badRequest(typeInvalidValue, "%s names more than %d entity tags", name, MaxConditionTags)
		}
	}
	return nil
}

// condition is a parsed If-Match or If-None-Match header.
type condition struct {
	present bool    // the header was sent
	any     bool    // "*"
	tags    []int64 // the versions of the entity tags that are ours; others never match
}

// parseCondition parses the If-Match or If-None-Match header values of a request: "*" or a list
// of entity tags, weak or strong. Entity tags that are not versions of ours are kept as never
// matching, so a request that names only those fails its If-Match.
// At most MaxConditionTags are read: checkConditions has refused a request with more.
func parseCondition(values []string) condition {
	c := condition{present: len(values) > 0}
	n := 0
	for _, v := range values {
		for tag := range strings.SplitSeq(v, ",") {
			if n++; n > MaxConditionTags {
				return c
			}
			tag = strings.TrimSpace(tag)
			if tag == "*" {
				c.any = true
				continue
			}
			if n, ok := versionOf(tag); ok {
				c.tags = append(c.tags, n)
			}
		}
	}
	return c
}

// versionOf returns the version an entity tag names: W/"n" or "n" with n a decimal version.
func versionOf(tag string) (int64, bool) {
	tag = strings.TrimPrefix(tag, "W/")
	if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return 0, false
	}
	s := tag[1 : len(tag)-1]
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// matches reports whether a resource at version matches c (weak comparison).
func (c *condition) matches(version int64) bool {
	if c.any {
		return true
	}
	for _, t := range c.tags {
		if t == version {
			return true
		}
	}
	return false
}

// ifMatch is the request's If-Match condition.
func ifMatch(r *http.Request) condition { return parseCondition(r.Header.Values("If-Match")) }

// ifNoneMatch is the request's If-None-Match condition.
func ifNoneMatch(r *http.Request) condition { return parseCondition(r.Header.Values("If-None-Match")) }

// checkIfMatch returns errPreconditionFailed unless the resource whose meta is m matches the
// request's If-Match condition c (or c is absent). It runs inside the store's atomic Update.
func checkIfMatch(c *condition, m *store.Meta) error {
	if c.present && !c.matches(m.Version) {
		return errPreconditionFailed
	}
	return nil
}
