package webhooks_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/webhooks"
)

// The example of the Standard Webhooks specification's reference libraries.
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specBody      = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesTheSpecification(t *testing.T) {
	sig, err := webhooks.Sign(specSecret, specID, time.Unix(specTimestamp, 0), []byte(specBody))
	require.NoError(t, err)
	assert.Equal(t, specSignature, sig)

	h := http.Header{}
	require.NoError(t, webhooks.SetHeaders(h, specID, time.Unix(specTimestamp, 0), []byte(specBody), specSecret))
	assert.Equal(t, specID, h.Get("Webhook-Id"))
	assert.Equal(t, "1614265330", h.Get("Webhook-Timestamp"))
	assert.Equal(t, specSignature, h.Get("Webhook-Signature"))
}

func TestVerify(t *testing.T) {
	sent := time.Unix(specTimestamp, 0)
	other, err := webhooks.NewSecret()
	require.NoError(t, err)
	valid := func() http.Header {
		return http.Header{
			"Webhook-Id":        {specID},
			"Webhook-Timestamp": {strconv.Itoa(specTimestamp)},
			"Webhook-Signature": {specSignature},
		}
	}
	tests := []struct {
		name   string
		secret string
		header func(h http.Header)
		body   string
		now    time.Time
		want   error
	}{
		{name: "valid", now: sent},
		{name: "five minutes later", now: sent.Add(5 * time.Minute)},
		{name: "five minutes early", now: sent.Add(-5 * time.Minute)},
		{name: "one of several signatures", now: sent, header: func(h http.Header) {
			h.Set("Webhook-Signature", "v1,bm90IGl0 v2,abc "+specSignature+" v1,!!!")
		}},
		{name: "a later version only", now: sent, want: webhooks.ErrSignature, header: func(h http.Header) {
			h.Set("Webhook-Signature", "v2,"+strings.TrimPrefix(specSignature, "v1,"))
		}},
		{name: "tampered body", now: sent, body: `{"test": 2432232315}`, want: webhooks.ErrSignature},
		{name: "another id", now: sent, want: webhooks.ErrSignature, header: func(h http.Header) {
			h.Set("Webhook-Id", specID+"x")
		}},
		{name: "another secret", secret: other, now: sent, want: webhooks.ErrSignature},
		{name: "too old", now: sent.Add(5*time.Minute + time.Second), want: webhooks.ErrTimestamp},
		{name: "from the future", now: sent.Add(-5*time.Minute - time.Second), want: webhooks.ErrTimestamp},
		{name: "timestamp not a number", now: sent, want: webhooks.ErrTimestamp, header: func(h http.Header) {
			h.Set("Webhook-Timestamp", "2021-02-25T15:02:10Z")
		}},
		{name: "timestamp changed", now: sent, want: webhooks.ErrSignature, header: func(h http.Header) {
			h.Set("Webhook-Timestamp", strconv.Itoa(specTimestamp+1))
		}},
		{name: "no signature", now: sent, want: webhooks.ErrMissingHeaders, header: func(h http.Header) {
			h.Del("Webhook-Signature")
		}},
		{name: "no id", now: sent, want: webhooks.ErrMissingHeaders, header: func(h http.Header) {
			h.Set("Webhook-Id", "")
		}},
		{name: "two timestamps", now: sent, want: webhooks.ErrMissingHeaders, header: func(h http.Header) {
			h.Add("Webhook-Timestamp", strconv.Itoa(specTimestamp))
		}},
		{name: "not a secret", secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now: sent, want: webhooks.ErrSecret},
		{name: "a secret too short", secret: "whsec_c2hvcnQ=", now: sent, want: webhooks.ErrSecret},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := valid()
			if tc.header != nil {
				tc.header(h)
			}
			secret, body := specSecret, specBody
			if tc.secret != "" {
				secret = tc.secret
			}
			if tc.body != "" {
				body = tc.body
			}
			err := webhooks.Verify(secret, h, []byte(body), tc.now)
			if tc.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func TestNewSecret(t *testing.T) {
	a, err := webhooks.NewSecret()
	require.NoError(t, err)
	b, err := webhooks.NewSecret()
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, "whsec_"), a)
	require.NoError(t, webhooks.CheckSecret(a))

	// A rotation: the request carries the signatures of the old and the new secret, and a
	// receiver that knows either accepts it.
	now := time.Now()
	h := http.Header{}
	require.NoError(t, webhooks.SetHeaders(h, "evt_1", now, []byte(`{}`), a, b))
	assert.Len(t, strings.Fields(h.Get("Webhook-Signature")), 2)
	assert.NoError(t, webhooks.Verify(a, h, []byte(`{}`), now))
	assert.NoError(t, webhooks.Verify(b, h, []byte(`{}`), now))
	assert.ErrorIs(t, webhooks.SetHeaders(http.Header{}, "evt_1", now, nil), webhooks.ErrSecret)
}
