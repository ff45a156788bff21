package scimsvc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/visid/visid/store/schema"
)

// parseBody decodes body, which must be one JSON object, into a tree of object, []any, string,
// json.Number, bool and nil. Unlike encoding/json alone, which keeps the last of two members
// with the same name, it refuses an object with two member names that are equal or differ only
// in case: SCIM names are case-insensitive (RFC 7643 §2.1), so either is ambiguous, and a client
// sending {"active":true,"ACTIVE":false} must not get one of them at random. It also refuses
// strings that are not text (see badText and badEscapes), which encoding/json would decode to
// U+FFFD. Each check is one pass over the body: parseTree decodes it without reflection, and
// encoding/json only what parseTree does not take.
func parseBody(body []byte) (object, error) {
	// Checked first: encoding/json calls a NUL or a stray byte outside strings a syntax error.
	switch {
	case !utf8.Valid(body):
		return nil, notText("is not valid UTF-8")
	case bytes.IndexByte(body, 0) >= 0:
		return nil, notText("holds a NUL character")
	}
	o, ok := parseTree(body)
	if !ok { // encoding/json says what is wrong, or decodes what parseTree does not take
		var err error
		if o, err = decodeJSON(body); err != nil {
			return nil, err
		}
	}
	// encoding/json has checked the syntax: every string is closed, and every backslash starts
	// an escape.
	if first, second, dup := duplicateMember(body); dup {
		if first == second {
			return nil, badRequest(typeInvalidSyntax, "the member %q appears twice in one object", clip(first))
		}
		return nil, badRequest(typeInvalidSyntax, "the members %q and %q of one object differ only in case, and SCIM names are case-insensitive", clip(first), clip(second))
	}
	if why := badEscapes(body); why != "" {
		return nil, notText(why)
	}
	return o, nil
}

// decodeJSON decodes body with encoding/json into the tree parseBody returns.
func decodeJSON(body []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, syntaxError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(err)
		}
		return nil, badRequest(typeInvalidSyntax, "the request body holds more than one JSON value")
	}
	o, ok := v.(object)
	if !ok {
		return nil, badRequest(typeInvalidSyntax, "the request body must be a JSON object")
	}
	return o, nil
}

// notText is the error of a body that is not text for the reason why.
func notText(why string) error {
	return badRequest(typeInvalidValue, "the request body %s: every string must be UTF-8 text without NUL", why)
}

// smallObject is how many members an object may have before duplicateMember indexes their
// folded names instead of comparing each new name with every earlier one.
const smallObject = 8

// duplicateMember returns the first two member names of one object of body, which must be valid
// JSON, that are equal or differ only in case (as strings.EqualFold and schema.Fold compare),
// unescaped. It takes one pass and allocates only for escaped names and large objects.
func duplicateMember(body []byte) (first, second string, found bool) {
	var (
		stack   []openValue
		names   [][]byte // the member names of the open objects, innermost last
		wantKey bool     // the next string is a member name
	)
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			stack = append(stack, openValue{object: true, start: len(names)})
			wantKey = true
		case '[':
			stack = append(stack, openValue{start: len(names)})
			wantKey = false
		case '}', ']':
			names = names[:stack[len(stack)-1].start]
			stack = stack[:len(stack)-1]
			wantKey = false
		case ',':
			wantKey = stack[len(stack)-1].object
		case '"':
			end, escaped := i+1, false
			for body[end] != '"' {
				if body[end] == '\\' {
					escaped = true
					end++
				}
				end++
			}
			if wantKey {
				f := &stack[len(stack)-1]
				name := body[i+1 : end]
				if escaped {
					var s string
					if json.Unmarshal(body[i:end+1], &s) != nil {
						return "", "", false // cannot happen: the body is valid JSON
					}
					name = []byte(s)
				}
				if prev, dup := f.add(&names, name); dup {
					return string(prev), string(name), true
				}
				wantKey = false
			}
			i = end
		}
	}
	return "", "", false
}

// openValue is an object or array that duplicateMember has entered and not yet left.
type openValue struct {
	object bool
	start  int               // index in names of the object's first member name
	index  map[string][]byte // folded name -> name, once the object has smallObject members
}

// add records name as a member name of object v, whose names so far are (*names)[v.start:] until
// v is indexed, and returns the earlier name that is equal to it or differs only in case.
func (v *openValue) add(names *[][]byte, name []byte) (prev []byte, dup bool) {
	if v.index == nil {
		own := (*names)[v.start:]
		if len(own) < smallObject {
			for _, p := range own {
				if bytes.EqualFold(p, name) {
					return p, true
				}
			}
			*names = append(*names, name)
			return nil, false
		}
		v.index = make(map[string][]byte, 2*len(own))
		for _, p := range own {
			v.index[schema.Fold(string(p))] = p
		}
	}
	f := schema.Fold(string(name))
	if p, ok := v.index[f]; ok {
		return p, true
	}
	v.index[f] = name
	return nil, false
}
