package scimsvc_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strictSPC is the ServiceProviderConfig as RFC 7643 §5 defines it, plus RFC 9865's
// pagination, the way a strict client models it: a document with any other attribute is
// refused whole.
type strictSPC struct {
	Schemas          []string `json:"schemas"`
	DocumentationURI string   `json:"documentationUri"`
	Patch            struct {
		Supported bool `json:"supported"`
	} `json:"patch"`
	Bulk struct {
		Supported      bool `json:"supported"`
		MaxOperations  int  `json:"maxOperations"`
		MaxPayloadSize int  `json:"maxPayloadSize"`
	} `json:"bulk"`
	Filter struct {
		Supported  bool `json:"supported"`
		MaxResults int  `json:"maxResults"`
	} `json:"filter"`
	ChangePassword struct {
		Supported bool `json:"supported"`
	} `json:"changePassword"`
	Sort struct {
		Supported bool `json:"supported"`
	} `json:"sort"`
	ETag struct {
		Supported bool `json:"supported"`
	} `json:"etag"`
	AuthenticationSchemes []struct {
		Type             string `json:"type"`
		Name             string `json:"name"`
		Description      string `json:"description"`
		SpecURI          string `json:"specUri"`
		DocumentationURI string `json:"documentationUri"`
		Primary          bool   `json:"primary"`
	} `json:"authenticationSchemes"`
	Pagination struct {
		Cursor                  bool   `json:"cursor"`
		Index                   bool   `json:"index"`
		DefaultPaginationMethod string `json:"defaultPaginationMethod"`
		DefaultPageSize         int    `json:"defaultPageSize"`
		MaxPageSize             int    `json:"maxPageSize"`
		CursorTimeout           int    `json:"cursorTimeout"`
	} `json:"pagination"`
	Meta struct {
		ResourceType string `json:"resourceType"`
		Location     string `json:"location"`
		Created      string `json:"created"`
		LastModified string `json:"lastModified"`
		Version      string `json:"version"`
	} `json:"meta"`
}

// TestServiceProviderConfigStrictClient: a client that models RFC 7643 §5 exactly (and RFC
// 9865's pagination) and refuses unknown attributes accepts the document; changePassword holds
// only supported.
func TestServiceProviderConfigStrictClient(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/acme/ServiceProviderConfig", nil)
	require.Equal(t, 200, r.Status)
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	var spc strictSPC
	require.NoError(t, dec.Decode(&spc), "%s", r.Body)
	assert.False(t, spc.ChangePassword.Supported)
	assert.True(t, spc.Pagination.Cursor)
}
