package scimsvc

import "encoding/json"

// parseTree decodes body, which must be valid UTF-8, into the tree encoding/json's Decoder with
// UseNumber gives (object, []any, string, json.Number, bool and nil), in one pass and without
// reflection. ok is false for anything it does not take — a syntax error, trailing data, a value
// that is not an object, nesting deeper than encoding/json allows — and the caller then decodes
// with encoding/json, whose result and error messages are the reference: for any body parseTree
// takes, it returns what encoding/json would (proved by FuzzParseTree). Of two members with the
// same name it keeps the last, as encoding/json does; parseBody refuses them anyway.
func parseTree(body []byte) (o object, ok bool) {
	p := treeParser{b: body}
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil, false
	}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.b) {
		return nil, false
	}
	return v.(object), true
}

// maxTreeDepth is encoding/json's limit on nesting.
const maxTreeDepth = 10000

type treeParser struct {
	b []byte
	i int
}

func (p *treeParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses the value at p.i, which follows any white space.
func (p *treeParser) value(depth int) (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		if depth >= maxTreeDepth {
			return nil, false
		}
		return p.object(depth + 1)
	case c == '[':
		if depth >= maxTreeDepth {
			return nil, false
		}
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *treeParser) literal(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

func (p *treeParser) object(depth int) (any, bool) {
	p.i++ // {
	o := object{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return o, true
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		o[k.(string)] = v
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return o, true
		default:
			return nil, false
		}
	}
}

func (p *treeParser) array(depth int) (any, bool) {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// str parses a string. One with escapes is unquoted by encoding/json, whose rules for them
// (invalid surrogates become U+FFFD) are the reference.
func (p *treeParser) str() (any, bool) {
	start := p.i
	p.i++ // "
	escaped := false
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !escaped {
				return string(p.b[start+1 : p.i-1]), true
			}
			var s string
			if json.Unmarshal(p.b[start:p.i], &s) != nil {
				return nil, false
			}
			return s, true
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return nil, false
		default:
			p.i++ // the body is valid UTF-8: no byte of a multi-byte character is < 0x80
		}
	}
	return nil, false
}

// number parses a number as JSON's grammar has it, keeping its text.
func (p *treeParser) number() (any, bool) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && '1' <= p.b[p.i] && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, false
		}
	}
	return json.Number(p.b[start:p.i]), true
}

// digits skips one digit or more, and reports whether there was one.
func (p *treeParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}
