package scimsvc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/visid/visid/store/schema"
)

// maxBodyDepth is how deeply a request body may nest objects and arrays. A SCIM body nests a
// few levels (a PatchOp's Operations, an operation, its value, a list of values, a value); the
// bound keeps decoding a hostile body of deep brackets from recursing deeply.
const maxBodyDepth = 32

// parseBody decodes body, which must be one JSON object, into a tree of object, []any, string,
// json.Number, bool and nil, in one pass over its tokens. Unlike encoding/json, which keeps the
// last of two members with the same name, it refuses an object with two member names that are
// equal or differ only in case: SCIM names are case-insensitive (RFC 7643 §2.1), so either is
// ambiguous, and a client sending {"active":true,"ACTIVE":false} must not get one at random. It
// then refuses strings that are not text (see badText and badEscapes), which encoding/json
// would have stored as U+FFFD.
func parseBody(body []byte) (object, error) {
	// Checked first: encoding/json calls a NUL or a stray byte outside strings a syntax error.
	switch {
	case !utf8.Valid(body):
		return nil, notText("is not valid UTF-8")
	case bytes.IndexByte(body, 0) >= 0:
		return nil, notText("holds a NUL character")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
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
	// encoding/json has checked the syntax, so every backslash starts an escape.
	if why := badEscapes(body); why != "" {
		return nil, notText(why)
	}
	return o, nil
}

// notText is the error of a body that is not text for the reason why.
func notText(why string) error {
	return badRequest(typeInvalidValue, "the request body %s: every string must be UTF-8 text without NUL", why)
}

// decodeValue decodes the next JSON value of dec, at nesting depth depth.
func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if depth > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, syntaxError(err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxBodyDepth {
		return nil, badRequest(typeInvalidSyntax, "the request body nests more than %d levels", maxBodyDepth)
	}
	if d == '[' {
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, closing(dec)
	}
	m := object{}
	folded := map[string]string{} // member name folded -> as written
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		k, ok := tok.(string)
		if !ok { // encoding/json reports this as a syntax error already
			return nil, badRequest(typeInvalidSyntax, "the request body is not valid JSON: a member name must be a string")
		}
		f := schema.Fold(k)
		if prev, dup := folded[f]; dup {
			if prev == k {
				return nil, badRequest(typeInvalidSyntax, "the member %q appears twice in one object", clip(k))
			}
			return nil, badRequest(typeInvalidSyntax, "the members %q and %q of one object differ only in case, and SCIM names are case-insensitive", clip(prev), clip(k))
		}
		folded[f] = k
		v, err := decodeValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, closing(dec)
}

// closing reads the '}' or ']' that ends an object or array.
func closing(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return syntaxError(err)
	}
	return nil
}
