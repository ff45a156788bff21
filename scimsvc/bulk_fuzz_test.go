package scimsvc

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"
)

// bulkSeeds are bulk request bodies, good and broken.
var bulkSeeds = []string{
	`{"Operations":[{"method":"POST","path":"/Users","bulkId":"a","data":{"userName":"a"}},{"method":"POST","path":"/Groups","data":{"displayName":"G","members":[{"value":"bulkId:a"}]}}]}`,
	`{"failOnErrors":1,"Operations":[{"method":"PATCH","path":"/Users/bulkId:a","data":{"Operations":[{"op":"replace","path":"title","value":"x"}]}},{"method":"POST","path":"/Users","bulkId":"a","data":{"userName":"a","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":"bulkId:a"}}}]}`,
	`{"Operations":[{"method":"DELETE","path":"/Groups/bulkId:g"},{"method":"PUT","path":"/users/../Groups","data":{}},{"method":"POST","path":"/Users","bulkId":"g"}]}`,
	`{"Operations":[{"method":"POST","path":"/Users","bulkId":"a","data":{"userName":"bulkId:b"}},{"method":"POST","path":"/Users","bulkId":"b","data":{"userName":"bulkId:a"}}]}`,
	`{"Operations":[null,1,"x",[],{"method":7}]}`,
	`{"Operations":[],"failOnErrors":-1}`,
	`{"Operations":{}}`,
	`[]`,
	``,
}

// FuzzBulk sends arbitrary bytes as a bulk request, and as the data of the operations of one:
// nothing panics, nothing is a 500, a refused request is a SCIM error and changes nothing, and
// every operation's status is one a client can act on, with a SCIM error when it failed.
func FuzzBulk(f *testing.F) {
	for _, s := range bulkSeeds {
		f.Add([]byte(s))
	}
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fh := newFuzzHandler(t)
		bodies := [][]byte{body}
		if json.Valid(body) {
			bodies = append(bodies, []byte(`{"Operations":[
				{"method":"PATCH","path":"/Users/`+fh.user+`","data":`+string(body)+`},
				{"method":"PUT","path":"/Groups/`+fh.group+`","data":`+string(body)+`},
				{"method":"POST","path":"/Users","bulkId":"u","data":`+string(body)+`},
				{"method":"POST","path":"/Groups","bulkId":"g","data":`+string(body)+`}]}`))
		}
		for _, b := range bodies {
			userBefore, groupBefore := fh.state(t)
			req := httptest.NewRequest("POST", "/acme/Bulk", bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/scim+json")
			req.Header.Set("Authorization", "Bearer "+fh.key)
			rec := httptest.NewRecorder()
			fh.h.ServeHTTP(rec, req)
			if !slices.Contains([]int{200, 400, 413}, rec.Code) {
				t.Fatalf("status %d\nbody: %s\nresponse: %s\nlog: %s", rec.Code, b, rec.Body.Bytes(), fh.log.Bytes())
			}
			var out struct {
				Schemas    []any
				Status     any
				Operations []struct {
					Status   string
					Response map[string]any
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatalf("response is not a JSON object: %v\n%s", err, rec.Body.Bytes())
			}
			if rec.Code >= 400 {
				if !reflect.DeepEqual(out.Schemas, []any{errorURN}) || out.Status == nil {
					t.Fatalf("not a SCIM error: %s", rec.Body.Bytes())
				}
				userAfter, groupAfter := fh.state(t)
				if !reflect.DeepEqual(userBefore, userAfter) || !reflect.DeepEqual(groupBefore, groupAfter) {
					t.Fatalf("refused with %d but the store changed\nbody: %s", rec.Code, b)
				}
				continue
			}
			for _, op := range out.Operations {
				if !slices.Contains([]string{"200", "201", "204", "400", "404", "409", "413"}, op.Status) {
					t.Fatalf("operation status %s\nbody: %s\nresponse: %s\nlog: %s", op.Status, b, rec.Body.Bytes(), fh.log.Bytes())
				}
				if op.Status >= "400" && (!reflect.DeepEqual(op.Response["schemas"], []any{errorURN}) || op.Response["status"] != op.Status) {
					t.Fatalf("operation status %s without its SCIM error: %s", op.Status, rec.Body.Bytes())
				}
			}
			u, g := fh.state(t)
			if why := notStoredText(reflect.ValueOf(*u)) + notStoredText(reflect.ValueOf(*g)); why != "" {
				t.Fatalf("stored %s\nbody: %q", why, b)
			}
		}
	})
}
