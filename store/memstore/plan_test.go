package memstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// TestIndexPlan shows which filters an index answers and which scan the tenant.
func TestIndexPlan(t *testing.T) {
	td := &tenantData{}
	users := []struct {
		filter  string
		indexed bool
	}{
		{`id eq "user_1"`, true},
		{`userName eq "Ann"`, true},
		{`USERNAME EQ "Ann"`, true},
		{`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "Ann"`, true},
		{`externalId eq "e1"`, true},
		{`external_id eq "e1"`, true},
		{`userName eq "a" and active eq true`, true},
		{`active eq true and userName eq "a"`, true},
		{`userName eq "a" or externalId eq "b"`, true},
		{`userName eq "a" or active eq true`, false},
		{`userName ne "a"`, false},
		{`userName co "a"`, false},
		{`not (userName eq "a")`, false},
		{`emails.value eq "a"`, true},
		{`emails eq "a"`, true},
		{`emails[value eq "a"]`, true},
		{`emails[type eq "work"].value eq "a"`, true},
		{`emails[type eq "work"]`, false},
		{`emails.type eq "work"`, false},
		{`emails.value co "a"`, false},
		{`title eq "a"`, false},
	}
	for _, c := range users {
		e, err := filter.Parse(c.filter, schema.User())
		require.NoError(t, err)
		_, ok := candidates(e, td.userIndex)
		assert.Equal(t, c.indexed, ok, c.filter)
	}
	groups := []struct {
		filter  string
		indexed bool
	}{
		{`id eq "group_1"`, true},
		{`displayName eq "Engineering"`, true},
		{`externalId eq "g1"`, true},
		{`members.value eq "user_1"`, true},
		{`members[value eq "user_1"]`, true},
		{`members eq "user_1"`, true},
		{`displayName sw "Eng"`, false},
		{`members.display eq "ann"`, false},
		{`members[value eq "user_1" or value eq "user_2"]`, true},
		{`members[value eq "user_1" or display eq "ann"]`, false},
	}
	for _, c := range groups {
		e, err := filter.Parse(c.filter, schema.Group())
		require.NoError(t, err)
		_, ok := candidates(e, td.groupIndex)
		assert.Equal(t, c.indexed, ok, c.filter)
	}
}
