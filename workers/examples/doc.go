// Package examples holds worker images written the way a team writes
// them, not to the lab's worker contract: their own queue names,
// environment names and message schema. Each folder has the worker, a
// build.sh that builds its image offline and prints its name, and the
// adapter.yaml the black-box audit runs it from (docs/auditing.md). The
// Go test here builds and vets each Go example, whose own module keeps
// its libraries out of the lab's go.mod.
package examples
