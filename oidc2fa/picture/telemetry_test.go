package picture_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/internal/telemetrytest"
	"github.com/visid/visid/oidc2fa/picture"
)

func TestMetricsAttemptsAndLockouts(t *testing.T) {
	rec := telemetrytest.New(t)
	spans := rec.Spans
	e, _ := clockedEnv(t, func(c *picture.Config) { c.MeterProvider, c.TracerProvider = rec.MeterProvider, rec.TracerProvider })

	steps := []struct {
		name, hint string
		attempts   []string
		want       map[string]int64 // the attempts counted so far, by outcome
		lockouts   int64
	}{
		{"right points", "ann", []string{right}, map[string]int64{"succeeded": 1}, 0},
		{"malformed points", "ann", []string{"1,2"}, map[string]int64{"succeeded": 1, "malformed": 1}, 0},
		{"unknown user", "nobody", []string{right}, map[string]int64{"succeeded": 1, "malformed": 1, "unknown_user": 1}, 0},
		{"inactive user", "bob", []string{right}, map[string]int64{"succeeded": 1, "malformed": 1, "unknown_user": 1, "inactive_user": 1}, 0},
		{"not enrolled", "carol", []string{right}, map[string]int64{"succeeded": 1, "malformed": 1, "unknown_user": 1, "inactive_user": 1, "not_enrolled": 1}, 0},
		{"four wrong after the malformed one lock", "ann", repeat(wrong, 4), map[string]int64{"succeeded": 1, "malformed": 1, "unknown_user": 1, "inactive_user": 1, "not_enrolled": 1, "wrong_picture": 4}, 1},
		{"locked", "ann", []string{right}, map[string]int64{"succeeded": 1, "malformed": 1, "unknown_user": 1, "inactive_user": 1, "not_enrolled": 1, "wrong_picture": 4, "locked": 1}, 1},
	}
	total := int64(2) // the env enrolled ann and bob: a hash each
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			e.t = t
			e.signIn(s.hint, s.attempts...)
			total += int64(len(s.attempts)) // every attempt spends one hash, a decoy or the check
			m := rec.Metrics(t)
			want := map[string]int64{}
			for outcome, n := range s.want {
				want["visid.outcome="+outcome] = n
			}
			assert.Equal(t, want, m[picture.MetricAttempts])
			if s.lockouts == 0 {
				assert.NotContains(t, m, picture.MetricLockouts)
			} else {
				assert.Equal(t, map[string]int64{"": s.lockouts}, m[picture.MetricLockouts])
			}
			assert.Equal(t, map[string]int64{"": total}, m[picture.MetricHashWait], "one argon2id hash per attempt")
			assert.Equal(t, map[string]int64{"": 0}, m[picture.MetricHashesInFlight], "every hash has ended")
		})
	}
	hashes := 0
	for _, s := range spans.Ended() {
		if s.Name() == "picture argon2id" {
			hashes++
			assert.Empty(t, s.Attributes(), "a hash span carries nothing about the user or the points")
		}
	}
	assert.Equal(t, int(total), hashes, "a span per argon2id hash")
}
