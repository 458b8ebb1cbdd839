// Package java holds the Java reference worker's sources (src/notifierlab)
// and its image (Dockerfile). The Go test runs its self test (javac, then
// java notifierlab.SelfTest).
package java
