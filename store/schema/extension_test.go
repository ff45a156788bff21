package schema_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/visid/visid/store/schema"
)

// TestWithExtensionsConcurrently: extending the built-in resource types in several goroutines
// at once, as handlers made in parallel do, writes nothing the goroutines share (run with -race).
func TestWithExtensionsConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ext := &schema.Schema{ID: fmt.Sprintf("urn:example:params:scim:schemas:extension:Race%d:2.0:User", i), Name: "Race",
				Attributes: []*schema.Attribute{{Name: "badge", Type: schema.Integer}}}
			for _, base := range []*schema.ResourceType{schema.User(), schema.Group()} {
				rt, err := base.WithExtensions(schema.Extension{Schema: ext})
				if err != nil {
					t.Error(err)
					return
				}
				if a, _, err := rt.Lookup("externalId"); err != nil || a == nil {
					t.Errorf("the extended type lost its common attributes: %v", err)
				}
			}
		})
	}
	wg.Wait()
}
