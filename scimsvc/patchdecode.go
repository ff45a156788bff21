package scimsvc

import (
	"strings"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// maxDecodedOps is the most operations decodePatch reads; a longer request takes the tree.
const maxDecodedOps = 16

// decodePatch reads body, a PatchOp request, straight into the operations parsePatch makes of
// the tree of it, for the shape identity providers send on every change: members spelt
// "schemas" and "Operations", each operation an object of "op", "path" and a "value" that is a
// string, a boolean or null, as in
//
//	{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
//	 "Operations":[{"op":"replace","path":"active","value":false}]}
//
// ok is false for anything else — another spelling, a value that is a number, object or array,
// an escape decodeUser does not take, a duplicate member, more than maxDecodedOps operations,
// a body parsePatch refuses — and the caller then parses the body through a tree, which gives
// the answer (FuzzDecodePatch compares the two).
func decodePatch(body []byte, rt *schema.ResourceType, lim filter.Limits) (ops []patchOp, ok bool) {
	d := bodyDecoder{treeParser{b: body}}
	var found bool
	var hasPath [maxDecodedOps]bool
	d.space()
	ok = d.object(func(key []byte) (uint, bool) {
		switch string(key) {
		case "schemas":
			return 0, d.stringArray()
		case "Operations":
			found = true
			return 1, d.patchOps(&ops, &hasPath)
		}
		return 0, false
	})
	d.space()
	if !ok || !found || len(ops) == 0 || d.i != len(d.b) {
		return nil, false
	}
	for i := range ops {
		var err error
		if ops[i], err = finishOp(i, ops[i], hasPath[i], rt, lim); err != nil {
			return nil, false
		}
	}
	return ops, true
}

// patchOps reads the Operations array into *ops, each operation with its op in lower case and
// its path unparsed in raw, and whether it has a path in hasPath.
func (d *bodyDecoder) patchOps(ops *[]patchOp, hasPath *[maxDecodedOps]bool) bool {
	if d.null() {
		return false
	}
	return d.array(func() bool {
		i := len(*ops)
		if i == maxDecodedOps {
			return false
		}
		var op patchOp
		ok := d.object(func(key []byte) (uint, bool) {
			switch string(key) {
			case "op":
				bit, ok := d.str(0, &op.op)
				op.op = strings.ToLower(op.op)
				return bit, ok
			case "path":
				if d.null() {
					return 1, true
				}
				hasPath[i] = true
				return d.str(1, &op.raw)
			case "value":
				return 2, d.scalar(&op.value)
			}
			return 0, false
		})
		*ops = append(*ops, op)
		return ok
	})
}

// scalar reads a string, boolean or null into *v as the tree holds them.
func (d *bodyDecoder) scalar(v *any) bool {
	d.space()
	switch {
	case d.literal("true"):
		*v = true
	case d.literal("false"):
		*v = false
	case d.literal("null"):
		*v = nil
	default:
		var s string
		if _, ok := d.str(0, &s); !ok {
			return false
		}
		*v = s
	}
	return true
}

// parsePatchBody parses body, a PatchOp request, through its tree.
func parsePatchBody(body []byte, rt *schema.ResourceType, lim filter.Limits) ([]patchOp, error) {
	tree, err := parseBody(body)
	if err != nil {
		return nil, err
	}
	return parsePatch(tree, rt, lim)
}
