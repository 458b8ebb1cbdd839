package message_test

import (
	"errors"
	"fmt"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

func ExampleDecode() {
	body := []byte(`{"refkey":"order-1001-shipped","category":"info","recipient":"+821000000001",
		"template_code":"SHIP_01","text":"Your order has shipped.","created_at":"2026-11-30T10:00:00+09:00"}`)
	n, err := message.Decode(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n.RefKey, n.Category, n.MaskedRecipient(), n.CreatedAt.UTC().Format("15:04"))

	_, err = message.Decode([]byte(`{"refkey":"order-1002","category":"promo","recipient":"+821000000001",
		"template_code":"SALE_01","text":"Sale!","created_at":"2026-11-30T10:00:00+09:00"}`))
	var ie *message.InvalidError
	if errors.As(err, &ie) {
		fmt.Printf("field=%s reason=%s\n", ie.Field, ie.Reason)
	}
	// Output:
	// order-1001-shipped info +82******0001 01:00
	// field=category reason=must be "info" or "ad"
}
