module example.com/acme/dispatch

go 1.23.0

require (
	github.com/go-resty/resty/v2 v2.17.2
	github.com/rabbitmq/amqp091-go v1.16.0
)

require golang.org/x/net v0.43.0 // indirect
