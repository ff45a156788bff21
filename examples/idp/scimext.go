package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store/schema"
)

const scimExtensionUsage = "a JSON file of SCIM extension schemas to add to Users or Groups: " +
	`[{"resourceType": "User", "required": false, "schema": {RFC 7643 §7 schema}}]; may repeat`

// scimExtensionFlag collects the files of -scim-extension, which may repeat.
type scimExtensionFlag []string

func (f *scimExtensionFlag) String() string { return strings.Join(*f, ",") }

func (f *scimExtensionFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// scimExtensionEntry is one object of a -scim-extension file.
type scimExtensionEntry struct {
	ResourceType string         `json:"resourceType"`
	Required     bool           `json:"required"`
	Schema       *schema.Schema `json:"schema"`
}

// loadSCIMExtensions reads the -scim-extension files and returns the Config change that adds
// their schemas. A file that cannot be read or decoded, or a schema that is not valid, is an
// error naming the file, the entry and the attribute at fault.
func loadSCIMExtensions(files []string) (func(*scimsvc.Config), error) {
	var users, groups []schema.Extension
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("-scim-extension: %w", err)
		}
		var entries []scimExtensionEntry
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&entries); err != nil {
			return nil, fmt.Errorf("-scim-extension %s: not a JSON array of extensions: %w", file, err)
		}
		for i, e := range entries {
			where := fmt.Sprintf("-scim-extension %s: entry %d", file, i+1)
			if e.Schema == nil {
				return nil, fmt.Errorf("%s: no schema", where)
			}
			x := schema.Extension{Schema: e.Schema, Required: e.Required}
			switch e.ResourceType {
			case "User":
				users = append(users, x)
			case "Group":
				groups = append(groups, x)
			default:
				return nil, fmt.Errorf("%s: resourceType %q is neither \"User\" nor \"Group\"", where, e.ResourceType)
			}
			// Check each entry as it comes, so that the error names its file and entry.
			var err error
			if _, err = schema.User().WithExtensions(users...); err == nil {
				_, err = schema.Group().WithExtensions(groups...)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	return func(c *scimsvc.Config) {
		c.UserExtensions, c.GroupExtensions = users, groups
	}, nil
}
