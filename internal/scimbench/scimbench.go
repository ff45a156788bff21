// Package scimbench is the SCIM workload visid's side-by-side benchmarks run
// (BenchmarkVsHandWritten in scimsvc, BenchmarkIdPOverhead in examples/idp,
// BenchmarkEventLogMemory): the four operations of provisioning on users named user%07d,
// the body of such a user as Entra ID provisions it, and the process's CPU time to measure
// them by.
package scimbench

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"syscall"
)

// Op is one operation of the workload.
type Op struct {
	Name   string // get, filter, patch-active or post
	Method string
	Status int // the status a server answers it with
	// Req returns the path under the tenant's SCIM URL and the body ("" for none) of the i-th
	// request, on users whose ids are ids (the i-th user named UserName(i)).
	Req func(ids []string, i int) (path, body string)
}

// Ops are GET /Users/{id}, GET /Users?filter=userName eq "…", a PATCH replacing active (true
// and false in turn over the users, so that every request changes its user) and POST /Users,
// whose users are numbered from created on.
func Ops(created *atomic.Int64) []Op {
	return []Op{
		{"get", "GET", http.StatusOK, func(ids []string, i int) (string, string) {
			return "/Users/" + ids[i%len(ids)], ""
		}},
		{"filter", "GET", http.StatusOK, func(ids []string, i int) (string, string) {
			return "/Users?filter=" + url.QueryEscape(`userName eq "`+UserName(int64(i%len(ids)))+`"`), ""
		}},
		{"patch-active", "PATCH", http.StatusOK, func(ids []string, i int) (string, string) {
			active := strconv.FormatBool((i/len(ids))%2 == 1)
			return "/Users/" + ids[i%len(ids)], `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],` +
				`"Operations":[{"op":"replace","path":"active","value":` + active + `}]}`
		}},
		{"post", "POST", http.StatusCreated, func([]string, int) (string, string) {
			return "/Users", UserJSON(created.Add(1))
		}},
	}
}

// UserName is the userName (and work email) of user n.
func UserName(n int64) string { return fmt.Sprintf("user%07d@example.com", n) }

// UserJSON is the SCIM body of user n, with the attributes Entra ID provisions.
func UserJSON(n int64) string {
	name := UserName(n)
	return `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],` +
		`"externalId":"ext-` + strconv.FormatInt(n, 10) + `","userName":"` + name + `","active":true,` +
		`"emails":[{"primary":true,"type":"work","value":"` + name + `"}],` +
		`"name":{"formatted":"Ann Lee","familyName":"Lee","givenName":"Ann"},` +
		`"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"R&D"}}`
}

// ProcessCPU is the user and system CPU time the process has used, in nanoseconds: a
// benchmark's cpu-ns/op, which other load on the machine changes less than its time per op.
func ProcessCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
