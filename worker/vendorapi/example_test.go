package vendorapi_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// A vendor speaking the API of docs/vendor-api.md, with its own test certificate.
func exampleVendor() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/token", func(w http.ResponseWriter, r *http.Request) {
		if id, secret, ok := r.BasicAuth(); !ok || id != "lab-client" || secret != "example-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{
			"accesstoken": "example-token", "type": "Bearer",
			"expired": time.Now().Add(time.Hour).Format(time.RFC3339),
		})
	})
	mux.HandleFunc("POST /v3/message", func(w http.ResponseWriter, r *http.Request) {
		var m struct{ RefKey string }
		json.NewDecoder(r.Body).Decode(&m)
		json.NewEncoder(w).Encode(map[string]string{
			"code": "1000", "description": "success", "refkey": m.RefKey, "messagekey": "mk-" + m.RefKey,
		})
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.StartTLS()
	return srv
}

func ExampleNewClient() {
	srv := exampleVendor()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate()) // the lab passes its run-time CA here

	// One pooled keep-alive client for the worker's life.
	strategy := vendorapi.Strategies()[vendorapi.PooledName](vendorapi.Config{
		RootCAs:         roots,
		MaxTLSVersion:   tls.VersionTLS13,
		IdleConnTimeout: 60 * time.Second, // below the vendor's keep-alive timeout by more than one RTT
	})
	client := vendorapi.NewClient(srv.URL, vendorapi.Credentials{ClientID: "lab-client", ClientSecret: "example-secret"}, strategy)
	defer client.Close()

	for _, ref := range []string{"order-1-shipped", "order-2-shipped"} {
		res, err := client.Send(context.Background(), message.Notification{
			RefKey: ref, Category: message.Info, Recipient: "+821000005678",
			TemplateCode: "SHIP_01", Text: "Your order shipped",
		})
		fmt.Println(vendorapi.ClassOf(err), res.Code, res.MessageKey, "reused:", res.Trace.Reused, res.Trace.TLSVersion)
	}

	// After Close nothing is dialled: NOT_SENT, for the retry queue.
	client.Close()
	_, err := client.Send(context.Background(), message.Notification{RefKey: "order-3-shipped"})
	fmt.Println(vendorapi.ClassOf(err), err)
	// Output:
	// SENT 1000 mk-order-1-shipped reused: true TLS 1.3
	// SENT 1000 mk-order-2-shipped reused: true TLS 1.3
	// NOT_SENT vendor send: NOT_SENT (closed): vendor client closed
}
