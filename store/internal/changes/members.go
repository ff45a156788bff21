package changes

import (
	"fmt"
	"reflect"

	"github.com/visid/visid/store"
)

// Delta returns the users p adds and removes, each once in the order of its first mention, or
// an error wrapping store.ErrInvalid when a user is in both.
func Delta(p store.GroupPatch) (add, remove []string, err error) {
	seen := make(map[string]bool, len(p.Add)+len(p.Remove))
	for _, id := range p.Add {
		if !seen[id] {
			seen[id] = true
			add = append(add, id)
		}
	}
	dropped := make(map[string]bool, len(p.Remove))
	for _, id := range p.Remove {
		if seen[id] && !dropped[id] {
			return nil, nil, fmt.Errorf("user %q is both added to and removed from the group: %w", id, store.ErrInvalid)
		}
		if !dropped[id] {
			dropped[id] = true
			remove = append(remove, id)
		}
	}
	return add, remove, nil
}

// GroupAttrs reports whether a Groups.Patch changed the attributes of a group other than its
// members and meta, given the group before and after (Members ignored): the change for which it
// records group.updated.
func GroupAttrs(before, after *store.Group) bool {
	return before.ID != after.ID || before.DisplayName != after.DisplayName || before.ExternalID != after.ExternalID ||
		(len(before.Extensions) > 0 || len(after.Extensions) > 0) && !reflect.DeepEqual(before.Extensions, after.Extensions)
}
