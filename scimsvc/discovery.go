package scimsvc

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/visid/visid/store/schema"
)

// The discovery schemas (RFC 7643 §5, §6, §7).
const (
	spcURN          = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	resourceTypeURN = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
	schemaURN       = "urn:ietf:params:scim:schemas:core:2.0:Schema"
)

type supported struct {
	Supported bool `json:"supported"`
}

type discoveryMeta struct {
	ResourceType string `json:"resourceType"`
	Location     string `json:"location"`
}

func (h *handler) serviceProviderConfig(w http.ResponseWriter, r *http.Request) {
	tenant := r.PathValue("tenant")
	type filterSupport struct {
		Supported  bool `json:"supported"`
		MaxResults int  `json:"maxResults"`
	}
	type bulkSupport struct {
		Supported      bool `json:"supported"`
		MaxOperations  int  `json:"maxOperations"`
		MaxPayloadSize int  `json:"maxPayloadSize"`
	}
	// pagination is RFC 9865 §4's attribute: both methods, index paging the default (what
	// clients written before cursors expect), one page size.
	type pagination struct {
		Cursor                  bool   `json:"cursor"`
		Index                   bool   `json:"index"`
		DefaultPaginationMethod string `json:"defaultPaginationMethod"`
		DefaultPageSize         int    `json:"defaultPageSize"`
		MaxPageSize             int    `json:"maxPageSize"`
		CursorTimeout           int64  `json:"cursorTimeout"`
	}
	type authScheme struct {
		Type             string `json:"type"`
		Name             string `json:"name"`
		Description      string `json:"description"`
		SpecURI          string `json:"specUri"`
		DocumentationURI string `json:"documentationUri"`
		Primary          bool   `json:"primary"`
	}
	writeValue(w, struct {
		Schemas               []string      `json:"schemas"`
		DocumentationURI      string        `json:"documentationUri"`
		Patch                 supported     `json:"patch"`
		Bulk                  bulkSupport   `json:"bulk"`
		Filter                filterSupport `json:"filter"`
		ChangePassword        supported     `json:"changePassword"` // RFC 7643 §5: supported alone
		Sort                  supported     `json:"sort"`
		Pagination            pagination    `json:"pagination"`
		ETag                  supported     `json:"etag"`
		AuthenticationSchemes []authScheme  `json:"authenticationSchemes"`
		Meta                  discoveryMeta `json:"meta"`
	}{
		Schemas:          []string{spcURN},
		DocumentationURI: h.docURI,
		Patch:            supported{true},
		ETag:             supported{true}, // meta.version and conditional requests: etag.go
		ChangePassword:   supported{false},
		Bulk:             bulkSupport{Supported: true, MaxOperations: h.bulkMaxOps, MaxPayloadSize: int(h.bulkMaxPayload)},
		Filter:           filterSupport{Supported: true, MaxResults: MaxResults},
		Sort:             supported{true},
		Pagination: pagination{Cursor: true, Index: true, DefaultPaginationMethod: "index",
			DefaultPageSize: MaxResults, MaxPageSize: MaxResults, CursorTimeout: int64(h.cursors.timeout / time.Second)},
		AuthenticationSchemes: []authScheme{{
			Type:             "oauthbearertoken",
			Name:             "Bearer API key",
			Description:      "An API key issued by the service, sent as Authorization: Bearer <key>.",
			SpecURI:          "https://www.rfc-editor.org/rfc/rfc6750",
			DocumentationURI: h.docURI,
			Primary:          true,
		}},
		Meta: discoveryMeta{ResourceType: "ServiceProviderConfig",
			Location: h.base + "/" + tenant + "/ServiceProviderConfig"},
	})
}

type extensionOut struct {
	Schema   string `json:"schema"`
	Required bool   `json:"required"`
}

type resourceTypeOut struct {
	Schemas          []string       `json:"schemas"`
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	Endpoint         string         `json:"endpoint"`
	Description      string         `json:"description"`
	Schema           string         `json:"schema"`
	SchemaExtensions []extensionOut `json:"schemaExtensions,omitempty"`
	Meta             discoveryMeta  `json:"meta"`
}

func (h *handler) resourceTypeOf(tenant string, rt *schema.ResourceType) resourceTypeOut {
	out := resourceTypeOut{
		Schemas: []string{resourceTypeURN}, ID: rt.Name, Name: rt.Name, Endpoint: rt.Endpoint,
		Description: rt.Description, Schema: rt.Schema.ID,
		Meta: discoveryMeta{ResourceType: "ResourceType", Location: h.base + "/" + tenant + "/ResourceTypes/" + rt.Name},
	}
	for _, x := range rt.Extensions {
		out.SchemaExtensions = append(out.SchemaExtensions, extensionOut{Schema: x.Schema.ID, Required: x.Required})
	}
	return out
}

func (h *handler) resourceTypes(w http.ResponseWriter, r *http.Request) {
	tenant := r.PathValue("tenant")
	writeValue(w, listOf([]resourceTypeOut{
		h.resourceTypeOf(tenant, h.userRT),
		h.resourceTypeOf(tenant, h.groupRT),
	}))
}

func (h *handler) resourceType(w http.ResponseWriter, r *http.Request) {
	for _, rt := range []*schema.ResourceType{h.userRT, h.groupRT} {
		if strings.EqualFold(rt.Name, r.PathValue("name")) {
			writeValue(w, h.resourceTypeOf(r.PathValue("tenant"), rt))
			return
		}
	}
	h.writeError(w, r, &Error{Status: http.StatusNotFound, Detail: "no such resource type"})
}

type schemaOut struct {
	Schemas []string `json:"schemas"`
	*schema.Schema
	Meta discoveryMeta `json:"meta"`
}

// allSchemas lists the schemas once each: User, EnterpriseUser, the host's User extensions,
// Group, the host's Group extensions.
func (h *handler) allSchemas(tenant string) []schemaOut {
	var out []schemaOut
	for _, rt := range []*schema.ResourceType{h.userRT, h.groupRT} {
		for _, s := range rt.Schemas() {
			out = append(out, schemaOut{Schemas: []string{schemaURN}, Schema: s,
				Meta: discoveryMeta{ResourceType: "Schema", Location: h.base + "/" + tenant + "/Schemas/" + s.ID}})
		}
	}
	return out
}

func (h *handler) schemas(w http.ResponseWriter, r *http.Request) {
	writeValue(w, listOf(h.allSchemas(r.PathValue("tenant"))))
}

func (h *handler) schema(w http.ResponseWriter, r *http.Request) {
	for _, s := range h.allSchemas(r.PathValue("tenant")) {
		if strings.EqualFold(s.ID, r.PathValue("urn")) {
			writeValue(w, s)
			return
		}
	}
	h.writeError(w, r, &Error{Status: http.StatusNotFound, Detail: "no such schema"})
}

type listOut[T any] struct {
	Schemas      []string `json:"schemas"`
	TotalResults int      `json:"totalResults"`
	StartIndex   int      `json:"startIndex"`
	ItemsPerPage int      `json:"itemsPerPage"`
	Resources    []T      `json:"Resources"`
}

func listOf[T any](items []T) listOut[T] {
	return listOut[T]{Schemas: []string{listResponseURN}, TotalResults: len(items), StartIndex: 1,
		ItemsPerPage: len(items), Resources: items}
}

// writeValue writes v, a value of the package's own types that always marshals, as JSON.
func writeValue(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		panic("scimsvc: marshalling a discovery document: " + err.Error()) // the recoverer answers 500
	}
	writeJSON(w, http.StatusOK, body)
}
