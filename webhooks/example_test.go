package webhooks_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/visid/visid/webhooks"
)

func ExampleVerify() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // shown once, when the endpoint was added
	body := []byte(`{"test": 2432232314}`)
	sent := time.Unix(1614265330, 0)

	// What visid sends with the body.
	h := http.Header{}
	if err := webhooks.SetHeaders(h, "msg_p5jXN8AQM9LWM0D4loKWxJek", sent, body, secret); err != nil {
		panic(err)
	}
	fmt.Println(h.Get("webhook-signature"))

	// What the receiver checks, with its own clock.
	fmt.Println(webhooks.Verify(secret, h, body, sent.Add(time.Minute)))
	fmt.Println(webhooks.Verify(secret, h, body, sent.Add(time.Hour)))
	// Output:
	// v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
	// <nil>
	// webhooks: webhook-timestamp is malformed or too far from the current time
}
