package memstore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend { return memstore.New().Backend() })
}

// only returns b with the stores named kept and every other set to nil.
func only(b store.Backend, names ...string) store.Backend {
	var o store.Backend
	for _, n := range names {
		switch n {
		case "Tenants":
			o.Tenants = b.Tenants
		case "Users":
			o.Users = b.Users
		case "Groups":
			o.Groups = b.Groups
		case "APIKeys":
			o.APIKeys = b.APIKeys
		case "Clients":
			o.Clients = b.Clients
		case "Codes":
			o.Codes = b.Codes
		case "Interactions":
			o.Interactions = b.Interactions
		case "Pushed":
			o.Pushed = b.Pushed
		case "AccessTokens":
			o.AccessTokens = b.AccessTokens
		case "Pictures":
			o.Pictures = b.Pictures
		case "Passkeys":
			o.Passkeys = b.Passkeys
		case "SigningKeys":
			o.SigningKeys = b.SigningKeys
		case "Events":
			o.Events = b.Events
		case "Webhooks":
			o.Webhooks = b.Webhooks
		default:
			panic("no store " + n)
		}
	}
	return o
}

// TestConformanceDirectoryOnly: a host's backend that holds only its directory (Tenants, Users,
// Groups, APIKeys) runs the suites of those four, and the others are skipped.
func TestConformanceDirectoryOnly(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend {
		return only(memstore.New().Backend(), "Tenants", "Users", "Groups", "APIKeys")
	})
}

// TestConformanceEachSuiteAlone runs the suite on backends that hold only the stores one suite
// says it needs: a suite (or a test) that uses a store it does not name calls a nil store and
// fails here.
func TestConformanceEachSuiteAlone(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range storetest.Suites() {
		key := fmt.Sprint(s.Stores)
		if seen[key] {
			continue
		}
		seen[key] = true
		t.Run(strings.Join(s.Stores, "+"), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Backend { return only(memstore.New().Backend(), s.Stores...) })
		})
	}
}
