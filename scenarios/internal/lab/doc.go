// Package lab is the plumbing the bench and the fault runner share:
// publishing a run's messages to RabbitMQ with publisher confirms while
// keeping the published list for the reconciler (Publisher), following the
// worker's records file as it grows (Records), and the worker's common
// flags and small stack helpers.
package lab
