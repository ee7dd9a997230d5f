//go:build !unix

package main

import "testing"

func mkfifoT(t *testing.T, path string) {
	t.Helper()
	t.Skip("named pipes: unix only")
}
